/* sim_run.c: what the simulator measures and checks — SWIM events and record arrivals turned into detection and convergence figures, the invariants checked every virtual second, and the report. */
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tests/sim/sim.h"
#include "xmalloc.h"

/* The first violation. During a millisecond's window a worker keeps the
 * first of the lowest node it ran (the barrier reports the lowest of
 * all): the same line whatever the threads. */
void
sim_fail(struct sim *s, const char *fmt, ...)
{
	static char why[512];
	struct sim_worker *w = sim_tls_w;
	char buf[512];
	va_list ap;

	if (s->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s->window) {
		if (w->fail_node < 0 || w->cur_node < w->fail_node) {
			w->fail_node = w->cur_node;
			memcpy(w->fail_why, buf, sizeof(buf));
		}
		return;
	}
	memcpy(why, buf, sizeof(buf));
	s->failed = why;
	printf("FAIL seed %llu at virtual time %.3f s: %s\n",
	    (unsigned long long)s->cfg.seed, (double)s->now / 1000, why);
}

void
sim_fail_flush(struct sim *s, struct sim_worker *w)
{
	sim_fail(s, "%s", w->fail_why);
}

/* The network has been whole and lossless for three suspicion timeouts
 * (a suspicion gossiped late restarts its timer where it lands): any
 * death declared now is a false one. */
static int
healthy(const struct sim *s)
{
	mts_time_t grace = (mts_time_t)(3 * 4000 * fmax(1, log10(s->n)));

	return !s->partitioned && s->cfg.loss == 0 &&
	    s->now - s->last_unhealthy > grace;
}

static struct sim_kill *
open_kill(struct sim *s, int victim)
{
	size_t i;

	for (i = s->nkills; i-- > 0;)
		if (s->kills[i].victim == victim)
			return s->kills[i].all ? NULL : &s->kills[i];
	return NULL;
}

void
sim_on_swim_event(struct sim *s, struct sim_node *obs,
    const struct mts_swim_update *u)
{
	int v = (int)mts_get_u32be(u->id);
	struct sim_node *t;
	struct sim_log kl = { SIM_LOG_KILL, { .kill = { v, obs->idx } } };

	if (v < 0 || v >= s->n || v == obs->idx)
		return;
	t = &s->node[v];
	sim_ntrace(s, obs, 10 + (int)u->state, obs->idx, v, u->inc);
	if (t->up && u->inc >= t->life_inc) {
		if (u->state == MTS_SWIM_SUSPECT)
			SIM_ST->false_suspect++;
		if (u->state == MTS_SWIM_DEAD) {
			SIM_ST->false_dead++;
			SIM_ST->false_dead_quiet += s->now >= s->quiet_at;
			if (healthy(s))
				sim_fail(s,
				    "live node %d declared dead by node "
				    "%d while the network is healthy",
				    v, obs->idx);
		}
		return;
	}
	if (t->up || u->state != MTS_SWIM_DEAD)
		return;
	sim_defer(s, &kl);
}

/* A death of a crashed node declared by an observer, once each: the
 * first and the last (all live nodes) times. Within the millisecond
 * every order gives the same times. */
void
sim_apply_klog(struct sim *s, const struct sim_log *l)
{
	const struct sim_klog *kl = &l->u.kill;
	struct sim_kill *k = open_kill(s, kl->victim);

	if (k == NULL || k->marked[kl->observer])
		return;
	k->marked[kl->observer] = 1;
	k->seen++;
	if (k->first == 0)
		k->first = s->now;
	if (k->seen >= s->nup)
		k->all = s->now;
}

void
sim_apply_wlog(struct sim *s, const struct sim_log *lg)
{
	const struct sim_wlog *l = &lg->u.write;
	struct sim_write *w = &s->writes[l->track - 1];

	if (l->by_push) {
		w->by_push++;
		return;
	}
	w->holders++;
	if (w->done == 0 && w->holders >= s->nup)
		w->done = s->now;
}

/* A tracked write reached a node (by_push: by push); logged during the
 * window. */
