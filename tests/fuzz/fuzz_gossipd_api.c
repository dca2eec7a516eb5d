/* fuzz_gossipd_api.c: libFuzzer target for gossipd's local API — well-formed requests built from the fuzzer's bytes go through the real gossipd.sock server, dispatch table and handlers (api.c: init, join, token, leave, members, remove, relay, stats), with a temp run and state directory, a stand-in statestore and no peers. */
#include <pthread.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "agents/gossipd/gossipd.h"
#include "fuzz_harness.h"
#include "gossipd.pb-c.h"
#include "ipc.h"
#include "log.h"
#include "loop.h"
#include "statestore.pb-c.h"

/* --- a stand-in statestore, on its own thread -------------------------------- */

/* Answers every request with an empty reply of its kind: puts and deletes
 * succeed, gets find nothing, the root is all zeros. */
static void
h_any(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__GetRep get = MTS__STATESTORE__GET_REP__INIT;
	Mts__Statestore__PutRep put = MTS__STATESTORE__PUT_REP__INIT;
	Mts__Statestore__DeleteRep del = MTS__STATESTORE__DELETE_REP__INIT;
	Mts__Statestore__RootRep root = MTS__STATESTORE__ROOT_REP__INIT;
	static uint8_t zero[32];

	rep.body_case = (Mts__Statestore__Reply__BodyCase)req->body_case;
	switch (req->body_case) {
	case MTS__STATESTORE__REQUEST__BODY_GET:
		rep.get = &get;
		break;
	case MTS__STATESTORE__REQUEST__BODY_PUT:
		rep.put = &put;
		break;
	case MTS__STATESTORE__REQUEST__BODY_DELETE:
		rep.delete_ = &del;
		break;
	default:
		root.hash.data = zero;
		root.hash.len = sizeof(zero);
		rep.body_case = MTS__STATESTORE__REPLY__BODY_ROOT;
		rep.root = &root;
		break;
	}
	mts_ipc_reply(call, &rep.base);
}

static const struct mts_ipc_route store_routes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_GET, "get", MTS_IPC_ANY, h_any },
	{ MTS__STATESTORE__REQUEST__BODY_PUT, "put", MTS_IPC_ANY, h_any },
	{ MTS__STATESTORE__REQUEST__BODY_DELETE, "delete", MTS_IPC_ANY, h_any },
	{ MTS__STATESTORE__REQUEST__BODY_SCAN, "scan", MTS_IPC_ANY, h_any },
	{ MTS__STATESTORE__REQUEST__BODY_ROOT, "root", MTS_IPC_ANY, h_any },
};

static const struct mts_ipc_service store_svc = {
	.name = "fuzz-statestore",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = store_routes,
	.nroutes = sizeof(store_routes) / sizeof(store_routes[0]),
};

static void *
store_main(void *arg)
{
	struct mts_ipc_server *srv = arg;
	struct pollfd pfd = { .fd = mts_ipc_server_fd(srv), .events = POLLIN };

	for (;;) {
		(void)poll(&pfd, 1, 100);
		(void)mts_ipc_server_drain(srv, 64);
	}
	return NULL;
}

/* --- gossipd, set up as its main does, without a listener or peers ----------- */

static struct gossipd g;
static struct mts_ipc_async *cli;
static const char *top;

