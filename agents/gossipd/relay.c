/* relay.c: the serving side of the node-to-node relay — which agents take which relayed requests, a bound per peer, asynchronous calls to the local agent, and the replies remembered for retries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/gossipd/gossipd.h"
#include "log.h"
#include "mtserr.h"
#include "reconciled.pb-c.h"
#include "schedd.pb-c.h"
#include "shim.pb-c.h"
#include "xmalloc.h"

#define RELAY_DONE_TTL 60000
#define RELAY_DEFAULT_TIMEOUT 2000
#define RELAY_MAX_TIMEOUT 60000 /* a relayed call waits at most this */
#define AGENT_NAME_MAX 32

/*
 * What other nodes may ask of this node's agents: an agent is reachable
 * only if it has a row here, and only for the request types (the oneof
 * case of its Request) the row lists or [gossipd] relay_allow adds.
 * Everything else is refused at once, before any socket is opened, so a
 * relay cannot reach gossipd itself, the statestore (replication has its
 * own path) or init. The shim's list is the one docs/containers.md
 * promises: task list and inspect, logs, exec (one-shot and sessions),
 * and the blobs of its stored images (nodes fetching an image they lack).
 */
static const uint32_t shim_types[] = {
	MTS__SHIM__REQUEST__BODY_LIST,
	MTS__SHIM__REQUEST__BODY_INSPECT,
	MTS__SHIM__REQUEST__BODY_LOGS,
	MTS__SHIM__REQUEST__BODY_EXEC,
	MTS__SHIM__REQUEST__BODY_EXEC_START,
	MTS__SHIM__REQUEST__BODY_EXEC_IO,
	MTS__SHIM__REQUEST__BODY_IMAGE_BLOB,
};

/* Reads whose replies are not remembered for retries: a retry reads again,
 * and a reply can be 1 MiB (an image chunk). */
static const uint32_t shim_fresh[] = {
	MTS__SHIM__REQUEST__BODY_IMAGE_BLOB,
};

/* Owners on other nodes reserve slots here, and `mtsctl node drain|pause|
 * activate` on any node sets this one's availability
 * (docs/scheduling.md). */
static const uint32_t schedd_types[] = {
	MTS__SCHEDD__REQUEST__BODY_PREPARE,
	MTS__SCHEDD__REQUEST__BODY_COMMIT,
	MTS__SCHEDD__REQUEST__BODY_ABORT,
	MTS__SCHEDD__REQUEST__BODY_LEDGER,
	MTS__SCHEDD__REQUEST__BODY_AVAILABILITY,
};

/* Owners on other nodes hand tasks to this node and stop them here. */
static const uint32_t reconciled_types[] = {
	MTS__RECONCILED__REQUEST__BODY_ASSIGN,
	MTS__RECONCILED__REQUEST__BODY_STOP,
};

static const struct relay_agent {
	const char *name;
	const ProtobufCMessageDescriptor *request; /* for relay_allow names */
	const uint32_t *types;
	size_t ntypes;
	const uint32_t *fresh; /* of types, the ones never remembered */
	size_t nfresh;
} relay_agents[] = {
	{ "shim", &mts__shim__request__descriptor, shim_types,
	    sizeof(shim_types) / sizeof(shim_types[0]), shim_fresh,
	    sizeof(shim_fresh) / sizeof(shim_fresh[0]) },
	{ "statestore", &mts__statestore__request__descriptor, NULL, 0, NULL,
	    0 },
	{ "schedd", &mts__schedd__request__descriptor, schedd_types,
	    sizeof(schedd_types) / sizeof(schedd_types[0]), NULL, 0 },
	{ "reconciled", &mts__reconciled__request__descriptor, reconciled_types,
	    sizeof(reconciled_types) / sizeof(reconciled_types[0]), NULL, 0 },
};

#define NAGENTS (sizeof(relay_agents) / sizeof(relay_agents[0]))

/* One [gossipd] relay_allow entry: AGENT:REQUEST. */
struct relay_extra {
	char agent[AGENT_NAME_MAX + 1];
	uint32_t type;
};

/* A relayed call being served. */
struct relay_serving {
	struct gossipd *g;
	uint8_t from[MTS_NODE_ID_LEN];
	uint64_t id;
	int fresh; /* its reply is not remembered */
	struct relay_serving *next;
};

/* A client of one local agent, opened on first use. */
struct relay_client {
	char agent[AGENT_NAME_MAX + 1];
	struct mts_ipc_async *c;
};

static int
valid_agent(const char *a)
{
	size_t i, n = strlen(a);

	if (n == 0 || n > AGENT_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((a[i] >= 'a' && a[i] <= 'z') ||
		        (a[i] >= '0' && a[i] <= '9') || a[i] == '-' ||
		        a[i] == '_'))
			return 0;
	return 1;
}

