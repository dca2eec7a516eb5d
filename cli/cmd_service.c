/* cmd_service.c: `mtsctl service ls|ps|inspect|scale|rm` and `mtsctl stack ls|services|ps|rm` — the service records of the replicated state, their tasks (t/ records) and their owner node (rendezvous hashing over the members this node sees alive). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gossipd.pb-c.h"
#include "hash.h"
#include "mtstime.h"
#include "netd_status.h"
#include "portclaim.h"
#include "reconciled.pb-c.h"
#include "rendezvous.h"
#include "shim.pb-c.h"
#include "svc_spec.h"
#include "svcrec.h"
#include "xmalloc.h"

/* --- members and owners ------------------------------------------------------------ */

void
mtsctl_members_load(struct mtsctl *ctx, struct members *m)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__MembersReq mr = MTS__GOSSIPD__MEMBERS_REQ__INIT;
	Mts__Gossipd__Reply *rep = NULL;
	char err[256];
	size_t i;

	memset(m, 0, sizeof(*m));
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_MEMBERS;
	req.members = &mr;
	if (mtsctl_try_call(ctx, "gossipd", &req.base,
	        &mts__gossipd__reply__descriptor, (ProtobufCMessage **)&rep,
	        err, sizeof(err)) != 0 ||
	    rep->body_case != MTS__GOSSIPD__REPLY__BODY_MEMBERS) {
		if (rep)
			protobuf_c_message_free_unpacked(&rep->base, NULL);
		return;
	}
	m->n = rep->members->n_nodes;
	m->alive = xcalloc(m->n + 1, sizeof(*m->alive));
	m->hex = xcalloc(m->n + 1, sizeof(*m->hex));
	m->names = xcalloc(m->n + 1, sizeof(*m->names));
	for (i = 0; i < m->n; i++) {
		const Mts__Gossipd__NodeInfo *n = rep->members->nodes[i];

		if (n->node.len != MTS_NODE_ID_LEN)
			continue;
		mts_hex(m->hex[i], n->node.data, MTS_NODE_ID_LEN);
		m->names[i] = xstrdup(n->name);
		if (strcmp(n->state, "alive") == 0 && !n->removed)
			memcpy(m->alive[m->nalive++], n->node.data,
			    MTS_NODE_ID_LEN);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
}

void
mtsctl_members_free(struct members *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->names[i]);
	free(m->names);
	free(m->alive);
	free(m->hex);
}

const char *
mtsctl_member_name(const struct members *m, const char *hex)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->hex[i], hex) == 0)
			return m->names[i] ? m->names[i] : "";
	return "";
}

static json_t *
owner_of(const struct members *m, const char *service)
{
	long o = mts_rendezvous_owner(service,
	    (const uint8_t(*)[MTS_NODE_ID_LEN])m->alive, m->nalive);
	char hex[MTS_NODE_HEX_LEN + 1];

	if (o < 0)
		return json_string("");
	mts_hex(hex, m->alive[o], MTS_NODE_ID_LEN);
	return json_string(hex);
}

/* The row's owner_name: the owner's node name, as service ps names nodes
 * (its id when the member has no name). */
static void
owner_name(const struct members *m, json_t *row)
{
	const char *id = json_string_value(json_object_get(row, "owner"));
	const char *name = id && *id ? mtsctl_member_name(m, id) : "";

	json_object_set_new(row, "owner_name",
	    json_string(*name ? name
	            : id      ? id
	                      : ""));
}

/* --- task counts ----------------------------------------------------------------- */

struct counts {
	struct svc_rec *svc;
	size_t n;
	uint32_t *running;
	const struct members *m; /* tasks of members not alive do not count */
};

int
mtsctl_member_alive(const struct members *m, const char *node)
{
	char hex[MTS_NODE_HEX_LEN + 1];
	size_t i;

	if (m == NULL || m->nalive == 0)
		return 1;
	for (i = 0; i < m->nalive; i++) {
		mts_hex(hex, m->alive[i], MTS_NODE_ID_LEN);
		if (strcmp(hex, node) == 0)
			return 1;
	}
	return 0;
}

static void
count_running(void *arg, const char *node, const Mts__Shim__TaskStatus *t)
{
	struct counts *c = arg;
	size_t i;

	if (!mtsctl_member_alive(c->m, node))
		return; /* its record says running: nobody knows */
	for (i = 0; t->spec && i < c->n; i++)
		if (strcmp(t->spec->service, c->svc[i].name) == 0)
			c->running[i] += strcmp(t->state, "running") == 0;
}