void
sim_note_write(struct sim *s, const struct irec *r, int by_push)
{
	struct sim_log l = { SIM_LOG_WRITE,
		{ .write = { r->track, by_push } } };

	sim_defer(s, &l);
}

void
sim_on_apply(struct sim *s, struct sim_node *n, struct irec *r)
{
	(void)n;
	if (r->track != 0)
		sim_note_write(s, r, 0);
}

/* Records an acknowledged write (its reference taken) for the checks. */
void
sim_track_write(struct sim *s, struct irec *r, int writer)
{
	struct sim_write *w;

	if (s->nwrites == s->capwrites) {
		s->capwrites = s->capwrites ? s->capwrites * 2 : 256;
		s->writes =
		    xreallocarray(s->writes, s->capwrites, sizeof(*s->writes));
	}
	w = &s->writes[s->nwrites++];
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->writer = writer;
	w->at = s->now;
	w->holders = 1;
	r->track = (uint32_t)s->nwrites;
	if (w->holders >= s->nup)
		w->done = s->now;
}

void
sim_track_kill(struct sim *s, int victim)
{
	struct sim_kill *k;

	if (s->nkills == s->capkills) {
		s->capkills = s->capkills ? s->capkills * 2 : 16;
		s->kills =
		    xreallocarray(s->kills, s->capkills, sizeof(*s->kills));
	}
	k = &s->kills[s->nkills++];
	memset(k, 0, sizeof(*k));
	k->victim = victim;
	k->at = s->now;
	k->marked = xcalloc((size_t)s->n, 1);
}

/* --- invariants ---------------------------------------------------------- */

static int
holds(const struct sim_node *n, const struct irec *w)
{
	const struct irec *r = sim_store_get(n, w->key, w->klen);

	return r && mts_record_cmp(&r->rec, &w->rec) >= 0;
}

/* Every virtual second: no acknowledged write lost (its writer's disk
 * still holds it or a newer version); the roots, for the plot. */
void
sim_check(struct sim *s)
{
	size_t i;
	int j;

	for (i = 0; i < s->nwrites; i++)
		if (!holds(&s->node[s->writes[i].writer], s->writes[i].r))
			sim_fail(s,
			    "acknowledged write %.*s lost on its writer",
			    (int)s->writes[i].r->klen, s->writes[i].r->key);
	if (s->nsec == s->capsec) {
		s->capsec = s->capsec ? s->capsec * 2 : 64;
		s->roots = xreallocarray(s->roots, s->capsec * (size_t)s->n,
		    sizeof(*s->roots));
	}
	for (j = 0; j < s->n; j++) {
		uint8_t *r = s->roots[s->nsec * (size_t)s->n + (size_t)j];

		if (s->node[j].up)
			mts_mst_root(s->node[j].mst, r);
		else
			memset(r, 0, MTS_HASH_LEN);
	}
	s->nsec++;
}

static int
first_up(const struct sim *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->node[i].up)
			return i;
	return -1;
}

/* Every up node sees every up node alive and every down node not: 0,
 * or -1 and why. */
static int
membership(const struct sim *s, char *why, size_t len)
{
	const struct mts_swim_member *m;
	size_t i;
	int a, b, alive;

	for (a = 0; a < s->n; a++) {
		if (!s->node[a].up)
			continue;
		alive = 0;
		for (i = 0; i < mts_swim_count(s->node[a].swim); i++) {
			m = mts_swim_member_at(s->node[a].swim, i);
			b = (int)mts_get_u32be(m->u.id);
			if (m->is_self)
				continue;
			if (m->u.state == MTS_SWIM_ALIVE && s->node[b].up) {
				alive++;
			} else if (m->u.state == MTS_SWIM_ALIVE) {
				snprintf(why, len,
				    "membership: node %d holds down "
				    "node %d alive",
				    a, b);
				return -1;
			} else if (s->node[b].up) {
				snprintf(why, len,
				    "membership: node %d holds live "
				    "node %d %s",
				    a, b, mts_swim_state_name(m->u.state));
				return -1;
			}
		}
		if (alive != s->nup - 1) {
			snprintf(why, len,
			    "membership: node %d knows %d of the %d "
			    "other live nodes",
			    a, alive, s->nup - 1);
			return -1;
		}
	}
	return 0;
}

