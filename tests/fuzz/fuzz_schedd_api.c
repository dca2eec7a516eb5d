/* fuzz_schedd_api.c: libFuzzer target that drives the real mts-schedd — its dispatch table and handlers over its own schedd.sock on its loop, with the real ledger, a stand-in statestore and gossipd — with well-formed prepare/commit/abort/ledger/availability/place requests built from the input (colliding lease ids, odd sizes, short ttls, bad owners and over-long strings, unknown availabilities), and checks every reply, that the ledger never holds more than its capacity, that a node not active grants no new lease nor is placed on, and that n/<self> (in a stand-in statestore that honours compare-and-set, with another agent's writes in between) always ends with the availability asked for and the other agent's field intact. */
#define main schedd_main
#include "fuzz_input.h"
#include "fuzz_harness.h"
#include "agents/schedd/schedd.c"
#undef main

#include <stdio.h>

#include "gossipd.pb-c.h"
#include "mtserr.h"
#include "node.pb-c.h"
#include "xmalloc.h"

#define MAX_REQS 24
#define REPLY_WAIT_MS 2000
#define CAP_CPU 2000
#define CAP_MEM (1ull << 30)

static const char *tdir;
static struct schedd fz;
static struct mts_agent fz_agent;
static struct mts_ipc_async *cli;

/* --- a stand-in statestore on schedd's loop: n/<self> with CAS ------------ */

static struct {
	uint8_t *v;
	size_t len;
	uint64_t hlc;    /* 0: no record */
	char subnet[32]; /* what "netd" last wrote */
} nrec;
static const uint8_t other_origin[16] = { 1 };

static int
is_nkey(const ProtobufCBinaryData *k)
{
	char key[64];

	snprintf(key, sizeof(key), "n/%s", fz.self);
	return k->len == strlen(key) && memcmp(k->data, key, k->len) == 0;
}

/* A scan of d/ finds this node's digest, one of n/ its record; the
 * rest (t/, nl/) is empty. The items live until the reply is sent. */
static Mts__KeyRecord scan_kr, *scan_krp = &scan_kr;
static Mts__Record scan_rec;
static uint8_t *scan_buf;
static char scan_key[64];

static void
scan_items(const Mts__Statestore__ScanReq *sc, Mts__Statestore__ScanRep *out)
{
	Mts__Schedd__Digest d = MTS__SCHEDD__DIGEST__INIT;
	size_t len = 0;

	if (sc->start_after.len != 0)
		return;
	mts__key_record__init(&scan_kr);
	mts__record__init(&scan_rec);
	if (sc->prefix.len == 2 && memcmp(sc->prefix.data, "d/", 2) == 0) {
		schedd_digest_fill(&fz, &d);
		len = mts__schedd__digest__get_packed_size(&d);
		scan_buf = xmalloc(len + 1);
		mts__schedd__digest__pack(&d, scan_buf);
		snprintf(scan_key, sizeof(scan_key), "d/%s", fz.self);
	} else if (sc->prefix.len == 2 &&
	    memcmp(sc->prefix.data, "n/", 2) == 0 && nrec.hlc) {
		scan_buf = xmemdup(nrec.v, nrec.len + 1);
		len = nrec.len;
		snprintf(scan_key, sizeof(scan_key), "n/%s", fz.self);
	} else {
		return;
	}
	scan_rec.hlc = 1;
	scan_rec.origin.data = (uint8_t *)other_origin;
	scan_rec.origin.len = sizeof(other_origin);
	scan_rec.value.data = scan_buf;
	scan_rec.value.len = len;
	scan_kr.key.data = (uint8_t *)scan_key;
	scan_kr.key.len = strlen(scan_key);
	scan_kr.record = &scan_rec;
	out->items = &scan_krp;
	out->n_items = 1;
}