static void
setup_gossipd(void)
{
	char *argv[] = { "fuzz_gossipd_api", NULL };
	struct mts_swim_update self;
	char path[512], err[256];
	struct mts_ipc_server *store;
	pthread_t thr;

	top = fz_scratch("gd");
	snprintf(path, sizeof(path), "%s/run", top);
	setenv("MTS_RUNDIR", path, 1);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/state", top);
	setenv("MTS_STATEDIR", path, 1);
	setenv("MTS_CONFIG", "/dev/null", 1);
	optind = 1;
	mts_agent_init(&g.agent, "gossipd", 1, argv, "", NULL, NULL);
	log_setlevel(-1); /* quiet: every input logs */
	if (mts_crypto_init() < 0)
		abort();
	randombytes_buf(g.priv, sizeof(g.priv));
	(void)crypto_scalarmult_base(g.pub, g.priv);
	mts_node_id(g.id, g.pub);
	mts_hex(g.idhex, g.id, MTS_NODE_ID_LEN);
	snprintf(g.name, sizeof(g.name), "fuzz");
	mts_swim_cfg_defaults(&g.cfg.swim);
	snprintf(g.cfg.listen, sizeof(g.cfg.listen), "127.0.0.1:1");
	snprintf(g.cfg.advertise, sizeof(g.cfg.advertise), "127.0.0.1:1");
	g.cfg.fanout = 3;
	g.cfg.ae_interval = 2000;
	g.cfg.ae_rate = 1 << 20;
	g.cfg.max_payload = 1 << 20;
	g.cfg.handshake_timeout = 100;
	g.cfg.idle_timeout = 30000;
	g.cfg.reconnect_max = 1000;
	g.cfg.store_timeout = 200;
	if ((g.loop = mts_loop_new()) == NULL)
		abort();
	mts_loop_set_slow_ms(g.loop, 0);
	memset(&self, 0, sizeof(self));
	memcpy(self.id, g.id, MTS_NODE_ID_LEN);
	snprintf(self.addr, sizeof(self.addr), "%s", g.cfg.advertise);
	snprintf(self.name, sizeof(self.name), "%s", g.name);
	self.inc = 1;
	g.swim = mts_swim_new(&g.cfg.swim, &self, 1, mts_now());
	g.seen = mts_seen_new(1u << 10);
	/* the stand-in statestore first: gossipd's clients find it */
	if (mts_ipc_sock_path(path, sizeof(path), g.agent.rundir, "statestore",
	        NULL) < 0 ||
	    (store = mts_ipc_server_open(path, &store_svc, NULL, err,
	         sizeof(err))) == NULL) {
		fprintf(stderr, "statestore stand-in: %s\n", err);
		abort();
	}
	pthread_create(&thr, NULL, store_main, store);
	if (gd_store_open(&g) < 0 || gd_relay_open(&g) < 0 ||
	    gd_api_open(&g) < 0 || mts_loop_add_server(g.loop, g.api) < 0)
		abort();
	if (mts_ipc_sock_path(path, sizeof(path), g.agent.rundir, "gossipd",
	        NULL) < 0 ||
	    (cli = mts_ipc_async_open(g.loop, path, 2000, err, sizeof(err))) ==
	        NULL)
		abort();
}

/* --- requests from bytes --------------------------------------------------------- */

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint8_t
byte(struct rd *r)
{
	uint8_t b = 0;

	if (r->n > 0) {
		b = *r->p++;
		r->n--;
	}
	return b;
}

static uint64_t
u64(struct rd *r)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | byte(r);
	return v;
}

/* A string of up to max bytes (NUL-terminated; protobuf strings must not
 * hold a NUL, so one ends it). */
static char *
str(struct rd *r, char *buf, size_t max)
{
	size_t len = byte(r) % (max + 1), i;

	for (i = 0; i < len && r->n > 0; i++) {
		buf[i] = (char)byte(r);
		if (buf[i] == '\0')
			break;
	}
	buf[i] = '\0';
	return buf;
}

/* Bytes of up to max, pointing into the input. */
static ProtobufCBinaryData
bytes(struct rd *r, size_t max)
{
	ProtobufCBinaryData b;
	size_t len = byte(r);

	len = len * 256 + byte(r);
	if (len > max)
		len = max;
	if (len > r->n)
		len = r->n;
	b.data = (uint8_t *)r->p;
	b.len = len;
	r->p += len;
	r->n -= len;
	return b;
}

static int answered;

static void
on_reply(void *arg, int rc, const ProtobufCMessage *rep, const char *err)
{
	answered = 1;
}