int
sim_membership_converged(const struct sim *s)
{
	char why[128];

	return !s->partitioned && membership(s, why, sizeof(why)) == 0;
}

static void
check_membership(struct sim *s)
{
	char why[128];

	if (membership(s, why, sizeof(why)) < 0)
		sim_fail(s, "%s", why);
}

/* After quiet: all roots equal, every write everywhere, membership. */
void
sim_check_quiet(struct sim *s)
{
	uint8_t r0[MTS_HASH_LEN], r[MTS_HASH_LEN];
	int f = first_up(s), i;
	size_t w;

	if (f < 0)
		return;
	mts_mst_root(s->node[f].mst, r0);
	for (i = 0; i < s->n && !s->failed; i++) {
		if (!s->node[i].up)
			continue;
		mts_mst_root(s->node[i].mst, r);
		if (memcmp(r, r0, MTS_HASH_LEN) != 0)
			sim_fail(s,
			    "MST roots differ after quiet: node %d "
			    "(%zu keys) and node %d (%zu keys)",
			    f, s->node[f].nents, i, s->node[i].nents);
		for (w = 0; w < s->nwrites && !s->failed; w++)
			if (!holds(&s->node[i], s->writes[w].r))
				sim_fail(s,
				    "acknowledged write %.*s missing "
				    "on node %d after quiet",
				    (int)s->writes[w].r->klen,
				    s->writes[w].r->key, i);
	}
	check_membership(s);
}

/* --- the report ---------------------------------------------------------- */

static int
cmp_time(const void *a, const void *b)
{
	mts_time_t x = *(const mts_time_t *)a, y = *(const mts_time_t *)b;

	return x < y ? -1 : x > y;
}

static mts_time_t
pct(const mts_time_t *v, size_t n, double p)
{
	size_t i = (size_t)ceil(p * (double)n);

	if (n == 0)
		return -1;
	return v[i > 0 ? i - 1 : 0];
}

/* What push alone delivered of the tracked writes: the share of the
 * other nodes it reached (of those up at the end), and how many writes
 * it took to every one of them. */
static void
report_push(const struct sim *s)
{
	double sum = 0;
	size_t i, all = 0;

	if (s->nwrites == 0 || s->nup < 2 || s->nkills > 0)
		return; /* the share of the nodes up at the end */
	for (i = 0; i < s->nwrites; i++) {
		sum += (double)s->writes[i].by_push / (s->nup - 1);
		all += s->writes[i].by_push >= s->nup - 1;
	}
	printf("%-34s %.1f%% of the other nodes, %zu of %zu writes to "
	       "all by push alone\n",
	    "  push coverage", 100 * sum / (double)s->nwrites, all, s->nwrites);
}

static void
report_writes(const struct sim *s)
{
	mts_time_t *v = xcalloc(s->nwrites + 1, sizeof(*v));
	size_t i, k = 0;

	for (i = 0; i < s->nwrites; i++)
		if (s->writes[i].done)
			v[k++] = s->writes[i].done - s->writes[i].at;
	qsort(v, k, sizeof(*v), cmp_time);
	printf("%-34s %zu acknowledged, %zu reached every live node\n",
	    "writes", s->nwrites, k);
	report_push(s);
	if (k > 0)
		printf("%-34s p50 %lld ms  p99 %lld ms  max %lld ms\n",
		    "  convergence (write to all)", (long long)pct(v, k, .5),
		    (long long)pct(v, k, .99), (long long)v[k - 1]);
	free(v);
}

