/* cmd_deploy.c: `mtsctl deploy` and `mtsctl plan` — a Compose stack written as service records s/<stack>_<service> (a version per change, the previous spec kept for rollback), or the changes a deploy would make and whether its tasks would find room (the local schedd's placement dry-run), printed and not written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mtstime.h"
#include "schedd.pb-c.h"
#include "shim.pb-c.h"
#include "stack_load.h"
#include "statestore.pb-c.h"
#include "reconciled.pb-c.h"
#include "svc_spec.h"
#include "xmalloc.h"

#define WAIT_POLL_MS 500

/* What a deploy does to one service. */
enum change {
	CH_NONE,
	CH_NEW,
	CH_CHANGED,
	CH_REMOVED,
};

struct planned {
	char *name;
	enum change change;
	uint64_t version;                /* after the deploy */
	Mts__Service__ServiceSpec *spec; /* the new spec (NULL: removed) */
	struct svc_rec cur;              /* what the replica holds */
	char fields[512];                /* CH_CHANGED: which fields */
};

static uint8_t *
pack_spec(const Mts__Service__ServiceSpec *s, size_t *len)
{
	uint8_t *buf;

	*len = mts__service__service_spec__get_packed_size(s);
	buf = xmalloc(*len ? *len : 1);
	mts__service__service_spec__pack(s, buf);
	return buf;
}

/* The storage a field takes in the C struct (its value; for repeated
 * fields the pointer, and the count at quantifier_offset). */
static size_t
field_size(const ProtobufCFieldDescriptor *f)
{
	return f->label == PROTOBUF_C_LABEL_REPEATED ? sizeof(void *)
	                                             : mtsctl_pb_value_size(f);
}

/* A spec holding only field f of s (shallow: it is only packed). */
static size_t
pack_field(const Mts__Service__ServiceSpec *s,
    const ProtobufCFieldDescriptor *f, uint8_t **out)
{
	Mts__Service__ServiceSpec one = MTS__SERVICE__SERVICE_SPEC__INIT;
	size_t len;

	memcpy((char *)&one + f->offset, (const char *)s + f->offset,
	    field_size(f));
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		memcpy((char *)&one + f->quantifier_offset,
		    (const char *)s + f->quantifier_offset, sizeof(size_t));
	*out = pack_spec(&one, &len);
	return len;
}

/* Names the top-level fields that differ, comma separated. */
static void
diff_fields(const Mts__Service__ServiceSpec *a,
    const Mts__Service__ServiceSpec *b, char *out, size_t outlen)
{
	const ProtobufCMessageDescriptor *d =
	    &mts__service__service_spec__descriptor;
	unsigned i;

	out[0] = '\0';
	for (i = 0; i < d->n_fields; i++) {
		uint8_t *pa, *pb;
		size_t la = pack_field(a, &d->fields[i], &pa);
		size_t lb = pack_field(b, &d->fields[i], &pb);

		if (la != lb || memcmp(pa, pb, la) != 0)
			snprintf(out + strlen(out), outlen - strlen(out),
			    "%s%s", out[0] ? ", " : "", d->fields[i].name);
		free(pa);
		free(pb);
	}
}

static int
same_spec(const Mts__Service__ServiceSpec *a,
    const Mts__Service__ServiceSpec *b)
{
	size_t la, lb;
	uint8_t *pa = pack_spec(a, &la), *pb = pack_spec(b, &lb);
	int same = la == lb && memcmp(pa, pb, la) == 0;

	free(pa);
	free(pb);
	return same;
}

static void
planned_free(struct planned *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(p[i].name);
		if (p[i].spec)
			protobuf_c_message_free_unpacked(&p[i].spec->base,
			    NULL);
		mtsctl_svc_rec_clear(&p[i].cur);
	}
	free(p);
}

/* Compares the stack with the replica: one entry per service of the
 * file, then one per service of the stack that the file no longer has. */