/* --- contested published ports ---------------------------------------------------- */

/* A published port netd opens (tcp or udp, a number); its protocol. */
static const char *
claim_proto(const Mts__Service__Port *p)
{
	const char *proto = p->protocol && *p->protocol ? p->protocol : "tcp";

	if (p->published == 0 || p->published > 65535 || p->target == 0 ||
	    (strcmp(proto, "tcp") != 0 && strcmp(proto, "udp") != 0))
		return NULL;
	return proto;
}

/*
 * out[i] = the ports of service l[i] that a service created earlier
 * holds, as [{"port": "8080/tcp", "held_by": "other_web"}] (mts_port_holders:
 * the rule by which every node's netd opens a port for one service
 * only; the other's tasks run, its port is not opened). A new reference
 * each (the caller's).
 */
static void
port_conflicts(const struct svc_rec *l, size_t n, json_t **out)
{
	struct mts_port_claim *c = NULL;
	size_t *holder, *of, nc = 0, i, j;
	char b[32];

	for (i = 0; i < n; i++) {
		out[i] = json_array();
		nc += l[i].rec->spec->n_ports;
	}
	c = xcalloc(nc + 1, sizeof(*c));
	of = xcalloc(nc + 1, sizeof(*of));
	holder = xcalloc(nc + 1, sizeof(*holder));
	for (i = nc = 0; i < n; i++)
		for (j = 0; j < l[i].rec->spec->n_ports; j++) {
			const Mts__Service__Port *p = l[i].rec->spec->ports[j];
			const char *proto = claim_proto(p);

			if (proto == NULL)
				continue;
			c[nc] = (struct mts_port_claim){ l[i].rec->spec->name,
				mts_svc_created(l[i].rec, l[i].hlc),
				p->published, strcmp(proto, "udp") == 0 };
			of[nc++] = i;
		}
	mts_port_holders(c, nc, holder);
	for (i = 0; i < nc; i++) {
		if (!mts_port_lost(c, holder, i))
			continue;
		snprintf(b, sizeof(b), "%u/%s", c[i].port,
		    c[i].udp ? "udp" : "tcp");
		json_array_append_new(out[of[i]],
		    json_pack("{ss ss}", "port", b, "held_by",
		        c[holder[i]].service));
	}
	free(c);
	free(of);
	free(holder);
}

/* "shop_web: port 8080/tcp is held by other_web (created first): not
 * opened for shop_web" for each conflict, after service ls's table. */
static void
print_conflicts(const char *name, const json_t *a)
{
	size_t i;

	for (i = 0; i < json_array_size(a); i++) {
		const json_t *o = json_array_get(a, i);

		printf("%s: port %s is held by %s (created first): not opened "
		       "for %s\n",
		    name, json_string_value(json_object_get(o, "port")),
		    json_string_value(json_object_get(o, "held_by")), name);
	}
}

static int
wanted(const char *filter_stack, const struct svc_rec *r)
{
	return filter_stack == NULL ||
	    strcmp(r->rec->spec->stack, filter_stack) == 0;
}

/* "updating 2/3", "paused 1/3", "completed" (or "" with no update
 * status) for service ls. */
static int
update_summary(struct mtsctl *ctx, const char *name, json_t **out)
{
	Mts__Service__UpdateStatus *u;
	char b[64] = "";
	int rc;

	if ((rc = mtsctl_upd_get(ctx, name, &u)) != 0)
		return rc;
	if (u &&
	    (strcmp(u->state, "none") == 0 ||
	        strstr(u->state, "completed") != NULL))
		snprintf(b, sizeof(b), "%s", u->state);
	else if (u)
		snprintf(b, sizeof(b), "%s %u/%u", u->state, u->batch,
		    u->batches);
	if (u)
		protobuf_c_message_free_unpacked(&u->base, NULL);
	*out = json_string(b);
	return 0;
}