static const struct relay_agent *
agent_row(const char *name)
{
	size_t i;

	for (i = 0; i < NAGENTS; i++)
		if (strcmp(relay_agents[i].name, name) == 0)
			return &relay_agents[i];
	return NULL;
}

/* Parses one relay_allow entry; the request is a field name of the
 * agent's Request (agents in the table) or its number. */
static int
parse_extra(const char *s, struct relay_extra *x, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	const struct relay_agent *ra;
	const ProtobufCFieldDescriptor *f;
	char *end;
	unsigned long v;

	if (colon == NULL || (size_t)(colon - s) > AGENT_NAME_MAX) {
		snprintf(err, errlen, "'%s' is not AGENT:REQUEST", s);
		return -1;
	}
	memcpy(x->agent, s, (size_t)(colon - s));
	x->agent[colon - s] = '\0';
	if (!valid_agent(x->agent)) {
		snprintf(err, errlen, "'%s': bad agent name", s);
		return -1;
	}
	v = strtoul(colon + 1, &end, 10);
	if (colon[1] != '\0' && *end == '\0' && v >= 2 && v <= 0x1fffffff) {
		x->type = (uint32_t)v;
		return 0;
	}
	ra = agent_row(x->agent);
	f = ra ? protobuf_c_message_descriptor_get_field_by_name(ra->request,
	             colon + 1)
	       : NULL;
	if (f == NULL || f->id < 2) {
		snprintf(err, errlen,
		    "'%s': no request '%s' known for agent "
		    "'%s' (give its field number)",
		    s, colon + 1, x->agent);
		return -1;
	}
	x->type = f->id;
	return 0;
}

int
gd_relay_open(struct gossipd *g)
{
	char **v = mts_cfg_list(g->agent.cfg, "gossipd", "relay_allow");
	char err[256];
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; v && v[i]; i++)
		n++;
	g->relay_extra = xcalloc(n + 1, sizeof(*g->relay_extra));
	for (i = 0; i < n && rc == 0; i++) {
		if (parse_extra(v[i], &g->relay_extra[i], err, sizeof(err)) <
		    0) {
			log_warnx("[gossipd] relay_allow: %s", err);
			rc = -1;
		}
	}
	g->nrelay_extra = n;
	mts_cfg_list_free(v);
	g->relay_inflight =
	    mts_cfg_int(g->agent.cfg, "gossipd", "relay_inflight");
	if (rc == 0 && g->relay_inflight < 1) {
		log_warnx("[gossipd] relay_inflight must be at least 1");
		rc = -1;
	}
	return rc;
}

/* 1 if agent takes relayed requests of this type. */
static int
allowed(struct gossipd *g, const char *agent, uint32_t type)
{
	const struct relay_agent *ra = agent_row(agent);
	size_t i;

	for (i = 0; ra && i < ra->ntypes; i++)
		if (ra->types[i] == type)
			return 1;
	for (i = 0; i < g->nrelay_extra; i++)
		if (g->relay_extra[i].type == type &&
		    strcmp(g->relay_extra[i].agent, agent) == 0)
			return 1;
	return 0;
}

/* 1 if the replies to agent's requests of this type are not remembered. */
static int
fresh(const char *agent, uint32_t type)
{
	const struct relay_agent *ra = agent_row(agent);
	size_t i;

	for (i = 0; ra && i < ra->nfresh; i++)
		if (ra->fresh[i] == type)
			return 1;
	return 0;
}

/* 1 if agent is reachable at all (a row, or a relay_allow entry). */
static int
known_agent(struct gossipd *g, const char *agent)
{
	size_t i;

	if (agent_row(agent) != NULL)
		return 1;
	for (i = 0; i < g->nrelay_extra; i++)
		if (strcmp(g->relay_extra[i].agent, agent) == 0)
			return 1;
	return 0;
}

static int
varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int shift;

	*v = 0;
	for (shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0)
			return 0;
	}
	return -1;
}

/*
 * The oneof case of a packed agent Request ({version = 1, oneof body}):
 * the number of its last top-level field other than 1, as protobuf keeps
 * the last member of a oneof. Only the envelope is walked (each field is
 * skipped by its wire type, never decoded); 0 if there is no body,
 * -MTS_ERR_INVAL if the bytes are not protobuf.
 */