/* A published port and who claims it. */
struct claim {
	uint32_t port;
	const char *proto, *service;
};

/* Adds spec's published ports to *c; the first other service that
 * claims one of them is returned (a conflict), NULL when none. */
static const struct claim *
claim_ports(struct claim **c, size_t *n, const Mts__Service__ServiceSpec *sp)
{
	size_t i, j;

	for (i = 0; sp != NULL && i < sp->n_ports; i++) {
		const Mts__Service__Port *p = sp->ports[i];
		const char *proto =
		    p->protocol && *p->protocol ? p->protocol : "tcp";

		if (p->published == 0)
			continue;
		for (j = 0; j < *n; j++)
			if ((*c)[j].port == p->published &&
			    strcmp((*c)[j].proto, proto) == 0 &&
			    strcmp((*c)[j].service, sp->name) != 0)
				return &(*c)[j];
		*c = xreallocarray(*c, *n + 1, sizeof(**c));
		(*c)[(*n)++] = (struct claim){ p->published, proto, sp->name };
	}
	return NULL;
}

/*
 * A published port is the cluster's (ingress opens it on every node;
 * host mode where a task runs, anywhere): two services may not claim
 * the same one. The stack's new specs are checked against each other
 * and against every other stack's services. MTSCTL_EFAIL, said why.
 */
static int
ports_check(const struct planned *p, size_t n, const struct svc_rec *all,
    size_t nall, const char *stack)
{
	struct claim *c = NULL, conflict;
	const struct claim *hit = NULL;
	const Mts__Service__ServiceSpec *sp = NULL;
	size_t nc = 0, i;

	for (i = 0; i < nall && hit == NULL; i++)
		if (strcmp(all[i].rec->spec->stack, stack) != 0)
			hit = claim_ports(&c, &nc, sp = all[i].rec->spec);
	for (i = 0; i < n && hit == NULL; i++)
		hit = claim_ports(&c, &nc, sp = p[i].spec);
	if (hit != NULL) {
		conflict = *hit;
		mtsctl_err("port %u/%s: published by %s and by %s: a port "
		           "is published by one service of the cluster",
		    conflict.port, conflict.proto, conflict.service, sp->name);
	}
	free(c);
	return hit ? MTSCTL_EFAIL : 0;
}

static int
make_plan(struct mtsctl *ctx, const struct mts_stack *st, struct planned **out,
    size_t *n)
{
	struct svc_rec *all = NULL;
	size_t nall = 0, i, j;
	int rc;

	*out = xcalloc(st->nservices + 1, sizeof(**out));
	*n = 0;
	for (i = 0; i < st->nservices; i++) {
		struct planned *p = &(*out)[(*n)++];

		p->spec = mtsctl_svc_spec(st, &st->services[i]);
		p->name = xstrdup(p->spec->name);
		if ((rc = mtsctl_svc_get(ctx, p->name, &p->cur)) != 0)
			return rc;
		if (p->cur.rec == NULL)
			p->change = CH_NEW;
		else if (!same_spec(p->cur.rec->spec, p->spec)) {
			p->change = CH_CHANGED;
			diff_fields(p->cur.rec->spec, p->spec, p->fields,
			    sizeof(p->fields));
		}
	}
	if ((rc = mtsctl_svc_list(ctx, &all, &nall)) != 0)
		return rc;
	if ((rc = ports_check(*out, *n, all, nall, st->name)) != 0) {
		mtsctl_svc_list_free(all, nall);
		return rc;
	}
	for (i = 0; i < nall; i++) {
		int kept = 0;

		if (strcmp(all[i].rec->spec->stack, st->name) != 0)
			continue;
		for (j = 0; j < st->nservices && !kept; j++)
			kept = strcmp(all[i].name, (*out)[j].name) == 0;
		if (kept)
			continue;
		*out = xreallocarray(*out, *n + 1, sizeof(**out));
		memset(&(*out)[*n], 0, sizeof(**out));
		(*out)[*n].name = xstrdup(all[i].name);
		(*out)[*n].change = CH_REMOVED;
		(*out)[*n].cur = all[i];
		memset(&all[i], 0, sizeof(all[i]));
		(*n)++;
	}
	mtsctl_svc_list_free(all, nall);
	return 0;
}

