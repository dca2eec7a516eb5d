/* fuzz_init_admin.c: libFuzzer target that drives the real mts-init — its admin dispatch table and handlers (version, agent ls/start/stop/restart, config reload), its supervisor and its loop on a thread of its own — over admin.sock with well-formed requests built from the input, on a stand-in config whose agents are shell scripts that report ready and sleep; checks each reply. */
#define main init_main
#include "fuzz_input.h"
#include "fuzz_harness.h"
#include "init/init.c"
#undef main

#include <pthread.h>
#include <stdarg.h>

#include "admin.pb-c.h"

/*
 * mts-init as in production, minus the subreaper: main's set-up in
 * start(), its loop on a thread. The agents are a script that writes
 * READY to its notify fd and sleeps for a minute, so they go up, can be
 * stopped and restarted, and cannot outlive a crashed run by long. Each
 * input is a program of requests: version, agent ls, start/stop/restart
 * of a known or unknown agent, and reload after rewriting the config into
 * one of its variants (agents added, removed, renamed users, changed
 * arguments and dependencies, or a config that must be refused).
 *
 * Forking is bounded: at most SPAWNS_PER_S requests a second that can
 * start a process (start, restart, reload) go out as such; beyond that the
 * harness asks for the version instead. Stops and lists are free.
 */

#define SPAWNS_PER_S 20
#define NAMES 5

static const char *const names[NAMES] = { "a", "b", "c", "d", "nosuch" };
static const char *tdir;
static char conf[128];
static struct init fz;
static struct mts_ipc_client *cli;

/* The agents' process groups get SIGKILL (the scripts would go by
 * themselves within a minute); fz_scratch then removes the directory. */
static void
cleanup(void)
{
	size_t i;

	for (i = 0; i < fz.core.n; i++)
		if (fz.rt != NULL && fz.rt[i].pid > 0)
			(void)kill(-fz.rt[i].pid, SIGKILL);
}

/* The config for variant bits v (0: the one init starts with). */
static void
write_conf(unsigned v)
{
	char tmp[160];
	uid_t u = geteuid() == 0 ? 65534 : geteuid();
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", conf);
	if ((f = fopen(tmp, "w")) == NULL)
		abort();
	fprintf(f,
	    "[node]\nname = fuzz\nrundir = %s/run\nstatedir = %s/state\n"
	    "[init]\nadmin_group = %u\n",
	    tdir, tdir, (unsigned)getegid());
	fprintf(f,
	    "[a]\nexecutable = %s/agent\nuser = %u\nrestart_delay = "
	    "%s\n",
	    tdir, (unsigned)u, v & 1 ? "10ms" : "100ms");
	fprintf(f,
	    "[b]\nexecutable = %s/agent\nuser = %u\nafter = a\n"
	    "args = %s\n",
	    tdir, (unsigned)u, v & 2 ? "one two" : "one");
	if (!(v & 4))
		fprintf(f,
		    "[c]\nexecutable = %s/agent\nuser = %u\n"
		    "restart = %s\n",
		    tdir, (unsigned)u, v & 8 ? "never" : "on-failure");
	if (v & 16)
		fprintf(f,
		    "[d]\nexecutable = %s/agent\nuser = %u\nafter = %s\n", tdir,
		    (unsigned)(v & 32 && u == 65534 ? 65533 : u),
		    v & 4 ? "a" : "c");
	if (v & 64) /* refused: a dependency on nothing */
		fprintf(f, "[e]\nexecutable = %s/agent\nafter = nobody\n",
		    tdir);
	fclose(f);
	if (rename(tmp, conf) < 0)
		abort();
}

static void *
loop_thread(void *arg)
{
	(void)mts_loop_run(fz.loop);
	return NULL;
}

