/* cmd_update.c: `mtsctl service update|rollback|promote` — a new version of a service record (the image, environment or replicas changed, the previous spec kept), the rollback record, and the operator's control of a rolling update (pause, resume, promote), each written with the compare-and-set deploy uses. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtstime.h"
#include "svc_spec.h"
#include "svcrec.h"
#include "xmalloc.h"

#define MAX_ENV_ADD 64

struct update_args {
	const char *image;
	const char *env[MAX_ENV_ADD];
	size_t nenv;
	long replicas; /* -1: unchanged */
	int pause, resume;
};

/* A deep copy of s (free with protobuf_c_message_free_unpacked). */
static Mts__Service__ServiceSpec *
spec_copy(const Mts__Service__ServiceSpec *s)
{
	size_t len = mts__service__service_spec__get_packed_size(s);
	uint8_t *buf = xmalloc(len ? len : 1);
	Mts__Service__ServiceSpec *c;

	mts__service__service_spec__pack(s, buf);
	c = mts__service__service_spec__unpack(NULL, len, buf);
	free(buf);
	if (c == NULL) { /* only out of memory undoes a pack */
		mtsctl_err("out of memory");
		exit(MTSCTL_EFAIL);
	}
	return c;
}

/* Sets KEY=VALUE in the spec's environment, replacing KEY's value. */
static void
env_set(Mts__Service__ServiceSpec *s, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t klen = (size_t)(eq - kv), i;
	Mts__Service__KeyValue *e;

	for (i = 0; i < s->n_environment; i++) {
		e = s->environment[i];
		if (strlen(e->key) == klen && memcmp(e->key, kv, klen) == 0) {
			free(e->value);
			e->value = xstrdup(eq + 1);
			e->has_value = 1;
			return;
		}
	}
	e = xmalloc(sizeof(*e));
	mts__service__key_value__init(e);
	e->key = xmemdup(kv, klen + 1);
	e->key[klen] = '\0';
	e->value = xstrdup(eq + 1);
	e->has_value = 1;
	s->environment = xreallocarray(s->environment, s->n_environment + 1,
	    sizeof(*s->environment));
	s->environment[s->n_environment++] = e;
}

static int
parse_args(struct mtsctl *ctx, int argc, char **argv, struct update_args *a)
{
	static const struct option lo[] = {
		{ "image", required_argument, NULL, 'i' },
		{ "env-add", required_argument, NULL, 'e' },
		{ "replicas", required_argument, NULL, 'n' },
		{ "pause", no_argument, NULL, 'p' },
		{ "resume", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(a, 0, sizeof(*a));
	a->replicas = -1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'i' && *optarg != '\0')
			a->image = optarg;
		else if (c == 'e' && a->nenv < MAX_ENV_ADD &&
		    strchr(optarg, '=') != NULL && optarg[0] != '=')
			a->env[a->nenv++] = optarg;
		else if (c == 'n' &&
		    (a->replicas = strtol(optarg, &end, 10), *end == '\0') &&
		    end != optarg && a->replicas >= 0 && a->replicas <= 100000)
			;
		else if (c == 'p')
			a->pause = 1;
		else if (c == 'r')
			a->resume = 1;
		else {
			if (c == 'e' || c == 'n' || c == 'i')
				mtsctl_err("--%s %s: expected %s",
				    c == 'e'       ? "env-add"
				        : c == 'n' ? "replicas"
				                   : "image",
				    optarg,
				    c == 'e'       ? "KEY=VALUE"
				        : c == 'n' ? "a count from 0 to 100000"
				                   : "an image reference");
			return mtsctl_usage(ctx);
		}
	}
	if (optind != argc - 1 || (a->pause && a->resume) ||
	    ((a->pause || a->resume) &&
	        (a->image || a->nenv || a->replicas >= 0)) ||
	    !(a->pause || a->resume || a->image || a->nenv || a->replicas >= 0))
		return mtsctl_usage(ctx);
	return 0;
}

static int
same_spec(const Mts__Service__ServiceSpec *a,
    const Mts__Service__ServiceSpec *b)
{
	size_t la = mts__service__service_spec__get_packed_size(a),
	       lb = mts__service__service_spec__get_packed_size(b);
	uint8_t *pa = xmalloc(la + 1), *pb = xmalloc(lb + 1);
	int same;

	mts__service__service_spec__pack(a, pa);
	mts__service__service_spec__pack(b, pb);
	same = la == lb && memcmp(pa, pb, la) == 0;
	free(pa);
	free(pb);
	return same;
}

