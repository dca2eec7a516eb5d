/* schedtool.c: test helper — sends one schedd.proto request to the local mts-schedd or, through the local gossipd relay, to another node's, and prints the answer on one line; also decodes a node's d/ digest and n/ record from the local statestore, and updates n/<node>'s overlay subnet as another agent of the node would (common/nodeinfo.c's compare-and-set). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gossipd.pb-c.h"
#include "hash.h"
#include "ipc.h"
#include "loop.h"
#include "mtserr.h"
#include "mtstime.h"
#include "nodeinfo.h"
#include "schedd.pb-c.h"
#include "shim.pb-c.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

static void
usage(void)
{
	fprintf(stderr,
	    "usage: schedtool RUNDIR NODE prepare LEASE OWNER SERVICE CPU MEM "
	    "MAXPN TTL_MS\n"
	    "       schedtool RUNDIR NODE commit LEASE TASK\n"
	    "       schedtool RUNDIR NODE abort LEASE\n"
	    "       schedtool RUNDIR NODE ledger\n"
	    "       schedtool RUNDIR - dump   (every lease and task of the "
	    "local ledger, one a line)\n"
	    "       schedtool RUNDIR - burst PREFIX N CPU (N prepares, each "
	    "committed, on one\n"
	    "         connection; prints 'granted L' and 'committed L T' "
	    "as each is answered)\n"
	    "       schedtool RUNDIR NODE avail active|pause|drain\n"
	    "       schedtool RUNDIR - nodeinfo NODE (n/NODE from the local "
	    "statestore)\n"
	    "       schedtool RUNDIR - setsubnet NODE SUBNET (n/NODE's "
	    "overlay_subnet, compare-and-set)\n"
	    "       schedtool RUNDIR - place SERVICE|- COUNT CPU MEM MAXPN "
	    "CONSTRAINT|-\n"
	    "       schedtool RUNDIR - digest NODE   (d/NODE from the local "
	    "statestore)\n"
	    "       schedtool RUNDIR - puttask NODE TASK SERVICE CPU MEM STATE\n"
	    "         (writes t/NODE/TASK, a shim TaskStatus, to the local "
	    "statestore)\n"
	    "  NODE: '-' for the local schedd, else 32 hex digits (relayed)\n"
	    "  prints 'granted MS', 'rejected REASON; DIGEST', 'ok', "
	    "'error CODE MESSAGE' or a digest\n"
	    "  'cpu C mem M free_cpu C free_mem M tasks N leases N'\n");
	exit(2);
}

static void
print_digest(const Mts__Schedd__Digest *d)
{
	if (d == NULL) {
		printf("no digest\n");
		return;
	}
	printf("cpu %u mem %llu free_cpu %u free_mem %llu tasks %u leases %u\n",
	    d->cpu_millis, (unsigned long long)d->memory, d->free_cpu_millis,
	    (unsigned long long)d->free_memory, d->tasks, d->leases);
}

static uint8_t *
pack_req(int argc, char **argv, size_t *len)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__PrepareReq p = MTS__SCHEDD__PREPARE_REQ__INIT;
	Mts__Schedd__CommitReq c = MTS__SCHEDD__COMMIT_REQ__INIT;
	Mts__Schedd__AbortReq a = MTS__SCHEDD__ABORT_REQ__INIT;
	Mts__Schedd__LedgerReq l = MTS__SCHEDD__LEDGER_REQ__INIT;
	Mts__Schedd__PlaceReq pl = MTS__SCHEDD__PLACE_REQ__INIT;
	Mts__Schedd__AvailabilityReq av = MTS__SCHEDD__AVAILABILITY_REQ__INIT;
	const char *op = argv[3];
	uint8_t *buf;

	req.version = 1;
	if (strcmp(op, "prepare") == 0 && argc == 11) {
		p.lease = argv[4];
		p.owner = argv[5];
		p.service = argv[6];
		p.cpu_millis = (uint32_t)strtoul(argv[7], NULL, 10);
		p.memory = strtoull(argv[8], NULL, 10);
		p.max_per_node = (uint32_t)strtoul(argv[9], NULL, 10);
		p.ttl_ms = (uint32_t)strtoul(argv[10], NULL, 10);
		req.body_case = MTS__SCHEDD__REQUEST__BODY_PREPARE;
		req.prepare = &p;
	} else if (strcmp(op, "commit") == 0 && argc == 6) {
		c.lease = argv[4];
		c.task = argv[5];
		req.body_case = MTS__SCHEDD__REQUEST__BODY_COMMIT;
		req.commit = &c;
	} else if (strcmp(op, "abort") == 0 && argc == 5) {
		a.lease = argv[4];
		req.body_case = MTS__SCHEDD__REQUEST__BODY_ABORT;
		req.abort = &a;
	} else if (strcmp(op, "place") == 0 && argc == 10) {
		pl.service = strcmp(argv[4], "-") ? argv[4] : "";
		pl.count = (uint32_t)strtoul(argv[5], NULL, 10);
		pl.cpu_millis = (uint32_t)strtoul(argv[6], NULL, 10);
		pl.memory = strtoull(argv[7], NULL, 10);
		pl.max_per_node = (uint32_t)strtoul(argv[8], NULL, 10);
		if (strcmp(argv[9], "-") != 0) {
			pl.constraints = &argv[9];
			pl.n_constraints = 1;
		}
		req.body_case = MTS__SCHEDD__REQUEST__BODY_PLACE;
		req.place = &pl;
	} else if (strcmp(op, "avail") == 0 && argc == 5) {
		av.availability = argv[4];
		req.body_case = MTS__SCHEDD__REQUEST__BODY_AVAILABILITY;
		req.availability = &av;
	} else if (strcmp(op, "ledger") == 0 && argc == 4) {
		req.body_case = MTS__SCHEDD__REQUEST__BODY_LEDGER;
		req.ledger = &l;
	} else {
		usage();
	}
	*len = mts__schedd__request__get_packed_size(&req);
	buf = xmalloc(*len + 1);
	mts__schedd__request__pack(&req, buf);
	return buf;
}

static int
print_reply(const uint8_t *data, size_t len)
{
	Mts__Schedd__Reply *r = mts__schedd__reply__unpack(NULL, len, data);
	int rc = 0;

	if (r == NULL) {
		fprintf(stderr, "schedtool: undecodable schedd reply\n");
		return 1;
	}
	if (r->error != NULL && r->error->code != 0) {
		printf("error %d %s\n", r->error->code, r->error->message);
		rc = 1;
	} else if (r->body_case == MTS__SCHEDD__REPLY__BODY_PREPARE &&
	    r->prepare->result_case ==
	        MTS__SCHEDD__PREPARE_REP__RESULT_GRANTED) {
		printf("granted %llu\n",
		    (unsigned long long)r->prepare->granted->expires_in_ms);
	} else if (r->body_case == MTS__SCHEDD__REPLY__BODY_PREPARE &&
	    r->prepare->result_case ==
	        MTS__SCHEDD__PREPARE_REP__RESULT_REJECTED) {
		printf("rejected %s; ", r->prepare->rejected->reason);
		print_digest(r->prepare->rejected->digest);
		rc = 3;
	} else if (r->body_case == MTS__SCHEDD__REPLY__BODY_PLACE) {
		printf("%s\n", r->place->explain);
	} else if (r->body_case == MTS__SCHEDD__REPLY__BODY_LEDGER) {
		print_digest(r->ledger->digest);
	} else if (r->body_case == MTS__SCHEDD__REPLY__BODY_AVAILABILITY) {
		printf("%s (was %s)\n", r->availability->availability,
		    r->availability->previous);
	} else if (r->body_case == MTS__SCHEDD__REPLY__BODY_COMMIT ||
	    r->body_case == MTS__SCHEDD__REPLY__BODY_ABORT) {
		printf("ok\n");
	} else {
		printf("error - unexpected reply %d\n", (int)r->body_case);
		rc = 1;
	}
	mts__schedd__reply__free_unpacked(r, NULL);
	return rc;
}

/* Sends the request body (packed) to agent on RUNDIR; returns the packed
 * reply in *out (caller frees the ProtobufCMessage *holder). */
