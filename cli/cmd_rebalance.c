/* cmd_rebalance.c: `mtsctl service rebalance SERVICE` — where spread would place the service's replicas now (the local schedd's dry-run over the nodes alive, a node that joined since included), against where they run; the tasks on nodes that hold more than that are written into a new version of the record, which its owner moves one at a time, start-first, health-gated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtstime.h"
#include "schedd.pb-c.h"
#include "shim.pb-c.h"
#include "svc_spec.h"
#include "xmalloc.h"

#define RB_MAX_TASKS 100000

struct rb_task {
	char *id;
	char node[MTS_NODE_HEX_LEN + 1];
	uint64_t started;
};

struct rb_node {
	char hex[MTS_NODE_HEX_LEN + 1];
	uint32_t cur, ideal;
};

struct rb {
	const char *service;
	struct rb_task *tasks;
	size_t ntasks;
	struct rb_node *nodes;
	size_t nnodes;
};

static struct rb_node *
node_get(struct rb *b, const char *hex)
{
	size_t i;

	for (i = 0; i < b->nnodes; i++)
		if (strcmp(b->nodes[i].hex, hex) == 0)
			return &b->nodes[i];
	b->nodes = xreallocarray(b->nodes, b->nnodes + 1, sizeof(*b->nodes));
	memset(&b->nodes[b->nnodes], 0, sizeof(*b->nodes));
	snprintf(b->nodes[b->nnodes].hex, sizeof(b->nodes->hex), "%s", hex);
	return &b->nodes[b->nnodes++];
}

static int
live(const Mts__Shim__TaskStatus *t)
{
	static const char *const up[] = { "running", "pending", "created",
		"restarting", NULL };
	size_t i;

	if (strcmp(t->desired, "stopped") == 0)
		return 0;
	for (i = 0; up[i] != NULL; i++)
		if (strcmp(t->state, up[i]) == 0)
			return 1;
	return 0;
}

/* Each live task of the service, counted on its node. */
static void
take_task(void *arg, const char *node, const Mts__Shim__TaskStatus *t)
{
	struct rb *b = arg;
	struct rb_task *x;

	if (t->spec == NULL || strcmp(t->spec->service, b->service) != 0 ||
	    !live(t) || b->ntasks >= RB_MAX_TASKS)
		return;
	b->tasks = xreallocarray(b->tasks, b->ntasks + 1, sizeof(*b->tasks));
	x = &b->tasks[b->ntasks++];
	x->id = xstrdup(t->id);
	snprintf(x->node, sizeof(x->node), "%s", node);
	x->started = t->started_at;
	node_get(b, node)->cur++;
}

/* The local schedd's dry-run of the whole service, its running tasks'
 * shares counted free: how many replicas spread puts on each node. An
 * exit status; the reason when not all replicas fit. */
static int
ideal(struct mtsctl *ctx, struct rb *b, char *why, size_t whylen)
{
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__PlaceReq pr = MTS__SCHEDD__PLACE_REQ__INIT;
	Mts__Schedd__Reply *rep = NULL;
	char hex[MTS_NODE_HEX_LEN + 1];
	size_t i;
	int rc = 0;

	pr.service = (char *)b->service;
	pr.replaces = (char *)b->service;
	req.body_case = MTS__SCHEDD__REQUEST__BODY_PLACE;
	req.place = &pr;
	if (mtsctl_try_call(ctx, "schedd", &req.base,
	        &mts__schedd__reply__descriptor, (ProtobufCMessage **)&rep, why,
	        whylen) != 0 ||
	    rep->body_case != MTS__SCHEDD__REPLY__BODY_PLACE) {
		if (rep)
			snprintf(why, whylen, "unexpected reply from schedd");
		rc = MTSCTL_EUNREACH;
		goto out;
	}
	if (rep->place->placed < rep->place->count) {
		snprintf(why, whylen, "%s", rep->place->explain);
		rc = MTSCTL_EFAIL;
		goto out;
	}
	for (i = 0; i < rep->place->n_nodes; i++)
		if (rep->place->nodes[i].len == MTS_NODE_ID_LEN) {
			mts_hex(hex, rep->place->nodes[i].data,
			    MTS_NODE_ID_LEN);
			node_get(b, hex)->ideal++;
		}
out:
	if (rep)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	return rc;
}

static int
cmp_u32_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Balanced when the counts per node are those spread would give, maybe
 * on other nodes of the same standing (7 on 3 nodes: 3 2 2 is 2 3 2). */
