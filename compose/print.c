/* print.c: a stack printed as canonical Compose YAML (every default written out, strings double-quoted) that loads again to the same stack — what `mtsctl stack config` shows. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compose.h"

/* A double-quoted YAML string; values are interpolated when loaded, so
 * their dollars are doubled (keys are not interpolated). */
static void
quote(FILE *f, const char *s, int is_value)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '$' && is_value)
			fputs("$$", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void
q(FILE *f, const char *s)
{
	quote(f, s, 1);
}

static void
qk(FILE *f, const char *s)
{
	quote(f, s, 0);
}

static void
strv(FILE *f, const struct mts_strv *v)
{
	size_t i;

	fputc('[', f);
	for (i = 0; i < v->n; i++) {
		if (i)
			fputs(", ", f);
		q(f, v->v[i]);
	}
	fputc(']', f);
}

static void
kv(FILE *f, const struct mts_kvlist *l)
{
	size_t i;

	fputc('{', f);
	for (i = 0; i < l->n; i++) {
		if (i)
			fputs(", ", f);
		qk(f, l->v[i].key);
		fputs(": ", f);
		if (l->v[i].value)
			q(f, l->v[i].value);
		else
			fputs("null", f);
	}
	fputc('}', f);
}

static void
field_str(FILE *f, const char *ind, const char *key, const char *v)
{
	if (v == NULL)
		return;
	fprintf(f, "%s%s: ", ind, key);
	q(f, v);
	fputc('\n', f);
}

static const char *
tf(int b)
{
	return b ? "true" : "false";
}

static void
health(FILE *f, const struct mts_health *h)
{
	if (!h->set)
		return;
	fprintf(f, "    healthcheck:\n      disable: %s\n", tf(h->disable));
	if (h->test.n) {
		fputs("      test: ", f);
		strv(f, &h->test);
		fputc('\n', f);
	}
	fprintf(f,
	    "      interval: \"%" PRId64 "ms\"\n      timeout: \"%" PRId64
	    "ms\"\n      start_period: \"%" PRId64 "ms\"\n"
	    "      start_interval: \"%" PRId64 "ms\"\n",
	    h->interval_ms, h->timeout_ms, h->start_period_ms,
	    h->start_interval_ms);
	if (h->retries >= 0)
		fprintf(f, "      retries: %" PRId32 "\n", h->retries);
}

static void
ports(FILE *f, const struct mts_service *s)
{
	size_t i;

	if (s->nports == 0)
		return;
	fputs("    ports:\n", f);
	for (i = 0; i < s->nports; i++) {
		const struct mts_port *p = &s->ports[i];

		fprintf(f, "      - {target: %" PRIu32, p->target);
		if (p->published)
			fprintf(f, ", published: %" PRIu32, p->published);
		fprintf(f, ", protocol: \"%s\", mode: \"%s\"", p->protocol,
		    p->mode == MTS_PORT_HOST ? "host" : "ingress");
		if (p->host_ip) {
			fputs(", host_ip: ", f);
			q(f, p->host_ip);
		}
		fputs("}\n", f);
	}
}

static void
mounts(FILE *f, const struct mts_service *s)
{
	static const char *const types[] = { "volume", "bind", "tmpfs" };
	size_t i;

	if (s->nmounts == 0)
		return;
	fputs("    volumes:\n", f);
	for (i = 0; i < s->nmounts; i++) {
		const struct mts_mount *m = &s->mounts[i];

		fprintf(f, "      - {type: \"%s\", target: ", types[m->type]);
		q(f, m->target);
		if (m->source) {
			fputs(", source: ", f);
			q(f, m->source);
		}
		fprintf(f, ", read_only: %s", tf(m->read_only));
		if (m->type == MTS_MOUNT_TMPFS)
			fprintf(f,
			    ", tmpfs: {size: \"%" PRIu64 "\", mode: %" PRIu32
			    "}",
			    m->tmpfs_size, m->tmpfs_mode);
		if (m->nocopy)
			fputs(", volume: {nocopy: true}", f);
		fputs("}\n", f);
	}
}

static void
lists(FILE *f, const struct mts_service *s)
{
	static const struct {
		const char *key;
		size_t off;
	} l[] = {
		{ "cap_add", offsetof(struct mts_service, cap_add) },
		{ "cap_drop", offsetof(struct mts_service, cap_drop) },
		{ "extra_hosts", offsetof(struct mts_service, extra_hosts) },
		{ "dns", offsetof(struct mts_service, dns) },
		{ "env_file", offsetof(struct mts_service, env_file) },
	};
	size_t i;

	for (i = 0; i < sizeof(l) / sizeof(l[0]); i++) {
		const struct mts_strv *v =
		    (const struct mts_strv *)((const char *)s + l[i].off);

		if (v->n == 0)
			continue;
		fprintf(f, "    %s: ", l[i].key);
		strv(f, v);
		fputc('\n', f);
	}
}

static void
limits(FILE *f, const char *key, const struct mts_ulimit *u, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	fprintf(f, "    %s:\n", key);
	for (i = 0; i < n; i++) {
		fputs("      ", f);
		qk(f, u[i].name);
		fprintf(f, ": {soft: %" PRId64 ", hard: %" PRId64 "}\n",
		    u[i].soft, u[i].hard);
	}
}

static void
logging(FILE *f, const struct mts_service *s)
{
	if (!s->log_driver && !s->log_max_size && !s->log_max_file)
		return;
	fputs("    logging:\n", f);
	field_str(f, "      ", "driver", s->log_driver);
	fprintf(f,
	    "      options: {max-size: \"%" PRIu64 "\", max-file: %" PRIu32
	    "}\n",
	    s->log_max_size, s->log_max_file);
}

static void
networks(FILE *f, const struct mts_service *s)
{
	size_t i;

	fputs("    networks:\n", f);
	for (i = 0; i < s->nnetworks; i++) {
		const struct mts_svc_network *n = &s->networks[i];

		fputs("      ", f);
		qk(f, n->name);
		fputs(": {aliases: ", f);
		strv(f, &n->aliases);
		if (n->ipv4_address) {
			fputs(", ipv4_address: ", f);
			q(f, n->ipv4_address);
		}
		fputs("}\n", f);
	}
}

static void
depends(FILE *f, const struct mts_service *s)
{
	size_t i;

	if (s->ndepends == 0)
		return;
	fputs("    depends_on:\n", f);
	for (i = 0; i < s->ndepends; i++) {
		const struct mts_depend *d = &s->depends[i];

		fputs("      ", f);
		qk(f, d->service);
		fprintf(f, ": {condition: \"%s\", required: %s, restart: %s}\n",
		    d->condition, tf(d->required), tf(d->restart));
	}
}

static void
resources(FILE *f, const char *key, const struct mts_resources *r)
{
	fprintf(f,
	    "        %s: {cpus: \"%" PRIu32 ".%03" PRIu32 "\", "
	    "memory: \"%" PRIu64 "\", pids: %" PRIu32 "}\n",
	    key, r->cpu_millis / 1000, r->cpu_millis % 1000, r->memory,
	    r->pids);
}

static void
update(FILE *f, const char *key, const struct mts_update *u)
{
	fprintf(f,
	    "      %s: {parallelism: %" PRIu32 ", delay: \"%" PRId64
	    "ms\", failure_action: \"%s\", monitor: \"%" PRId64 "ms\", "
	    "max_failure_ratio: %.17g, order: \"%s\"}\n",
	    key, u->parallelism, u->delay_ms, u->failure_action, u->monitor_ms,
	    u->max_failure_ratio, u->order);
}

static void
deploy(FILE *f, const struct mts_service *s)
{
	static const char *const modes[] = { "replicated", "global",
		"replicated-job", "global-job" };
	const struct mts_placement *p = &s->placement;
	size_t i;

	fprintf(f, "    deploy:\n      mode: \"%s\"\n", modes[s->mode]);
	if (s->mode == MTS_MODE_REPLICATED ||
	    s->mode == MTS_MODE_REPLICATED_JOB)
		fprintf(f, "      replicas: %" PRIu32 "\n", s->replicas);
	fputs("      labels: ", f);
	kv(f, &s->deploy_labels);
	fprintf(f, "\n      endpoint_mode: \"%s\"\n      resources:\n",
	    s->endpoint_mode);
	resources(f, "limits", &s->limits);
	resources(f, "reservations", &s->reservations);
	fprintf(f,
	    "      restart_policy: {condition: \"%s\", delay: \"%" PRId64
	    "ms\", max_attempts: %" PRIu32 ", window: \"%" PRId64 "ms\"}\n",
	    s->restart.condition, s->restart.delay_ms, s->restart.max_attempts,
	    s->restart.window_ms);
	update(f, "update_config", &s->update);
	update(f, "rollback_config", &s->rollback);
	fputs("      placement:\n        constraints: ", f);
	strv(f, &p->constraints);
	fputs("\n        preferences: [", f);
	for (i = 0; i < p->spread.n; i++) {
		fputs(i ? ", {spread: " : "{spread: ", f);
		q(f, p->spread.v[i]);
		fputc('}', f);
	}
	fprintf(f, "]\n        max_replicas_per_node: %" PRIu32 "\n",
	    p->max_replicas_per_node);
	fprintf(f,
	    "    x-mts:\n      placement: {strategy: \"%s\"}\n"
	    "      update: {canary: %" PRIu32 ", auto_promote: %s, "
	    "auto_revert: %s, healthy_deadline: \"%" PRId64 "ms\"}\n",
	    p->strategy, s->canary.count, tf(s->canary.auto_promote),
	    tf(s->canary.auto_revert),
	    s->canary.healthy_deadline_ms ? s->canary.healthy_deadline_ms
	                                  : (int64_t)300000);
}

static void
service(FILE *f, const struct mts_service *s)
{
	fputs("  ", f);
	qk(f, s->name);
	fputs(":\n", f);
	field_str(f, "    ", "image", s->image);
	if (s->has_command) {
		fputs("    command: ", f);
		strv(f, &s->command);
		fputc('\n', f);
	}
	if (s->has_entrypoint) {
		fputs("    entrypoint: ", f);
		strv(f, &s->entrypoint);
		fputc('\n', f);
	}
	fputs("    environment: ", f);
	kv(f, &s->environment);
	fputs("\n    labels: ", f);
	kv(f, &s->labels);
	fputc('\n', f);
	field_str(f, "    ", "hostname", s->hostname);
	field_str(f, "    ", "user", s->user);
	field_str(f, "    ", "working_dir", s->working_dir);
	field_str(f, "    ", "stop_signal", s->stop_signal);
	fprintf(f, "    read_only: %s\n    init: %s\n", tf(s->read_only),
	    tf(s->init));
	if (s->stop_grace_ms >= 0)
		fprintf(f, "    stop_grace_period: \"%" PRId64 "ms\"\n",
		    s->stop_grace_ms);
	health(f, &s->health);
	ports(f, s);
	mounts(f, s);
	limits(f, "ulimits", s->ulimits, s->nulimits);
	lists(f, s);
	if (s->sysctls.n) {
		fputs("    sysctls: ", f);
		kv(f, &s->sysctls);
		fputc('\n', f);
	}
	logging(f, s);
	networks(f, s);
	depends(f, s);
	deploy(f, s);
}

static void
resource(FILE *f, const char *name, const char *real, int external,
    const char *driver, const struct mts_kvlist *labels)
{
	fputs("  ", f);
	qk(f, name);
	fputs(": {name: ", f);
	q(f, real);
	fprintf(f, ", external: %s", tf(external));
	if (driver) {
		fputs(", driver: ", f);
		q(f, driver);
	}
	fputs(", labels: ", f);
	kv(f, labels);
}

int
mts_stack_print(const struct mts_stack *st, FILE *f)
{
	size_t i;

	fputs("name: ", f);
	q(f, st->name);
	/* an empty map, not a null: JSON consumers get {} */
	fputs(st->nservices ? "\nservices:\n" : "\nservices: {}\n", f);
	for (i = 0; i < st->nservices; i++)
		service(f, &st->services[i]);
	fputs("networks:\n", f);
	for (i = 0; i < st->nnetworks; i++) {
		const struct mts_stack_network *n = &st->networks[i];

		resource(f, n->name, n->real_name, n->external, n->driver,
		    &n->labels);
		fprintf(f, ", internal: %s, attachable: %s}\n", tf(n->internal),
		    tf(n->attachable));
	}
	if (st->nvolumes)
		fputs("volumes:\n", f);
	for (i = 0; i < st->nvolumes; i++) {
		resource(f, st->volumes[i].name, st->volumes[i].real_name,
		    st->volumes[i].external, st->volumes[i].driver,
		    &st->volumes[i].labels);
		fputs("}\n", f);
	}
	return ferror(f) ? -1 : 0;
}