static void
h_store(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__GetRep get = MTS__STATESTORE__GET_REP__INIT;
	Mts__Statestore__PutRep put = MTS__STATESTORE__PUT_REP__INIT;
	Mts__Statestore__ScanRep scan = MTS__STATESTORE__SCAN_REP__INIT;
	Mts__Record r = MTS__RECORD__INIT;
	const Mts__Statestore__PutReq *p = req->put;

	rep.body_case = (Mts__Statestore__Reply__BodyCase)req->body_case;
	if (req->body_case == MTS__STATESTORE__REQUEST__BODY_GET) {
		if (is_nkey(&req->get->key) && nrec.hlc) {
			r.hlc = nrec.hlc;
			r.origin.data = (uint8_t *)other_origin;
			r.origin.len = sizeof(other_origin);
			r.value.data = nrec.v;
			r.value.len = nrec.len;
			get.found = 1;
			get.record = &r;
		}
		rep.get = &get;
	} else if (req->body_case == MTS__STATESTORE__REQUEST__BODY_PUT) {
		if (is_nkey(&p->key)) {
			if (p->has_expected && p->expected_hlc != nrec.hlc) {
				mts_ipc_reply_error(call, MTS_ERR_CONFLICT,
				    "%s", "stale");
				return;
			}
			free(nrec.v);
			nrec.v = xmalloc(p->value.len + 1);
			memcpy(nrec.v, p->value.data, p->value.len);
			nrec.len = p->value.len;
			nrec.hlc++;
		}
		rep.put = &put;
	} else {
		scan_items(req->scan, &scan);
		rep.body_case = MTS__STATESTORE__REPLY__BODY_SCAN;
		rep.scan = &scan;
	}
	mts_ipc_reply(call, &rep.base);
	free(scan_buf);
	scan_buf = NULL;
}

static const struct mts_ipc_route store_routes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_GET, "get", MTS_IPC_ANY, h_store },
	{ MTS__STATESTORE__REQUEST__BODY_PUT, "put", MTS_IPC_ANY, h_store },
	{ MTS__STATESTORE__REQUEST__BODY_SCAN, "scan", MTS_IPC_ANY, h_store },
};

/* A stand-in gossipd: this node alone, alive. */
static void
h_members(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	Mts__Gossipd__Reply rep = MTS__GOSSIPD__REPLY__INIT;
	Mts__Gossipd__MembersRep mr = MTS__GOSSIPD__MEMBERS_REP__INIT;
	Mts__Gossipd__NodeInfo ni = MTS__GOSSIPD__NODE_INFO__INIT, *nip = &ni;

	ni.node.data = fz.self_id;
	ni.node.len = sizeof(fz.self_id);
	ni.state = "alive";
	ni.self = 1;
	mr.nodes = &nip;
	mr.n_nodes = 1;
	rep.body_case = MTS__GOSSIPD__REPLY__BODY_MEMBERS;
	rep.members = &mr;
	mts_ipc_reply(call, &rep.base);
}

static const struct mts_ipc_route gossip_routes[] = {
	{ MTS__GOSSIPD__REQUEST__BODY_MEMBERS, "members", MTS_IPC_ANY,
	    h_members },
};

static const struct mts_ipc_service gossip_svc = {
	.name = "fuzz-gossipd",
	.request = &mts__gossipd__request__descriptor,
	.reply = &mts__gossipd__reply__descriptor,
	.routes = gossip_routes,
	.nroutes = sizeof(gossip_routes) / sizeof(gossip_routes[0]),
};

static const struct mts_ipc_service store_svc = {
	.name = "fuzz-statestore",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = store_routes,
	.nroutes = sizeof(store_routes) / sizeof(store_routes[0]),
};

/* main() of schedd.c without init, the sandbox and the statestore: the
 * stand-in statestore (on schedd's loop) takes the digest and n/ writes. */
static void
start(void)
{
	char conf[96];

	tdir = fz_scratch("sd");
	snprintf(conf, sizeof(conf),
	    "[schedd]\ncpus = 2\nmemory = 1G\nacl = %u\n", (unsigned)getuid());
	fz_agent_start(&fz_agent, "schedd", tdir, conf, mts_conf_schema());
	if (setup(&fz, &fz_agent) < 0)
		abort();
	fz.store = fz_stand_in(fz.loop, tdir, "store", &store_svc, NULL);
	fz.gossip = fz_stand_in(fz.loop, tdir, "gossipd", &gossip_svc, NULL);
	cli = fz_serve(fz.loop, tdir, "schedd", &schedd_service, &fz,
	    &fz.cfg.acl, REPLY_WAIT_MS, &fz.srv);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	start();
	return 0;
}

/* --- reading the program ------------------------------------------------ */

static uint32_t
take32(struct in *in)
{
	return (uint32_t)take(in, 0) << 24 | (uint32_t)take(in, 0) << 16 |
	    (uint32_t)take(in, 0) << 8 | take(in, 0);
}

static char longstr[300];

/* A lease id, task id or service: mostly from a few that collide,
 * sometimes empty or longer than the core takes. */
