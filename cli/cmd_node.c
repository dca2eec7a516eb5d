/* cmd_node.c: `mtsctl node inspect|label|drain|pause|activate` — a node's slot ledger and availability from its schedd (the local one, or another node's through the local gossipd's relay), the operator's nl/<node>/<key> label records, and the n/<node> records `node ls` shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gossipd.pb-c.h"
#include "hash.h"
#include "ipc.h"
#include "mtserr.h"
#include "netd_status.h"
#include "nodectl.h"
#include "nodeinfo.h"
#include "schedd.pb-c.h"
#include "shimctl.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

#define NODE_INFO_TIMEOUT_MS 1000 /* node ls's scan of n/ */

/* A request to the target's schedd (local, or relayed); *rep on 0. */
static int
schedd_call(struct mtsctl *ctx, const struct shimctl_target *t,
    Mts__Schedd__Request *reqp, Mts__Schedd__Reply **rep)
{
	Mts__Schedd__Request req = *reqp;
	Mts__Gossipd__Reply *grep = NULL;
	char err[512];
	int rc;

	if (!t->remote)
		return mtsctl_call(ctx, "schedd", &req.base,
		    &mts__schedd__reply__descriptor, (ProtobufCMessage **)rep);
	if ((rc = shimctl_relay(ctx, t, "schedd", &req.base, &grep, err,
	         sizeof(err))) != 0) {
		mtsctl_err("node %s: %s", t->label,
		    rc == -MTS_ERR_NOTFOUND && strncmp(err, "remote: ", 8) == 0
		        ? "it runs no schedd"
		        : err);
		return rc == -MTS_ERR_TIMEOUT ? MTSCTL_EUNREACH
		                              : mtsctl_exit_for(rc);
	}
	*rep = grep->relay
	    ? mts__schedd__reply__unpack(NULL, grep->relay->payload.len,
	          grep->relay->payload.data)
	    : NULL;
	protobuf_c_message_free_unpacked(&grep->base, NULL);
	if (*rep == NULL) {
		mtsctl_err("node %s: undecodable reply from its schedd",
		    t->label);
		return MTSCTL_EFAIL;
	}
	if ((*rep)->error != NULL && (*rep)->error->code != 0) {
		rc = -(int)(*rep)->error->code;
		mtsctl_err("node %s: its schedd: %s%s", t->label,
		    (*rep)->error->message,
		    rc == -MTS_ERR_DENIED
		        ? " ([schedd] acl_relay must name that node's gossipd user)"
		        : "");
		protobuf_c_message_free_unpacked(&(*rep)->base, NULL);
		*rep = NULL;
		return mtsctl_exit_for(rc);
	}
	return 0;
}

static int
ledger_call(struct mtsctl *ctx, const struct shimctl_target *t,
    Mts__Schedd__Reply **rep)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__LedgerReq lr = MTS__SCHEDD__LEDGER_REQ__INIT;

	req.body_case = MTS__SCHEDD__REQUEST__BODY_LEDGER;
	req.ledger = &lr;
	return schedd_call(ctx, t, &req, rep);
}

/* "1.5" for 1500 millicores. */
static void
fmt_cpus(char *out, size_t len, uint32_t m)
{
	if (m % 1000 == 0)
		snprintf(out, len, "%u", m / 1000);
	else
		snprintf(out, len, "%u.%03u", m / 1000, m % 1000);
	if (strchr(out, '.') != NULL)
		while (out[strlen(out) - 1] == '0')
			out[strlen(out) - 1] = '\0';
}

/* "512M" style for people; JSON has the bytes. */
static void
fmt_bytes(char *out, size_t len, uint64_t b)
{
	static const char units[] = "KMGT";
	double v = (double)b;
	int u = -1;

	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, len, "%llu", (unsigned long long)b);
	else
		snprintf(out, len, "%.4g%c", v, units[u]);
}

static json_t *
res_text(uint32_t cpu, uint64_t mem)
{
	char c[32], m[32], s[80];

	fmt_cpus(c, sizeof(c), cpu);
	fmt_bytes(m, sizeof(m), mem);
	snprintf(s, sizeof(s), "%s CPU, %s", c, m);
	return json_string(s);
}

static json_t *
leases_json(const Mts__Schedd__LedgerRep *l)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < l->n_leases; i++) {
		const Mts__Schedd__Lease *x = l->leases[i];

		json_array_append_new(a,
		    json_pack("{ss ss ss sI sI ss ss sI}", "id", x->id, "owner",
		        x->owner, "service", x->service, "cpu_millis",
		        (json_int_t)x->cpu_millis, "memory",
		        (json_int_t)x->memory, "state", x->state, "task",
		        x->task, "expires_in_ms",
		        (json_int_t)x->expires_in_ms));
	}
	return a;
}

