/* testagent.c: an agent built only for tests — a tiny in-memory statestore.proto server that can misbehave on request (crash, exit codes, forbidden syscalls, slow gets). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "agent.h"
#include "hash.h"
#include "hlc.h"
#include "ipc.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

struct entry {
	uint8_t *key;
	size_t klen;
	uint64_t hlc;
	int tomb;
	uint8_t *value;
	size_t vlen;
};

struct ta {
	struct entry *e;
	size_t n;
	struct mts_hlc hlc;
	const char *sock;  /* -s: socket name in the run directory */
	const char *fault; /* -x: misbehaviour after ready */
	int delay_ms;	   /* -w: wait before misbehaving */
	int get_ms;	   /* -g: every get answers after this long */
	int open;	   /* -o: any uid may call (a relay target) */
};

static const uint8_t origin[16] = {0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};
static volatile sig_atomic_t stop;

static int
cmpkey(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	size_t n = al < bl ? al : bl;
	int c = n ? memcmp(a, b, n) : 0; /* empty keys may be NULL */

	return c != 0 ? c : (al > bl) - (al < bl);
}

/* Index of key, or of where it would go (with *found 0). */
static size_t
find(struct ta *t, const uint8_t *k, size_t kl, int *found)
{
	size_t i;
	int c;

	for (i = 0; i < t->n; i++) {
		c = cmpkey(t->e[i].key, t->e[i].klen, k, kl);
		if (c >= 0) {
			*found = c == 0;
			return i;
		}
	}
	*found = 0;
	return t->n;
}

static struct entry *
upsert(struct ta *t, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl, int tomb)
{
	int found;
	size_t i = find(t, k, kl, &found);
	struct entry *e;

	if (!found) {
		t->e = xreallocarray(t->e, t->n + 1, sizeof(*t->e));
		memmove(&t->e[i + 1], &t->e[i], (t->n - i) * sizeof(*t->e));
		t->n++;
		e = &t->e[i];
		e->key = xmemdup(k, kl ? kl : 1);
		e->klen = kl;
		e->value = NULL;
	} else {
		e = &t->e[i];
		free(e->value);
	}
	e->value = xmemdup(v ? v : (const uint8_t *)"", vl ? vl : 1);
	e->vlen = vl;
	e->tomb = tomb;
	e->hlc = mts_hlc_now(&t->hlc, mts_wall_ms());
	return e;
}

static void
fill(Mts__Record *r, const struct entry *e)
{
	r->hlc = e->hlc;
	r->origin.data = (uint8_t *)origin;
	r->origin.len = sizeof(origin);
	r->tombstone = e->tomb;
	r->value.data = e->value;
	r->value.len = e->vlen;
}

static void
h_get(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__GetRep g = MTS__STATESTORE__GET_REP__INIT;
	Mts__Record r = MTS__RECORD__INIT;
	struct ta *t = ctx;
	int found;
	size_t i = find(t, req->get->key.data, req->get->key.len, &found);

	if (t->get_ms > 0) /* a slow agent: its loop stalls too */
		usleep((useconds_t)t->get_ms * 1000);

	if (found) {
		fill(&r, &t->e[i]);
		g.found = 1;
		g.record = &r;
	}
	rep.body_case = MTS__STATESTORE__REPLY__BODY_GET;
	rep.get = &g;
	mts_ipc_reply(call, &rep.base);
}

static void
h_put(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__PutRep p = MTS__STATESTORE__PUT_REP__INIT;
	Mts__Record r = MTS__RECORD__INIT;

	fill(&r, upsert(ctx, req->put->key.data, req->put->key.len,
		     req->put->value.data, req->put->value.len, 0));
	p.record = &r;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_PUT;
	rep.put = &p;
	mts_ipc_reply(call, &rep.base);
}

static void
h_delete(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__DeleteRep d = MTS__STATESTORE__DELETE_REP__INIT;
	Mts__Record r = MTS__RECORD__INIT;

	fill(&r, upsert(ctx, req->delete_->key.data, req->delete_->key.len,
		     NULL, 0, 1));
	d.record = &r;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_DELETE;
	rep.delete_ = &d;
	mts_ipc_reply(call, &rep.base);
}

static void
h_scan(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__ScanReq *s =
	    ((const Mts__Statestore__Request *)m)->scan;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__ScanRep sr = MTS__STATESTORE__SCAN_REP__INIT;
	struct ta *t = ctx;
	size_t i, n = 0, limit = s->limit ? s->limit : 1000;
	Mts__KeyRecord *kr = xcalloc(t->n + 1, sizeof(*kr)), **items;
	Mts__Record *rr = xcalloc(t->n + 1, sizeof(*rr));

	items = xcalloc(t->n + 1, sizeof(*items));
	for (i = 0; i < t->n; i++) {
		struct entry *e = &t->e[i];

		if (e->klen < s->prefix.len || (s->prefix.len &&
		    memcmp(e->key, s->prefix.data, s->prefix.len) != 0) ||
		    cmpkey(e->key, e->klen, s->start_after.data,
			s->start_after.len) <= 0 ||
		    (e->tomb && !s->include_tombstones))
			continue;
		if (n == limit) {
			sr.more = 1;
			break;
		}
		mts__key_record__init(&kr[n]);
		mts__record__init(&rr[n]);
		fill(&rr[n], e);
		kr[n].key.data = e->key;
		kr[n].key.len = e->klen;
		kr[n].record = &rr[n];
		items[n] = &kr[n];
		n++;
	}
	sr.items = items;
	sr.n_items = n;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_SCAN;
	rep.scan = &sr;
	mts_ipc_reply(call, &rep.base);
	free(items);
	free(kr);
	free(rr);
}