/* Writes rec over r (compare-and-set), saying so. */
static int
put(struct mtsctl *ctx, const char *name, Mts__Service__ServiceRecord *rec,
    const struct svc_rec *r, const char *what)
{
	char host[256] = "";
	int rc;

	gethostname(host, sizeof(host) - 1);
	rec->updated_at_ms = mts_wall_ms();
	rec->updated_on = host;
	if ((rc = mtsctl_svc_put(ctx, name, rec, r)) != 0)
		mtsctl_err("%s: not written (changed meanwhile? run the "
		           "command again)",
		    name);
	else if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx,
		    json_pack("{ss sI ss}", "service", name, "version",
		        (json_int_t)rec->version, "change", what),
		    NULL);
	else
		printf("%s: %s (version %llu)\n", name, what,
		    (unsigned long long)rec->version);
	return rc;
}

/* --pause / --resume: the control in the record; the version stays. */
static int
write_control(struct mtsctl *ctx, const char *name, struct svc_rec *r,
    const struct update_args *a)
{
	Mts__Service__ServiceRecord rec = *r->rec;
	Mts__Service__UpdateControl ctl = MTS__SERVICE__UPDATE_CONTROL__INIT;

	if (r->rec->control)
		ctl = *r->rec->control;
	ctl.paused = a->pause;
	if (a->resume)
		ctl.resumes++;
	rec.control = &ctl;
	return put(ctx, name, &rec, r,
	    a->pause ? "update paused" : "update resumed");
}

/* The options' changes: a new version when the spec changed. */
static int
write_spec(struct mtsctl *ctx, const char *name, struct svc_rec *r,
    const struct update_args *a)
{
	Mts__Service__ServiceRecord rec = *r->rec;
	Mts__Service__UpdateControl ctl = MTS__SERVICE__UPDATE_CONTROL__INIT;
	Mts__Service__ServiceSpec *next;
	size_t i;
	int rc;

	if (a->replicas >= 0 && strncmp(r->rec->spec->mode, "global", 6) == 0) {
		mtsctl_err("%s: a global service runs one task per node: "
		           "--replicas does not apply",
		    name);
		return MTSCTL_EFAIL;
	}
	next = spec_copy(r->rec->spec);
	if (a->image) {
		free(next->image);
		next->image = xstrdup(a->image);
	}
	for (i = 0; i < a->nenv; i++)
		env_set(next, a->env[i]);
	if (a->replicas >= 0)
		next->replicas = (uint32_t)a->replicas;
	if (same_spec(next, r->rec->spec)) {
		protobuf_c_message_free_unpacked(&next->base, NULL);
		if (ctx->fmt == MTSCTL_FMT_JSON)
			mtsctl_print_obj(ctx,
			    json_pack("{ss sI ss}", "service", name, "version",
			        (json_int_t)r->rec->version, "change", "none"),
			    NULL);
		else
			printf("%s: unchanged (version %llu)\n", name,
			    (unsigned long long)r->rec->version);
		return 0;
	}
	if (r->rec->control) { /* a new update runs: the pause ends */
		ctl = *r->rec->control;
		ctl.paused = 0;
	}
	rec.version = r->rec->version + 1;
	rec.spec = next;
	rec.previous = r->rec->spec;
	rec.previous_version = r->rec->version;
	rec.rollback = 0;
	rec.control = &ctl;
	rc = put(ctx, name, &rec, r, "updated");
	protobuf_c_message_free_unpacked(&next->base, NULL);
	return rc;
}

int
mtsctl_cmd_service_update(struct mtsctl *ctx, int argc, char **argv)
{
	struct update_args a;
	struct svc_rec r;
	int rc;

	if ((rc = parse_args(ctx, argc, argv, &a)) != 0)
		return rc;
	if ((rc = mtsctl_svc_need(ctx, argv[optind], &r)) != 0)
		return rc;
	if (a.pause || a.resume)
		rc = write_control(ctx, argv[optind], &r, &a);
	else
		rc = write_spec(ctx, argv[optind], &r, &a);
	mtsctl_svc_rec_clear(&r);
	return rc;
}

int
mtsctl_cmd_service_rollback(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Service__ServiceRecord rec;
	Mts__Service__UpdateControl ctl;
	struct svc_rec r;
	char what[64];
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = mtsctl_svc_need(ctx, argv[1], &r)) != 0)
		return rc;
	if (mts_svc_rollback(r.rec, &rec, &ctl) != 0) {
		mtsctl_err("%s: no previous spec to roll back to", argv[1]);
		rc = MTSCTL_EFAIL;
	} else {
		snprintf(what, sizeof(what),
		    "rolled back to version %llu's spec",
		    (unsigned long long)(r.rec->previous_version
		            ? r.rec->previous_version
		            : r.rec->version - 1));
		rc = put(ctx, argv[1], &rec, &r, what);
	}
	mtsctl_svc_rec_clear(&r);
	return rc;
}