static json_t *
tasks_json(const Mts__Schedd__LedgerRep *l)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < l->n_tasks; i++) {
		const Mts__Schedd__Task *x = l->tasks[i];

		json_array_append_new(a,
		    json_pack("{ss ss sI sI}", "id", x->id, "service",
		        x->service, "cpu_millis", (json_int_t)x->cpu_millis,
		        "memory", (json_int_t)x->memory));
	}
	return a;
}

/* The rows of tasks_json or leases_json with cpu and mem as the table
 * shows them ("0.1", "32M") and owner cut to 12 digits; returns rows. */
static json_t *
rows_text(json_t *rows)
{
	char c[32], m[32], o[13];
	json_t *r;
	size_t i;

	json_array_foreach(rows, i, r)
	{
		const char *own =
		    json_string_value(json_object_get(r, "owner"));

		fmt_cpus(c, sizeof(c),
		    (uint64_t)json_integer_value(
		        json_object_get(r, "cpu_millis")));
		fmt_bytes(m, sizeof(m),
		    (uint64_t)json_integer_value(json_object_get(r, "memory")));
		snprintf(o, sizeof(o), "%s", own ? own : "");
		json_object_set_new(r, "cpu", json_string(c));
		json_object_set_new(r, "mem", json_string(m));
		json_object_set_new(r, "owner12", json_string(o));
	}
	return rows;
}

static const struct mtsctl_col task_cols[] = { { "id", "TASK" },
	{ "service", "SERVICE" }, { "cpu", "CPU" }, { "mem", "MEMORY" },
	{ NULL, NULL } };
static const struct mtsctl_col lease_cols[] = { { "id", "LEASE" },
	{ "state", "STATE" }, { "service", "SERVICE" }, { "cpu", "CPU" },
	{ "mem", "MEMORY" }, { "owner12", "OWNER" }, { NULL, NULL } };

static void
print_table(const Mts__Schedd__LedgerRep *l, json_t *obj)
{
	static const struct mtsctl_col cols[] = { { "node", "Node:" },
		{ "capacity_text", "Capacity:" },
		{ "reserved_text", "Reserved:" }, { "free_text", "Free:" },
		{ "reserve_text", "Kept back:" },
		{ "availability", "Availability:" }, { "subnet", "Subnet:" },
		{ "wireguard_text", "WireGuard:" }, { "tasks", "Tasks:" },
		{ "leases", "Live leases:" }, { NULL, NULL } };
	const struct mtsctl ctx = { .fmt = MTSCTL_FMT_TABLE };

	mtsctl_print_obj(&ctx, obj, cols);
	if (l->n_tasks > 0) {
		putchar('\n');
		mtsctl_print_rows(&ctx, rows_text(tasks_json(l)), task_cols);
	}
	if (l->n_leases > 0) {
		putchar('\n');
		mtsctl_print_rows(&ctx, rows_text(leases_json(l)), lease_cols);
	}
}

/* The node's overlay subnet from n/<node> (the local replica). */
static void
overlay_from_record(struct mtsctl *ctx, const uint8_t node[16], json_t *obj)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	char hex[MTS_NODE_HEX_LEN + 1], key[MTS_NODEINFO_KEY_LEN + 1], err[256];
	struct mts_nodeinfo ni;

	mts_hex(hex, node, MTS_NODE_ID_LEN);
	mts_nodeinfo_key(key, sizeof(key), hex);
	g.key.data = (uint8_t *)key;
	g.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &g;
	if (mtsctl_try_call(ctx, "statestore", &req.base,
	        &mts__statestore__reply__descriptor, (ProtobufCMessage **)&rep,
	        err, sizeof(err)) != 0)
		return;
	if (rep->get != NULL && rep->get->found && rep->get->record != NULL &&
	    !rep->get->record->tombstone &&
	    mts_nodeinfo_decode(rep->get->record->value.data,
	        rep->get->record->value.len, &ni) == 0 &&
	    ni.overlay_subnet[0] != '\0')
		json_object_set_new(obj, "subnet",
		    json_string(ni.overlay_subnet));
	protobuf_c_message_free_unpacked(&rep->base, NULL);
}

