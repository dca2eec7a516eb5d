/* shim_client.c: the shim benchmark's driver — task start latency through shim.sock next to bare `runc run --detach` of the same bundle, and many containers for the RSS measurement. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "ipc.h"
#include "mtstime.h"
#include "shim.pb-c.h"

/*
 * shim-bench-client start RUNDIR IMAGE N PREFIX        N latencies (ms)
 * shim-bench-client bare RUNC ROOT BUNDLE N CG PREFIX  N latencies (ms)
 * shim-bench-client clean RUNDIR                       removes every task
 *
 * Task and container ids are PREFIX0, PREFIX1, ...
 */

static struct mts_ipc_client *
dial(const char *rundir)
{
	char path[512], err[256];
	struct mts_ipc_client *c;

	mts_ipc_sock_path(path, sizeof(path), rundir, "shim", NULL);
	if ((c = mts_ipc_client_open(path, 60000, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return c;
}

/* Runs a task (sleep) and returns the time to the reply, which the shim
 * sends once the container's process runs. */
static double
run_task(struct mts_ipc_client *c, const char *image, const char *id)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskRunReq run = MTS__SHIM__TASK_RUN_REQ__INIT;
	Mts__Shim__TaskSpec sp = MTS__SHIM__TASK_SPEC__INIT;
	ProtobufCMessage *rep = NULL;
	char *cmd[] = { "sleep", "100000" }, err[256];
	int64_t t0;
	int rc;

	sp.id = (char *)id;
	sp.image = (char *)image;
	sp.command = cmd;
	sp.n_command = 2;
	run.spec = &sp;
	req.body_case = MTS__SHIM__REQUEST__BODY_RUN;
	req.run = &run;
	t0 = mts_now_us();
	rc = mts_ipc_client_call(c, &req.base, &mts__shim__reply__descriptor,
	    &rep, err, sizeof(err));
	if (rc != 0 ||
	    strcmp(((Mts__Shim__Reply *)rep)->run->task->state, "running") !=
	        0) {
		fprintf(stderr, "run %s: %s\n", id, rc ? err : "not running");
		exit(1);
	}
	protobuf_c_message_free_unpacked(rep, NULL);
	return (double)(mts_now_us() - t0) / 1000.0;
}

static int
cmd_start(const char *rundir, const char *image, int n, const char *pfx)
{
	struct mts_ipc_client *c = dial(rundir);
	char id[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s%d", pfx, i);
		printf("%.2f\n", run_task(c, image, id));
	}
	mts_ipc_client_close(c);
	return 0;
}

/* Writes BUNDLE/../bare<i>/config.json: the same config with its own
 * cgroup and the original rootfs by absolute path. */
static int
bare_bundle(const char *bundle, const char *dir, const char *cg)
{
	char path[1024], root[1024];
	json_t *j;
	int rc;

	snprintf(path, sizeof(path), "%s/config.json", bundle);
	if ((j = json_load_file(path, 0, NULL)) == NULL)
		return -1;
	snprintf(root, sizeof(root), "%s/rootfs", bundle);
	json_object_set_new(json_object_get(j, "root"), "path",
	    json_string(root));
	json_object_set_new(json_object_get(j, "linux"), "cgroupsPath",
	    json_string(cg));
	mkdir(dir, 0700);
	if (snprintf(path, sizeof(path), "%s/config.json", dir) >=
	    (int)sizeof(path))
		rc = -1;
	else
		rc = json_dump_file(j, path, JSON_INDENT(1));
	json_decref(j);
	return rc;
}

static int
cmd_bare(const char *runc, const char *rroot, const char *bundle, int n,
    const char *cgparent, const char *pfx)
{
	char dir[1024], cg[256], id[64];
	int64_t t0;
	int i, st, nul;
	pid_t pid;

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s%d", pfx, i);
		snprintf(dir, sizeof(dir), "%s/../../%s", bundle, id);
		snprintf(cg, sizeof(cg), "%s/%s", cgparent, id);
		if (bare_bundle(bundle, dir, cg) != 0) {
			fprintf(stderr, "cannot write %s\n", dir);
			return 1;
		}
		t0 = mts_now_us();
		if ((pid = fork()) == 0) {
			nul = open("/dev/null", O_RDWR);
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
			execl(runc, runc, "--root", rroot, "run", "--detach",
			    "--bundle", dir, id, (char *)NULL);
			_exit(127);
		}
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "runc run %s failed\n", id);
			return 1;
		}
		printf("%.2f\n", (double)(mts_now_us() - t0) / 1000.0);
	}
	return 0;
}

static int
cmd_clean(const char *rundir)
{
	struct mts_ipc_client *c = dial(rundir);
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskListReq ls = MTS__SHIM__TASK_LIST_REQ__INIT;
	Mts__Shim__TaskRemoveReq rm = MTS__SHIM__TASK_REMOVE_REQ__INIT;
	Mts__Shim__Reply *rep = NULL;
	ProtobufCMessage *r2;
	char err[256];
	size_t i;

	req.body_case = MTS__SHIM__REQUEST__BODY_LIST;
	req.list = &ls;
	if (mts_ipc_client_call(c, &req.base, &mts__shim__reply__descriptor,
	        (ProtobufCMessage **)&rep, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	req.body_case = MTS__SHIM__REQUEST__BODY_REMOVE;
	req.remove = &rm;
	rm.force = 1;
	for (i = 0; i < rep->list->n_tasks; i++) {
		rm.id = rep->list->tasks[i]->id;
		if (mts_ipc_client_call(c, &req.base,
		        &mts__shim__reply__descriptor, &r2, err,
		        sizeof(err)) == 0)
			protobuf_c_message_free_unpacked(r2, NULL);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	mts_ipc_client_close(c);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "start"))
		return cmd_start(argv[2], argv[3], atoi(argv[4]), argv[5]);
	if (argc == 8 && !strcmp(argv[1], "bare"))
		return cmd_bare(argv[2], argv[3], argv[4], atoi(argv[5]),
		    argv[6], argv[7]);
	if (argc == 3 && !strcmp(argv[1], "clean"))
		return cmd_clean(argv[2]);
	fprintf(stderr, "usage: see tests/bench/shim_client.c\n");
	return 2;
}