/* --- writing -------------------------------------------------------------------- */

static int
write_service(struct mtsctl *ctx, struct planned *p)
{
	Mts__Service__ServiceRecord rec = MTS__SERVICE__SERVICE_RECORD__INIT;
	char host[256] = "";
	int rc;

	gethostname(host, sizeof(host) - 1);
	rec.format = 1;
	rec.version = p->cur.rec ? p->cur.rec->version + 1 : 1;
	rec.spec = p->spec;
	rec.previous = p->cur.rec ? p->cur.rec->spec : NULL;
	rec.updated_at_ms = mts_wall_ms();
	rec.updated_on = host;
	p->version = rec.version;
	if ((rc = mtsctl_svc_put(ctx, p->name, &rec, &p->cur)) != 0)
		mtsctl_err("%s: not written (another deploy changed it "
		           "meanwhile? run deploy again)",
		    p->name);
	else if (ctx->fmt != MTSCTL_FMT_JSON)
		printf("%s service %s (version %llu)\n",
		    p->change == CH_NEW ? "Creating" : "Updating", p->name,
		    (unsigned long long)rec.version);
	return rc;
}

/* --- waiting -------------------------------------------------------------------- */

struct progress {
	uint32_t running, done, desired;
	uint32_t pending; /* what the owner's p/ record says it */
	uint32_t waiting; /* held back by depends_on (why says for what) */
	char why[256];    /* could not place, and why */
	mts_time_t pending_since;
};

struct count_arg {
	struct planned *p;
	size_t n;
	struct progress *pr;
	const struct members *m; /* a dead node's tasks do not count */
};

static void
count_one(void *arg, const char *node, const Mts__Shim__TaskStatus *t)
{
	struct count_arg *c = arg;
	size_t i;

	if (!mtsctl_member_alive(c->m, node))
		return; /* its record may say running: nobody knows */
	for (i = 0; i < c->n; i++) {
		if (t->spec == NULL || strcmp(t->spec->service, c->p[i].name))
			continue;
		c->pr[i].running += strcmp(t->state, "running") == 0;
		c->pr[i].done +=
		    strcmp(t->state, "exited") == 0 && t->exit_code == 0;
	}
}

/* The owner's placement status of this version (p/<service>). */
static void
pending_one(void *arg, const char *svc,
    const struct Mts__Reconciled__PlacementStatus *st)
{
	struct count_arg *c = arg;
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (strcmp(svc, c->p[i].name) != 0 ||
		    st->version < c->p[i].version)
			continue;
		c->pr[i].pending = st->pending;
		c->pr[i].waiting = st->waiting;
		snprintf(c->pr[i].why, sizeof(c->pr[i].why), "%s", st->message);
	}
}

/* Counts the running (and, for jobs, exited-0) tasks of each planned
 * service from the t/ records of every node, and what its owner could
 * not place. */
static int
count_tasks(struct mtsctl *ctx, struct planned *p, size_t n,
    struct progress *pr)
{
	struct members m;
	struct count_arg c = { p, n, pr, &m };
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		pr[i].running = pr[i].done = pr[i].pending = pr[i].waiting = 0;
	mtsctl_members_load(ctx, &m);
	if ((rc = mtsctl_task_scan(ctx, count_one, &c)) == 0)
		rc = mtsctl_placement_scan(ctx, pending_one, &c);
	mtsctl_members_free(&m);
	return rc;
}

/* A service whose owner has said for PLACE_FAIL_MS that it cannot place
 * some of it has failed to place: deploy stops waiting for it. */