/* The overlay as this node's netd sees it: the node's /24 and, for
 * another node, this node's WireGuard peer of it (latest handshake,
 * bytes); the n/ record's subnet when netd cannot say. */
static void
overlay_json(struct mtsctl *ctx, const uint8_t node[16], json_t *obj)
{
	Mts__Netd__Reply *rep;
	const Mts__Netd__StatusRep *s;
	uint8_t id[MTS_NODE_ID_LEN];
	char err[256], hs[48];
	size_t i;

	if (mtsctl_netd_status(ctx, &rep, err, sizeof(err)) == 0) {
		s = rep->status;
		if (s->public_key.len == 32) {
			mts_node_id(id, s->public_key.data);
			if (memcmp(id, node, MTS_NODE_ID_LEN) == 0 &&
			    s->subnet[0] != '\0')
				json_object_set_new(obj, "subnet",
				    json_string(s->subnet));
		}
		for (i = 0; i < s->n_peers; i++) {
			const Mts__Netd__Peer *p = s->peers[i];

			if (p->node.len != MTS_NODE_ID_LEN ||
			    memcmp(p->node.data, node, MTS_NODE_ID_LEN) != 0)
				continue;
			json_object_set_new(obj, "subnet",
			    json_string(p->allowed_ips));
			json_object_set_new(obj, "wireguard",
			    json_pack("{ss sI sI sI}", "endpoint", p->endpoint,
			        "latest_handshake_ms",
			        (json_int_t)p->latest_handshake_ms, "rx_bytes",
			        (json_int_t)p->rx_bytes, "tx_bytes",
			        (json_int_t)p->tx_bytes));
			snprintf(hs, sizeof(hs), "never");
			if (p->latest_handshake_ms > 0) {
				mtsctl_fmt_duration(hs, sizeof(hs),
				    p->latest_handshake_ms);
				strncat(hs, " ago",
				    sizeof(hs) - strlen(hs) - 1);
			}
			json_object_set_new(obj, "wireguard_text",
			    json_sprintf("%s, handshake %s, rx %llu, tx %llu",
			        p->endpoint, hs,
			        (unsigned long long)p->rx_bytes,
			        (unsigned long long)p->tx_bytes));
		}
	}
	if (rep != NULL)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	if (json_object_get(obj, "subnet") == NULL)
		overlay_from_record(ctx, node, obj);
}

