/* svc_spec.c: a loaded Compose service turned into the replicated ServiceSpec (proto/service.proto) that `mtsctl deploy` writes to s/<stack>_<service>, with names resolved the Swarm way (<stack>_<name> for services, networks and volumes). */
#include <stdlib.h>
#include <string.h>

#include "mtsctl.h"
#include "svc_spec.h"
#include "xmalloc.h"

/* Every pointer in the message is malloc'ed (or a protobuf-c default), so
 * protobuf_c_message_free_unpacked frees it. */
static char **
strv(const struct mts_strv *v, size_t *n)
{
	char **out = v->n ? xcalloc(v->n, sizeof(*out)) : NULL;
	size_t i;

	for (i = 0; i < v->n; i++)
		out[i] = xstrdup(v->v[i]);
	*n = v->n;
	return out;
}

static Mts__Service__KeyValue **
kvs(const struct mts_kvlist *l, size_t *n)
{
	Mts__Service__KeyValue **out =
	    l->n ? xcalloc(l->n, sizeof(*out)) : NULL;
	size_t i;

	for (i = 0; i < l->n; i++) {
		out[i] = xmalloc(sizeof(**out));
		mts__service__key_value__init(out[i]);
		out[i]->key = xstrdup(l->v[i].key);
		out[i]->value = xstrdup(l->v[i].value ? l->v[i].value : "");
		out[i]->has_value = l->v[i].value != NULL;
	}
	*n = l->n;
	return out;
}

static char *
dup0(const char *s)
{
	return s ? xstrdup(s) : xstrdup("");
}

static Mts__Service__Resources *
resources(const struct mts_resources *r)
{
	Mts__Service__Resources *o = xmalloc(sizeof(*o));

	mts__service__resources__init(o);
	o->cpu_millis = r->cpu_millis;
	o->memory = r->memory;
	o->pids = r->pids;
	return o;
}

static Mts__Service__Update *
update(const struct mts_update *u)
{
	Mts__Service__Update *o = xmalloc(sizeof(*o));

	mts__service__update__init(o);
	o->parallelism = u->parallelism;
	o->delay_ms = (uint64_t)u->delay_ms;
	o->failure_action = xstrdup(u->failure_action);
	o->monitor_ms = (uint64_t)u->monitor_ms;
	o->max_failure_ratio = u->max_failure_ratio;
	o->order = xstrdup(u->order);
	return o;
}

static Mts__Service__Health *
health(const struct mts_health *h)
{
	Mts__Service__Health *o = xmalloc(sizeof(*o));

	mts__service__health__init(o);
	o->test = strv(&h->test, &o->n_test);
	o->disable = h->disable;
	o->interval_ms = (uint64_t)h->interval_ms;
	o->timeout_ms = (uint64_t)h->timeout_ms;
	o->start_period_ms = (uint64_t)h->start_period_ms;
	o->start_interval_ms = (uint64_t)h->start_interval_ms;
	o->retries = h->retries;
	return o;
}

static void
ports(Mts__Service__ServiceSpec *o, const struct mts_service *s)
{
	size_t i;

	o->n_ports = s->nports;
	o->ports = s->nports ? xcalloc(s->nports, sizeof(*o->ports)) : NULL;
	for (i = 0; i < s->nports; i++) {
		Mts__Service__Port *p = xmalloc(sizeof(*p));

		mts__service__port__init(p);
		p->target = s->ports[i].target;
		p->published = s->ports[i].published;
		p->protocol = xstrdup(s->ports[i].protocol);
		p->mode = xstrdup(
		    s->ports[i].mode == MTS_PORT_HOST ? "host" : "ingress");
		p->host_ip = dup0(s->ports[i].host_ip);
		o->ports[i] = p;
	}
}

static const char *
volume_name(const struct mts_stack *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nvolumes; i++)
		if (strcmp(st->volumes[i].name, name) == 0)
			return st->volumes[i].real_name;
	return name;
}

static void
mounts(Mts__Service__ServiceSpec *o, const struct mts_stack *st,
    const struct mts_service *s)
{
	static const char *const types[] = { "volume", "bind", "tmpfs" };
	size_t i;

	o->n_mounts = s->nmounts;
	o->mounts = s->nmounts ? xcalloc(s->nmounts, sizeof(*o->mounts)) : NULL;
	for (i = 0; i < s->nmounts; i++) {
		const struct mts_mount *m = &s->mounts[i];
		Mts__Service__Mount *p = xmalloc(sizeof(*p));

		mts__service__mount__init(p);
		p->type = xstrdup(types[m->type]);
		p->source = dup0(m->type == MTS_MOUNT_VOLUME && m->source
		        ? volume_name(st, m->source)
		        : m->source);
		p->target = xstrdup(m->target);
		p->read_only = m->read_only;
		p->tmpfs_size = m->tmpfs_size;
		p->tmpfs_mode = m->tmpfs_mode;
		o->mounts[i] = p;
	}
}

static void
ulimits(Mts__Service__ServiceSpec *o, const struct mts_service *s)
{
	size_t i;

	o->n_ulimits = s->nulimits;
	o->ulimits =
	    s->nulimits ? xcalloc(s->nulimits, sizeof(*o->ulimits)) : NULL;
	for (i = 0; i < s->nulimits; i++) {
		Mts__Service__Ulimit *u = xmalloc(sizeof(*u));

		mts__service__ulimit__init(u);
		u->name = xstrdup(s->ulimits[i].name);
		u->soft = s->ulimits[i].soft;
		u->hard = s->ulimits[i].hard;
		o->ulimits[i] = u;
	}
}

