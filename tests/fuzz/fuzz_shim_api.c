/* fuzz_shim_api.c: libFuzzer target for mts-shim's API — well-formed requests built from the fuzzer's bytes (odd values: empty strings, huge numbers, missing fields, ids of live tasks) go through the real dispatch table on a real shim.sock and the real handlers, with tasks run by the real monitor over a runtime stand-in script, in a temp state dir. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agents/shim/image_stage.h"
#include "agents/shim/shim.h"
#include "cfg.h"
#include "fsutil.h"
#include "hash.h"
#include "log.h"
#include "loop.h"
#include "mtstime.h"
#include "sp_wire.h"
#include "xmalloc.h"

/*
 * Debugging aids (environment): FUZZ_SHIM_LOG=1 the shim's debug log and
 * every reply, FUZZ_SHIM_STATS=N the harness's state every N inputs,
 * FUZZ_SHIM_KEEP=1 keeps the temp directory at exit.
 */
#define MAX_REQS 6        /* requests per input */
#define REPLY_WAIT_MS 400 /* then the caller hangs up; the shim carries on */
#define MAX_TASKS 4       /* beyond: every task is force-removed */
#define IMAGE "fuzz:latest"

/* The OCI runtime: run starts a short sleep as the container (the monitor,
 * a subreaper, adopts it), exec prints and fails, the rest succeeds. */
static const char runtime_sh[] =
    "#!/bin/sh\n"
    "while [ $# -gt 0 ]; do case $1 in --root|--log|--log-format) shift 2;;"
    " *) break;; esac; done\n"
    "cmd=$1; shift\n"
    "case $cmd in\n"
    "run) while [ $# -gt 0 ]; do case $1 in --pid-file) pf=$2; shift 2;;"
    " *) shift;; esac; done\n"
    "  sleep 1 </dev/null >/dev/null 2>&1 & echo $! >\"$pf\"; exit 0;;\n"
    "exec) echo exec-output; exit 3;;\n"
    "esac\nexit 0\n";
/* mts-shim-image: an import names the image the harness keeps, a pull
 * fails as an unreachable registry would. */
static const char image_sh[] =
    "#!/bin/sh\n"
    "case $1 in import) echo 'OK " IMAGE "';; *) echo 'ERR 5 no registry "
    "here';; esac\n";

static struct shim s;
static char dir[64], sock[SHIM_PATH];
static char blob_digest[MTS_DIGEST_LEN + 1]; /* the image's one blob */
static uint32_t next_id = 1;
static uint64_t last_session;
static int verbose; /* FUZZ_SHIM_LOG set: the shim's debug log, replies */

/* --- set-up, once ------------------------------------------------------- */

static void
put_file(const char *path, const char *text, mode_t mode)
{
	if (mts_write_atomic(path, text, strlen(text), mode, 0) != 0)
		abort();
}

/* The image every run may name: one layer with /etc/passwd and /etc/group,
 * recorded as the store records an import. */
static void
make_image(void)
{
	static char *cmd[] = { "sh", NULL }, *env[] = { "PATH=/bin", NULL };
	struct mts_image_info in;
	struct mts_stage *sg;
	char path[PATHMAX + 64], err[256], digest[MTS_DIGEST_LEN + 1];
	char blob[3000];
	uint8_t sha[32] = { 1 };
	int64_t bsize;

	mts_digest_format(digest, sha);
	if (mts_stage_new(s.store, &sg, err, sizeof(err)) != 0)
		abort();
	snprintf(path, sizeof(path), "%s/layer-%s/etc", mts_stage_dir(sg),
	    mts_img_hex(digest));
	if (mts_mkdir_p(path, 0755, 0755) != 0)
		abort();
	snprintf(path, sizeof(path), "%s/layer-%s/etc/passwd",
	    mts_stage_dir(sg), mts_img_hex(digest));
	put_file(path,
	    "root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/:/bin/sh\n", 0644);
	snprintf(path, sizeof(path), "%s/layer-%s/etc/group", mts_stage_dir(sg),
	    mts_img_hex(digest));
	put_file(path, "root:x:0:\napp:x:1000:\n", 0644);
	mts_img_staged_add(sg, digest, 1);
	/* one blob, for image_blob requests (other nodes fetching it) */
	snprintf(path, sizeof(path), "%s/incoming", mts_stage_dir(sg));
	memset(blob, 'b', sizeof(blob));
	if (mts_write_atomic(path, blob, sizeof(blob), 0644, 0) != 0 ||
	    mts_img_hash_file(path, blob_digest, &bsize) != 0 ||
	    mts_stage_add_blob(sg, path, blob_digest, bsize, err,
	        sizeof(err)) != 0)
		abort();
	memset(&in, 0, sizeof(in));
	in.name = IMAGE;
	snprintf(in.id, sizeof(in.id), "%s", digest);
	in.layers = (char *[]){ digest, NULL };
	in.nlayers = 1;
	in.blobs = (char *[]){ blob_digest, NULL };
	in.nblobs = 1;
	in.cfg.cmd = cmd;
	in.cfg.env = env;
	if (mts_img_stage_commit(sg, &in, err, sizeof(err)) != 0)
		abort();
	mts_stage_free(sg);
}