static int
call_raw(const char *rundir, const char *agent,
    const ProtobufCMessageDescriptor *rd, ProtobufCMessage *req,
    ProtobufCMessage **rep)
{
	struct mts_ipc_client *c;
	char path[512], err[256];
	int rc;

	mts_ipc_sock_path(path, sizeof(path), rundir, agent, NULL);
	if ((c = mts_ipc_client_open(path, 20000, err, sizeof(err))) == NULL) {
		fprintf(stderr, "schedtool: %s\n", err);
		return -1;
	}
	rc = mts_ipc_client_call(c, req, rd, rep, err, sizeof(err));
	mts_ipc_client_close(c);
	if (rc < 0) {
		printf("error %d %s\n", -rc, err);
		return -1;
	}
	return 0;
}

/* One call on an open client; 0, or -1 with 'error' printed. */
static int
call_one(struct mts_ipc_client *c, Mts__Schedd__Request *req,
    Mts__Schedd__Reply **rep)
{
	char err[256];
	int rc;

	req->version = 1;
	rc = mts_ipc_client_call(c, &req->base, &mts__schedd__reply__descriptor,
	    (ProtobufCMessage **)rep, err, sizeof(err));
	if (rc < 0) {
		printf("error %d %s\n", -rc, err);
		fflush(stdout);
		return -1;
	}
	return 0;
}