int
cmd_node_inspect(struct mtsctl *ctx, int argc, char **argv)
{
	struct shimctl_target t;
	Mts__Schedd__Reply *rep;
	const Mts__Schedd__LedgerRep *l;
	const Mts__Schedd__Digest *d;
	uint32_t rcpu;
	uint64_t rmem;
	json_t *obj;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = shimctl_locate(ctx, NULL, argv[1], &t)) != 0)
		return rc;
	if ((rc = ledger_call(ctx, &t, &rep)) != 0)
		return rc;
	if (rep->body_case != MTS__SCHEDD__REPLY__BODY_LEDGER ||
	    rep->ledger->digest == NULL) {
		mtsctl_err("node %s: its schedd sent an unexpected reply",
		    t.label);
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		return MTSCTL_EFAIL;
	}
	l = rep->ledger;
	d = l->digest;
	rcpu = d->cpu_millis - d->free_cpu_millis;
	rmem = d->memory - d->free_memory;
	obj = json_pack("{so s{sI sI} s{sI sI} s{sI sI} s{sI sI} sI sI sb}",
	    "node", mtsctl_json_hex(l->node.data, l->node.len), "capacity",
	    "cpu_millis", (json_int_t)d->cpu_millis, "memory",
	    (json_int_t)d->memory, "reserved", "cpu_millis", (json_int_t)rcpu,
	    "memory", (json_int_t)rmem, "free", "cpu_millis",
	    (json_int_t)d->free_cpu_millis, "memory",
	    (json_int_t)d->free_memory, "reserve", "cpu_millis",
	    (json_int_t)l->reserve_cpu_millis, "memory",
	    (json_int_t)l->reserve_memory, "tasks", (json_int_t)d->tasks,
	    "leases", (json_int_t)d->leases, "draining", d->draining);
	json_object_set_new(obj, "availability",
	    json_string(l->availability && *l->availability ? l->availability
	                                                    : "active"));
	overlay_json(ctx, t.node, obj);
	if (ctx->fmt == MTSCTL_FMT_JSON) {
		json_object_del(obj, "wireguard_text");
		json_object_set_new(obj, "task_list", tasks_json(l));
		json_object_set_new(obj, "lease_list", leases_json(l));
		mtsctl_print_obj(ctx, obj, NULL);
	} else {
		json_object_set_new(obj, "capacity_text",
		    res_text(d->cpu_millis, d->memory));
		json_object_set_new(obj, "reserved_text", res_text(rcpu, rmem));
		json_object_set_new(obj, "free_text",
		    res_text(d->free_cpu_millis, d->free_memory));
		json_object_set_new(obj, "reserve_text",
		    res_text(l->reserve_cpu_millis, l->reserve_memory));
		print_table(l, obj);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

/* A label key: letters, digits, '.', '-', '_' (no '/': it ends the key's
 * node part). */
static int
valid_key(const char *k, size_t n)
{
	size_t i;

	if (n == 0 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if (!((k[i] >= 'a' && k[i] <= 'z') ||
		        (k[i] >= 'A' && k[i] <= 'Z') ||
		        (k[i] >= '0' && k[i] <= '9') || k[i] == '.' ||
		        k[i] == '-' || k[i] == '_'))
			return 0;
	return 1;
}

/* Sends the label's put or delete; a delete of a label the node does not
 * have says so ("n2: no label disk", exit 5), other failures as every
 * call does. */
static int
label_write(struct mtsctl *ctx, Mts__Statestore__Request *req,
    const struct shimctl_target *t, const char *arg, size_t klen)
{
	Mts__Statestore__Reply *rep = NULL;
	char err[256];
	int r;

	r = mtsctl_try_call(ctx, "statestore", &req->base,
	    &mts__statestore__reply__descriptor, (ProtobufCMessage **)&rep, err,
	    sizeof(err));
	if (r == 0) {
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		return 0;
	}
	if (rep)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	if (r == -MTS_ERR_NOTFOUND && strstr(err, "no such socket") == NULL &&
	    req->body_case == MTS__STATESTORE__REQUEST__BODY_DELETE) {
		mtsctl_err("%s: no label %.*s", t->label, (int)klen, arg);
		return MTSCTL_ENOTFOUND;
	}
	/* again, for the message and exit status every command gives */
	if ((r = mtsctl_call(ctx, "statestore", &req->base,
	         &mts__statestore__reply__descriptor,
	         (ProtobufCMessage **)&rep)) == 0)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	return r;
}

int
cmd_node_label(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Statestore__DeleteReq del = MTS__STATESTORE__DELETE_REQ__INIT;
	struct shimctl_target t;
	char hex[MTS_NODE_HEX_LEN + 1], key[200];
	const char *eq, *value = "";
	int add, rc;
	size_t klen;

	if (argc != 4 || (strcmp(argv[1], "add") && strcmp(argv[1], "rm")))
		return mtsctl_usage(ctx);
	add = strcmp(argv[1], "add") == 0;
	eq = strchr(argv[3], '=');
	klen = eq ? (size_t)(eq - argv[3]) : strlen(argv[3]);
	if ((add && eq == NULL) || !valid_key(argv[3], klen)) {
		mtsctl_err("'%s': expected KEY=VALUE%s (KEY: letters, digits, "
		           "'.', '-', '_')",
		    argv[3], add ? "" : " or KEY");
		return MTSCTL_EUSAGE;
	}
	if (eq != NULL)
		value = eq + 1;
	if ((rc = shimctl_locate(ctx, NULL, argv[2], &t)) != 0)
		return rc;
	mts_hex(hex, t.node, 16);
	snprintf(key, sizeof(key), "nl/%s/%.*s", hex, (int)klen, argv[3]);
	if (add) {
		put.key.data = (uint8_t *)key;
		put.key.len = strlen(key);
		put.value.data = (uint8_t *)value;
		put.value.len = strlen(value);
		req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
		req.put = &put;
	} else {
		del.key.data = (uint8_t *)key;
		del.key.len = strlen(key);
		req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
		req.delete_ = &del;
	}
	if ((rc = label_write(ctx, &req, &t, argv[3], klen)) != 0)
		return rc;
	if (ctx->fmt == MTSCTL_FMT_JSON && add)
		mtsctl_print_obj(ctx,
		    json_pack("{ss ss ss ss}", "node", hex, "key", key, "label",
		        key + 3 + MTS_NODE_HEX_LEN + 1, "value", value),
		    NULL);
	else if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx,
		    json_pack("{ss ss ss sb}", "node", hex, "key", key, "label",
		        key + 3 + MTS_NODE_HEX_LEN + 1, "removed", 1),
		    NULL);
	else if (add)
		printf("%s: label %.*s=%s\n", t.label, (int)klen, argv[3],
		    value);
	else
		printf("%s: label %.*s removed\n", t.label, (int)klen, argv[3]);
	return MTSCTL_OK;
}

/* node drain|pause|activate NODE: the command names the availability. */
static int
set_availability(struct mtsctl *ctx, int argc, char **argv, const char *want)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__AvailabilityReq ar = MTS__SCHEDD__AVAILABILITY_REQ__INIT;
	Mts__Schedd__Reply *rep;
	struct shimctl_target t;
	char hex[MTS_NODE_HEX_LEN + 1];
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = shimctl_locate(ctx, NULL, argv[1], &t)) != 0)
		return rc;
	ar.availability = (char *)want;
	req.body_case = MTS__SCHEDD__REQUEST__BODY_AVAILABILITY;
	req.availability = &ar;
	if ((rc = schedd_call(ctx, &t, &req, &rep)) != 0)
		return rc;
	if (rep->body_case != MTS__SCHEDD__REPLY__BODY_AVAILABILITY) {
		mtsctl_err("node %s: its schedd sent an unexpected reply",
		    t.label);
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		return MTSCTL_EFAIL;
	}
	mts_hex(hex, t.node, 16);
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx,
		    json_pack("{ss ss ss}", "node", hex, "availability",
		        rep->availability->availability, "previous",
		        rep->availability->previous),
		    NULL);
	else
		printf("%s: availability %s (was %s)\n", t.label,
		    rep->availability->availability,
		    rep->availability->previous);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