/* service ls, and stack services STACK (filter_stack set). */
static int
list_services(struct mtsctl *ctx, const char *filter_stack)
{
	static const struct mtsctl_col cols[] = { { "name", "NAME" },
		{ "mode", "MODE" }, { "replicas", "REPLICAS" },
		{ "image", "IMAGE" }, { "owner_name", "OWNER" },
		{ "update", "UPDATE" }, { NULL, NULL } };
	struct members m;
	struct counts c = { NULL, 0, NULL, &m };
	json_t *rows, **conf;
	size_t i;
	int rc;

	if ((rc = mtsctl_svc_list(ctx, &c.svc, &c.n)) != 0)
		return rc;
	c.running = xcalloc(c.n + 1, sizeof(*c.running));
	conf = xcalloc(c.n + 1, sizeof(*conf));
	port_conflicts(c.svc, c.n, conf);
	mtsctl_members_load(ctx, &m);
	if ((rc = mtsctl_task_scan(ctx, count_running, &c)) != 0) {
		mtsctl_members_free(&m);
		goto out;
	}
	rows = json_array();
	for (i = 0; i < c.n && rc == 0; i++) {
		const Mts__Service__ServiceSpec *s = c.svc[i].rec->spec;
		int global = strncmp(s->mode, "global", 6) == 0;
		char rep[64];
		json_t *upd;

		if (!wanted(filter_stack, &c.svc[i]))
			continue;
		if ((rc = update_summary(ctx, s->name, &upd)) != 0)
			break;
		snprintf(rep, sizeof(rep), "%u/%zu", c.running[i],
		    global ? m.nalive : (size_t)s->replicas);
		json_array_append_new(rows,
		    json_pack("{ss ss ss sI sI ss so sI}", "name", s->name,
		        "mode", s->mode, "replicas", rep, "running",
		        (json_int_t)c.running[i], "desired",
		        (json_int_t)(global ? m.nalive : s->replicas), "image",
		        s->image, "owner", owner_of(&m, s->name), "version",
		        (json_int_t)c.svc[i].rec->version));
		owner_name(&m, json_array_get(rows, json_array_size(rows) - 1));
		json_object_set_new(json_array_get(rows,
		                        json_array_size(rows) - 1),
		    "update", upd);
		json_object_set(json_array_get(rows, json_array_size(rows) - 1),
		    "port_conflicts", conf[i]);
	}
	if (rc == 0) {
		mtsctl_print_rows(ctx, rows, cols);
		for (i = 0; i < c.n && ctx->fmt != MTSCTL_FMT_JSON; i++)
			if (wanted(filter_stack, &c.svc[i]))
				print_conflicts(c.svc[i].rec->spec->name,
				    conf[i]);
	} else
		json_decref(rows);
	mtsctl_members_free(&m);
out:
	for (i = 0; i < c.n; i++)
		json_decref(conf[i]);
	free(conf);
	free(c.running);
	mtsctl_svc_list_free(c.svc, c.n);
	return rc;
}

/* --- tasks of a service ---------------------------------------------------------- */

struct ps {
	const char *service; /* or NULL with stack set */
	const char *stack;
	const struct members *m;
	json_t *rows;
	const uint8_t *digest; /* service ps: the record's spec digest */
	uint64_t version;      /* ... and its version */
};

/* "4", or "3 (old)" for a task whose spec is not the record's. */
static json_t *
version_of(const struct ps *p, const Mts__Shim__TaskStatus *t, int *current)
{
	char v[48];
	const Mts__Shim__TaskSpec *s = t->spec;

	/* a task that never reached its shim (its image could not be
	 * fetched) has the record reconciled wrote, with no digest: its
	 * version says which spec it was placed from */
	if (p->digest && s && s->spec_digest.len == 0)
		*current = s->service_version == p->version;
	else
		*current = p->digest && s &&
		    s->spec_digest.len == MTS_SPEC_DIGEST_LEN &&
		    memcmp(s->spec_digest.data, p->digest,
		        MTS_SPEC_DIGEST_LEN) == 0;
	if (s == NULL || s->service_version == 0)
		snprintf(v, sizeof(v), "%s",
		    p->digest && !*current ? "(old)" : "");
	else
		snprintf(v, sizeof(v), "%llu%s",
		    (unsigned long long)s->service_version,
		    p->digest && !*current ? " (old)" : "");
	return json_string(v);
}