/* Prepares and commits N leases PREFIX-k of CPU millicores one after the
 * other, printing each answer as it comes (a test kills schedd during a
 * burst and compares the ledger with what was answered). */
static int
burst(const char *rundir, const char *prefix, int n, uint32_t cpu)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__PrepareReq p = MTS__SCHEDD__PREPARE_REQ__INIT;
	Mts__Schedd__CommitReq c = MTS__SCHEDD__COMMIT_REQ__INIT;
	Mts__Schedd__Reply *rep;
	struct mts_ipc_client *cl;
	char path[512], err[256], lease[64], task[96];
	int k, granted;

	mts_ipc_sock_path(path, sizeof(path), rundir, "schedd", NULL);
	if ((cl = mts_ipc_client_open(path, 5000, err, sizeof(err))) == NULL) {
		fprintf(stderr, "schedtool: %s\n", err);
		return 1;
	}
	p.owner = "00112233445566778899aabbccddeeff";
	p.service = "s_burst";
	p.cpu_millis = cpu;
	p.memory = 1024 * 1024;
	p.ttl_ms = 600000;
	for (k = 0; k < n; k++) {
		snprintf(lease, sizeof(lease), "%s-%d", prefix, k);
		snprintf(task, sizeof(task), "task-%s", lease);
		p.lease = lease;
		req.body_case = MTS__SCHEDD__REQUEST__BODY_PREPARE;
		req.prepare = &p;
		if (call_one(cl, &req, &rep) < 0)
			break;
		granted = rep->prepare &&
		    rep->prepare->result_case ==
		        MTS__SCHEDD__PREPARE_REP__RESULT_GRANTED;
		mts__schedd__reply__free_unpacked(rep, NULL);
		if (!granted) {
			printf("rejected %s\n", lease);
			break;
		}
		printf("granted %s\n", lease);
		fflush(stdout);
		c.lease = lease;
		c.task = task;
		req.body_case = MTS__SCHEDD__REQUEST__BODY_COMMIT;
		req.commit = &c;
		if (call_one(cl, &req, &rep) < 0)
			break;
		mts__schedd__reply__free_unpacked(rep, NULL);
		printf("committed %s %s\n", lease, task);
		fflush(stdout);
	}
	mts_ipc_client_close(cl);
	return k == n ? 0 : 1;
}

/* The local ledger: 'lease ID STATE TASK', 'task ID CPU' and the digest. */
static int
dump(const char *rundir)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__LedgerReq l = MTS__SCHEDD__LEDGER_REQ__INIT;
	Mts__Schedd__Reply *rep;
	const Mts__Schedd__LedgerRep *lr;
	size_t i;

	req.body_case = MTS__SCHEDD__REQUEST__BODY_LEDGER;
	req.ledger = &l;
	if (call_raw(rundir, "schedd", &mts__schedd__reply__descriptor,
	        &req.base, (ProtobufCMessage **)&rep) < 0)
		return 1;
	if ((lr = rep->ledger) == NULL) {
		printf("no ledger\n");
		return 1;
	}
	for (i = 0; i < lr->n_leases; i++)
		printf("lease %s %s %s\n", lr->leases[i]->id,
		    lr->leases[i]->state,
		    *lr->leases[i]->task ? lr->leases[i]->task : "-");
	for (i = 0; i < lr->n_tasks; i++)
		printf("task %s %u\n", lr->tasks[i]->id,
		    lr->tasks[i]->cpu_millis);
	print_digest(lr->digest);
	mts__schedd__reply__free_unpacked(rep, NULL);
	return 0;
}