static void
on_child(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	shim_children_reap(&s);
}

/* As in shim.c: one monitor kept waiting for the next start. */
static void
on_turn(void *arg, mts_time_t now)
{
	shim_monitor_spare(&s);
}

static void
cleanup(void)
{
	char cmd[128];

	shim_waits_free(&s);
	while (s.tasks != NULL) {
		struct shim_task *t = s.tasks;
		s.tasks = t->next;
		if (t->monitor > 0)
			kill(t->monitor, SIGKILL);
		/* freed, not just unlinked: LeakSanitizer's exit check runs
		 * after this handler and counts an unlinked task as a leak */
		shim_task_free(t);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (getenv("FUZZ_SHIM_KEEP") != NULL)
		fprintf(stderr, "kept %s\n", dir);
	else if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* The shim as main() sets it up, with its config from text. */
static void
config(void)
{
	char text[1024], err[512], self[PATH_MAX], *slash;
	struct mts_cfg *cfg;
	ssize_t n;

	snprintf(text, sizeof(text),
	    "[node]\nrundir = %s/run\nstatedir = "
	    "%s/state\n[shim]\nacl = 0\nrootfs = copy\n",
	    dir, dir);
	if (mts_cfg_parse(text, "fuzz", mts_conf_schema(), &cfg, err,
	        sizeof(err)) != 0 ||
	    mts_acl_table_load(&s.cfg.acl, shim_service.acl, cfg, "shim", err,
	        sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	mts_cfg_free(cfg);
	snprintf(s.cfg.rundir, sizeof(s.cfg.rundir), "%s/run", dir);
	snprintf(s.cfg.statedir, sizeof(s.cfg.statedir), "%s/state", dir);
	snprintf(s.cfg.runtime_root, sizeof(s.cfg.runtime_root), "%s/runc",
	    dir);
	snprintf(s.cfg.runtime, sizeof(s.cfg.runtime), "%s/runtime", dir);
	snprintf(s.cfg.image_tool, sizeof(s.cfg.image_tool), "%s/image", dir);
	/* The real monitor, next to the fuzzer's build directory. */
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		abort();
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	snprintf(s.cfg.monitor, sizeof(s.cfg.monitor),
	    "%s/../bin/mts-shim-monitor", self);
	snprintf(s.cfg.cgroup_parent, sizeof(s.cfg.cgroup_parent), "/mts-fuzz");
	snprintf(s.cfg.cgroup_mem, sizeof(s.cfg.cgroup_mem), "%s/cg", dir);
	snprintf(s.cfg.node, sizeof(s.cfg.node), "%032x", 0);
	s.cfg.rootfs = MTS_ROOTFS_COPY;
	s.cfg.log_max = 4096;
	s.cfg.log_keep = 2;
	s.cfg.grace = 200;
	s.cfg.exec_idle = 2000;
	s.cfg.default_pids = 64;
	s.cfg.pull_low_speed = 1024;
	s.cfg.pull_low_time = 1000;
	s.cfg.pull_timeout = 2000;
	s.cfg.pull_max_blob = 1 << 20;
}

static void
setup(void)
{
	char path[SHIM_PATH + 16], err[512];

	snprintf(dir, sizeof(dir), "/tmp/mts-fuzz-shim.XXXXXX");
	if (mkdtemp(dir) == NULL)
		abort();
	atexit(cleanup);
	verbose = getenv("FUZZ_SHIM_LOG") != NULL;
	log_init("shim", verbose ? MTS_LOG_DEBUG : MTS_LOG_WARN);
	if (mts_crypto_init() != 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		abort();
	signal(SIGPIPE, SIG_IGN);
	config();
	snprintf(path, sizeof(path), "%s/runtime", dir);
	put_file(path, runtime_sh, 0755);
	snprintf(path, sizeof(path), "%s/image", dir);
	put_file(path, image_sh, 0755);
	snprintf(path, sizeof(path), "%s/state/tasks", dir);
	s.spare_fd = -1;
	if (mts_mkdir_p(path, 0700, 0755) != 0 ||
	    mts_mkdir_p(s.cfg.runtime_root, 0700, 0755) != 0 ||
	    mts_mkdir_p(s.cfg.rundir, 0700, 0755) != 0 ||
	    (s.loop = mts_loop_new()) == NULL ||
	    mts_loop_signal(s.loop, SIGCHLD, on_child, &s) < 0 ||
	    mts_loop_on_turn(s.loop, on_turn, &s) < 0 ||
	    shim_exec_setup(&s) != 0)
		abort();
	snprintf(path, sizeof(path), "%s/state/images", dir);
	if (mts_store_open(path, &s.store, err, sizeof(err)) != 0)
		abort();
	make_image();
	snprintf(sock, sizeof(sock), "%s/run/shim.sock", dir);
	if ((s.srv = mts_ipc_server_open(sock, &shim_service, &s, err,
	         sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	mts_ipc_server_set_acl(s.srv, &s.cfg.acl);
	if (mts_loop_add_server(s.loop, s.srv) != 0)
		abort();
}

/* --- the fuzzer's bytes as values --------------------------------------- */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t
u8(struct in *in)
{
	if (in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

static uint64_t
u64(struct in *in)
{
	uint64_t v = 0;
	int i, k = u8(in) % 4;

	/* mostly small, sometimes the extremes */
	if (k == 0)
		return u8(in);
	if (k == 1)
		return UINT64_MAX - u8(in);
	for (i = 0; i < (k == 2 ? 4 : 8); i++)
		v = v << 8 | u8(in);
	return v;
}

static uint32_t
u32(struct in *in)
{
	return (uint32_t)u64(in);
}

static const char *const words[] = { "CMD", "CMD-SHELL", "HTTP", "TCP", "NONE",
	"any", "on-failure", "none", "root", "0:0", "app", "nobody",
	"1000:1000", "app:root", "/", "/tmp", "sh", "-c", "true", "exit 3",
	"KEY=VALUE", "PATH=", "=x", "sha256:", "sha256:0101010101010101",
	"../../etc", "tmpfs", "bind", "ro", "fuzz", "/nonexistent", "rbind",
	"/proc/self/ns/net", "a.b-c_d", "-x" };

/* A string: empty, a live task's id, the image, a word, a long one or raw
 * bytes (no NUL: protobuf strings). buf holds at least 5000 bytes. */
static char *
str(struct in *in, char *buf)
{
	struct shim_task *t;
	size_t i, n;
	int k = u8(in) % 8;

	buf[0] = '\0';
	switch (k) {
	case 1:
		for (t = s.tasks, n = u8(in); t != NULL && n > 0; n--)
			t = t->next;
		if (t != NULL)
			snprintf(buf, 5000, "%s", t->core.id);
		break;
	case 2:
		snprintf(buf, 5000, "%s", IMAGE);
		break;
	case 3:
	case 4:
		snprintf(buf, 5000, "%s",
		    words[u8(in) % (sizeof(words) / sizeof(words[0]))]);
		break;
	case 5:
		memset(buf, 'a' + u8(in) % 26, 4096);
		buf[4096] = '\0';
		break;
	case 6:
	case 7:
		for (i = 0, n = u8(in) % 64; i < n; i++)
			buf[i] = (char)(u8(in) | 1);
		buf[i] = '\0';
		break;
	}
	return buf;
}

/* Every string and array of a request lives in one arena, freed after it
 * is sent. */
struct arena {
	void *p[512];
	size_t n;
};

static void *
akeep(struct arena *a, void *p)
{
	if (a->n == sizeof(a->p) / sizeof(a->p[0]))
		abort();
	return a->p[a->n++] = p;
}

static char *
astr(struct arena *a, struct in *in)
{
	char buf[5000];

	return akeep(a, xstrdup(str(in, buf)));
}

static char **
astrv(struct arena *a, struct in *in, size_t *n)
{
	char **v = akeep(a, xcalloc(4, sizeof(char *)));
	size_t i;

	*n = u8(in) % 4;
	for (i = 0; i < *n; i++)
		v[i] = astr(a, in);
	return v;
}

static void
arena_free(struct arena *a)
{
	while (a->n > 0)
		free(a->p[--a->n]);
}

/* --- requests ------------------------------------------------------------ */

/* A health check; HTTP and TCP probes only ever aim at port 1 on the
 * task's loopback (nothing listens there), or at malformed targets. */
static void
health(struct in *in, struct arena *a, Mts__Shim__HealthCheck *h, char **test)
{
	static const char *const targets[] = { "1", "0", "65536", "x", "",
		"http://127.0.0.1:1/", "http://x", "http://127.0.0.1:99999/" };
	size_t n;

	test[0] = (char *)words[u8(in) % 6];
	n = 1 + u8(in) % 3;
	if (!strcmp(test[0], "HTTP") || !strcmp(test[0], "TCP"))
		test[1] = (char *)targets[u8(in) % 8];
	else
		test[1] = astr(a, in);
	test[2] = astr(a, in);
	h->test = test;
	h->n_test = n;
	h->interval_ms = u32(in) % 500;
	h->timeout_ms = u32(in) % 500;
	h->retries = u32(in);
	h->start_period_ms = u32(in);
}

static void
spec(struct in *in, struct arena *a, Mts__Shim__TaskSpec *sp,
    Mts__Shim__RestartPolicy *rp, Mts__Shim__HealthCheck *hc, char **test,
    Mts__Shim__Mount *m, Mts__Shim__Mount **mp)
{
	uint8_t flags = u8(in);
	size_t i;

	sp->id = astr(a, in);
	sp->image = flags & 1 ? IMAGE : astr(a, in);
	sp->entrypoint = astrv(a, in, &sp->n_entrypoint);
	sp->command = astrv(a, in, &sp->n_command);
	sp->env = astrv(a, in, &sp->n_env);
	sp->cwd = astr(a, in);
	sp->user = flags & 2 ? astr(a, in) : "";
	sp->hostname = astr(a, in);
	sp->n_mounts = u8(in) % 3;
	for (i = 0; i < sp->n_mounts; i++) {
		mts__shim__mount__init(&m[i]);
		m[i].source = astr(a, in);
		m[i].destination = astr(a, in);
		m[i].type = astr(a, in);
		m[i].options = astrv(a, in, &m[i].n_options);
		mp[i] = &m[i];
	}
	sp->mounts = mp;
	sp->read_only = flags & 4;
	sp->memory_limit = u64(in);
	sp->cpu_millis = u32(in);
	sp->pids_limit = u32(in);
	sp->stop_grace_ms = u32(in) % 3000;
	sp->nofile = u64(in);
	sp->service = astr(a, in);
	if (flags & 8) {
		rp->condition = astr(a, in);
		rp->max_attempts = u32(in) % 4;
		rp->delay_ms = u32(in) % 200;
		rp->max_delay_ms = u32(in) % 400;
		sp->restart = rp;
	}
	if (flags & 16) {
		health(in, a, hc, test);
		sp->health = hc;
	}
}

/* Builds one request from the bytes and packs it into out (caller frees). */
static size_t
build(struct in *in, uint8_t **out)
{
	Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__TaskRunReq run = MTS__SHIM__TASK_RUN_REQ__INIT;
	Mts__Shim__TaskSpec sp = MTS__SHIM__TASK_SPEC__INIT;
	Mts__Shim__RestartPolicy rp = MTS__SHIM__RESTART_POLICY__INIT;
	Mts__Shim__HealthCheck hc = MTS__SHIM__HEALTH_CHECK__INIT;
	Mts__Shim__Mount m[3], *mp[3];
	Mts__Shim__TaskListReq ls = MTS__SHIM__TASK_LIST_REQ__INIT;
	Mts__Shim__TaskInspectReq ins = MTS__SHIM__TASK_INSPECT_REQ__INIT;
	Mts__Shim__TaskStopReq st = MTS__SHIM__TASK_STOP_REQ__INIT;
	Mts__Shim__TaskRemoveReq rm = MTS__SHIM__TASK_REMOVE_REQ__INIT;
	Mts__Shim__LogsReq lg = MTS__SHIM__LOGS_REQ__INIT;
	Mts__Shim__ExecReq ex = MTS__SHIM__EXEC_REQ__INIT;
	Mts__Shim__ExecStartReq es = MTS__SHIM__EXEC_START_REQ__INIT;
	Mts__Shim__ExecIoReq eio = MTS__SHIM__EXEC_IO_REQ__INIT;
	Mts__Shim__ImageImportReq ii = MTS__SHIM__IMAGE_IMPORT_REQ__INIT;
	Mts__Shim__ImagePullReq ip = MTS__SHIM__IMAGE_PULL_REQ__INIT;
	Mts__Shim__ImageListReq il = MTS__SHIM__IMAGE_LIST_REQ__INIT;
	Mts__Shim__ImageRemoveReq ir = MTS__SHIM__IMAGE_REMOVE_REQ__INIT;
	Mts__Shim__ImageBlobReq ib = MTS__SHIM__IMAGE_BLOB_REQ__INIT;
	char *test[3], stdin_buf[256];
	struct arena a = { .n = 0 };
	size_t len, i;

	switch (u8(in) % 14) {
	case 0:
		spec(in, &a, &sp, &rp, &hc, test, m, mp);
		if (u8(in) % 8 != 7)
			run.spec = &sp; /* else: a run without a spec */
		req.body_case = MTS__SHIM__REQUEST__BODY_RUN;
		req.run = &run;
		break;
	case 1:
		req.body_case = MTS__SHIM__REQUEST__BODY_LIST;
		req.list = &ls;
		break;
	case 2:
		ins.id = astr(&a, in);
		req.body_case = MTS__SHIM__REQUEST__BODY_INSPECT;
		req.inspect = &ins;
		break;
	case 3:
		st.id = astr(&a, in);
		st.has_grace = u8(in) & 1;
		st.grace_ms = u32(in) % 1000;
		req.body_case = MTS__SHIM__REQUEST__BODY_STOP;
		req.stop = &st;
		break;
	case 4:
		rm.id = astr(&a, in);
		rm.force = u8(in) & 1;
		req.body_case = MTS__SHIM__REQUEST__BODY_REMOVE;
		req.remove = &rm;
		break;
	case 5:
		lg.id = astr(&a, in);
		lg.offset = u64(in);
		lg.tail_lines = u32(in);
		lg.max_bytes = u32(in);
		req.body_case = MTS__SHIM__REQUEST__BODY_LOGS;
		req.logs = &lg;
		break;
	case 6:
		ex.id = astr(&a, in);
		ex.args = astrv(&a, in, &ex.n_args);
		ex.env = astrv(&a, in, &ex.n_env);
		ex.timeout_ms = u32(in) % 1000;
		req.body_case = MTS__SHIM__REQUEST__BODY_EXEC;
		req.exec = &ex;
		break;
	case 7:
		es.id = astr(&a, in);
		es.args = astrv(&a, in, &es.n_args);
		es.env = astrv(&a, in, &es.n_env);
		es.tty = u8(in) & 1;
		es.rows = u32(in);
		es.cols = u32(in);
		es.stdin = u8(in) & 1;
		req.body_case = MTS__SHIM__REQUEST__BODY_EXEC_START;
		req.exec_start = &es;
		break;
	case 8:
		eio.session = u8(in) & 1 ? last_session : u64(in);
		eio.stdin.len = u8(in) % sizeof(stdin_buf);
		for (i = 0; i < eio.stdin.len; i++)
			stdin_buf[i] = (char)u8(in);
		eio.stdin.data = (uint8_t *)stdin_buf;
		eio.close_stdin = u8(in) & 1;
		eio.rows = u32(in);
		eio.cols = u32(in);
		eio.wait_ms = u32(in) % 300;
		eio.max_bytes = u32(in);
		eio.signal = u8(in) & 1 ? u32(in) : 0;
		req.body_case = MTS__SHIM__REQUEST__BODY_EXEC_IO;
		req.exec_io = &eio;
		break;
	case 9:
		ii.path = astr(&a, in);
		ii.name = astr(&a, in);
		req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_IMPORT;
		req.image_import = &ii;
		break;
	case 10:
		ip.ref = astr(&a, in);
		ip.insecure = u8(in) & 1;
		ip.source =
		    (char *[]){ "", "peers", "registry", NULL }[u8(in) % 4];
		if (ip.source == NULL)
			ip.source = astr(&a, in);
		req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_PULL;
		req.image_pull = &ip;
		break;
	case 11:
		req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_LIST;
		req.image_list = &il;
		break;
	case 12:
		ib.digest = u8(in) & 1 ? blob_digest : astr(&a, in);
		ib.offset = u8(in) & 1 ? u32(in) % 3200 : u64(in);
		ib.max_bytes = u8(in) & 1 ? u32(in) % 4096 : u32(in);
		req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_BLOB;
		req.image_blob = &ib;
		break;
	default:
		ir.name = u8(in) & 1 ? IMAGE : astr(&a, in);
		ir.force = u8(in) & 1;
		req.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_REMOVE;
		req.image_remove = &ir;
		break;
	}
	mts_pb_set_version(&req.base);
	len = protobuf_c_message_get_packed_size(&req.base);
	*out = xmalloc(len + 1);
	protobuf_c_message_pack(&req.base, *out);
	arena_free(&a);
	return len;
}

/* --- one caller on shim.sock --------------------------------------------- */

static int
dial(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint8_t hello[SP_GREETING_LEN];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		abort();
	sp_greeting(hello, SP_PROTO_REQ);
	if (write(fd, hello, sizeof(hello)) != sizeof(hello))
		abort();
	return fd;
}

static void
send_request(int fd, uint32_t id, const uint8_t *body, size_t len)
{
	uint8_t head[SP_FRAME_HEAD + 4];
	size_t off = 0;
	ssize_t w;
	mts_time_t end = mts_now() + 2000;

	head[0] = SP_MSG;
	mts_put_u64be(head + 1, len + 4);
	mts_put_u32be(head + SP_FRAME_HEAD, id | SP_ID_END);
	if (write(fd, head, sizeof(head)) != sizeof(head))
		abort();
	/* The server reads while the loop runs: a large body goes in parts. */
	while (off < len && mts_now() < end) {
		if ((w = write(fd, body + off, len - off)) > 0)
			off += (size_t)w;
		else
			mts_loop_run_once(s.loop, 5);
	}
}

static void
consume(struct mts_buf *b, size_t n)
{
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

/* Reads replies until the one for id came (1) or nothing more is there
 * (0); every reply must unpack as a shim Reply. */
static int
read_replies(int fd, struct mts_buf *b, uint32_t id)
{
	uint8_t tmp[65536];
	ssize_t n;
	size_t len;
	int got = 0;

	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		mts_buf_put(b, tmp, (size_t)n);
	if (b->len >= SP_GREETING_LEN && sp_greeting_is(b->data, SP_PROTO_REP))
		consume(b, SP_GREETING_LEN);
	while (b->len >= SP_FRAME_HEAD + 4 &&
	    b->len >= SP_FRAME_HEAD + (len = mts_get_u64be(b->data + 1))) {
		Mts__Shim__Reply *rep = mts__shim__reply__unpack(NULL, len - 4,
		    b->data + SP_FRAME_HEAD + 4);
		if (b->data[0] != SP_MSG || len < 4 || rep == NULL)
			abort(); /* the shim sent something that is no reply */
		got |=
		    (mts_get_u32be(b->data + SP_FRAME_HEAD) & ~SP_ID_END) == id;
		if (verbose)
			fprintf(stderr, "reply %u: body %d, error %s\n",
			    mts_get_u32be(b->data + SP_FRAME_HEAD) & ~SP_ID_END,
			    (int)rep->body_case,
			    rep->error ? rep->error->message : "none");
		if (rep->body_case == MTS__SHIM__REPLY__BODY_EXEC_START)
			last_session = rep->exec_start->session;
		mts__shim__reply__free_unpacked(rep, NULL);
		consume(b, SP_FRAME_HEAD + len);
	}
	return got;
}

/* One request on its own connection: sent, the shim's loop run until the
 * reply came or REPLY_WAIT_MS passed (a stop waits for the task), then the
 * caller hangs up. */
static void
call(const uint8_t *body, size_t len)
{
	struct mts_buf b;
	uint32_t id = next_id++ & ~SP_ID_END;
	mts_time_t end = mts_now() + REPLY_WAIT_MS;
	int fd = dial(), done = 0;

	mts_buf_init(&b);
	mts_loop_run_once(s.loop, 0);
	send_request(fd, id, body, len);
	while (!done && mts_now() < end) {
		mts_loop_run_once(s.loop, 5);
		done = read_replies(fd, &b, id);
	}
	close(fd);
	mts_buf_free(&b);
}

static size_t
count_tasks(void)
{
	const struct shim_task *t;
	size_t n = 0;

	for (t = s.tasks; t != NULL; t = t->next)
		n++;
	return n;
}

/* Keeps the harness bounded: too many tasks are force-removed (through
 * the API too), and the image comes back if a request removed it. */
static void
bound(void)
{
	struct mts_image_info img;
	mts_time_t end;

	/* counted again each turn: a forced remove of a task that is still
	 * stopping does not remove it yet */
	for (end = mts_now() + 3000;
	     count_tasks() > MAX_TASKS && mts_now() < end;) {
		Mts__Shim__Request req = MTS__SHIM__REQUEST__INIT;
		Mts__Shim__TaskRemoveReq rm = MTS__SHIM__TASK_REMOVE_REQ__INIT;
		uint8_t buf[256];
		size_t len;

		rm.id = s.tasks->core.id;
		rm.force = 1;
		req.body_case = MTS__SHIM__REQUEST__BODY_REMOVE;
		req.remove = &rm;
		mts_pb_set_version(&req.base);
		len = protobuf_c_message_pack(&req.base, buf);
		call(buf, len);
	}
	if (mts_store_get(s.store, IMAGE, &img) == 0)
		mts_image_info_free(&img);
	else if (!s.image_job)
		make_image();
}

/* Before libFuzzer starts its threads (they inherit the mask): SIGCHLD
 * must reach the loop's signalfd, not one of them, as in the shim, whose
 * only thread is the loop's. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	sigset_t ss;

	sigemptyset(&ss);
	sigaddset(&ss, SIGCHLD);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned long inputs;
	struct in in = { .p = data, .n = size };
	struct mts_image_info img;
	uint8_t *body;
	size_t len;
	int i;

	if (s.loop == NULL)
		setup();
	for (i = 0; i < MAX_REQS && in.n > 0; i++) {
		len = build(&in, &body);
		call(body, len);
		free(body);
	}
	bound();
	if (getenv("FUZZ_SHIM_STATS") != NULL &&
	    ++inputs % (unsigned long)atoi(getenv("FUZZ_SHIM_STATS")) == 0) {
		struct shim_task *t;
		struct shim_child *c;
		size_t nt = 0, nc = 0;
		for (t = s.tasks; t != NULL; t = t->next)
			nt++;
		for (c = s.children; c != NULL; c = c->next)
			nc++;
		int has = mts_store_get(s.store, IMAGE, &img) == 0;
		if (has)
			mts_image_info_free(&img);
		fprintf(stderr,
		    "stats: %lu inputs, %zu tasks, %zu children, "
		    "image_job %d, spare %d, image %s\n",
		    inputs, nt, nc, s.image_job, (int)s.spare,
		    has ? "yes" : "no");
		for (t = s.tasks; t != NULL; t = t->next)
			fprintf(stderr, "  task %s: %s %s\n", t->core.id,
			    mts_task_state_name(t->core.state), t->error);
		for (c = s.children; c != NULL; c = c->next)
			fprintf(stderr,
			    "  child %d kind %d exited %d call %p "
			    "deadline in %lld\n",
			    (int)c->pid, c->kind, c->exited, (void *)c->call,
			    (long long)(c->deadline - mts_now()));
	}
	if (verbose) {
		struct shim_task *t;
		for (t = s.tasks; t != NULL; t = t->next)
			fprintf(stderr, "task %s: %s, error \"%s\"\n",
			    t->core.id, mts_task_state_name(t->core.state),
			    t->error);
	}
	return 0;
}
