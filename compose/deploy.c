/* deploy.c: a service's deploy section (mode, replicas, resources, restart, update and rollback, placement), its x-mts extensions, the top-level networks and volumes, and the cross-references between them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose_int.h"
#include "xmalloc.h"

/* Warns about each key of map that is not in known (x-* are free). */
static void
warn_unknown(struct conv *c, const struct cnode *map, const char *where,
    const char *const *known)
{
	size_t i, j;

	for (i = 0; i < map->n; i++) {
		const char *k = map->kids[2 * i]->str;
		int ok = strncmp(k, "x-", 2) == 0;

		for (j = 0; known[j] && !ok; j++)
			ok = strcmp(k, known[j]) == 0;
		if (!ok)
			cv_warn(c, map->kids[2 * i],
			    "service \"%s\": %s.%s is "
			    "not supported by mts (ignored)",
			    c->svc->name, where, k);
	}
}

static int
resources(struct conv *c, const struct cnode *n, const char *what,
    struct mts_resources *r)
{
	static const char *const known[] = { "cpus", "memory", "pids", NULL };
	const struct cnode *v;
	char key[64];

	if (cnode_is_null(n))
		return 0;
	if (cv_want(c, n, CN_MAP, what) < 0)
		return -1;
	warn_unknown(c, n, what, known);
	if ((v = cnode_get(n, "cpus"))) {
		snprintf(key, sizeof(key), "%s.cpus", what);
		if (cv_want(c, v, CN_SCALAR, key) < 0)
			return -1;
		if (mts_compose_cpus(v->str, &r->cpu_millis) < 0)
			return CERR(c, v,
			    "%s: \"%s\" is not a number of CPUs "
			    "(e.g. 0.5)",
			    key, v->str);
	}
	snprintf(key, sizeof(key), "%s.memory", what);
	if ((v = cnode_get(n, "memory")) && cv_bytes(c, v, key, &r->memory) < 0)
		return -1;
	snprintf(key, sizeof(key), "%s.pids", what);
	if ((v = cnode_get(n, "pids")) && cv_u32(c, v, key, &r->pids) < 0)
		return -1;
	return 0;
}

static int
restart_policy(struct conv *c, const struct cnode *n)
{
	static const char *const conds[] = { "none", "on-failure", "any",
		NULL };
	static const char *const known[] = { "condition", "delay",
		"max_attempts", "window", NULL };
	struct mts_restart *r = &c->svc->restart;
	const struct cnode *v;

	if (cv_want(c, n, CN_MAP, "deploy.restart_policy") < 0)
		return -1;
	warn_unknown(c, n, "deploy.restart_policy", known);
	if ((v = cnode_get(n, "condition")) &&
	    cv_word(c, v, "deploy.restart_policy.condition", r->condition,
	        sizeof(r->condition), conds) < 0)
		return -1;
	if ((v = cnode_get(n, "delay")) &&
	    cv_duration(c, v, "deploy.restart_policy.delay", &r->delay_ms) < 0)
		return -1;
	if ((v = cnode_get(n, "max_attempts")) &&
	    cv_u32(c, v, "deploy.restart_policy.max_attempts",
	        &r->max_attempts) < 0)
		return -1;
	if ((v = cnode_get(n, "window")) &&
	    cv_duration(c, v, "deploy.restart_policy.window", &r->window_ms) <
	        0)
		return -1;
	return 0;
}

static int
update_config(struct conv *c, const struct cnode *n, const char *what,
    struct mts_update *u)
{
	static const char *const actions[] = { "pause", "continue", "rollback",
		NULL };
	static const char *const orders[] = { "stop-first", "start-first",
		NULL };
	static const char *const known[] = { "parallelism", "delay",
		"failure_action", "monitor", "max_failure_ratio", "order",
		NULL };
	const struct cnode *v;
	char key[64];
	char *end;

	if (cv_want(c, n, CN_MAP, what) < 0)
		return -1;
	warn_unknown(c, n, what, known);
#define KEY(k) (snprintf(key, sizeof(key), "%s." k, what), key)
	if ((v = cnode_get(n, "parallelism")) &&
	    cv_u32(c, v, KEY("parallelism"), &u->parallelism) < 0)
		return -1;
	if ((v = cnode_get(n, "delay")) &&
	    cv_duration(c, v, KEY("delay"), &u->delay_ms) < 0)
		return -1;
	if ((v = cnode_get(n, "monitor")) &&
	    cv_duration(c, v, KEY("monitor"), &u->monitor_ms) < 0)
		return -1;
	if ((v = cnode_get(n, "failure_action")) &&
	    cv_word(c, v, KEY("failure_action"), u->failure_action,
	        sizeof(u->failure_action), actions) < 0)
		return -1;
	if ((v = cnode_get(n, "order")) &&
	    cv_word(c, v, KEY("order"), u->order, sizeof(u->order), orders) < 0)
		return -1;
	if ((v = cnode_get(n, "max_failure_ratio"))) {
		if (cv_want(c, v, CN_SCALAR, KEY("max_failure_ratio")) < 0)
			return -1;
		u->max_failure_ratio = strtod(v->str, &end);
		if (end == v->str || *end != '\0' || u->max_failure_ratio < 0 ||
		    u->max_failure_ratio > 1)
			return CERR(c, v,
			    "%s: \"%s\" is not a ratio from 0 "
			    "to 1",
			    KEY("max_failure_ratio"), v->str);
	}
#undef KEY
	return 0;
}