static int
digest(const char *rundir, const char *node)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep;
	Mts__Schedd__Digest *d;
	char key[64];

	snprintf(key, sizeof(key), "d/%s", node);
	g.key.data = (uint8_t *)key;
	g.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &g;
	if (call_raw(rundir, "statestore", &mts__statestore__reply__descriptor,
	        &req.base, (ProtobufCMessage **)&rep) < 0)
		return 1;
	if (!rep->get || !rep->get->found || rep->get->record == NULL ||
	    rep->get->record->tombstone) {
		printf("no digest\n");
		mts__statestore__reply__free_unpacked(rep, NULL);
		return 1;
	}
	d = mts__schedd__digest__unpack(NULL, rep->get->record->value.len,
	    rep->get->record->value.data);
	print_digest(d);
	if (d)
		mts__schedd__digest__free_unpacked(d, NULL);
	mts__statestore__reply__free_unpacked(rep, NULL);
	return d ? 0 : 1;
}

static int
puttask(const char *rundir, char **a)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Statestore__Reply *rep;
	Mts__Shim__TaskStatus t = MTS__SHIM__TASK_STATUS__INIT;
	Mts__Shim__TaskSpec spec = MTS__SHIM__TASK_SPEC__INIT;
	char key[256];
	uint8_t *buf;
	size_t len;
	int rc;

	spec.id = a[1];
	spec.service = a[2];
	spec.cpu_millis = (uint32_t)strtoul(a[3], NULL, 10);
	spec.memory_limit = strtoull(a[4], NULL, 10);
	t.id = a[1];
	t.state = a[5];
	t.desired = "running";
	t.spec = &spec;
	len = mts__shim__task_status__get_packed_size(&t);
	buf = xmalloc(len + 1);
	mts__shim__task_status__pack(&t, buf);
	snprintf(key, sizeof(key), "t/%s/%s", a[0], a[1]);
	put.key.data = (uint8_t *)key;
	put.key.len = strlen(key);
	put.value.data = buf;
	put.value.len = len;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	rc = call_raw(rundir, "statestore", &mts__statestore__reply__descriptor,
	    &req.base, (ProtobufCMessage **)&rep);
	free(buf);
	if (rc < 0)
		return 1;
	mts__statestore__reply__free_unpacked(rep, NULL);
	printf("ok\n");
	return 0;
}

static int
nodeinfo(const char *rundir, const char *node)
{
	struct mts_ipc_client *c;
	struct mts_nodeinfo ni;
	char path[512], err[256];
	const char *v;
	int rc;

	mts_ipc_sock_path(path, sizeof(path), rundir, "statestore", NULL);
	if ((c = mts_ipc_client_open(path, 20000, err, sizeof(err))) == NULL) {
		fprintf(stderr, "schedtool: %s\n", err);
		return 1;
	}
	rc = mts_nodeinfo_get(c, node, &ni, err, sizeof(err));
	mts_ipc_client_close(c);
	if (rc <= 0) {
		printf(rc == 0 ? "no nodeinfo\n" : "error %d %s\n", -rc, err);
		return 1;
	}
	v = mts_nodeinfo_version(&ni, "schedd");
	printf("hostname %s os %s arch %s cpu %u mem %llu availability %s "
	       "subnet %s schedd %s\n",
	    ni.hostname, ni.os, ni.arch, ni.cpu_millis,
	    (unsigned long long)ni.memory,
	    mts_availability_str(ni.availability),
	    ni.overlay_subnet[0] ? ni.overlay_subnet : "-", v ? v : "-");
	return 0;
}

struct subnet_edit {
	const char *subnet;
	struct mts_loop *loop;
	int rc, edits;
};

static int
subnet_edit(struct mts_nodeinfo *ni, void *arg)
{
	struct subnet_edit *e = arg;

	e->edits++;
	if (strcmp(ni->overlay_subnet, e->subnet) == 0)
		return 0;
	snprintf(ni->overlay_subnet, sizeof(ni->overlay_subnet), "%s",
	    e->subnet);
	return 1;
}