static void
ps_one(void *arg, const char *node, const Mts__Shim__TaskStatus *t)
{
	struct ps *p = arg;
	const char *svc = t->spec ? t->spec->service : "";
	char age[32] = "";
	json_t *row;
	int current = 0;
	size_t sl = p->stack ? strlen(p->stack) : 0;

	if (p->service ? strcmp(svc, p->service) != 0
	               : strncmp(svc, p->stack, sl) != 0 || svc[sl] != '_')
		return;
	if (t->started_at)
		mtsctl_fmt_duration(age, sizeof(age),
		    mts_wall_ms() - t->started_at);
	row = json_pack("{ss ss ss ss ss ss ss ss sI ss}", "task", t->id,
	    "service", svc, "node", node, "node_name",
	    mtsctl_member_name(p->m, node), "desired_state", t->desired,
	    "state", t->state, "health", t->health, "error", t->error,
	    "exit_code", (json_int_t)t->exit_code, "age", age);
	json_object_set_new(row, "version_label", version_of(p, t, &current));
	json_object_set_new(row, "version",
	    json_integer(t->spec ? (json_int_t)t->spec->service_version : 0));
	json_object_set_new(row, "slot", json_integer((json_int_t)t->slot));
	if (p->digest)
		json_object_set_new(row, "current", json_boolean(current));
	json_array_append_new(p->rows, row);
}

/* Replicas the owner could not place, one row each, with its reason. */
static void
ps_pending(void *arg, const char *svc,
    const Mts__Reconciled__PlacementStatus *st)
{
	struct ps *p = arg;
	size_t sl = p->stack ? strlen(p->stack) : 0;
	uint32_t i;
	char task[300];

	if (p->service ? strcmp(svc, p->service) != 0
	               : strncmp(svc, p->stack, sl) != 0 || svc[sl] != '_')
		return;
	for (i = 0; i < st->pending + st->waiting && i < 1000; i++) {
		int w = i >= st->pending; /* held back by depends_on */

		snprintf(task, sizeof(task), "%s.%s", svc,
		    w ? "waiting" : "pending");
		json_array_append_new(p->rows,
		    json_pack("{ss ss ss ss ss ss ss ss sI sI sI ss ss}",
		        "task", task, "service", svc, "node", "", "node_name",
		        "", "desired_state", "running", "state",
		        w ? "waiting" : "pending", "health", "", "error",
		        st->message, "exit_code", (json_int_t)-1, "slot",
		        (json_int_t)0, "version", (json_int_t)st->version,
		        "version_label", "", "age", ""));
	}
}

/* The tasks of service (with digest and version: its record's spec
 * digest and version, to tell old from current) or of stack. */
static int
list_tasks(struct mtsctl *ctx, const char *service, const char *stack,
    const uint8_t *digest, uint64_t version)
{
	static const struct mtsctl_col cols[] = { { "task", "TASK" },
		{ "version_label", "VERSION" }, { "node_name", "NODE" },
		{ "desired_state", "DESIRED" }, { "state", "STATE" },
		{ "health", "HEALTH" }, { "age", "AGE" }, { "error", "ERROR" },
		{ NULL, NULL } };
	struct members m;
	struct ps p = { service, stack, &m, json_array(), digest, version };
	int rc;

	mtsctl_members_load(ctx, &m);
	if ((rc = mtsctl_task_scan(ctx, ps_one, &p)) == 0 &&
	    (rc = mtsctl_placement_scan(ctx, ps_pending, &p)) == 0)
		mtsctl_print_rows(ctx, p.rows, cols);
	else
		json_decref(p.rows);
	mtsctl_members_free(&m);
	return rc;
}

/* --- the commands ---------------------------------------------------------------- */

static int
cmd_ls(struct mtsctl *ctx, int argc, char **argv)
{
	if (argc != 1)
		return mtsctl_usage(ctx);
	return list_services(ctx, NULL);
}

static int
cmd_ps(struct mtsctl *ctx, int argc, char **argv)
{
	uint8_t digest[MTS_SPEC_DIGEST_LEN];
	struct svc_rec r;
	uint64_t version;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = mtsctl_svc_need(ctx, argv[1], &r)) != 0)
		return rc;
	mts_spec_digest(r.rec->spec, digest);
	version = r.rec->version;
	mtsctl_svc_rec_clear(&r);
	return list_tasks(ctx, argv[1], NULL, digest, version);
}

/* "2026-12-01T12:30:05Z" for Unix ms, "" for 0. */
static json_t *
iso_time(uint64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char b[32] = "";

	if (ms && gmtime_r(&t, &tm))
		strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(b);
}

/* The update status u/<service> for inspect: the record's fields plus
 * what people read first (batch n/m, started, ended). */
static json_t *
update_json(const Mts__Service__UpdateStatus *u)
{
	json_t *o = mtsctl_pb_json(&u->base);
	char b[48];

	snprintf(b, sizeof(b), "%u/%u", u->batch, u->batches);
	json_object_set_new(o, "progress", json_string(b));
	json_object_set_new(o, "started", iso_time(u->started_at_ms));
	json_object_set_new(o, "ended", iso_time(u->ended_at_ms));
	json_object_set_new(o, "owner",
	    mtsctl_json_hex(u->owner.data, u->owner.len));
	return o;
}