static int
placement(struct conv *c, const struct cnode *n)
{
	static const char *const known[] = { "constraints", "preferences",
		"max_replicas_per_node", NULL };
	struct mts_placement *p = &c->svc->placement;
	const struct cnode *v;
	size_t i;

	if (cv_want(c, n, CN_MAP, "deploy.placement") < 0)
		return -1;
	warn_unknown(c, n, "deploy.placement", known);
	if ((v = cnode_get(n, "constraints")) &&
	    cv_strv(c, v, "deploy.placement.constraints", &p->constraints, 0) <
	        0)
		return -1;
	for (i = 0; i < p->constraints.n; i++) {
		const char *k = p->constraints.v[i];

		if (strstr(k, "==") == NULL && strstr(k, "!=") == NULL)
			return CERR(c, v,
			    "deploy.placement.constraints: "
			    "\"%s\" is not ATTRIBUTE == VALUE or "
			    "ATTRIBUTE != VALUE",
			    k);
		if (strstr(k, "node.role") != NULL)
			cv_warn(c, v,
			    "service \"%s\": \"%s\": mts has no "
			    "manager role; node.role matches the node label "
			    "role where one is set, and otherwise every node "
			    "is a manager",
			    c->svc->name, k);
	}
	if ((v = cnode_get(n, "preferences")) && !cnode_is_null(v)) {
		if (cv_want(c, v, CN_SEQ, "deploy.placement.preferences") < 0)
			return -1;
		for (i = 0; i < v->n; i++) {
			const struct cnode *s = cnode_get(v->kids[i], "spread");

			if (s == NULL || s->kind != CN_SCALAR)
				return CERR(c, v->kids[i],
				    "deploy.placement."
				    "preferences: each entry is spread: LABEL");
			mts_strv_push(&p->spread, s->str);
		}
	}
	if ((v = cnode_get(n, "max_replicas_per_node")) &&
	    cv_u32(c, v, "deploy.placement.max_replicas_per_node",
	        &p->max_replicas_per_node) < 0)
		return -1;
	return 0;
}

static int
deploy_mode(struct conv *c, const struct cnode *v)
{
	static const char *const modes[] = { "replicated", "global",
		"replicated-job", "global-job", NULL };
	char mode[20];
	size_t i;

	if (cv_word(c, v, "deploy.mode", mode, sizeof(mode), modes) < 0)
		return -1;
	for (i = 0; modes[i]; i++)
		if (strcmp(mode, modes[i]) == 0)
			c->svc->mode = (enum mts_svc_mode)i;
	return 0;
}