static void
h_root(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__RootRep r = MTS__STATESTORE__ROOT_REP__INIT;
	struct ta *t = ctx;
	uint8_t h[MTS_HASH_LEN] = {0};
	mts_hash_ctx hc;
	size_t i;

	if (t->n > 0) {
		mts_hash_init(&hc);
		for (i = 0; i < t->n; i++) {
			mts_hash_update(&hc, t->e[i].key, t->e[i].klen);
			mts_hash_update(&hc, &t->e[i].hlc, 8);
			r.live += !t->e[i].tomb;
		}
		mts_hash_final(&hc, h);
	}
	r.hash.data = h;
	r.hash.len = sizeof(h);
	r.records = t->n;
	r.pages = t->n ? 1 : 0;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_ROOT;
	rep.root = &r;
	mts_ipc_reply(call, &rep.base);
}

static const struct mts_ipc_route routes[] = {
	{MTS__STATESTORE__REQUEST__BODY_GET, "get", MTS_IPC_ANY, h_get},
	{MTS__STATESTORE__REQUEST__BODY_PUT, "put", MTS_IPC_ANY, h_put},
	{MTS__STATESTORE__REQUEST__BODY_DELETE, "delete", MTS_IPC_ANY,
	    h_delete},
	{MTS__STATESTORE__REQUEST__BODY_SCAN, "scan", MTS_IPC_ANY, h_scan},
	{MTS__STATESTORE__REQUEST__BODY_ROOT, "root", MTS_IPC_ANY, h_root},
};

/* Only root may write: the admin-denial tests rely on a real refusal. */
static uint32_t
classify(void *ctx, uid_t uid, gid_t gid)
{
	const struct ta *t = ctx;

	return uid == 0 || t->open ? MTS_IPC_ANY : 0;
}

static const struct mts_ipc_service svc = {
	.name = "testagent",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.classify = classify,
};

static int
opt(void *arg, int c, const char *val)
{
	struct ta *t = arg;

	if (c == 's')
		t->sock = val;
	else if (c == 'x')
		t->fault = val;
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

/* The -x faults: exit:CODE, abort, syscall (one outside any policy),
 * inet (socket(AF_INET)); orphan is handled at start. */
static void
misbehave(const char *fault)
{
	if (strncmp(fault, "exit:", 5) == 0) {
		log_info("exiting with code %d as asked", atoi(fault + 5));
		exit(atoi(fault + 5));
	}
	if (strcmp(fault, "abort") == 0)
		abort();
	if (strcmp(fault, "syscall") == 0) {
		log_info("calling ptrace, which no policy allows");
		(void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		log_warnx("ptrace was allowed");
		exit(MTS_EXIT_FAILURE);
	}
	if (strcmp(fault, "inet") == 0) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		log_warnx("socket(AF_INET) returned %d", fd);
		exit(MTS_EXIT_FAILURE);
	}
	fatalx("unknown fault '%s'", fault);
}

/* -x orphan: leaves a grandchild in its own session, which only a
 * subreaper can catch when the agent goes away. */
static void
spawn_orphan(void)
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

static void
on_term(int sig)
{
	stop = 1;
}

int
main(int argc, char **argv)
{
	struct ta t = {.sock = "statestore.sock"};
	struct mts_agent a;
	struct mts_ipc_server *srv;
	struct pollfd pfd;
	char path[512], err[256];
	mts_time_t start, last_check = 0;

	mts_agent_init(&a, "testagent", argc, argv, "s:x:w:g:o", opt, &t);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (mts_crypto_init() < 0 || mts_agent_sandbox(&a) < 0)
		exit(MTS_EXIT_FAILURE);
	/* Under init its socket goes in its own directory; run by hand it
	 * plays the statestore (the default socket) in the statestore's. */
	if (mts_ipc_sock_path(path, sizeof(path), a.rundir,
		getenv("MTS_AGENT") ? a.name : "statestore", t.sock) < 0)
		fatalx("socket path too long");
	if ((srv = mts_ipc_server_open(path, &svc, &t, err, sizeof(err))) ==
	    NULL)
		fatalx("%s", err);
	if (t.fault != NULL && strcmp(t.fault, "orphan") == 0) {
		spawn_orphan();
		t.fault = NULL;
	}
	mts_agent_ready(&a);
	log_info("ready on %s", path);
	start = mts_now();
	pfd.fd = mts_ipc_server_fd(srv);
	pfd.events = POLLIN;
	while (!stop) {
		if (t.fault && mts_now() - start >= t.delay_ms)
			misbehave(t.fault);
		if (poll(&pfd, 1, t.fault ? 10 : 200) < 0 && errno != EINTR)
			fatal("poll");
		mts_ipc_server_drain(srv, 64);
		if (mts_now() - last_check >= 1000) {
			mts_ipc_server_check(srv);
			last_check = mts_now();
		}
	}
	log_info("stopping");
	mts_ipc_server_close(srv);
	for (size_t i = 0; i < t.n; i++) {
		free(t.e[i].key);
		free(t.e[i].value);
	}
	free(t.e);
	mts_agent_free(&a);
	return MTS_EXIT_OK;
}