/* "8080:80/tcp (ingress)" for each published port of the spec. */
static json_t *
ports_json(const Mts__Service__ServiceSpec *sp)
{
	json_t *a = json_array();
	char b[96];
	size_t i;

	for (i = 0; sp != NULL && i < sp->n_ports; i++) {
		const Mts__Service__Port *p = sp->ports[i];

		if (p->published == 0)
			snprintf(b, sizeof(b), "%u/%s", p->target,
			    p->protocol && *p->protocol ? p->protocol : "tcp");
		else
			snprintf(b, sizeof(b), "%u:%u/%s (%s)", p->published,
			    p->target,
			    p->protocol && *p->protocol ? p->protocol : "tcp",
			    p->mode && *p->mode ? p->mode : "ingress");
		json_array_append_new(a, json_string(b));
	}
	return a;
}

/* The service's endpoint: its mode and published ports from the spec,
 * its VIP and the task addresses DNS answers from this node's netd
 * (absent when netd does not run here or does not know it yet). */
static json_t *
endpoint_json(struct mtsctl *ctx, const char *name,
    const Mts__Service__ServiceSpec *sp)
{
	Mts__Netd__Reply *rep;
	json_t *o, *tasks;
	char err[256];
	size_t i, j;

	o = json_pack("{ss}", "mode",
	    sp && sp->endpoint_mode && *sp->endpoint_mode ? sp->endpoint_mode
	                                                  : "vip");
	json_object_set_new(o, "ports", ports_json(sp));
	if (mtsctl_netd_status(ctx, &rep, err, sizeof(err)) != 0)
		return o;
	for (i = 0; i < rep->status->n_services; i++) {
		const Mts__Netd__ServiceEndpoint *e = rep->status->services[i];

		if (strcmp(e->service, name) != 0)
			continue;
		json_object_set_new(o, "vip", json_string(e->vip));
		tasks = json_array();
		for (j = 0; j < e->n_tasks; j++)
			json_array_append_new(tasks, json_string(e->tasks[j]));
		json_object_set_new(o, "task_addresses", tasks);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return o;
}

/* endpoint.port_conflicts: the ports of service `name` that a service
 * created earlier holds (all the services read: the same rule as netd's).
 * An exit status. */
static int
endpoint_conflicts(struct mtsctl *ctx, const char *name, json_t *endpoint)
{
	struct svc_rec *l;
	json_t **conf;
	size_t n, i;
	int rc;

	if ((rc = mtsctl_svc_list(ctx, &l, &n)) != 0)
		return rc;
	conf = xcalloc(n + 1, sizeof(*conf));
	port_conflicts(l, n, conf);
	for (i = 0; i < n; i++) {
		if (strcmp(l[i].rec->spec->name, name) == 0)
			json_object_set(endpoint, "port_conflicts", conf[i]);
		json_decref(conf[i]);
	}
	if (json_object_get(endpoint, "port_conflicts") == NULL)
		json_object_set_new(endpoint, "port_conflicts", json_array());
	free(conf);
	mtsctl_svc_list_free(l, n);
	return 0;
}

static int
cmd_inspect(struct mtsctl *ctx, int argc, char **argv)
{
	uint8_t digest[MTS_SPEC_DIGEST_LEN];
	Mts__Service__UpdateStatus *u;
	Mts__Reconciled__PlacementStatus *p;
	struct svc_rec r;
	json_t *o;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = mtsctl_svc_need(ctx, argv[1], &r)) != 0)
		return rc;
	o = mtsctl_pb_json(&r.rec->base);
	mts_spec_digest(r.rec->spec, digest);
	json_object_set_new(o, "spec_digest",
	    mtsctl_json_hex(digest, sizeof(digest)));
	json_object_set_new(o, "endpoint",
	    endpoint_json(ctx, argv[1], r.rec->spec));
	if ((rc = endpoint_conflicts(ctx, argv[1],
	         json_object_get(o, "endpoint"))) != 0) {
		json_decref(o);
		mtsctl_svc_rec_clear(&r);
		return rc;
	}
	if ((rc = mtsctl_upd_get(ctx, argv[1], &u)) != 0) {
		json_decref(o);
		mtsctl_svc_rec_clear(&r);
		return rc;
	}
	if (u) {
		json_object_set_new(o, "update_status", update_json(u));
		protobuf_c_message_free_unpacked(&u->base, NULL);
	}
	if (mtsctl_placement_get(ctx, argv[1], &p) == 0 && p) {
		json_t *pj = mtsctl_pb_json(&p->base);

		json_object_set_new(pj, "owner", json_string(p->owner));
		json_object_set_new(pj, "replaced_at",
		    iso_time(p->replaced_at_ms));
		json_object_set_new(o, "placement", pj);
		protobuf_c_message_free_unpacked(&p->base, NULL);
	}
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(o);
	mtsctl_svc_rec_clear(&r);
	return 0;
}