static int
balanced(const struct rb *b)
{
	uint32_t *c = xcalloc(b->nnodes + 1, sizeof(*c)),
	         *d = xcalloc(b->nnodes + 1, sizeof(*d));
	size_t i;
	int same;

	for (i = 0; i < b->nnodes; i++) {
		c[i] = b->nodes[i].cur;
		d[i] = b->nodes[i].ideal;
	}
	qsort(c, b->nnodes, sizeof(*c), cmp_u32_desc);
	qsort(d, b->nnodes, sizeof(*d), cmp_u32_desc);
	same = memcmp(c, d, b->nnodes * sizeof(*c)) == 0;
	free(c);
	free(d);
	return same;
}

/* The newest first, then the greatest id: the extras' order. */
static int
cmp_newest(const void *a, const void *b)
{
	const struct rb_task *x = a, *y = b;

	if (x->started != y->started)
		return x->started < y->started ? 1 : -1;
	return -strcmp(x->id, y->id);
}

/* The tasks to move: on each node, as many as it holds beyond what
 * spread gives it, the newest first. */
static char **
movers(struct rb *b, size_t *n)
{
	char **out = xcalloc(b->ntasks + 1, sizeof(*out));
	size_t i, k;

	*n = 0;
	if (b->ntasks > 1) /* tasks is NULL when there are none */
		qsort(b->tasks, b->ntasks, sizeof(*b->tasks), cmp_newest);
	for (i = 0; i < b->nnodes; i++) {
		uint32_t extra = b->nodes[i].cur > b->nodes[i].ideal
		    ? b->nodes[i].cur - b->nodes[i].ideal
		    : 0;

		for (k = 0; k < b->ntasks && extra > 0; k++)
			if (strcmp(b->tasks[k].node, b->nodes[i].hex) == 0) {
				out[(*n)++] = b->tasks[k].id;
				extra--;
			}
	}
	return out;
}

static const struct members *sort_members;

static int
cmp_name(const void *a, const void *b)
{
	const struct rb_node *x = a, *y = b;
	const char *nx = mtsctl_member_name(sort_members, x->hex),
	           *ny = mtsctl_member_name(sort_members, y->hex);

	return strcmp(*nx ? nx : x->hex, *ny ? ny : y->hex);
}

/* "n1 4 -> 3, n3 0 -> 2": the nodes whose count changes, by name. */
static void
describe(struct rb *b, const struct members *m, char *out, size_t outlen)
{
	size_t i, len = 0;

	out[0] = '\0';
	sort_members = m;
	if (b->nnodes > 1)
		qsort(b->nodes, b->nnodes, sizeof(*b->nodes), cmp_name);
	for (i = 0; i < b->nnodes && len < outlen; i++) {
		const char *name = mtsctl_member_name(m, b->nodes[i].hex);

		if (b->nodes[i].cur == b->nodes[i].ideal)
			continue;
		len +=
		    (size_t)snprintf(out + len, outlen - len, "%s%s %u -> %u",
		        len ? ", " : "", *name ? name : b->nodes[i].hex,
		        b->nodes[i].cur, b->nodes[i].ideal);
	}
}

/* A new version of the record (the same spec) moving tasks. */
static int
write_moves(struct mtsctl *ctx, const char *name, const struct svc_rec *r,
    char **tasks, size_t n)
{
	Mts__Service__ServiceRecord rec = *r->rec;
	Mts__Service__UpdateControl ctl = MTS__SERVICE__UPDATE_CONTROL__INIT;
	Mts__Service__Rebalance rb = MTS__SERVICE__REBALANCE__INIT;
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	if (r->rec->control) {
		ctl = *r->rec->control;
		ctl.paused = 0;
	}
	rec.version = r->rec->version + 1;
	rec.previous = r->rec->spec;
	rec.previous_version = r->rec->version;
	rec.rollback = 0;
	rec.control = &ctl;
	rb.version = rec.version;
	rb.tasks = tasks;
	rb.n_tasks = n;
	rec.rebalance = &rb;
	rec.updated_at_ms = mts_wall_ms();
	rec.updated_on = host;
	return mtsctl_svc_put(ctx, name, &rec, r);
}