int
compose_deploy(struct conv *c, const struct cnode *n)
{
	static const char *const endpoint[] = { "vip", "dnsrr", NULL };
	static const char *const known[] = { "mode", "replicas", "labels",
		"endpoint_mode", "resources", "restart_policy", "update_config",
		"rollback_config", "placement", NULL };
	struct mts_service *s = c->svc;
	const struct cnode *v, *r;
	int replicas_set = 0;

	if (cnode_is_null(n))
		return 0;
	if (cv_want(c, n, CN_MAP, "deploy") < 0)
		return -1;
	warn_unknown(c, n, "deploy", known);
	if ((v = cnode_get(n, "mode")) && deploy_mode(c, v) < 0)
		return -1;
	if ((v = cnode_get(n, "replicas"))) {
		if (cv_u32(c, v, "deploy.replicas", &s->replicas) < 0)
			return -1;
		replicas_set = 1;
	}
	if (replicas_set &&
	    (s->mode == MTS_MODE_GLOBAL || s->mode == MTS_MODE_GLOBAL_JOB))
		return CERR(c, v,
		    "deploy.replicas: a global service runs one "
		    "task per node and takes no replicas");
	if (((v = cnode_get(n, "labels")) &&
	        cv_kv(c, v, "deploy.labels", &s->deploy_labels) < 0) ||
	    ((v = cnode_get(n, "endpoint_mode")) &&
	        cv_word(c, v, "deploy.endpoint_mode", s->endpoint_mode,
	            sizeof(s->endpoint_mode), endpoint) < 0))
		return -1;
	if ((r = cnode_get(n, "resources")) && !cnode_is_null(r)) {
		static const char *const rk[] = { "limits", "reservations",
			NULL };

		if (cv_want(c, r, CN_MAP, "deploy.resources") < 0)
			return -1;
		warn_unknown(c, r, "deploy.resources", rk);
		if (((v = cnode_get(r, "limits")) &&
		        resources(c, v, "deploy.resources.limits", &s->limits) <
		            0) ||
		    ((v = cnode_get(r, "reservations")) &&
		        resources(c, v, "deploy.resources.reservations",
		            &s->reservations) < 0))
			return -1;
	}
	if ((v = cnode_get(n, "restart_policy")) && restart_policy(c, v) < 0)
		return -1;
	if ((v = cnode_get(n, "update_config")) &&
	    update_config(c, v, "deploy.update_config", &s->update) < 0)
		return -1;
	if ((v = cnode_get(n, "rollback_config")) &&
	    update_config(c, v, "deploy.rollback_config", &s->rollback) < 0)
		return -1;
	if ((v = cnode_get(n, "placement")) && placement(c, v) < 0)
		return -1;
	return 0;
}

/* x-mts: {placement: {strategy: spread|binpack},
 *         update: {canary: N, auto_promote: BOOL, auto_revert: BOOL,
 *                  healthy_deadline: DURATION}} */
int
compose_xmts(struct conv *c, const struct cnode *n)
{
	static const char *const strategies[] = { "spread", "binpack", NULL };
	static const char *const known[] = { "placement", "update", NULL };
	static const char *const pk[] = { "strategy", NULL };
	static const char *const uk[] = { "canary", "auto_promote",
		"auto_revert", "healthy_deadline", NULL };
	struct mts_service *s = c->svc;
	const struct cnode *p, *v;

	if (cv_want(c, n, CN_MAP, "x-mts") < 0)
		return -1;
	warn_unknown(c, n, "x-mts", known);
	if ((p = cnode_get(n, "placement"))) {
		if (cv_want(c, p, CN_MAP, "x-mts.placement") < 0)
			return -1;
		warn_unknown(c, p, "x-mts.placement", pk);
		if ((v = cnode_get(p, "strategy")) &&
		    cv_word(c, v, "x-mts.placement.strategy",
		        s->placement.strategy, sizeof(s->placement.strategy),
		        strategies) < 0)
			return -1;
	}
	if ((p = cnode_get(n, "update"))) {
		if (cv_want(c, p, CN_MAP, "x-mts.update") < 0)
			return -1;
		warn_unknown(c, p, "x-mts.update", uk);
		if (((v = cnode_get(p, "canary")) &&
		        cv_u32(c, v, "x-mts.update.canary", &s->canary.count) <
		            0) ||
		    ((v = cnode_get(p, "auto_promote")) &&
		        cv_bool(c, v, "x-mts.update.auto_promote",
		            &s->canary.auto_promote) < 0) ||
		    ((v = cnode_get(p, "auto_revert")) &&
		        cv_bool(c, v, "x-mts.update.auto_revert",
		            &s->canary.auto_revert) < 0) ||
		    ((v = cnode_get(p, "healthy_deadline")) &&
		        cv_duration(c, v, "x-mts.update.healthy_deadline",
		            &s->canary.healthy_deadline_ms) < 0))
			return -1;
	}
	return 0;
}

/* --- top-level networks and volumes --------------------------------------------------- */

/* The shared part of a network or volume entry: name, external, driver,
 * labels. real_name is "<stack>_<key>" unless external or name: says. */
static int
resource_entry(struct conv *c, const struct cnode *key,
    const struct cnode *body, const char *what, char **real_name, int *external,
    char **driver, struct mts_kvlist *labels)
{
	const struct cnode *v;

	if (!cnode_is_null(body) && cv_want(c, body, CN_MAP, what) < 0)
		return -1;
	if ((v = cnode_get(body, "external"))) {
		if (v->kind == CN_MAP) { /* the old external: {name: x} */
			const struct cnode *nm = cnode_get(v, "name");

			*external = 1;
			if (nm && cv_str(c, nm, "external.name", real_name) < 0)
				return -1;
		} else if (cv_bool(c, v, "external", external) < 0)
			return -1;
	}
	if ((v = cnode_get(body, "name")) &&
	    cv_str(c, v, "name", real_name) < 0)
		return -1;
	if ((v = cnode_get(body, "driver")) && !cnode_is_null(v) &&
	    cv_str(c, v, "driver", driver) < 0)
		return -1;
	if ((v = cnode_get(body, "labels")) &&
	    cv_kv(c, v, "labels", labels) < 0)
		return -1;
	if (*real_name == NULL)
		*real_name = *external
		    ? xstrdup(key->str)
		    : xasprintf("%s_%s", c->st->name, key->str);
	return 0;
}