static const char *
take_name(struct in *in, const char *const *names, size_t n)
{
	unsigned c = take(in, 16);

	if (c == 14)
		return "";
	if (c == 15)
		return longstr;
	return names[c % n];
}

static const char *const leases[] = { "l0", "l1", "l2", "l3", "l4", "l5" };
static const char *const tasks[] = { "t0", "t1", "t2", "t3" };
static const char *const services[] = { "s_a", "s_b", "s_c" };
static const char *const owners[] = { "0123456789abcdef0123456789abcdef",
	"ffffffffffffffffffffffffffffffff", "0123", "",
	"0123456789abcdef0123456789abcdeg" };

/* --- checks ----------------------------------------------------------------- */

static void
check_capacity(void)
{
	const struct mts_ledger *l = &fz.ledger;
	uint64_t cpu = 0, mem = 0;
	size_t i;

	for (i = 0; i < l->ntasks; i++) {
		cpu += l->tasks[i].res.cpu_millis;
		mem += l->tasks[i].res.memory;
	}
	for (i = 0; i < l->nleases; i++)
		if (l->leases[i].state == LEASE_PREPARED) {
			cpu += l->leases[i].res.cpu_millis;
			mem += l->leases[i].res.memory;
		}
	if (cpu > CAP_CPU || mem > CAP_MEM) {
		fprintf(stderr, "over-committed: %llu millicores, %llu bytes\n",
		    (unsigned long long)cpu, (unsigned long long)mem);
		abort();
	}
}

static const struct mts_lease *
lease_of(const char *id)
{
	size_t i;

	for (i = 0; i < fz.ledger.nleases; i++)
		if (strcmp(fz.ledger.leases[i].id, id) == 0)
			return &fz.ledger.leases[i];
	return NULL;
}

/* Sends req and runs schedd's loop until the reply came; the error
 * code (0 for none). */
static int
call(Mts__Schedd__Request *req, Mts__Schedd__Reply **rep)
{
	return fz_call(fz.loop, cli, &req->base,
	    &mts__schedd__reply__descriptor, REPLY_WAIT_MS,
	    (ProtobufCMessage **)rep);
}

static int
valid_str(const char *s, size_t max)
{
	return *s != '\0' && strlen(s) < max;
}

static int
valid_owner(const char *o)
{
	uint8_t id[16];

	return strlen(o) == 32 && mts_unhex(id, 16, o, 32) == 0;
}

static void
do_prepare(struct in *in)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__PrepareReq p = MTS__SCHEDD__PREPARE_REQ__INIT;
	Mts__Schedd__Reply *rep;
	static const uint64_t mems[] = { 0, 1, 100 << 20, 512 << 20, CAP_MEM,
		CAP_MEM + 1, UINT64_MAX };
	int code, valid, existed;

	p.lease = (char *)take_name(in, leases, 6);
	p.owner = (char *)owners[take(in, 5)];
	p.service = (char *)take_name(in, services, 3);
	p.cpu_millis = take(in, 4) == 0 ? take32(in) : take(in, 0) * 10;
	p.memory = mems[take(in, 7)];
	p.max_per_node = take(in, 4);
	p.ttl_ms = take(in, 4) == 0 ? 0 : take(in, 60);
	req.body_case = MTS__SCHEDD__REQUEST__BODY_PREPARE;
	req.prepare = &p;
	valid = valid_str(p.lease, MTS_LEASE_ID_MAX) && valid_owner(p.owner) &&
	    valid_str(p.service, MTS_SERVICE_MAX);
	existed = valid && lease_of(p.lease) != NULL;
	code = call(&req, &rep);
	/* a node that is not active grants no new lease */
	if (code == 0 && !existed && fz.avail != MTS_AVAIL_ACTIVE &&
	    rep->prepare->result_case ==
	        MTS__SCHEDD__PREPARE_REP__RESULT_GRANTED)
		abort();
	if (!valid) {
		if (code != MTS_ERR_INVAL)
			abort();
	} else if (code == 0) {
		const struct mts_lease *l = lease_of(p.lease);

		if (rep->body_case != MTS__SCHEDD__REPLY__BODY_PREPARE)
			abort();
		if (rep->prepare->result_case ==
		    MTS__SCHEDD__PREPARE_REP__RESULT_GRANTED) {
			/* a ttl of a few ms may be over by now; a resent
			 * prepare keeps the first one's expiry */
			if (l == NULL ||
			    (l->state != LEASE_PREPARED &&
			        l->state != LEASE_COMMITTED &&
			        !(l->state == LEASE_ENDED && p.ttl_ms != 0)) ||
			    rep->prepare->granted->expires_in_ms > 10000)
				abort();
		} else if (rep->prepare->result_case ==
		    MTS__SCHEDD__PREPARE_REP__RESULT_REJECTED) {
			if (rep->prepare->rejected->digest == NULL ||
			    *rep->prepare->rejected->reason == '\0' ||
			    rep->prepare->rejected->digest->cpu_millis !=
			        CAP_CPU)
				abort();
		} else {
			abort();
		}
	} else if (code != MTS_ERR_CONFLICT) {
		abort();
	}
	if (rep)
		mts__schedd__reply__free_unpacked(rep, NULL);
}