static const char *
network_name(const struct mts_stack *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nnetworks; i++)
		if (strcmp(st->networks[i].name, name) == 0)
			return st->networks[i].real_name;
	return name;
}

static void
networks(Mts__Service__ServiceSpec *o, const struct mts_stack *st,
    const struct mts_service *s)
{
	size_t i;

	o->n_networks = s->nnetworks;
	o->networks =
	    s->nnetworks ? xcalloc(s->nnetworks, sizeof(*o->networks)) : NULL;
	for (i = 0; i < s->nnetworks; i++) {
		Mts__Service__Network *n = xmalloc(sizeof(*n));

		mts__service__network__init(n);
		n->name = xstrdup(network_name(st, s->networks[i].name));
		n->aliases = strv(&s->networks[i].aliases, &n->n_aliases);
		n->ipv4_address = dup0(s->networks[i].ipv4_address);
		o->networks[i] = n;
	}
}

static void
depends(Mts__Service__ServiceSpec *o, const struct mts_stack *st,
    const struct mts_service *s)
{
	size_t i;

	o->n_depends = s->ndepends;
	o->depends =
	    s->ndepends ? xcalloc(s->ndepends, sizeof(*o->depends)) : NULL;
	for (i = 0; i < s->ndepends; i++) {
		Mts__Service__Depend *d = xmalloc(sizeof(*d));

		mts__service__depend__init(d);
		d->service =
		    xasprintf("%s_%s", st->name, s->depends[i].service);
		d->condition = xstrdup(s->depends[i].condition);
		d->required = s->depends[i].required;
		o->depends[i] = d;
	}
}

static void
deploy(Mts__Service__ServiceSpec *o, const struct mts_service *s)
{
	static const char *const modes[] = { "replicated", "global",
		"replicated-job", "global-job" };
	Mts__Service__Restart *r = xmalloc(sizeof(*r));
	Mts__Service__Placement *p = xmalloc(sizeof(*p));
	Mts__Service__Canary *c = xmalloc(sizeof(*c));

	o->mode = xstrdup(modes[s->mode]);
	o->replicas =
	    s->mode == MTS_MODE_GLOBAL || s->mode == MTS_MODE_GLOBAL_JOB
	    ? 0
	    : s->replicas;
	o->service_labels = kvs(&s->deploy_labels, &o->n_service_labels);
	o->endpoint_mode = xstrdup(s->endpoint_mode);
	o->limits = resources(&s->limits);
	o->reservations = resources(&s->reservations);
	mts__service__restart__init(r);
	r->condition = xstrdup(s->restart.condition);
	r->delay_ms = (uint64_t)s->restart.delay_ms;
	r->max_attempts = s->restart.max_attempts;
	r->window_ms = (uint64_t)s->restart.window_ms;
	o->restart = r;
	o->update = update(&s->update);
	o->rollback = update(&s->rollback);
	mts__service__placement__init(p);
	p->constraints = strv(&s->placement.constraints, &p->n_constraints);
	p->spread = strv(&s->placement.spread, &p->n_spread);
	p->max_replicas_per_node = s->placement.max_replicas_per_node;
	p->strategy = xstrdup(s->placement.strategy);
	o->placement = p;
	mts__service__canary__init(c);
	c->count = s->canary.count;
	c->auto_promote = s->canary.auto_promote;
	c->auto_revert = s->canary.auto_revert;
	c->healthy_deadline_ms = s->canary.healthy_deadline_ms > 0
	    ? (uint64_t)s->canary.healthy_deadline_ms
	    : 0;
	o->canary = c;
}

Mts__Service__ServiceSpec *
mtsctl_svc_spec(const struct mts_stack *st, const struct mts_service *s)
{
	Mts__Service__ServiceSpec *o = xmalloc(sizeof(*o));

	mts__service__service_spec__init(o);
	o->name = xasprintf("%s_%s", st->name, s->name);
	o->stack = xstrdup(st->name);
	o->short_name = xstrdup(s->name);
	o->image = xstrdup(s->image);
	o->command = strv(&s->command, &o->n_command);
	o->has_command = s->has_command;
	o->entrypoint = strv(&s->entrypoint, &o->n_entrypoint);
	o->has_entrypoint = s->has_entrypoint;
	o->environment = kvs(&s->environment, &o->n_environment);
	o->labels = kvs(&s->labels, &o->n_labels);
	o->hostname = dup0(s->hostname);
	o->user = dup0(s->user);
	o->working_dir = dup0(s->working_dir);
	o->read_only = s->read_only;
	o->init = s->init;
	o->stop_grace_ms = s->stop_grace_ms;
	o->stop_signal = dup0(s->stop_signal);
	if (s->health.set)
		o->health = health(&s->health);
	ports(o, s);
	mounts(o, st, s);
	ulimits(o, s);
	o->cap_add = strv(&s->cap_add, &o->n_cap_add);
	o->cap_drop = strv(&s->cap_drop, &o->n_cap_drop);
	o->sysctls = kvs(&s->sysctls, &o->n_sysctls);
	o->extra_hosts = strv(&s->extra_hosts, &o->n_extra_hosts);
	o->dns = strv(&s->dns, &o->n_dns);
	o->log_max_size = s->log_max_size;
	o->log_max_file = s->log_max_file;
	networks(o, st, s);
	depends(o, st, s);
	deploy(o, s);
	return o;
}