static void
one_request(struct rd *r)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__InitReq init = MTS__GOSSIPD__INIT_REQ__INIT;
	Mts__Gossipd__JoinReq join = MTS__GOSSIPD__JOIN_REQ__INIT;
	Mts__Gossipd__TokenReq tok = MTS__GOSSIPD__TOKEN_REQ__INIT;
	Mts__Gossipd__LeaveReq leave = MTS__GOSSIPD__LEAVE_REQ__INIT;
	Mts__Gossipd__MembersReq mem = MTS__GOSSIPD__MEMBERS_REQ__INIT;
	Mts__Gossipd__RemoveReq rm = MTS__GOSSIPD__REMOVE_REQ__INIT;
	Mts__Gossipd__RelayReq rel = MTS__GOSSIPD__RELAY_REQ__INIT;
	Mts__Gossipd__StatsReq st = MTS__GOSSIPD__STATS_REQ__INIT;
	char s1[300], s2[80];
	uint8_t node[MTS_NODE_ID_LEN];
	mts_time_t end;

	switch (byte(r) % 8) {
	case 0:
		init.advertise = str(r, s1, 80);
		req.body_case = MTS__GOSSIPD__REQUEST__BODY_INIT;
		req.init = &init;
		break;
	case 1:
		join.token = str(r, s1, 299);
		join.advertise = str(r, s2, 79);
		req.body_case = MTS__GOSSIPD__REQUEST__BODY_JOIN;
		req.join = &join;
		break;
	case 2:
		tok.rotate = byte(r) & 1;
		req.body_case = MTS__GOSSIPD__REQUEST__BODY_TOKEN;
		req.token = &tok;
		break;
	case 3:
		req.body_case = MTS__GOSSIPD__REQUEST__BODY_LEAVE;
		req.leave = &leave;
		break;
	case 4:
		req.body_case = MTS__GOSSIPD__REQUEST__BODY_MEMBERS;
		req.members = &mem;
		break;
	case 5:
		/* a node named by hex, prefix or name, often our own id */
		if (byte(r) & 1)
			snprintf(s1, sizeof(s1), "%.*s", (int)(byte(r) % 33),
			    g.idhex);
		else
			(void)str(r, s1, 64);
		rm.node = s1;
		req.body_case = MTS__GOSSIPD__REQUEST__BODY_REMOVE;
		req.remove = &rm;
		break;
	case 6:
		if (byte(r) & 1) { /* no peers: any node is unknown */
			memcpy(node, g.id, sizeof(node));
			node[0] ^= byte(r);
			rel.to_node.data = node;
			rel.to_node.len = sizeof(node);
		} else {
			rel.to_node = bytes(r, 40);
		}
		rel.agent = str(r, s2, 40);
		rel.payload = bytes(r, 2048);
		rel.request_id = u64(r);
		rel.timeout_ms = (uint32_t)u64(r);
		req.body_case = MTS__GOSSIPD__REQUEST__BODY_RELAY;
		req.relay = &rel;
		break;
	default:
		req.body_case = MTS__GOSSIPD__REQUEST__BODY_STATS;
		req.stats = &st;
		break;
	}
	answered = 0;
	if (mts_ipc_async_call(cli, &req.base, &mts__gossipd__reply__descriptor,
	        2000, on_reply, NULL) == NULL)
		abort();
	/* every handler answers at once or after its statestore calls (a join
	 * dials: it may wait for its handshake deadline) */
	end = mts_now() + 3000;
	while (!answered && mts_now() < end) {
		(void)mts_loop_run_once(g.loop, 10);
		/* what gossipd's turn hook does: deadlines, links, SWIM */
		gd_relay_tick(&g, mts_now());
		gd_net_tick(&g, mts_now());
		gd_swim_effects(&g, mts_now());
	}
	if (!answered)
		__builtin_trap(); /* a request that got no answer */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = { data, size };
	int i;

	if (g.loop == NULL)
		setup_gossipd();
	/* up to 4 requests per input, so sequences (init, then leave) occur */
	for (i = 0; i < 4 && r.n > 0; i++)
		one_request(&r);
	return 0;
}