static void
do_commit(struct in *in)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__CommitReq c = MTS__SCHEDD__COMMIT_REQ__INIT;
	Mts__Schedd__Reply *rep;
	int code, valid;

	c.lease = (char *)take_name(in, leases, 6);
	c.task = (char *)take_name(in, tasks, 4);
	req.body_case = MTS__SCHEDD__REQUEST__BODY_COMMIT;
	req.commit = &c;
	valid = valid_str(c.lease, MTS_LEASE_ID_MAX) &&
	    valid_str(c.task, MTS_TASK_ID_MAX);
	code = call(&req, &rep);
	if (!valid ? code != MTS_ERR_INVAL
	           : code != 0 && code != MTS_ERR_NOTFOUND &&
	            code != MTS_ERR_STATE && code != MTS_ERR_CONFLICT)
		abort();
	if (valid && code == 0) {
		const struct mts_lease *l = lease_of(c.lease);

		if (l == NULL || l->state != LEASE_COMMITTED ||
		    strcmp(l->task, c.task) != 0)
			abort();
	}
	if (rep)
		mts__schedd__reply__free_unpacked(rep, NULL);
}

static void
do_abort(struct in *in)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__AbortReq a = MTS__SCHEDD__ABORT_REQ__INIT;
	Mts__Schedd__Reply *rep;
	int code;

	a.lease = (char *)take_name(in, leases, 6);
	req.body_case = MTS__SCHEDD__REQUEST__BODY_ABORT;
	req.abort = &a;
	code = call(&req, &rep);
	if (!valid_str(a.lease, MTS_LEASE_ID_MAX) ? code != MTS_ERR_INVAL
	                                          : code != 0 &&
	            code != MTS_ERR_NOTFOUND && code != MTS_ERR_CONFLICT)
		abort();
	if (rep)
		mts__schedd__reply__free_unpacked(rep, NULL);
}

static void
do_ledger(struct in *in)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__LedgerReq lr = MTS__SCHEDD__LEDGER_REQ__INIT;
	Mts__Schedd__Reply *rep;
	const Mts__Schedd__Digest *d;

	req.body_case = MTS__SCHEDD__REQUEST__BODY_LEDGER;
	req.ledger = &lr;
	if (call(&req, &rep) != 0 ||
	    rep->body_case != MTS__SCHEDD__REPLY__BODY_LEDGER ||
	    (d = rep->ledger->digest) == NULL)
		abort();
	if (d->cpu_millis != CAP_CPU || d->memory != CAP_MEM ||
	    d->free_cpu_millis > CAP_CPU || d->free_memory > CAP_MEM ||
	    rep->ledger->n_leases != fz.ledger.nleases ||
	    rep->ledger->n_tasks != fz.ledger.ntasks)
		abort();
	mts__schedd__reply__free_unpacked(rep, NULL);
}

/* A task that ended (its record says so) frees what it held. */
static void
do_task_gone(struct in *in)
{
	mts_ledger_task_remove(&fz.ledger, tasks[take(in, 4)]);
	schedd_changed(&fz);
}

/* drain, pause, activate (or a bad name): answered once n/<self> says
 * so, with the other agent's field intact. */