int
gd_relay_request_type(const uint8_t *buf, size_t len, uint32_t *type)
{
	const uint8_t *p = buf, *end = buf + len;
	uint64_t tag, v;

	*type = 0;
	while (p < end) {
		if (varint(&p, end, &tag) < 0 || (tag >> 3) == 0 ||
		    (tag >> 3) > 0x1fffffff)
			return -MTS_ERR_INVAL;
		switch (tag & 7) {
		case 0:
			if (varint(&p, end, &v) < 0)
				return -MTS_ERR_INVAL;
			break;
		case 1:
		case 5:
			if ((size_t)(end - p) < ((tag & 7) == 1 ? 8u : 4u))
				return -MTS_ERR_INVAL;
			p += (tag & 7) == 1 ? 8 : 4;
			break;
		case 2:
			if (varint(&p, end, &v) < 0 || v > (uint64_t)(end - p))
				return -MTS_ERR_INVAL;
			p += v;
			break;
		default: /* groups are not used by any mts proto */
			return -MTS_ERR_INVAL;
		}
		if ((tag >> 3) != 1)
			*type = (uint32_t)(tag >> 3);
	}
	return 0;
}

/* --- replies remembered for retries ------------------------------------------ */

static struct relay_done *
done_find(struct gossipd *g, const uint8_t from[MTS_NODE_ID_LEN], uint64_t id,
    mts_time_t now)
{
	size_t i;

	for (i = 0; i < g->ndone;) {
		if (g->done[i].expires <= now) {
			free(g->done[i].payload);
			g->done[i] = g->done[--g->ndone];
			continue;
		}
		if (g->done[i].request_id == id &&
		    memcmp(g->done[i].from, from, MTS_NODE_ID_LEN) == 0)
			return &g->done[i];
		i++;
	}
	return NULL;
}

static void
done_add(struct gossipd *g, const uint8_t from[MTS_NODE_ID_LEN], uint64_t id,
    uint32_t err, const uint8_t *p, size_t len, mts_time_t now)
{
	struct relay_done *d;

	if (g->ndone == GD_MAX_RELAYS) {
		free(g->done[0].payload);
		g->done[0] = g->done[--g->ndone];
	}
	d = &g->done[g->ndone++];
	memcpy(d->from, from, MTS_NODE_ID_LEN);
	d->request_id = id;
	d->error = err;
	d->payload = len ? xmemdup(p, len) : NULL;
	d->len = len;
	d->expires = now + RELAY_DONE_TTL;
}

/* --- serving ----------------------------------------------------------------- */

static void
send_rep(struct gossipd *g, const uint8_t to[MTS_NODE_ID_LEN], uint64_t id,
    uint32_t error, const uint8_t *payload, size_t len, const char *message)
{
	Mts__Gossip__Msg msg = MTS__GOSSIP__MSG__INIT;
	Mts__Gossip__RelayRep rep = MTS__GOSSIP__RELAY_REP__INIT;
	struct peer *p = gd_peer_find(g, to);

	if (p == NULL || p->removed)
		return;
	rep.id = id;
	rep.error = error;
	rep.payload.data = (uint8_t *)payload;
	rep.payload.len = len;
	rep.message = (char *)message;
	msg.body_case = MTS__GOSSIP__MSG__BODY_RELAY_REP;
	msg.relay_rep = &rep;
	(void)gd_send(g, p, &msg, mts_loop_now(g->loop));
}

static size_t
serving_from(struct gossipd *g, const uint8_t from[MTS_NODE_ID_LEN],
    uint64_t id, int *dup)
{
	struct relay_serving *s;
	size_t n = 0;

	*dup = 0;
	for (s = g->serving; s; s = s->next) {
		if (memcmp(s->from, from, MTS_NODE_ID_LEN) != 0)
			continue;
		n++;
		if (s->id == id)
			*dup = 1;
	}
	return n;
}

static void
serving_remove(struct gossipd *g, struct relay_serving *rs)
{
	struct relay_serving **pp;

	for (pp = &g->serving; *pp; pp = &(*pp)->next) {
		if (*pp == rs) {
			*pp = rs->next;
			return;
		}
	}
}

static void
agent_answered(void *arg, int rc, const uint8_t *body, size_t len,
    const char *err)
{
	struct relay_serving *rs = arg;
	struct gossipd *g = rs->g;
	uint32_t code = rc < 0 ? (uint32_t)-rc : 0;
	char msg[300];

	serving_remove(g, rs);
	if (rc == -MTS_ERR_CANCELED) { /* gossipd is exiting */
		free(rs);
		return;
	}
	snprintf(msg, sizeof(msg), "%s", rc < 0 ? err : "");
	if (!rs->fresh)
		done_add(g, rs->from, rs->id, code, body, len,
		    mts_loop_now(g->loop));
	send_rep(g, rs->from, rs->id, code, body, len, msg);
	free(rs);
}

