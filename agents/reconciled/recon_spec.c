/* recon_spec.c: a service's spec turned into the shim's TaskSpec of one of its tasks — image, command, environment, limits, restart policy, health check, mounts — as pure code the unit tests check field by field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconciled.h"
#include "svcrec.h"
#include "xmalloc.h"

static const struct {
	const char *name;
	enum mts_rc_mode mode;
} modes[] = {
	{ "replicated", RC_REPLICATED },
	{ "global", RC_GLOBAL },
	{ "replicated-job", RC_REPLICATED_JOB },
	{ "global-job", RC_GLOBAL_JOB },
};

enum mts_rc_mode
rc_spec_mode(const char *mode)
{
	size_t i;

	for (i = 0; mode != NULL && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(mode, modes[i].name) == 0)
			return modes[i].mode;
	return RC_REPLICATED;
}

static int
is_job(const Mts__Service__ServiceSpec *s)
{
	enum mts_rc_mode m = rc_spec_mode(s->mode);

	return m == RC_REPLICATED_JOB || m == RC_GLOBAL_JOB;
}

void
rc_spec_reservation(const Mts__Service__ServiceSpec *s, uint32_t *cpu,
    uint64_t *mem)
{
	const Mts__Service__Resources *r = s->reservations &&
	        (s->reservations->cpu_millis || s->reservations->memory)
	    ? s->reservations
	    : s->limits;

	*cpu = r ? r->cpu_millis : 0;
	*mem = r ? r->memory : 0;
}

static uint32_t
clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Compose restart_policy; everything restarts always by default
 * (Swarm's default), a job at most on failure: a job that restarted
 * after exiting 0 would never complete. */
static void
restart_of(const Mts__Service__ServiceSpec *s, struct rc_spec *o)
{
	const Mts__Service__Restart *r = s->restart;

	mts__shim__restart_policy__init(&o->restart);
	o->restart.condition =
	    r && r->condition && *r->condition ? r->condition : "any";
	if (is_job(s) && strcmp(o->restart.condition, "any") == 0)
		o->restart.condition = "on-failure";
	if (r) {
		o->restart.max_attempts = r->max_attempts;
		o->restart.delay_ms = clamp32(r->delay_ms);
		o->restart.window_ms = clamp32(r->window_ms);
	}
	o->spec.restart = &o->restart;
}

static void
health_of(const Mts__Service__ServiceSpec *s, struct rc_spec *o)
{
	const Mts__Service__Health *h = s->health;
	static char *none[] = { "NONE" };

	if (h == NULL || (!h->disable && h->n_test == 0))
		return;
	mts__shim__health_check__init(&o->health);
	if (h->disable) {
		o->health.test = none;
		o->health.n_test = 1;
	} else {
		o->health.test = h->test;
		o->health.n_test = h->n_test;
	}
	o->health.interval_ms = clamp32(h->interval_ms);
	o->health.timeout_ms = clamp32(h->timeout_ms);
	o->health.retries = h->retries > 0 ? (uint32_t)h->retries : 0;
	o->health.start_period_ms = clamp32(h->start_period_ms);
	o->spec.health = &o->health;
}

/* KEY=VALUE for every variable with a value. */
static void
env_of(const Mts__Service__ServiceSpec *s, struct rc_spec *o)
{
	size_t i, n = 0;

	o->env = xcalloc(s->n_environment + 1, sizeof(*o->env));
	for (i = 0; i < s->n_environment; i++) {
		const Mts__Service__KeyValue *kv = s->environment[i];

		if (kv->has_value)
			o->env[n++] = xasprintf("%s=%s", kv->key, kv->value);
	}
	o->spec.env = o->env;
	o->spec.n_env = n;
}

/* Bind mounts and tmpfs; named volumes wait for the volume agent. */
static void
mounts_of(const Mts__Service__ServiceSpec *s, struct rc_spec *o)
{
	static char *ro_bind[] = { "rbind", "ro" }, *rw_bind[] = { "rbind" };
	static char *ro_tmp[] = { "ro" };
	size_t i, n = 0;

	o->mounts = xcalloc(s->n_mounts + 1, sizeof(*o->mounts));
	o->mountp = xcalloc(s->n_mounts + 1, sizeof(*o->mountp));
	for (i = 0; i < s->n_mounts; i++) {
		const Mts__Service__Mount *m = s->mounts[i];
		Mts__Shim__Mount *x = &o->mounts[n];

		mts__shim__mount__init(x);
		x->destination = m->target;
		if (strcmp(m->type, "bind") == 0) {
			x->type = "bind";
			x->source = m->source;
			x->options = m->read_only ? ro_bind : rw_bind;
			x->n_options = m->read_only ? 2 : 1;
		} else if (strcmp(m->type, "tmpfs") == 0) {
			x->type = "tmpfs";
			x->source = "tmpfs";
			x->options = m->read_only ? ro_tmp : NULL;
			x->n_options = m->read_only ? 1 : 0;
		} else {
			continue;
		}
		o->mountp[n++] = x;
	}
	o->spec.mounts = o->mountp;
	o->spec.n_mounts = n;
}

static void
limits_of(const Mts__Service__ServiceSpec *s, struct rc_spec *o)
{
	size_t i;

	if (s->limits) {
		o->spec.memory_limit = s->limits->memory;
		o->spec.cpu_millis = s->limits->cpu_millis;
		o->spec.pids_limit = s->limits->pids;
	}
	if (s->stop_grace_ms > 0)
		o->spec.stop_grace_ms = clamp32((uint64_t)s->stop_grace_ms);
	for (i = 0; i < s->n_ulimits; i++)
		if (strcmp(s->ulimits[i]->name, "nofile") == 0 &&
		    s->ulimits[i]->soft > 0)
			o->spec.nofile = (uint64_t)s->ulimits[i]->soft;
}

/*
 * Fills o with the TaskSpec of task `task` of service spec s (of record
 * version `version`, with the spec's digest). o borrows
 * s's strings (keep s until o is freed) and owns what it allocated;
 * rc_spec_free releases that.
 */
void
rc_spec_build(const Mts__Service__ServiceSpec *s, uint64_t version,
    const char *task, struct rc_spec *o)
{
	memset(o, 0, sizeof(*o));
	mts__shim__task_spec__init(&o->spec);
	o->spec.id = (char *)task;
	o->spec.service_version = version;
	mts_spec_digest(s, o->digest);
	o->spec.spec_digest.data = o->digest;
	o->spec.spec_digest.len = sizeof(o->digest);
	o->spec.image = s->image;
	o->spec.service = s->name;
	o->spec.managed = 1;
	if (s->has_entrypoint) {
		o->spec.entrypoint = s->entrypoint;
		o->spec.n_entrypoint = s->n_entrypoint;
	}
	if (s->has_command) {
		o->spec.command = s->command;
		o->spec.n_command = s->n_command;
	}
	o->spec.cwd = s->working_dir;
	o->spec.user = s->user;
	o->hostname = xstrdup(s->hostname && *s->hostname ? s->hostname : task);
	o->spec.hostname = o->hostname;
	o->spec.read_only = s->read_only;
	env_of(s, o);
	limits_of(s, o);
	restart_of(s, o);
	health_of(s, o);
	mounts_of(s, o);
}

void
rc_spec_free(struct rc_spec *o)
{
	size_t i;

	for (i = 0; o->env && i < o->spec.n_env; i++)
		free(o->env[i]);
	free(o->env);
	free(o->mounts);
	free(o->mountp);
	free(o->hostname);
	memset(o, 0, sizeof(*o));
}