static void
report_kills(const struct sim *s)
{
	mts_time_t *f = xcalloc(s->nkills + 1, sizeof(*f));
	mts_time_t *a = xcalloc(s->nkills + 1, sizeof(*a));
	size_t i, nf = 0, na = 0;

	for (i = 0; i < s->nkills; i++) {
		if (s->kills[i].first)
			f[nf++] = s->kills[i].first - s->kills[i].at;
		if (s->kills[i].all)
			a[na++] = s->kills[i].all - s->kills[i].at;
	}
	qsort(f, nf, sizeof(*f), cmp_time);
	qsort(a, na, sizeof(*a), cmp_time);
	printf("%-34s %zu kills\n", "failure detection (dead)", s->nkills);
	if (nf > 0)
		printf("%-34s p50 %lld ms  max %lld ms\n",
		    "  to the first node", (long long)pct(f, nf, .5),
		    (long long)f[nf - 1]);
	if (na > 0)
		printf("%-34s p50 %lld ms  max %lld ms (%zu of %zu)\n",
		    "  to all live nodes", (long long)pct(a, na, .5),
		    (long long)a[na - 1], na, s->nkills);
	free(f);
	free(a);
}

/* Seconds from which every live node holds the final root; writes the
 * plot's data (second, nodes holding the final root, live nodes). */
static void
report_roots(const struct sim *s, int quiet_from, const char *plot)
{
	uint8_t fin[MTS_HASH_LEN];
	static const uint8_t zero[MTS_HASH_LEN];
	FILE *fp = plot ? fopen(plot, "w") : NULL;
	size_t t, j, conv = s->nsec;
	int f = first_up(s), hold, live;

	if (f < 0 || s->nsec == 0)
		goto out;
	memcpy(fin, s->roots[(s->nsec - 1) * (size_t)s->n + (size_t)f],
	    MTS_HASH_LEN);
	for (t = 0; t < s->nsec; t++) {
		hold = live = 0;
		for (j = 0; j < (size_t)s->n; j++) {
			const uint8_t *r = s->roots[t * (size_t)s->n + j];

			if (memcmp(r, zero, MTS_HASH_LEN) == 0)
				continue;
			live++;
			hold += memcmp(r, fin, MTS_HASH_LEN) == 0;
		}
		if (fp && s->recon)
			fprintf(fp, "%zu %d %d %u %u\n", t, hold, live,
			    s->running[t][0], s->running[t][1]);
		else if (fp)
			fprintf(fp, "%zu %d %d\n", t, hold, live);
		if (hold != live || live == 0)
			conv = s->nsec;
		else if (conv == s->nsec)
			conv = t;
	}
	if (conv < s->nsec)
		printf("%-34s from t=%zu s on (quiet from t=%d s)\n",
		    "roots equal on all live nodes", conv, quiet_from);
out:
	if (fp)
		fclose(fp);
}

static void
report_services(const struct sim *s)
{
	mts_time_t *v = xcalloc(s->nsvcs + 1, sizeof(*v)), last = 0;
	size_t i, k = 0;
	uint64_t placed = 0;

	if (s->nsvcs == 0)
		goto out;
	for (i = 0; i < s->nsvcs; i++) {
		placed += s->svcs[i].committed;
		if (s->svcs[i].done) {
			v[k++] = s->svcs[i].done - s->svcs[i].at;
			if (s->svcs[i].done > last)
				last = s->svcs[i].done;
		}
	}
	qsort(v, k, sizeof(*v), cmp_time);
	printf("%-34s %zu services, %llu replicas placed, %zu complete\n",
	    "placement", s->nsvcs, (unsigned long long)placed, k);
	if (k > 0)
		printf("%-34s p50 %lld ms  p99 %lld ms  max %lld ms\n",
		    "  time to place a service", (long long)pct(v, k, .5),
		    (long long)pct(v, k, .99), (long long)v[k - 1]);
	if (k == s->nsvcs && last > s->svcs[0].at)
		printf("%-34s %.0f replicas/s; %llu prepares, %llu refused "
		       "(races lost)\n",
		    "  throughput",
		    (double)placed * 1000 / (double)(last - s->svcs[0].at),
		    (unsigned long long)s->st.prepares,
		    (unsigned long long)s->st.refused);
out:
	free(v);
}