int
cmd_node_drain(struct mtsctl *ctx, int argc, char **argv)
{
	return set_availability(ctx, argc, argv, "drain");
}

int
cmd_node_pause(struct mtsctl *ctx, int argc, char **argv)
{
	return set_availability(ctx, argc, argv, "pause");
}

int
cmd_node_activate(struct mtsctl *ctx, int argc, char **argv)
{
	return set_availability(ctx, argc, argv, "active");
}

/* Every n/<node> record of the local replica into *out (node id hex ->
 * availability), for node ls; 0, or -1 when the statestore cannot say
 * (printed as "-"). */
int
mtsctl_node_infos(struct mtsctl *ctx, struct mtsctl_node_info **out, size_t *n)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;
	Mts__Statestore__Reply *rep;
	char after[MTS_NODEINFO_KEY_LEN + 1] = "";
	char err[256];
	size_t i, cap = 0;
	int more = 1, rc = 0, saved = ctx->timeout_ms;

	*out = NULL;
	*n = 0;
	/* node ls must not wait long on a statestore that is away */
	if (ctx->timeout_ms > NODE_INFO_TIMEOUT_MS)
		ctx->timeout_ms = NODE_INFO_TIMEOUT_MS;
	while (more) {
		sc.prefix.data = (uint8_t *)MTS_NODEINFO_PREFIX;
		sc.prefix.len = strlen(MTS_NODEINFO_PREFIX);
		sc.start_after.data = (uint8_t *)after;
		sc.start_after.len = strlen(after);
		req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
		req.scan = &sc;
		if (mtsctl_try_call(ctx, "statestore", &req.base,
		        &mts__statestore__reply__descriptor,
		        (ProtobufCMessage **)&rep, err, sizeof(err)) != 0) {
			rc = -1;
			break;
		}
		more = rep->scan && rep->scan->more && rep->scan->n_items > 0;
		for (i = 0; rep->scan && i < rep->scan->n_items; i++) {
			const Mts__KeyRecord *kr = rep->scan->items[i];
			struct mts_nodeinfo ni;
			char hex[MTS_NODE_HEX_LEN + 1];

			if (kr->key.len < sizeof(after)) {
				memcpy(after, kr->key.data, kr->key.len);
				after[kr->key.len] = '\0';
			}
			if (kr->record == NULL || kr->record->tombstone ||
			    mts_nodeinfo_key_node(kr->key.data, kr->key.len,
			        hex) < 0 ||
			    mts_nodeinfo_decode(kr->record->value.data,
			        kr->record->value.len, &ni) < 0)
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 16;
				*out = xreallocarray(*out, cap, sizeof(**out));
			}
			snprintf((*out)[*n].id, sizeof((*out)[*n].id), "%s",
			    hex);
			(*out)[*n].availability =
			    mts_availability_str(ni.availability);
			(*n)++;
		}
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	ctx->timeout_ms = saved;
	return rc;
}