static void
do_avail(struct in *in)
{
	static const char *const names[] = { "active", "pause", "drain",
		"drained", "" };
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__AvailabilityReq ar = MTS__SCHEDD__AVAILABILITY_REQ__INIT;
	Mts__Schedd__Reply *rep;
	struct mts_nodeinfo ni;
	unsigned k = take(in, 5);
	int code;

	ar.availability = (char *)names[k];
	req.body_case = MTS__SCHEDD__REQUEST__BODY_AVAILABILITY;
	req.availability = &ar;
	code = call(&req, &rep);
	if (k >= 3) {
		if (code != MTS_ERR_INVAL)
			abort();
	} else if (code != 0 ||
	    rep->body_case != MTS__SCHEDD__REPLY__BODY_AVAILABILITY ||
	    strcmp(rep->availability->availability, names[k]) != 0 ||
	    (int)fz.avail != (int)k ||
	    mts_nodeinfo_decode(nrec.v, nrec.len, &ni) < 0 ||
	    (int)ni.availability != (int)k ||
	    strcmp(ni.overlay_subnet, nrec.subnet) != 0 ||
	    strcmp(ni.hostname, fz.hostname) != 0) {
		abort();
	}
	if (rep)
		mts__schedd__reply__free_unpacked(rep, NULL);
}

/* The placement dry-run of a spec over this node alone: bad constraints
 * and counts refused, otherwise never more placed than asked, and
 * nothing placed on a node that is not active or lacks the room. */
static void
do_place(struct in *in)
{
	static char *const cons[] = { "node.labels.a == b", "node.id != x",
		"bogus", "node.role == manager", "node.platform.os == linux" };
	static const uint32_t counts[] = { 0, 1, 3, 10000, 10001 };
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__PlaceReq p = MTS__SCHEDD__PLACE_REQ__INIT;
	Mts__Schedd__Reply *rep;
	char *c[1];
	struct mts_digest d;
	unsigned k = take(in, 6);
	int code;

	p.count = counts[take(in, 5)];
	p.cpu_millis = take(in, 0) * 20;
	p.memory = (uint64_t)take(in, 0) << 22;
	p.max_per_node = take(in, 3);
	p.global = take(in, 4) == 0;
	p.replaces = (char *)take_name(in, services, 3);
	if (k < 5) {
		c[0] = cons[k];
		p.constraints = c;
		p.n_constraints = 1;
	}
	req.body_case = MTS__SCHEDD__REQUEST__BODY_PLACE;
	req.place = &p;
	mts_ledger_digest(&fz.ledger, &d);
	code = call(&req, &rep);
	if (k == 2 || p.count > 10000 ||
	    strlen(p.replaces) >= MTS_SERVICE_MAX) {
		if (code != MTS_ERR_INVAL)
			abort();
	} else if (code != 0 ||
	    rep->body_case != MTS__SCHEDD__REPLY__BODY_PLACE ||
	    rep->place->placed > rep->place->count ||
	    rep->place->n_nodes != rep->place->placed ||
	    *rep->place->explain == '\0' ||
	    (rep->place->placed > 0 &&
	        (fz.avail != MTS_AVAIL_ACTIVE ||
	            d.free.cpu_millis < p.cpu_millis ||
	            d.free.memory < p.memory))) {
		abort();
	}
	if (rep)
		mts__schedd__reply__free_unpacked(rep, NULL);
}

/* Another agent of the node (netd) rewrites n/<self> with its subnet. */
static void
do_netd(struct in *in)
{
	struct mts_nodeinfo ni;

	memset(&ni, 0, sizeof(ni));
	if (nrec.hlc && mts_nodeinfo_decode(nrec.v, nrec.len, &ni) < 0)
		abort();
	snprintf(nrec.subnet, sizeof(nrec.subnet), "10.%u.0.0/24", take(in, 0));
	snprintf(ni.overlay_subnet, sizeof(ni.overlay_subnet), "%s",
	    nrec.subnet);
	free(nrec.v);
	nrec.v = mts_nodeinfo_encode(&ni, &nrec.len);
	nrec.hlc++;
}

static void (*const ops[])(struct in *) = {
	do_prepare,
	do_prepare,
	do_prepare,
	do_commit,
	do_commit,
	do_abort,
	do_ledger,
	do_task_gone,
	do_avail,
	do_netd,
	do_place,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	int i;

	memset(longstr, 'x', sizeof(longstr) - 1);
	for (i = 0; i < MAX_REQS && in.n > 0; i++) {
		ops[take(&in, sizeof(ops) / sizeof(ops[0]))](&in);
		check_capacity();
	}
	/* the next input starts from an empty ledger, an active node */
	mts_ledger_free(&fz.ledger);
	mts_ledger_init(&fz.ledger, fz.cfg.capacity, 0);
	fz.avail = MTS_AVAIL_ACTIVE;
	free(nrec.v);
	memset(&nrec, 0, sizeof(nrec));
	schedd_changed(&fz);
	return 0;
}