#define PLACE_FAIL_MS 2000

static int
failed_to_place(struct progress *pr, mts_time_t now)
{
	if (pr->pending == 0 || pr->why[0] == '\0') {
		pr->pending_since = 0;
		return 0;
	}
	if (pr->pending_since == 0)
		pr->pending_since = now;
	return now - pr->pending_since >= PLACE_FAIL_MS;
}

static int
is_job(const Mts__Service__ServiceSpec *s)
{
	return strstr(s->mode, "job") != NULL;
}

/* Waits until every service runs its desired count (jobs: completed) or
 * its owner cannot place the rest (p/<service> says so for 2 s),
 * printing each change of the counts; MTSCTL_EFAIL when one cannot be
 * placed, or after timeout_s. */
static int
wait_converged(struct mtsctl *ctx, struct planned *p, size_t n, long timeout_s)
{
	struct progress *pr = xcalloc(n ? n : 1, sizeof(*pr)),
	                *last = xcalloc(n ? n : 1, sizeof(*last));
	int *said = xcalloc(n ? n : 1, sizeof(*said));
	mts_time_t deadline = mts_now() + timeout_s * 1000;
	int rc = 0, done = 0, failed;
	size_t i;

	for (i = 0; i < n; i++)
		last[i].running = last[i].done = UINT32_MAX;
	while (!done && rc == 0) {
		if ((rc = count_tasks(ctx, p, n, pr)) != 0)
			break;
		done = 1;
		failed = 0;
		for (i = 0; i < n; i++) {
			uint32_t have, want;
			int stuck, waits;

			if (p[i].spec == NULL ||
			    strncmp(p[i].spec->mode, "global", 6) == 0)
				continue; /* global: one per node, not counted */
			want = p[i].spec->replicas;
			have = is_job(p[i].spec) ? pr[i].done : pr[i].running;
			stuck =
			    have < want && failed_to_place(&pr[i], mts_now());
			/* depends_on: said once, then deploy waits on */
			waits = have < want && pr[i].waiting > 0 &&
			    pr[i].why[0] != '\0' && !(said[i] & 2);
			if (ctx->fmt != MTSCTL_FMT_JSON &&
			    (have !=
			            (is_job(p[i].spec) ? last[i].done
			                               : last[i].running) ||
			        (stuck && !(said[i] & 1)) || waits))
				printf("%s: %u/%u %s%s%s\n", p[i].name, have,
				    want,
				    is_job(p[i].spec) ? "completed" : "running",
				    stuck || waits ? ": " : "",
				    stuck || waits ? pr[i].why : "");
			said[i] |= stuck | (waits ? 2 : 0);
			last[i] = pr[i];
			done &= have >= want || stuck;
			failed |= stuck;
		}
		fflush(stdout);
		if (done && failed) {
			mtsctl_err("some services cannot be placed (mtsctl "
			           "service ps shows why)");
			rc = MTSCTL_EFAIL;
		} else if (!done && mts_now() >= deadline) {
			mtsctl_err("not converged after %ld s (mtsctl service "
			           "ps shows why)",
			    timeout_s);
			rc = MTSCTL_EFAIL;
		} else if (!done)
			usleep(WAIT_POLL_MS * 1000);
	}
	free(pr);
	free(last);
	free(said);
	return rc;
}

/* --- the commands ---------------------------------------------------------------- */

static const char *const change_names[] = { "unchanged", "new", "changed",
	"removed" };

/* -o json: what deploy did, one object per service. */
static void
print_result(struct mtsctl *ctx, const struct planned *p, size_t n, int prune)
{
	json_t *rows = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(rows,
		    json_pack("{ss ss sI sb}", "service", p[i].name, "change",
		        change_names[p[i].change], "version",
		        (json_int_t)(p[i].version ? p[i].version
		                : p[i].cur.rec    ? p[i].cur.rec->version
		                                  : 0),
		        "removed", p[i].change == CH_REMOVED && prune));
	mtsctl_print_rows(ctx, rows, NULL);
}