/* An update under way keeps the service's count: no rebalance then. */
static int
updating(struct mtsctl *ctx, const char *name, char *state, size_t len)
{
	Mts__Service__UpdateStatus *u = NULL;
	int busy;

	if (mtsctl_upd_get(ctx, name, &u) != 0 || u == NULL)
		return 0;
	busy = strcmp(u->state, "none") != 0 &&
	    strstr(u->state, "completed") == NULL;
	snprintf(state, len, "%s", u->state);
	protobuf_c_message_free_unpacked(&u->base, NULL);
	return busy;
}

static int
report(struct mtsctl *ctx, const char *name, struct rb *b, uint64_t version,
    size_t nmoved, const struct members *m)
{
	char what[1024];

	describe(b, m, what, sizeof(what));
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx,
		    json_pack("{ss sI sI ss}", "service", name, "version",
		        (json_int_t)version, "moves", (json_int_t)nmoved,
		        "change", nmoved ? what : "balanced"),
		    NULL);
	else if (nmoved)
		printf("%s: moving %zu task%s one at a time, start-first "
		       "(version %llu): %s\n",
		    name, nmoved, nmoved == 1 ? "" : "s",
		    (unsigned long long)version, what);
	else
		printf("%s: balanced, nothing to move (version %llu)\n", name,
		    (unsigned long long)version);
	return 0;
}

int
mtsctl_cmd_service_rebalance(struct mtsctl *ctx, int argc, char **argv)
{
	struct rb b = { argv[argc > 1 ? 1 : 0], NULL, 0, NULL, 0 };
	struct members m = { 0 };
	struct svc_rec r = { 0 };
	char why[512], **mv = NULL;
	size_t n = 0, i;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = mtsctl_svc_need(ctx, argv[1], &r)) != 0)
		return rc;
	if (strcmp(r.rec->spec->mode, "replicated") != 0) {
		mtsctl_err("%s: only a replicated service is rebalanced (a %s "
		           "one places its tasks itself)",
		    argv[1], r.rec->spec->mode);
		rc = MTSCTL_EFAIL;
		goto out;
	}
	if (updating(ctx, argv[1], why, sizeof(why))) {
		mtsctl_err("%s: an update is under way (%s): rebalance once it "
		           "is done",
		    argv[1], why);
		rc = MTSCTL_EFAIL;
		goto out;
	}
	if ((rc = mtsctl_task_scan(ctx, take_task, &b)) != 0)
		goto out;
	if ((rc = ideal(ctx, &b, why, sizeof(why))) != 0) {
		mtsctl_err("%s: %s", argv[1], why);
		goto out;
	}
	mtsctl_members_load(ctx, &m);
	if (!balanced(&b))
		mv = movers(&b, &n);
	if (n > 0 && (rc = write_moves(ctx, argv[1], &r, mv, n)) != 0) {
		mtsctl_err("%s: not written (changed meanwhile? run the "
		           "command again)",
		    argv[1]);
		goto out;
	}
	rc = report(ctx, argv[1], &b, r.rec->version + (n > 0), n, &m);
out:
	for (i = 0; i < b.ntasks; i++)
		free(b.tasks[i].id);
	free(b.tasks);
	free(b.nodes);
	free(mv);
	mtsctl_members_free(&m);
	mtsctl_svc_rec_clear(&r);
	return rc;
}

const char mtsctl_help_service_rebalance[] =
    "DESCRIPTION\n"
    "    Moves the tasks of a replicated service to where spread would\n"
    "    place them now, typically onto a node that joined (or was\n"
    "    activated) since they were placed. The local schedd's dry-run\n"
    "    of the whole service (its running tasks' shares counted free)\n"
    "    says how many replicas each node would get; on each node that\n"
    "    runs more, that many tasks (the newest first) are written into\n"
    "    a new version of the record with the same spec. Its owner\n"
    "    moves them as a rolling update: one at a time, start-first (the\n"
    "    replacement placed by spread, healthy for update_config's\n"
    "    monitor, then the old task stopped), so the service never has a\n"
    "    healthy task fewer; service inspect shows the progress, and a\n"
    "    failing replacement pauses it. Counts that already match spread's\n"
    "    (on other nodes of the same standing) move nothing.\n"
    "\nEXIT STATUS\n"
    "    0 written (or nothing to move), 1 not a replicated service, an\n"
    "    update under way, not every replica placeable now, or the\n"
    "    record changed meanwhile, 2 usage, 3 statestore or schedd\n"
    "    unreachable, 4 permission denied, 5 no such service.\n"
    "\nEXAMPLES\n"
    "    mtsctl service rebalance shop_web\n";