int
compose_top_networks(struct conv *c, const struct cnode *n)
{
	struct mts_stack *st = c->st;
	size_t i;

	if (n && !cnode_is_null(n) && cv_want(c, n, CN_MAP, "networks") < 0)
		return -1;
	/* every stack has <stack>_default, first */
	st->networks = xcalloc((n ? n->n : 0) + 1, sizeof(*st->networks));
	st->networks[0].name = xstrdup("default");
	st->networks[0].real_name = xasprintf("%s_default", st->name);
	st->nnetworks = 1;
	for (i = 0; n && i < n->n; i++) {
		const struct cnode *k = n->kids[2 * i], *b = n->kids[2 * i + 1];
		struct mts_stack_network *net = &st->networks[st->nnetworks];
		const struct cnode *v;

		if (strcmp(k->str, "default") == 0) {
			net = &st->networks[0];
			free(net->real_name);
			net->real_name = NULL;
		} else {
			st->nnetworks++;
			net->name = xstrdup(k->str);
		}
		if (resource_entry(c, k, b, "networks", &net->real_name,
		        &net->external, &net->driver, &net->labels) < 0)
			return -1;
		if (((v = cnode_get(b, "internal")) &&
		        cv_bool(c, v, "internal", &net->internal) < 0) ||
		    ((v = cnode_get(b, "attachable")) &&
		        cv_bool(c, v, "attachable", &net->attachable) < 0))
			return -1;
		if (net->driver && strcmp(net->driver, "overlay"))
			cv_warn(c, k,
			    "network \"%s\": driver \"%s\" is not "
			    "supported; mts networks are its own overlay",
			    k->str, net->driver);
	}
	return 0;
}

int
compose_top_volumes(struct conv *c, const struct cnode *n)
{
	struct mts_stack *st = c->st;
	size_t i;

	if (n == NULL || cnode_is_null(n))
		return 0;
	if (cv_want(c, n, CN_MAP, "volumes") < 0)
		return -1;
	st->volumes = xcalloc(n->n ? n->n : 1, sizeof(*st->volumes));
	for (i = 0; i < n->n; i++) {
		struct mts_stack_volume *vol = &st->volumes[st->nvolumes++];

		vol->name = xstrdup(n->kids[2 * i]->str);
		if (resource_entry(c, n->kids[2 * i], n->kids[2 * i + 1],
		        "volumes", &vol->real_name, &vol->external,
		        &vol->driver, &vol->labels) < 0)
			return -1;
	}
	return 0;
}

/* --- references ------------------------------------------------------------------------ */

int
compose_has_network(const struct mts_stack *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nnetworks; i++)
		if (strcmp(st->networks[i].name, name) == 0)
			return 1;
	return 0;
}

int
compose_has_volume(const struct mts_stack *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nvolumes; i++)
		if (strcmp(st->volumes[i].name, name) == 0)
			return 1;
	return 0;
}

static const struct mts_service *
find_service(const struct mts_stack *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nservices; i++)
		if (strcmp(st->services[i].name, name) == 0)
			return &st->services[i];
	return NULL;
}

/* A service that lists no network joins <stack>_default, as in Swarm. */
static void
default_network(struct mts_service *s)
{
	if (s->nnetworks)
		return;
	s->networks = xcalloc(1, sizeof(*s->networks));
	s->networks[0].name = xstrdup("default");
	s->nnetworks = 1;
}

/* depends_on must not loop: a depth-first walk from each service. */
static int
depends_cycle(const struct mts_stack *st, const struct mts_service *s,
    int depth)
{
	size_t i;

	if (depth > (int)st->nservices)
		return 1;
	for (i = 0; i < s->ndepends; i++) {
		const struct mts_service *d =
		    find_service(st, s->depends[i].service);

		if (d && depends_cycle(st, d, depth + 1))
			return 1;
	}
	return 0;
}

int
compose_check_refs(struct conv *c)
{
	struct mts_stack *st = c->st;
	size_t i;

	for (i = 0; i < st->nservices; i++) {
		struct mts_service *s = &st->services[i];

		default_network(s);
		if (depends_cycle(st, s, 0))
			return CERR(c, c->svc_tree->kids[2 * i],
			    "service "
			    "\"%s\": depends_on forms a cycle",
			    s->name);
	}
	return 0;
}
