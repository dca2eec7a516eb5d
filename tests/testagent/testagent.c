/* testagent.c: the test agent's main — an in-memory statestore.proto server for the init, mtsctl and relay tests that can misbehave on request (crash, exit codes, forbidden syscalls, slow gets), and the skeleton a new agent is copied from (docs/agents.md): arguments and config, the loop, the sandbox, readiness. */
#include <stdlib.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "agent.h"
#include "log.h"
#include "loop.h"
#include "mtstime.h"
#include "testagent.h"

static int
opt(void *arg, int c, const char *val)
{
	struct ta *t = arg;

	if (c == 's')
		t->sock = val;
	else if (c == 'x')
		return ta_fault_parse(val, &t->fault);
	else if (c == 'w')
		t->delay_ms = atoi(val);
	else if (c == 'g')
		t->get_ms = atoi(val);
	else if (c == 'o')
		t->open = 1;
	else
		return -1;
	return 0;
}

/* --- faults (-x) ---------------------------------------------------------- */

static void
fault_exit(const struct ta_fault *f)
{
	log_info("exiting with code %d as asked", f->code);
	exit(f->code);
}

static void
fault_abort(const struct ta_fault *f)
{
	abort();
}

static void
fault_syscall(const struct ta_fault *f)
{
	log_info("calling ptrace, which no policy allows");
	(void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	log_warnx("ptrace was allowed");
	exit(MTS_EXIT_FAILURE);
}

static void
fault_inet(const struct ta_fault *f)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	log_warnx("socket(AF_INET) returned %d", fd);
	exit(MTS_EXIT_FAILURE);
}

/* Leaves a grandchild in its own session, which only a subreaper can
 * catch when the agent goes away. */
static void
fault_orphan(const struct ta_fault *f)
{
	pid_t p = fork();

	if (p == 0) {
		setsid();
		if (fork() == 0) {
			for (;;)
				pause();
		}
		_exit(0);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

/* What each fault does; orphan happens at start, the others once the
 * delay is over. */
static void (*const faults[TA_NFAULTS])(const struct ta_fault *) = {
	[TA_FAULT_EXIT] = fault_exit,
	[TA_FAULT_ABORT] = fault_abort,
	[TA_FAULT_SYSCALL] = fault_syscall,
	[TA_FAULT_INET] = fault_inet,
	[TA_FAULT_ORPHAN] = fault_orphan,
};

static void
on_fault_timer(void *arg, mts_time_t now)
{
	struct ta *t = arg;

	faults[t->fault.kind](&t->fault);
}

/* --- start-up --------------------------------------------------------------- */

/* The config ([testagent] acl, or anyone with -o) and the loop with its
 * stop signals. */
static int
setup(struct ta *t, struct mts_agent *a)
{
	char err[512];

	if (mts_acl_table_load(&t->acl, t->open ? ta_acl_open : ta_service.acl,
	        a->cfg, TA_SECTION, err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	if ((t->loop = mts_loop_new()) == NULL ||
	    mts_loop_stop_on_signals(t->loop) < 0)
		return -1;
	mts_timer_init(&t->fault_timer, "fault", on_fault_timer, t);
	return 0;
}

/* After the sandbox: the socket, served by the loop. */
static int
serve(struct ta *t, struct mts_agent *a)
{
	char path[512], err[256];

	/* Under init its socket goes in its own directory; run by hand it
	 * plays the statestore (the default socket) in the statestore's. */
	if (mts_ipc_sock_path(path, sizeof(path), a->rundir,
	        getenv("MTS_AGENT") ? a->name : "statestore", t->sock) < 0) {
		log_warnx("socket path too long");
		return -1;
	}
	if ((t->srv = mts_ipc_server_open(path, &ta_service, t, err,
	         sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	mts_ipc_server_set_acl(t->srv, &t->acl);
	if (mts_loop_add_server(t->loop, t->srv) < 0)
		return -1;
	log_info("ready on %s", path);
	return 0;
}

static void
cleanup(struct ta *t, struct mts_agent *a)
{
	if (t->srv != NULL) {
		mts_loop_remove_server(t->loop, t->srv);
		mts_ipc_server_close(t->srv);
	}
	mts_timer_disarm(t->loop, &t->fault_timer);
	mts_loop_free(t->loop);
	mts_acl_table_free(&t->acl);
	ta_core_free(&t->core);
	mts_agent_free(a);
}

int
main(int argc, char **argv)
{
	struct ta t = { .sock = "statestore.sock" };
	struct mts_agent a;
	int rc = MTS_EXIT_FAILURE;

	ta_core_init(&t.core);
	mts_agent_init(&a, "testagent", argc, argv, "s:x:w:g:o", opt, &t);
	if (setup(&t, &a) < 0) {
		cleanup(&t, &a);
		return MTS_EXIT_USAGE;
	}
	if (mts_crypto_init() < 0 || mts_agent_sandbox(&a) < 0 ||
	    serve(&t, &a) < 0)
		goto out;
	if (t.fault.kind == TA_FAULT_ORPHAN) {
		faults[TA_FAULT_ORPHAN](&t.fault);
		t.fault.kind = TA_FAULT_NONE;
	}
	mts_agent_ready(&a);
	if (t.fault.kind != TA_FAULT_NONE)
		mts_timer_arm(t.loop, &t.fault_timer, mts_now() + t.delay_ms);
	if (mts_loop_run(t.loop) == 0)
		rc = MTS_EXIT_OK;
	log_info("stopping");
out:
	cleanup(&t, &a);
	return rc;
}