int
mtsctl_cmd_service_promote(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Service__ServiceRecord rec;
	Mts__Service__UpdateControl ctl = MTS__SERVICE__UPDATE_CONTROL__INIT;
	struct svc_rec r;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = mtsctl_svc_need(ctx, argv[1], &r)) != 0)
		return rc;
	if (r.rec->spec->canary == NULL || r.rec->spec->canary->count == 0) {
		mtsctl_err("%s: no canaries to promote (x-mts.update.canary)",
		    argv[1]);
		rc = MTSCTL_EFAIL;
	} else {
		rec = *r.rec;
		if (r.rec->control)
			ctl = *r.rec->control;
		ctl.promoted = r.rec->version;
		rec.control = &ctl;
		rc = put(ctx, argv[1], &rec, &r, "canaries promoted");
	}
	mtsctl_svc_rec_clear(&r);
	return rc;
}

const char mtsctl_help_service_update[] =
    "DESCRIPTION\n"
    "    Changes a service from any node, as a deploy of an edited file\n"
    "    would: --image, --env-add and --replicas write a new version of\n"
    "    its record s/SERVICE (the previous spec kept for rollback, a\n"
    "    compare-and-set against the record read), and its owner rolls\n"
    "    the tasks over to it by update_config: parallelism at a time,\n"
    "    stop-first or start-first, each batch healthy for monitor, on\n"
    "    failure pause, continue or rollback. A change of --replicas\n"
    "    alone replaces no task. Nothing changed: nothing written.\n"
    "\n"
    "    --pause holds a rolling update after the batch under way;\n"
    "    --resume carries it on, also one paused by failures (the\n"
    "    failures counted so far are forgiven). Both leave the version\n"
    "    as it is. A new version ends a pause. service inspect shows\n"
    "    the update's progress, service ps the tasks of each version.\n"
    "\nOPTIONS\n"
    "    --image IMG       the image to run\n"
    "    --env-add K=V     set an environment variable (repeatable)\n"
    "    --replicas N      the replica count (not for global services)\n"
    "    --pause           pause the rolling update\n"
    "    --resume          resume it\n"
    "\nEXIT STATUS\n"
    "    0 written (or nothing to change), 1 not written (the record\n"
    "    changed meanwhile, a global service given --replicas), 2 usage,\n"
    "    3 statestore unreachable, 4 permission denied, 5 no such\n"
    "    service.\n"
    "\nEXAMPLES\n"
    "    mtsctl service update shop_web --image nginx:1.27\n"
    "    mtsctl service update shop_web --env-add LOG=debug --replicas 6\n"
    "    mtsctl service update shop_web --pause\n";

const char mtsctl_help_service_rollback[] =
    "DESCRIPTION\n"
    "    Writes a new version of the service's record whose spec is the\n"
    "    previous one (the current spec becomes the previous, so a second\n"
    "    rollback undoes the first), marked as a rollback: its owner\n"
    "    rolls the tasks back by rollback_config. Tasks that still run\n"
    "    the previous spec are kept. The owner does the same on its own\n"
    "    when an update fails with failure_action rollback, or with\n"
    "    x-mts auto_revert.\n"
    "\nEXIT STATUS\n"
    "    0 written, 1 no previous spec or changed meanwhile, 2 usage,\n"
    "    3 statestore unreachable, 4 permission denied, 5 no such\n"
    "    service.\n"
    "\nEXAMPLES\n"
    "    mtsctl service rollback shop_web\n";

const char mtsctl_help_service_promote[] =
    "DESCRIPTION\n"
    "    Promotes the canaries of the service's current version\n"
    "    (x-mts.update.canary: N): the update that waits with N tasks of\n"
    "    the new version beside the old ones goes on to replace the rest,\n"
    "    batch by batch. Promoting before the canaries are healthy lets\n"
    "    the update go on once they are. The record's control holds the\n"
    "    promoted version; the version itself stays.\n"
    "\nEXIT STATUS\n"
    "    0 written, 1 the service has no canaries or changed meanwhile,\n"
    "    2 usage, 3 statestore unreachable, 4 permission denied, 5 no\n"
    "    such service.\n"
    "\nEXAMPLES\n"
    "    mtsctl service promote shop_web\n";