/* The path of an agent's socket; only names that passed the table get
 * here. */
static int
agent_sock(struct gossipd *g, const char *agent, char *path, size_t len)
{
	return mts_ipc_sock_path(path, len, g->agent.rundir, agent, NULL);
}

static struct mts_ipc_async *
agent_client(struct gossipd *g, const char *agent, char *err, size_t errlen)
{
	char path[512];
	size_t i;

	for (i = 0; i < g->nrelay_clients; i++)
		if (strcmp(g->relay_clients[i].agent, agent) == 0)
			return g->relay_clients[i].c;
	if (agent_sock(g, agent, path, sizeof(path)) < 0) {
		snprintf(err, errlen, "socket path too long");
		return NULL;
	}
	g->relay_clients = xreallocarray(g->relay_clients,
	    g->nrelay_clients + 1, sizeof(*g->relay_clients));
	snprintf(g->relay_clients[i].agent, sizeof(g->relay_clients[i].agent),
	    "%s", agent);
	g->relay_clients[i].c = mts_ipc_async_open(g->loop, path,
	    RELAY_DEFAULT_TIMEOUT, err, errlen);
	if (g->relay_clients[i].c == NULL)
		return NULL;
	g->nrelay_clients++;
	return g->relay_clients[i].c;
}

/* Checks a relayed request; 0, or an error code with err filled. */
static uint32_t
check(struct gossipd *g, const uint8_t from[MTS_NODE_ID_LEN],
    const Mts__Gossip__RelayReq *rq, char *err, size_t errlen)
{
	uint32_t type;
	int dup;

	if (!valid_agent(rq->agent)) {
		snprintf(err, errlen, "relay: bad agent name");
		return MTS_ERR_INVAL;
	}
	if (!known_agent(g, rq->agent)) {
		snprintf(err, errlen,
		    "relay: agent '%s' takes no relayed "
		    "requests",
		    rq->agent);
		return MTS_ERR_DENIED;
	}
	if (gd_relay_request_type(rq->payload.data, rq->payload.len, &type) <
	    0) {
		snprintf(err, errlen, "relay: the payload is not a request");
		return MTS_ERR_INVAL;
	}
	if (!allowed(g, rq->agent, type)) {
		snprintf(err, errlen,
		    "relay: agent '%s' does not take "
		    "request %u from other nodes",
		    rq->agent, type);
		return MTS_ERR_DENIED;
	}
	if (serving_from(g, from, rq->id, &dup) >= (size_t)g->relay_inflight) {
		snprintf(err, errlen,
		    "relay: %lld calls from this node are "
		    "already in flight ([gossipd] "
		    "relay_inflight)",
		    (long long)g->relay_inflight);
		return MTS_ERR_TOOBIG;
	}
	return 0;
}

void
gd_relay_serve(struct gossipd *g, const uint8_t from[MTS_NODE_ID_LEN],
    const Mts__Gossip__RelayReq *rq, mts_time_t now)
{
	struct relay_serving *rs;
	struct relay_done *d;
	struct mts_ipc_async *c;
	uint32_t code, tmo, type;
	char err[256] = "";
	int dup;

	if ((d = done_find(g, from, rq->id, now)) != NULL) {
		send_rep(g, from, rq->id, d->error, d->payload, d->len, "");
		return;
	}
	(void)serving_from(g, from, rq->id, &dup);
	if (dup)
		return; /* a retry of a call in progress: its reply will come */
	if ((code = check(g, from, rq, err, sizeof(err))) != 0 ||
	    (c = agent_client(g, rq->agent, err, sizeof(err))) == NULL) {
		send_rep(g, from, rq->id, code ? code : MTS_ERR_IO, NULL, 0,
		    err);
		return;
	}
	/* compared unsigned: a timeout of 2^31 or more is the longest one */
	tmo = rq->timeout_ms ? rq->timeout_ms : RELAY_DEFAULT_TIMEOUT;
	if (tmo > RELAY_MAX_TIMEOUT)
		tmo = RELAY_MAX_TIMEOUT;
	rs = xcalloc(1, sizeof(*rs));
	rs->g = g;
	memcpy(rs->from, from, MTS_NODE_ID_LEN);
	rs->id = rq->id;
	if (gd_relay_request_type(rq->payload.data, rq->payload.len, &type) ==
	    0)
		rs->fresh = fresh(rq->agent, type);
	rs->next = g->serving;
	g->serving = rs;
	if (mts_ipc_async_call_raw(c, rq->payload.data, rq->payload.len,
	        (int)tmo, agent_answered, rs) == NULL) {
		serving_remove(g, rs);
		free(rs);
	}
}