static void
report_bytes(const struct sim *s)
{
	double secs = (double)s->st.node_ms / 1000;
	double cls[C_MAX] = { 0 };
	int k;

	if (secs <= 0)
		return;
	for (k = 0; k < K_MAX; k++)
		cls[sim_kind_class(k)] += (double)s->st.bytes[k] / secs;
	printf("%-34s swim %.0f  push %.0f  anti-entropy %.0f  schedd %.0f\n",
	    "bytes per node per second", cls[C_SWIM], cls[C_PUSH], cls[C_AE],
	    cls[C_SCHED]);
	memset(cls, 0, sizeof(cls));
	for (k = 0; k < K_MAX; k++)
		cls[sim_kind_class(k)] += (double)s->st.piggy[k] / secs;
	printf("%-34s swim %.0f  push %.0f  anti-entropy %.0f  schedd %.0f\n",
	    "  of which member updates riding", cls[C_SWIM], cls[C_PUSH],
	    cls[C_AE], cls[C_SCHED]);
	printf("%-34s", "  by message kind");
	for (k = 0; k < K_MAX; k++)
		if (s->st.msgs[k])
			printf(" %s %.0f", sim_kind_name(k),
			    (double)s->st.bytes[k] / secs);
	printf("\n");
}

void
sim_report(const struct sim *s, const char *scenario, int quiet_from,
    double wall, size_t heap0, const char *plot)
{
	struct mallinfo2 mi = mallinfo2();
	struct rusage ru;
	size_t heap = mi.uordblks + mi.hblkhd;
	double virt = (double)s->now / 1000;
	struct sim_store_stats ss;
	size_t per, shared;

	printf("%-34s %s, %d nodes, seed %llu\n", "scenario", scenario, s->n,
	    (unsigned long long)s->cfg.seed);
	printf("%-34s %.1f s virtual in %.2f s wall (%.1f virtual s per wall "
	       "s), %llu events\n",
	    "run", virt, wall, wall > 0 ? virt / wall : 0,
	    (unsigned long long)s->st.events);
	report_writes(s);
	report_roots(s, quiet_from, plot);
	report_kills(s);
	report_services(s);
	sim_recon_report(s);
	printf("%-34s %llu suspicions, %llu deaths (%llu after quiet "
	       "began)\n",
	    "false (of live nodes)", (unsigned long long)s->st.false_suspect,
	    (unsigned long long)s->st.false_dead,
	    (unsigned long long)s->st.false_dead_quiet);
	printf("%-34s %llu dropped, %llu duplicated\n", "network",
	    (unsigned long long)s->st.dropped,
	    (unsigned long long)s->st.duplicated);
	printf("%-34s %llu applied (%llu by push, %llu by anti-entropy), "
	       "%llu ignored\n",
	    "merges", (unsigned long long)s->st.merges_applied,
	    (unsigned long long)s->st.by_push, (unsigned long long)s->st.by_ae,
	    (unsigned long long)s->st.merges_ignored);
	report_bytes(s);
	sim_store_stats(&ss);
	shared = ss.rec_bytes + ss.key_bytes + ss.enc_bytes;
	per =
	    heap > heap0 + shared ? (heap - heap0 - shared) / (size_t)s->n : 0;
	getrusage(RUSAGE_SELF, &ru);
	printf("%-34s %.1f MiB heap; per node %.1f KiB; shared %.1f MiB: "
	       "%zu records %.1f, %zu MST keys %.1f, %zu MST pages %.1f; "
	       "peak RSS %.1f MiB\n",
	    "memory", (double)heap / 1048576, (double)per / 1024,
	    (double)shared / 1048576, ss.recs, (double)ss.rec_bytes / 1048576,
	    ss.keys, (double)ss.key_bytes / 1048576, ss.encs,
	    (double)ss.enc_bytes / 1048576, (double)ru.ru_maxrss / 1024);
	printf("%-34s %.2f s user, %.2f s system\n", "cpu",
	    (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	printf("%-34s %s\n", "invariants", s->failed ? "VIOLATED" : "held");
}