/* SVC=N: the service's record with N replicas, version + 1. */
static int
scale_one(struct mtsctl *ctx, const char *arg, json_t *done)
{
	Mts__Service__ServiceRecord rec = MTS__SERVICE__SERVICE_RECORD__INIT;
	Mts__Service__ServiceSpec *now, *next;
	const char *eq = strchr(arg, '=');
	char *name, *end;
	struct svc_rec r;
	unsigned long n;
	int rc;

	if (eq == NULL || eq == arg ||
	    (n = strtoul(eq + 1, &end, 10),
	        *end != '\0' || end == eq + 1 || n > 100000)) {
		mtsctl_err("%s: expected SERVICE=REPLICAS", arg);
		return MTSCTL_EUSAGE;
	}
	name = xmemdup(arg, (size_t)(eq - arg) + 1);
	name[eq - arg] = '\0';
	if ((rc = mtsctl_svc_need(ctx, name, &r)) != 0)
		goto out;
	now = r.rec->spec;
	if (strncmp(now->mode, "global", 6) == 0) {
		mtsctl_err("%s: a global service runs one task per node and "
		           "cannot be scaled",
		    name);
		rc = MTSCTL_EFAIL;
	} else if (now->replicas == n) {
		/* as service update: nothing changes, nothing is written
		 * (a new version would replace the spec kept for rollback) */
		if (ctx->fmt != MTSCTL_FMT_JSON)
			printf("%s: already %lu replicas (version %llu, nothing "
			       "written)\n",
			    name, n, (unsigned long long)r.rec->version);
		else
			json_array_append_new(done,
			    json_pack("{ss sI sI ss}", "service", name,
			        "replicas", (json_int_t)n, "version",
			        (json_int_t)r.rec->version, "change", "none"));
	} else {
		/* the new spec shares everything with the old but replicas */
		next = xmemdup(now, sizeof(*now));
		next->replicas = (uint32_t)n;
		rec = *r.rec;
		rec.version = r.rec->version + 1;
		rec.spec = next;
		rec.previous = now;
		rec.updated_at_ms = mts_wall_ms();
		if ((rc = mtsctl_svc_put(ctx, name, &rec, &r)) == 0 &&
		    ctx->fmt != MTSCTL_FMT_JSON)
			printf("%s scaled to %lu\n", name, n);
		else if (rc == 0)
			json_array_append_new(done,
			    json_pack("{ss sI sI}", "service", name, "replicas",
			        (json_int_t)n, "version",
			        (json_int_t)rec.version));
		free(next);
	}
	mtsctl_svc_rec_clear(&r);
out:
	free(name);
	return rc;
}

static int
cmd_scale(struct mtsctl *ctx, int argc, char **argv)
{
	json_t *done = json_array();
	int i, rc = 0;

	if (argc < 2) {
		json_decref(done);
		return mtsctl_usage(ctx);
	}
	for (i = 1; i < argc && rc == 0; i++)
		rc = scale_one(ctx, argv[i], done);
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_rows(ctx, done, NULL);
	else
		json_decref(done);
	return rc;
}

static int
cmd_rm(struct mtsctl *ctx, int argc, char **argv)
{
	json_t *done = json_array();
	struct svc_rec r;
	int i, rc = 0;

	for (i = 1; i < argc && rc == 0; i++) {
		if ((rc = mtsctl_svc_need(ctx, argv[i], &r)) != 0)
			break;
		mtsctl_svc_rec_clear(&r);
		if ((rc = mtsctl_svc_delete(ctx, argv[i])) == 0)
			json_array_append_new(done, json_string(argv[i]));
	}
	if (argc < 2)
		rc = mtsctl_usage(ctx);
	else if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_rows(ctx, json_incref(done), NULL);
	else
		for (i = 0; i < (int)json_array_size(done); i++)
			printf("%s\n",
			    json_string_value(json_array_get(done, (size_t)i)));
	json_decref(done);
	return rc;
}