static int
cmd_deploy(struct mtsctl *ctx, int argc, char **argv)
{
	struct stack_args a = { .opts = "csdpT", .timeout_s = 300 };
	struct mts_stack *st = NULL;
	struct planned *p = NULL;
	size_t n = 0, i;
	int rc;

	if ((rc = mtsctl_stack_args(ctx, argc, argv, &a)) != 0 ||
	    (rc = mtsctl_stack_load(&a, &st)) != 0)
		return rc;
	if (st->nservices == 0)
		mtsctl_err("warning: stack %s: the files name no service%s",
		    st->name, a.prune ? "" : ": nothing to deploy");
	if ((rc = make_plan(ctx, st, &p, &n)) != 0)
		goto out;
	for (i = 0; i < n && rc == 0; i++) {
		int table = ctx->fmt != MTSCTL_FMT_JSON;

		if (p[i].change == CH_NEW || p[i].change == CH_CHANGED)
			rc = write_service(ctx, &p[i]);
		else if (p[i].change == CH_REMOVED && a.prune) {
			if ((rc = mtsctl_svc_delete(ctx, p[i].name)) == 0 &&
			    table)
				printf("Removing service %s\n", p[i].name);
		} else if (p[i].change == CH_REMOVED && table)
			printf("Keeping service %s: no longer in the file "
			       "(--prune removes it)\n",
			    p[i].name);
	}
	if (rc == 0 && !a.detach)
		rc = wait_converged(ctx, p, st->nservices, a.timeout_s);
	if (rc == 0 && ctx->fmt == MTSCTL_FMT_JSON)
		print_result(ctx, p, n, a.prune);
out:
	planned_free(p, n);
	mts_stack_free(st);
	return rc;
}

/* The local schedd's dry-run of where the spec's tasks would go (the
 * tasks of the running service they replace count as gone); the result
 * goes into row as "placement" {placeable, count, explain}, or
 * "placement_error" when schedd cannot say. */
static void
place_spec(struct mtsctl *ctx, const struct planned *p, json_t *row)
{
	const Mts__Service__ServiceSpec *sp = p->spec;
	const Mts__Service__Resources *res = sp->reservations &&
	        (sp->reservations->cpu_millis || sp->reservations->memory)
	    ? sp->reservations
	    : sp->limits;
	const Mts__Service__Placement *pl = sp->placement;
	Mts__Schedd__Request req = MTS__SCHEDD__REQUEST__INIT;
	Mts__Schedd__PlaceReq pr = MTS__SCHEDD__PLACE_REQ__INIT;
	Mts__Schedd__Reply *rep = NULL;
	char err[512];

	pr.global = sp->mode && strncmp(sp->mode, "global", 6) == 0;
	if (!pr.global && sp->replicas == 0) {
		json_object_set_new(row, "placement",
		    json_pack("{sI sI ss}", "placeable", (json_int_t)0, "count",
		        (json_int_t)0, "explain", "0 of 0 placeable"));
		return;
	}
	pr.count = pr.global ? 0 : sp->replicas;
	pr.cpu_millis = res ? res->cpu_millis : 0;
	pr.memory = res ? res->memory : 0;
	if (pl != NULL) {
		pr.constraints = pl->constraints;
		pr.n_constraints = pl->n_constraints;
		pr.spread = pl->spread;
		pr.n_spread = pl->n_spread;
		pr.max_per_node = pl->max_replicas_per_node;
		pr.binpack =
		    pl->strategy && strcmp(pl->strategy, "binpack") == 0;
	}
	pr.replaces = p->name;
	req.body_case = MTS__SCHEDD__REQUEST__BODY_PLACE;
	req.place = &pr;
	if (mtsctl_try_call(ctx, "schedd", &req.base,
	        &mts__schedd__reply__descriptor, (ProtobufCMessage **)&rep, err,
	        sizeof(err)) != 0 ||
	    rep->body_case != MTS__SCHEDD__REPLY__BODY_PLACE) {
		json_object_set_new(row, "placement_error",
		    json_string(rep ? "unexpected reply from schedd" : err));
	} else {
		json_object_set_new(row, "placement",
		    json_pack("{sI sI ss}", "placeable",
		        (json_int_t)rep->place->placed, "count",
		        (json_int_t)rep->place->count, "explain",
		        rep->place->explain));
	}
	if (rep)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
}