/* main() of init.c, on the stand-in config. */
static void
start(void)
{
	char agent[128], sock[160], err[1024];
	pthread_t t;
	size_t i;
	FILE *f;

	tdir = fz_scratch("init"); /* removed after cleanup() ran */
	if (chmod(tdir, 0755) < 0)
		abort();
	atexit(cleanup);
	snprintf(conf, sizeof(conf), "%s/mts.conf", tdir);
	snprintf(agent, sizeof(agent), "%s/agent", tdir);
	if ((f = fopen(agent, "w")) == NULL)
		abort();
	fprintf(f, "#!/bin/sh\necho READY >&3\nexec sleep 60\n");
	fclose(f);
	if (chmod(agent, 0755) < 0)
		abort();
	write_conf(0);
	log_init("init", MTS_LOG_WARN);
	fz.started = mts_now();
	fz.config_path = conf;
	if (mts_init_conf_load(conf, &fz.conf, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	loop_setup(&fz);
	make_dirs(fz.conf);
	if (mts_crypto_init() < 0)
		abort();
	load_node_key(&fz);
	if (init_admin_open(&fz, err, sizeof(err)) < 0 ||
	    mts_loop_add_server(fz.loop, fz.admin) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	add_agents(&fz, fz.conf);
	for (i = 0; i < fz.core.n; i++)
		init_event(&fz, i, SEV_START);
	arm_deadline(&fz);
	if (pthread_create(&t, NULL, loop_thread, NULL) != 0)
		abort();
	if (mts_ipc_sock_path(sock, sizeof(sock), fz.conf->rundir, "init",
	        NULL) < 0 ||
	    (cli = mts_ipc_client_open(sock, 10000, err, sizeof(err))) == NULL)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	start();
	return 0;
}

/* --- the program ----------------------------------------------------------- */

static void __attribute__((noreturn, format(printf, 1, 2)))
finding(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#define MAY(e) (1u << (e))

/* Sends req; the reply (caller frees), or NULL when it failed with an
 * error in may_fail (any other aborts). */
static Mts__Admin__Reply *
call(Mts__Admin__Request *req, uint32_t may_fail)
{
	ProtobufCMessage *rep = NULL;
	char err[1024];
	int r;

	r = mts_ipc_client_call(cli, &req->base, &mts__admin__reply__descriptor,
	    &rep, err, sizeof(err));
	if (r == 0) {
		if (mts_pb_oneof_case(rep) != req->body_case)
			finding("request %u got a reply of type %u",
			    req->body_case, mts_pb_oneof_case(rep));
		return (Mts__Admin__Reply *)rep;
	}
	if (-r > 0 && -r < 32 && (may_fail & MAY(-r)))
		return NULL;
	finding("request %u failed: %s (%s)", req->body_case, err,
	    mts_strerror(r));
}

static int
known(const char *name)
{
	int i;

	for (i = 0; i < NAMES - 1; i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

static void
check_info(const Mts__Admin__AgentInfo *a)
{
	static const char *const states[] = { "down", "waiting", "starting",
		"up", "stopping", "backoff", "failed" };
	size_t i;

	if (a == NULL || !known(a->name))
		finding("agent info for an agent that was never configured");
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(a->state, states[i]) == 0)
			break;
	if (i == sizeof(states) / sizeof(states[0]))
		finding("agent %s in state '%s'", a->name, a->state);
	if ((strcmp(a->state, "up") == 0 ||
	        strcmp(a->state, "stopping") == 0) &&
	    a->pid == 0)
		finding("agent %s %s without a pid", a->name, a->state);
}

/* Fork budget: the second it was counted in, and how many so far. */
static mts_time_t spawn_second;
static int spawns;

static int
may_spawn(void)
{
	mts_time_t s = mts_now() / 1000;

	if (s != spawn_second) {
		spawn_second = s;
		spawns = 0;
	}
	return spawns++ < SPAWNS_PER_S;
}

static void
op_version(struct in *in)
{
	Mts__Admin__Request req = MTS__ADMIN__REQUEST__INIT;
	Mts__Admin__VersionReq v = MTS__ADMIN__VERSION_REQ__INIT;
	Mts__Admin__Reply *rep;

	req.body_case = MTS__ADMIN__REQUEST__BODY_VERSION_REQ;
	req.version_req = &v;
	rep = call(&req, 0);
	if (strcmp(rep->version_rep->version, MTS_VERSION) != 0 ||
	    rep->version_rep->pid != (uint32_t)getpid() ||
	    strcmp(rep->version_rep->config, conf) != 0)
		finding("version reply does not describe this init");
	mts__admin__reply__free_unpacked(rep, NULL);
}

static void
op_list(struct in *in)
{
	Mts__Admin__Request req = MTS__ADMIN__REQUEST__INIT;
	Mts__Admin__AgentListReq l = MTS__ADMIN__AGENT_LIST_REQ__INIT;
	Mts__Admin__Reply *rep;
	size_t i, j;

	req.body_case = MTS__ADMIN__REQUEST__BODY_AGENT_LIST;
	req.agent_list = &l;
	rep = call(&req, 0);
	for (i = 0; i < rep->agent_list->n_agents; i++) {
		check_info(rep->agent_list->agents[i]);
		for (j = 0; j < i; j++)
			if (strcmp(rep->agent_list->agents[i]->name,
			        rep->agent_list->agents[j]->name) == 0)
				finding("agent %s listed twice",
				    rep->agent_list->agents[i]->name);
	}
	mts__admin__reply__free_unpacked(rep, NULL);
}

static void
op_ctl(struct in *in)
{
	Mts__Admin__Request req = MTS__ADMIN__REQUEST__INIT;
	Mts__Admin__AgentCtlReq c = MTS__ADMIN__AGENT_CTL_REQ__INIT;
	Mts__Admin__Reply *rep;

	c.name = (char *)names[take(in, NAMES)];
	c.action = take(in, 3);
	if (c.action != MTS__ADMIN__AGENT_CTL_REQ__ACTION__STOP &&
	    !may_spawn()) {
		op_version(in);
		return;
	}
	req.body_case = MTS__ADMIN__REQUEST__BODY_AGENT_CTL;
	req.agent_ctl = &c;
	/* unknown: never configured, or removed by a reload */
	if ((rep = call(&req, MAY(MTS_ERR_NOTFOUND))) == NULL)
		return;
	check_info(rep->agent_ctl->agent);
	if (strcmp(rep->agent_ctl->agent->name, c.name) != 0)
		finding("ctl of %s answered for %s", c.name,
		    rep->agent_ctl->agent->name);
	mts__admin__reply__free_unpacked(rep, NULL);
}

static void
check_names(char **v, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!known(v[i]))
			finding("reload %s '%s'", what, v[i]);
}

static void
op_reload(struct in *in)
{
	Mts__Admin__Request req = MTS__ADMIN__REQUEST__INIT;
	Mts__Admin__ReloadReq r = MTS__ADMIN__RELOAD_REQ__INIT;
	Mts__Admin__Reply *rep;
	unsigned v = take(in, 128);

	if (!may_spawn()) {
		op_version(in);
		return;
	}
	write_conf(v);
	req.body_case = MTS__ADMIN__REQUEST__BODY_RELOAD;
	req.reload = &r;
	rep = call(&req, v & 64 ? MAY(MTS_ERR_INVAL) : 0);
	if (v & 64) {
		if (rep != NULL)
			finding("a config with a dependency on nothing was "
			        "taken");
		return;
	}
	check_names(rep->reload->restarted, rep->reload->n_restarted,
	    "restarted");
	check_names(rep->reload->added, rep->reload->n_added, "added");
	check_names(rep->reload->removed, rep->reload->n_removed, "removed");
	mts__admin__reply__free_unpacked(rep, NULL);
}

static void (*const ops[])(
    struct in *) = { op_version, op_list, op_ctl, op_ctl, op_ctl, op_reload };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	int n = 0;

	while (in.n > 0 && n++ < 16)
		ops[take(&in, sizeof(ops) / sizeof(ops[0]))](&in);
	return 0;
}