/* --- stacks ------------------------------------------------------------------------ */

int
mtsctl_cmd_stack_ls(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "name", "NAME" },
		{ "services", "SERVICES" }, { NULL, NULL } };
	struct svc_rec *l;
	size_t n, i;
	json_t *by = json_object(), *rows = json_array(), *v;
	const char *k;
	int rc;

	if (argc != 1) {
		json_decref(by);
		json_decref(rows);
		return mtsctl_usage(ctx);
	}
	if ((rc = mtsctl_svc_list(ctx, &l, &n)) == 0) {
		for (i = 0; i < n; i++) {
			const char *st = l[i].rec->spec->stack;
			json_t *c = json_object_get(by, st);

			json_object_set_new(by, st,
			    json_integer(c ? json_integer_value(c) + 1 : 1));
		}
		json_object_foreach(by, k, v) json_array_append_new(rows,
		    json_pack("{ss sO}", "name", k, "services", v));
		mtsctl_svc_list_free(l, n);
		mtsctl_print_rows(ctx, rows, cols);
		rows = NULL;
	}
	json_decref(rows);
	json_decref(by);
	return rc;
}

/* 0 when STACK has a service record, else the exit status (5: none, as
 * stack rm says). */
static int
need_stack(struct mtsctl *ctx, const char *stack)
{
	struct svc_rec *l;
	size_t n, i;
	int rc, found = 0;

	if ((rc = mtsctl_svc_list(ctx, &l, &n)) != 0)
		return rc;
	for (i = 0; i < n && !found; i++)
		found = wanted(stack, &l[i]);
	mtsctl_svc_list_free(l, n);
	if (found)
		return 0;
	mtsctl_err("%s: no such stack", stack);
	return MTSCTL_ENOTFOUND;
}

int
mtsctl_cmd_stack_services(struct mtsctl *ctx, int argc, char **argv)
{
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = need_stack(ctx, argv[1])) != 0)
		return rc;
	return list_services(ctx, argv[1]);
}

int
mtsctl_cmd_stack_ps(struct mtsctl *ctx, int argc, char **argv)
{
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = need_stack(ctx, argv[1])) != 0)
		return rc;
	return list_tasks(ctx, NULL, argv[1], NULL, 0);
}

int
mtsctl_cmd_stack_rm(struct mtsctl *ctx, int argc, char **argv)
{
	struct svc_rec *l;
	size_t n, i, removed = 0;
	json_t *done;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = mtsctl_svc_list(ctx, &l, &n)) != 0)
		return rc;
	done = json_array();
	for (i = 0; i < n && rc == 0; i++) {
		if (!wanted(argv[1], &l[i]))
			continue;
		if ((rc = mtsctl_svc_delete(ctx, l[i].name)) == 0) {
			removed++;
			json_array_append_new(done, json_string(l[i].name));
			if (ctx->fmt != MTSCTL_FMT_JSON)
				printf("Removing service %s\n", l[i].name);
		}
	}
	mtsctl_svc_list_free(l, n);
	if (ctx->fmt == MTSCTL_FMT_JSON && rc == 0 && removed)
		mtsctl_print_rows(ctx, json_incref(done), NULL);
	json_decref(done);
	if (rc == 0 && removed == 0) {
		mtsctl_err("%s: no such stack", argv[1]);
		rc = MTSCTL_ENOTFOUND;
	}
	return rc;
}