/* The table's second part: one line per service deployed. */
static void
print_placement(json_t *rows)
{
	const char *name, *explain;
	json_t *row, *pl;
	size_t i;
	int first = 1;

	json_array_foreach(rows, i, row)
	{
		name = json_string_value(json_object_get(row, "service"));
		pl = json_object_get(row, "placement");
		explain = pl ? json_string_value(json_object_get(pl, "explain"))
		             : json_string_value(
		                   json_object_get(row, "placement_error"));
		if (explain == NULL)
			continue; /* removed */
		if (first)
			printf("\nPLACEMENT (dry-run against the current "
			       "digests)\n");
		first = 0;
		printf("%s: %s%s\n", name, pl ? "" : "not checked: ", explain);
	}
}

static int
cmd_plan(struct mtsctl *ctx, int argc, char **argv)
{
	struct stack_args a = { .opts = "cs" };
	struct mts_stack *st = NULL;
	struct planned *p = NULL;
	size_t n = 0, i, changes = 0;
	json_t *rows = json_array(), *row;
	int rc;

	if ((rc = mtsctl_stack_args(ctx, argc, argv, &a)) != 0 ||
	    (rc = mtsctl_stack_load(&a, &st)) != 0) {
		json_decref(rows);
		return rc;
	}
	if ((rc = make_plan(ctx, st, &p, &n)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		const Mts__Service__ServiceSpec *now =
		    p[i].cur.rec ? p[i].cur.rec->spec : NULL;

		changes += p[i].change != CH_NONE;
		row = json_pack("{ss ss ss sI sI}", "service", p[i].name,
		    "change", change_names[p[i].change], "fields", p[i].fields,
		    "replicas_now", (json_int_t)(now ? now->replicas : 0),
		    "replicas",
		    (json_int_t)(p[i].spec ? p[i].spec->replicas : 0));
		if (p[i].spec != NULL)
			place_spec(ctx, &p[i], row);
		json_array_append_new(rows, row);
	}
	{
		static const struct mtsctl_col cols[] = {
			{ "service", "SERVICE" }, { "change", "CHANGE" },
			{ "replicas_now", "NOW" }, { "replicas", "THEN" },
			{ "fields", "FIELDS" }, { NULL, NULL }
		};

		json_incref(rows);
		mtsctl_print_rows(ctx, rows, cols);
		if (ctx->fmt == MTSCTL_FMT_TABLE)
			print_placement(rows);
	}
	rc = changes ? MTSCTL_EUSAGE : 0; /* 2: a deploy would change things */
out:
	json_decref(rows);
	planned_free(p, n);
	mts_stack_free(st);
	return rc;
}

static const struct mtsctl_cmd deploy_cmds[] = {
	{ NULL, cmd_deploy,
	    "[-c|-f FILE]... [--stack NAME] [--prune] [--detach] [--wait S]",
	    "deploy a Compose stack from any node",
	    "DESCRIPTION\n"
	    "    Loads the Compose files (as `mtsctl stack config` shows them)\n"
	    "    and writes one service record s/<stack>_<service> per service\n"
	    "    into the replicated state, from which every node's reconciled\n"
	    "    places and runs the tasks. A service is named\n"
	    "    <stack>_<service> from then on, as in Swarm. A record is\n"
	    "    written only when the spec changed; its version then grows by\n"
	    "    one and the previous spec is kept for rollback. Services of\n"
	    "    the stack that the files no longer name are kept unless\n"
	    "    --prune is given (Swarm's rule). A published port that\n"
	    "    another service (of this stack or another) publishes too\n"
	    "    is refused before anything is written (exit 1).\n"
	    "\n"
	    "    Then deploy waits, printing `web: 6/9 running` as counts\n"
	    "    change, until every replicated service runs its replicas (a\n"
	    "    job: its completions), and exits 0. It exits 1 once the\n"
	    "    rest of every service runs or its owner cannot place it\n"
	    "    (`db: 0/1 running: 0 of 1 placeable: no node matches ...`),\n"
	    "    or after --wait seconds. --detach returns once the records\n"
	    "    are written.\n"
	    "\nOPTIONS\n"
	    "    -c, -f FILE     a Compose file; repeat to merge several\n"
	    "                    (default: compose.yaml, compose.yml,\n"
	    "                    docker-compose.yaml or docker-compose.yml\n"
	    "                    here, as stack config)\n"
	    "    --stack NAME    the stack's name (else name:, else the\n"
	    "                    directory's)\n"
	    "    --prune         remove the stack's services the files no\n"
	    "                    longer have\n"
	    "    --detach        do not wait for the tasks\n"
	    "    --wait S        how long to wait (default 300)\n"
	    "\nEXAMPLES\n"
	    "    mtsctl deploy -c stack.yml --stack shop\n"
	    "    mtsctl deploy -f base.yml -f prod.yml --prune --detach\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

static const struct mtsctl_cmd plan_cmds[] = {
	{ NULL, cmd_plan, "[-c|-f FILE]... [--stack NAME]",
	    "show what a deploy would change, writing nothing",
	    "DESCRIPTION\n"
	    "    Compares the Compose files with the service records in the\n"
	    "    replicated state and prints, per service, whether a deploy\n"
	    "    would create it, change it (and which fields of its spec),\n"
	    "    remove it (with --prune) or leave it, with the replica count\n"
	    "    now and after. Then, per service, a placement dry-run by this\n"
	    "    node's schedd against the current digests of the members it\n"
	    "    sees alive: \"web: 9 of 9 placeable\", \"db: 0 of 1\n"
	    "    placeable: no node matches node.labels.disk == ssd\",\n"
	    "    \"... insufficient memory on all 3 nodes\" (what the service's\n"
	    "    running tasks hold counts as free: the new ones replace\n"
	    "    them; with -o json each row has placement {placeable, count,\n"
	    "    explain}, or placement_error when schedd cannot say).\n"
	    "    Nothing is written. Exits 0 when nothing would change, 2 when\n"
	    "    something would, 1 on an invalid file or a published port\n"
	    "    another service publishes too (as Nomad's job plan);\n"
	    "    a service that would not fit does not change the status.\n"
	    "\nOPTIONS\n"
	    "    -c, -f FILE     a Compose file; repeat to merge several\n"
	    "                    (default: compose.yaml, compose.yml,\n"
	    "                    docker-compose.yaml or docker-compose.yml\n"
	    "                    here)\n"
	    "    --stack NAME    the stack's name (else name:, else the\n"
	    "                    directory's)\n"
	    "\nEXIT STATUS\n"
	    "    0 nothing would change, 1 an invalid file or a published port\n"
	    "    conflict, 2 something would change (or usage), 3 statestore\n"
	    "    unreachable, 4 permission denied, 5 a file missing.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl plan -c stack.yml --stack shop\n"
	    "    mtsctl -o json plan -c stack.yml\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_deploy = { "deploy",
	"deploy a Compose stack", deploy_cmds };
const struct mtsctl_group mtsctl_group_plan = { "plan",
	"what a deploy would change", plan_cmds };