static void
subnet_done(void *arg, int rc, const struct mts_nodeinfo *now, const char *err)
{
	struct subnet_edit *e = arg;

	e->rc = rc;
	if (rc < 0)
		printf("error %d %s\n", -rc, err);
	else
		printf("ok %d\n", e->edits);
	mts_loop_stop(e->loop);
}

/* As netd would: only overlay_subnet, under compare-and-set. */
static int
setsubnet(const char *rundir, const char *node, const char *subnet)
{
	struct subnet_edit e = { .subnet = subnet, .rc = -1 };
	struct mts_ipc_async *store;
	char path[512], err[256];

	mts_ipc_sock_path(path, sizeof(path), rundir, "statestore", NULL);
	if ((e.loop = mts_loop_new()) == NULL ||
	    (store = mts_ipc_async_open(e.loop, path, 5000, err,
	         sizeof(err))) == NULL) {
		fprintf(stderr, "schedtool: %s\n", err);
		return 1;
	}
	if (mts_nodeinfo_update(store, node, subnet_edit, &e, subnet_done,
	        &e) == 0)
		mts_loop_run(e.loop);
	mts_ipc_async_close(store);
	mts_loop_free(e.loop);
	return e.rc == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__RelayReq rr = MTS__GOSSIPD__RELAY_REQ__INIT;
	Mts__Gossipd__Reply *grep_;
	Mts__Schedd__Reply *srep;
	uint8_t node[MTS_NODE_ID_LEN], *payload, *buf;
	size_t len;
	int rc;

	if (argc < 4)
		usage();
	if (strcmp(argv[3], "digest") == 0 && argc == 5)
		return digest(argv[1], argv[4]);
	if (strcmp(argv[3], "puttask") == 0 && argc == 10)
		return puttask(argv[1], argv + 4);
	if (strcmp(argv[3], "nodeinfo") == 0 && argc == 5)
		return nodeinfo(argv[1], argv[4]);
	if (strcmp(argv[3], "setsubnet") == 0 && argc == 6)
		return setsubnet(argv[1], argv[4], argv[5]);
	if (strcmp(argv[3], "dump") == 0 && argc == 4)
		return dump(argv[1]);
	if (strcmp(argv[3], "burst") == 0 && argc == 7)
		return burst(argv[1], argv[4], atoi(argv[5]),
		    (uint32_t)strtoul(argv[6], NULL, 10));
	payload = pack_req(argc, argv, &len);
	if (strcmp(argv[2], "-") == 0) {
		Mts__Schedd__Request *sreq =
		    mts__schedd__request__unpack(NULL, len, payload);

		rc =
		    call_raw(argv[1], "schedd", &mts__schedd__reply__descriptor,
		        &sreq->base, (ProtobufCMessage **)&srep);
		mts__schedd__request__free_unpacked(sreq, NULL);
		free(payload);
		if (rc < 0)
			return 1;
		len = mts__schedd__reply__get_packed_size(srep);
		buf = xmalloc(len + 1);
		mts__schedd__reply__pack(srep, buf);
		mts__schedd__reply__free_unpacked(srep, NULL);
		rc = print_reply(buf, len);
		free(buf);
		return rc;
	}
	if (mts_unhex(node, sizeof(node), argv[2], strlen(argv[2])) < 0)
		usage();
	rr.to_node.data = node;
	rr.to_node.len = sizeof(node);
	rr.agent = "schedd";
	rr.payload.data = payload;
	rr.payload.len = len;
	rr.request_id = getenv("RELAY_ID")
	    ? strtoull(getenv("RELAY_ID"), NULL, 10)
	    : ((uint64_t)getpid() << 40) ^ (uint64_t)mts_now_us();
	rr.timeout_ms = 5000;
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_RELAY;
	req.relay = &rr;
	rc = call_raw(argv[1], "gossipd", &mts__gossipd__reply__descriptor,
	    &req.base, (ProtobufCMessage **)&grep_);
	free(payload);
	if (rc < 0)
		return 1;
	rc = grep_->relay
	    ? print_reply(grep_->relay->payload.data, grep_->relay->payload.len)
	    : 1;
	mts__gossipd__reply__free_unpacked(grep_, NULL);
	return rc;
}