static const struct mtsctl_cmd service_cmds[] = {
	{ "ls", cmd_ls, "",
	    "list services: mode, running/desired, image, owner",
	    "DESCRIPTION\n"
	    "    Lists every service record of the replicated state with its\n"
	    "    mode, running/desired tasks (a global service: one per node\n"
	    "    seen alive), image and owner: the node that reconciles it,\n"
	    "    by rendezvous hashing over the members this node sees alive.\n"
	    "    The same on every node once the state has converged. OWNER\n"
	    "    is the node's name (-o json: owner, its id, and owner_name).\n"
	    "    UPDATE is the rolling update's state and batch n/m (service\n"
	    "    inspect has the rest). A published port that two services\n"
	    "    claim (two deploys at once) belongs to the one created first;\n"
	    "    after the table, a line per port lost to it: \"b_web: port\n"
	    "    8080/tcp is held by a_web (created first): not opened for\n"
	    "    b_web\" (-o json: port_conflicts, port and held_by).\n"
	    "\nEXAMPLES\n"
	    "    mtsctl service ls\n"
	    "    mtsctl -o json service ls\n" },
	{ "ps", cmd_ps, "SERVICE", "list a service's tasks",
	    "DESCRIPTION\n"
	    "    Lists the tasks of SERVICE (<stack>_<service>) on every node:\n"
	    "    task id, the version it was placed from (\"3 (old)\" when\n"
	    "    its spec is not the record's), node, desired and current\n"
	    "    state, health, age and the last error. Replicas its owner\n"
	    "    cannot place are rows SERVICE.pending with the reason;\n"
	    "    replicas held back by depends_on at a first deploy are rows\n"
	    "    SERVICE.waiting saying for what (\"waiting for shop_db to\n"
	    "    be healthy (0 of 1)\"). -o json: one object per task with\n"
	    "    node (its id), node_name, version, current, slot, exit_code.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl service ps shop_web\n"
	    "    mtsctl -o json service ps shop_web\n" },
	{ "inspect", cmd_inspect, "SERVICE", "print a service's record as JSON",
	    "DESCRIPTION\n"
	    "    Prints the service record (proto/service.proto) as JSON, in\n"
	    "    table and json output alike: version, spec, the previous spec\n"
	    "    kept for rollback and previous_version, when and where it was\n"
	    "    last written (updated_at_ms, updated_on), rollback (this\n"
	    "    version rolls back), the update control (paused, promoted),\n"
	    "    rebalance (the tasks a rebalance moves), spec_digest (what the\n"
	    "    tasks of this spec carry). Then, when they exist:\n"
	    "    update_status, the rolling update's progress from\n"
	    "    u/SERVICE (state, progress batch n/m, started, ended,\n"
	    "    message, failures, owner); placement, the owner's p/SERVICE\n"
	    "    (desired, live, pending and why in message, the last task it\n"
	    "    replaced and why, replaced_at); endpoint: mode (vip or\n"
	    "    dnsrr), the published ports, port_conflicts (each published\n"
	    "    port another service created earlier holds: port, held_by;\n"
	    "    netd opens it for that one only) and, from this node's\n"
	    "    mts-netd, the vip and the task_addresses DNS answers.\n"
	    "\nEXIT STATUS\n"
	    "    0 printed, 2 usage, 3 statestore unreachable, 4 permission\n"
	    "    denied, 5 no such service.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl service inspect shop_web\n"
	    "    mtsctl service inspect shop_web | jq .update_status\n" },
	{ "scale", cmd_scale, "SERVICE=N [SERVICE=N]...",
	    "set the replica count of replicated services",
	    "DESCRIPTION\n"
	    "    Writes each service's record with N replicas (a new version;\n"
	    "    the previous spec kept), in the order given, stopping at the\n"
	    "    first that fails. A service that already has N replicas is\n"
	    "    left as it is (\"already N replicas\", nothing written; JSON\n"
	    "    \"change\": \"none\"). N = 0 stops every task and keeps the\n"
	    "    service. Global services cannot be scaled.\n"
	    "\nEXIT STATUS\n"
	    "    0 written (or nothing to change), 1 a global service or the\n"
	    "    record changed meanwhile, 2 usage (not SERVICE=N, N from 0\n"
	    "    to 100000), 3 statestore unreachable, 5 no such service.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl service scale shop_web=9 shop_worker=3\n" },
	{ "update", mtsctl_cmd_service_update,
	    "SERVICE [--image IMG] [--env-add K=V]... [--replicas N] | "
	    "SERVICE --pause|--resume",
	    "change a service (a rolling update), or pause or resume its "
	    "update",
	    mtsctl_help_service_update },
	{ "rollback", mtsctl_cmd_service_rollback, "SERVICE",
	    "roll a service back to its previous spec",
	    mtsctl_help_service_rollback },
	{ "promote", mtsctl_cmd_service_promote, "SERVICE",
	    "promote the canaries of a service's update",
	    mtsctl_help_service_promote },
	{ "rebalance", mtsctl_cmd_service_rebalance, "SERVICE",
	    "move tasks onto nodes that run fewer, as spread would place them",
	    mtsctl_help_service_rebalance },
	{ "rm", cmd_rm, "SERVICE...", "remove services",
	    "DESCRIPTION\n"
	    "    Deletes the service records; every node's reconciled then\n"
	    "    stops their tasks.\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_service = { "service",
	"services of the cluster", service_cmds };
