/* mts_sim.c: mts-sim, the deterministic simulator's command line and its table of scenarios (join, writes, kill, partition, chaos, reserve; deploy, repair, heal, drain with the reconciler; short and scale, the test's and the bench's sets), run second by second against the invariants. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "tests/sim/sim.h"
#include "xmalloc.h"

void sim_check(struct sim *);
void sim_check_quiet(struct sim *);
void sim_track_write(struct sim *, struct irec *, int writer);
void sim_track_kill(struct sim *, int victim);
void sim_report(const struct sim *, const char *, int quiet_from, double wall,
    size_t heap0, const char *plot);

#define JOIN_SECS 5 /* every scenario starts by joining its nodes */
#define SETTLE 15   /* and disturbs them from then on */
#ifndef PART_SECS
#define PART_SECS 2
#endif

/* --- actions ------------------------------------------------------------- */

static void
join_some(struct sim *s, int from, int to)
{
	int i;

	for (i = from; i < to && i < s->n; i++)
		if (!s->node[i].up)
			sim_node_start(s, &s->node[i], 0);
}

/* Joins the nodes over `secs` seconds, node 0 first, each knowing node 0. */
static void
join_over(struct sim *s, int sec, int secs)
{
	if (sec < secs)
		join_some(s, sec * s->n / secs, (sec + 1) * s->n / secs);
}

static int
random_up(struct sim *s)
{
	int i, k;

	if (s->nup == 0)
		return -1;
	k = sim_rand_int(s, s->nup);
	for (i = 0; i < s->n; i++)
		if (s->node[i].up && k-- == 0)
			return i;
	return -1;
}

static void
burst(struct sim *s, int k)
{
	char key[64];
	uint8_t val[64];
	struct irec *r;
	size_t j;
	int i, w;

	for (i = 0; i < k; i++) {
		if ((w = random_up(s)) < 0)
			return;
		snprintf(key, sizeof(key), "s/sim/w%zu", s->nwrites);
		for (j = 0; j < sizeof(val); j++)
			val[j] = (uint8_t)sim_rand(s);
		if (sim_node_write(s, &s->node[w], key, val, sizeof(val), &r) <
		    0) {
			sim_fail(s, "write %s refused on node %d", key, w);
			return;
		}
		sim_track_write(s, r, w);
	}
}

static void
kill_some(struct sim *s, int k)
{
	int i, v;

	for (i = 0; i < k && s->nup > 1; i++) {
		if ((v = random_up(s)) < 0)
			return;
		sim_node_crash(s, &s->node[v]);
		sim_track_kill(s, v);
	}
}

static void
restart_all(struct sim *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!s->node[i].up && s->node[i].ever_started)
			sim_node_start(s, &s->node[i], -1);
}

/* n/div, at least 1 and at most cap. */
static int
some(int n, int div, int cap)
{
	int k = n / div > 0 ? n / div : 1;

	return k < cap ? k : cap;
}

/* --- scenarios ----------------------------------------------------------- */

static void
sc_join(struct sim *s, int sec)
{
	join_over(s, sec, 10);
}

static void
sc_writes(struct sim *s, int sec)
{
	join_over(s, sec, JOIN_SECS);
	if (sec >= SETTLE && sec < SETTLE + 10)
		burst(s, some(s->n, 2, 100));
}

/* A whole cluster restarting: every node's disk holds every member
 * record, all start at once (no join pushes N records to N nodes, so
 * thousands of nodes fit the machine), then writes as in `writes`. */
#define RESTART_SETTLE 5
static void
sc_restart(struct sim *s, int sec)
{
	if (sec == 0) {
		sim_node_preload(s);
		restart_all(s);
	}
	if (sec >= RESTART_SETTLE && sec < RESTART_SETTLE + 10)
		burst(s, some(s->n, 2, 100));
}

static void
sc_kill(struct sim *s, int sec)
{
	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE)
		kill_some(s, some(s->n, 20, 50));
	if (sec >= SETTLE && sec < SETTLE + 10)
		burst(s, some(s->n, 10, 50));
	if (sec == SETTLE + 20)
		restart_all(s);
}

/* 1% of messages lost from the settle on: N/20 (at most 50) nodes crash
 * 5 s later and stay down, writes go on; the loss ends 30 s after the
 * settle. Every death declared of a live node is a false one (counted;
 * the target is none). */
static void
sc_loss(struct sim *s, int sec)
{
	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE)
		s->cfg.loss = 0.01;
	if (sec >= SETTLE && sec < SETTLE + 30)
		s->last_unhealthy = s->now;
	if (sec == SETTLE + 5)
		kill_some(s, some(s->n, 20, 50));
	if (sec >= SETTLE && sec < SETTLE + 10)
		burst(s, some(s->n, 10, 50));
	if (sec == SETTLE + 30)
		s->cfg.loss = 0;
}

/* Two halves apart for PART_SECS, writes on both sides, then the heal:
 * the sides declare each other dead (at 50 nodes and more the news of the
 * first suspicions outlives the partition) and must find each other again
 * through SWIM's pings to dead members. */
static void
sc_partition(struct sim *s, int sec)
{
	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE)
		sim_partition(s, 2);
	if (sec >= SETTLE && sec < SETTLE + PART_SECS)
		burst(s, some(s->n, 5, 100));
	if (sec == SETTLE + PART_SECS)
		sim_heal(s);
}

static void
sc_chaos(struct sim *s, int sec)
{
	static mts_time_t heal_at;
	double u;

	join_over(s, sec, JOIN_SECS);
	if (sec < SETTLE)
		return;
	if (sec < SETTLE + 30) {
		s->cfg.loss = 0.01;
		s->cfg.dup = 0.005;
		s->cfg.reorder = 0.02;
		s->last_unhealthy = s->now;
		u = sim_unif(s);
		if (u < 0.4)
			burst(s, 1 + sim_rand_int(s, some(s->n, 4, 100)));
		else if (u < 0.55)
			kill_some(s, 1 + sim_rand_int(s, some(s->n, 25, 10)));
		else if (u < 0.7)
			restart_all(s);
		else if (u < 0.8 && !s->partitioned) {
			sim_partition(s, 2 + sim_rand_int(s, 2));
			heal_at = s->now + 1000 * (2 + sim_rand_int(s, 3));
		}
		if (s->partitioned && s->now >= heal_at)
			sim_heal(s);
		return;
	}
	if (sec == SETTLE + 30) {
		s->cfg.loss = s->cfg.dup = s->cfg.reorder = 0;
		sim_heal(s);
		restart_all(s);
	}
}

/* Owners racing: N/10 services of 50 replicas (5 per node, 8 slots per
 * node), each owned by a random node placing on its own replica's view. */
static void
sc_reserve(struct sim *s, int sec)
{
	size_t i;

	s->sched = 1;
	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE) {
		s->nsvcs = (size_t)some(s->n, 10, 100000);
		s->svcs = xcalloc(s->nsvcs, sizeof(*s->svcs));
		for (i = 0; i < s->nsvcs; i++) {
			s->svcs[i].owner = random_up(s);
			s->svcs[i].desired = 50;
			s->svcs[i].at = s->now;
		}
	}
	if (sec >= SETTLE)
		sim_sched_owners(s);
}

/* --- reconciliation: owners by rendezvous hashing racing ---------------- */

#define RECON_REPLICAS 50 /* N/5 services of 50: 10 tasks per node, of 16 */

static void
deploy(struct sim *s)
{
	sim_recon_deploy(s, (size_t)some(s->n, 5, 100000), RECON_REPLICAS);
	sim_recon_mark(s, "  deploy to exact count");
}

static void
sc_deploy(struct sim *s, int sec)
{
	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE)
		deploy(s);
}

static void
sc_repair(struct sim *s, int sec)
{
	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE)
		deploy(s);
	if (sec == SETTLE + 15) {
		kill_some(s, some(s->n, 20, 50));
		sim_recon_mark(s, "  kill to repaired (exact count)");
	}
}

static void
sc_heal(struct sim *s, int sec)
{
	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE)
		deploy(s);
	if (sec == SETTLE + 15)
		sim_partition(s, 2);
	if (sec == SETTLE + 30) {
		sim_heal(s);
		sim_recon_mark(s, "  heal to exact count");
	}
}

static void
sc_drain(struct sim *s, int sec)
{
	int i, k;

	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE)
		deploy(s);
	if (sec == SETTLE + 15) {
		for (i = 0, k = some(s->n, 50, 20); i < k; i++)
			sim_recon_drain(s, i + 1);
		sim_recon_mark(s, "  drain to exact count");
	}
}

static void
sc_update(struct sim *s, int sec)
{
	join_over(s, sec, JOIN_SECS);
	if (sec == SETTLE)
		deploy(s);
	if (sec == SETTLE + 15) {
		sim_recon_update(s);
		sim_recon_mark(s, "  update to all on the new version");
	}
}

/* make test's short set: join in 3 s, deploy at 4 s, kills at 10 s
 * (repaired 24 s later at 100 nodes, seed 1: SWIM's detection), a 10 s
 * partition from 36 s (each side declares the other dead and places on
 * its own), heal, quiet: 60 virtual seconds. */
static void
sc_short(struct sim *s, int sec)
{
	join_over(s, sec, 3);
	if (sec == 4)
		deploy(s);
	if (sec == 10) {
		kill_some(s, some(s->n, 20, 50));
		sim_recon_mark(s, "  kill to repaired (exact count)");
	}
	if (sec == 36)
		sim_partition(s, 2);
	if (sec == 46) {
		sim_heal(s);
		sim_recon_mark(s, "  heal to exact count");
	}
}

/* The bench's: join over 10 s, deploy at 15, 50 kills at 35 (detection
 * to all takes up to 26 s at 200 nodes), a 50/50 partition from 75 to 90,
 * quiet until 130. */
static void
sc_scale(struct sim *s, int sec)
{
	join_over(s, sec, 10);
	if (sec == SETTLE)
		deploy(s);
	if (sec == 35) {
		kill_some(s, some(s->n, 20, 50));
		sim_recon_mark(s, "  kill to repaired (exact count)");
	}
	if (sec == 75)
		sim_partition(s, 2);
	if (sec == 90) {
		sim_heal(s);
		sim_recon_mark(s, "  heal to exact count");
	}
}

static const struct scenario {
	const char *name;
	void (*step)(struct sim *, int sec);
	int quiet_from, duration; /* virtual seconds */
	const char *help;
} scenarios[] = {
	{ "join", sc_join, 10, 30,
	    "N nodes join over 10 s, each knowing only node 0" },
	{ "restart", sc_restart, RESTART_SETTLE + 10, RESTART_SETTLE + 20,
	    "every node restarts at once from a disk holding every member "
	    "record; 10 bursts of min(N/2, 100) writes from t=5 s" },
	{ "writes", sc_writes, SETTLE + 10, SETTLE + 25,
	    "10 bursts of N/2 (at most 100) writes from random nodes, one a second" },
	{ "kill", sc_kill, SETTLE + 20, SETTLE + 40,
	    "N/20 (at most 50) nodes crash, writes go on, they restart 20 s later" },
	{ "loss", sc_loss, SETTLE + 30, SETTLE + 45,
	    "1% of messages lost for 30 s; N/20 (at most 50) nodes crash "
	    "and stay down; false deaths counted" },
	{ "partition", sc_partition, SETTLE + 4, SETTLE + 25,
	    "two random halves apart for 2 s with writes on both, then heal" },
	{ "chaos", sc_chaos, SETTLE + 30, SETTLE + 60,
	    "30 s of a seeded mix: bursts, crashes, restarts, partitions, "
	    "1% loss, duplicates, reordering" },
	{ "reserve", sc_reserve, SETTLE + 15, SETTLE + 30,
	    "N/10 services of 50 replicas placed by racing owners (schedd's "
	    "ledger and placement cores)" },
	{ "deploy", sc_deploy, SETTLE + 20, SETTLE + 30,
	    "N/5 services of 50 replicas: every node reconciles what it owns "
	    "(recon_core), places (place_core), reserves (ledger_core)" },
	{ "repair", sc_repair, SETTLE + 35, SETTLE + 45,
	    "deploy, then N/20 (at most 50) nodes crash: owners replace "
	    "their tasks" },
	{ "heal", sc_heal, SETTLE + 50, SETTLE + 60,
	    "deploy, then two halves apart for 15 s (each places on its "
	    "side), heal: extras stopped to the exact count" },
	{ "update", sc_update, SETTLE + 45, SETTLE + 55,
	    "deploy, then a new version of every service: the owners roll "
	    "it out 10 tasks at a time, stop-first (update_core)" },
	{ "drain", sc_drain, SETTLE + 35, SETTLE + 45,
	    "deploy, then N/50 (at least 1) nodes drain: their tasks move" },
	{ "short", sc_short, 50, 60,
	    "make test's set: deploy, N/20 kills, a 10 s partition, heal" },
	{ "scale", sc_scale, 120, 130,
	    "the bench's: join, deploy, N/20 (at most 50) kills, a 50/50 "
	    "partition for 15 s, heal, quiet" },
};

/* --- the run ------------------------------------------------------------- */

static double
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --progress: a line on stderr every 10 virtual seconds, with the bytes
 * per node per second of uptime so far (a long run's figures before it
 * ends). */
static void
progress(const struct sim *s, int sec, double t0)
{
	struct mallinfo2 mi = mallinfo2();
	double secs = (double)s->st.node_ms / 1000, cls[C_MAX] = { 0 };
	int k;

	for (k = 0; k < K_MAX && secs > 0; k++)
		cls[sim_kind_class(k)] += (double)s->st.bytes[k] / secs;
	fprintf(stderr,
	    "mts-sim: t=%d s, %.1f s wall, %llu events, %d up, heap %.0f "
	    "MiB; B/s a node: swim %.0f (gossip %.0f), push %.0f, "
	    "anti-entropy %.0f\n",
	    sec, wall_now() - t0, (unsigned long long)s->st.events, s->nup,
	    (double)(mi.uordblks + mi.hblkhd) / 1048576, cls[C_SWIM],
	    secs > 0 ? (double)s->st.bytes[K_GOSSIP] / secs : 0, cls[C_PUSH],
	    cls[C_AE]);
}

static int
run(struct sim *s, const struct scenario *sc, const char *plot)
{
	uint8_t h[MTS_HASH_LEN];
	char hex[2 * MTS_HASH_LEN + 1];
	struct mallinfo2 mi0 = mallinfo2();
	size_t heap0 = mi0.uordblks + mi0.hblkhd;
	double t0 = wall_now();
	int sec, i;

	s->quiet_at = (mts_time_t)sc->quiet_from * 1000;
	s->node = xcalloc((size_t)s->n, sizeof(*s->node));
	for (i = 0; i < s->n; i++)
		sim_node_init(s, &s->node[i], i);
	for (sec = 0; sec <= sc->duration && !s->failed; sec++) {
		sim_run_until(s, (mts_time_t)sec * 1000);
		s->now = (mts_time_t)sec * 1000;
		if (sec > 0)
			s->st.node_ms += (uint64_t)s->nup * 1000;
		if (sec < sc->duration)
			sc->step(s, sec);
		sim_check(s);
		sim_sched_check(s);
		sim_recon_check(s);
		if (s->cfg.verbose && sec % 10 == 0) {
			sim_stats_fold(s);
			progress(s, sec, t0);
		}
	}
	if (!s->failed)
		sim_check_quiet(s);
	if (!s->failed && !s->recon)
		sim_sched_check_quiet(s);
	if (!s->failed)
		sim_recon_check_quiet(s);
	sim_stats_fold(s);
	for (i = 0; s->cfg.verbose && i < s->threads; i++)
		fprintf(stderr, "mts-sim: worker %d ran %llu events\n", i,
		    (unsigned long long)s->w[i].ran);
	sim_report(s, sc->name, sc->quiet_from, wall_now() - t0, heap0, plot);
	sim_trace_final(s, h);
	mts_hex(hex, h, MTS_HASH_LEN);
	printf("trace %s\n", hex);
	return s->failed ? 1 : 0;
}

static void
sim_free(struct sim *s)
{
	size_t i;
	int j;

	sim_workers_stop(s);
	sim_queue_free(s);
	for (i = 0; i < s->nwrites; i++)
		sim_iunref(s->writes[i].r);
	for (i = 0; i < s->nkills; i++)
		free(s->kills[i].marked);
	for (j = 0; j < s->n; j++)
		sim_node_free(&s->node[j]);
	free(s->node);
	free(s->writes);
	free(s->kills);
	free(s->roots);
	free(s->svcs);
	free(s->rsvcs);
	free(s->running);
	free(s->wcache);
	free(s->whave);
	free(s->w);
	sim_recon_thread_free();
}

#define USAGE \
	"usage: mts-sim [--nodes N] [--seed S] [--plot FILE]" \
	"\n       [--dead-probe MS] [--gossip-interval MS] [--fanout F]" \
	"\n       [--ae-interval MS] [--threads T] [--progress] " \
	"--scenario NAME\n"

/* A bad argument: what and where, the usage line, exit status 2 (the full
 * help goes to stdout on --help only). */
static int bad_arg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
bad_arg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mts-sim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr,
	    "\n" USAGE "mts-sim --help lists the scenarios and "
	    "what each option does.\n");
	return 2;
}

/* opt's argument as a whole decimal (or 0x) number in [min, max]. */
static int
num_arg(const char *opt, const char *arg, long long min, long long max,
    long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(arg, &end, 0);
	if (errno != 0 || end == arg || *end != '\0' || *out < min ||
	    *out > max) {
		fprintf(stderr,
		    "mts-sim: %s: '%s' is not a number from %lld "
		    "to %lld\n" USAGE,
		    opt, arg, min, max);
		return -1;
	}
	return 0;
}

static void
usage(FILE *fp)
{
	size_t i;

	fprintf(fp,
	    USAGE
	    "Runs N simulated nodes (gossipd's SWIM, delta-push and "
	    "anti-entropy cores, the\nstatestore's verdict and MST) on "
	    "a virtual clock and network; prints the\nmeasurements, "
	    "then `trace <hash>` of the whole run (same seed, same "
	    "hash).\n--plot FILE writes per second: time, nodes holding "
	    "the final root, live nodes.\n--dead-probe MS sets SWIM's "
	    "dead_probe_interval (0: dead members are\nnever pinged, as "
	    "before gossipd healed partitions).\n--gossip-interval MS sets "
	    "SWIM's gossip_interval (0: updates only ride on\nprobes and "
	    "news, and nothing talks to a suspect, as before).\n"
	    "--fanout F sets gossipd's fanout (0, the default: ceil(ln N) - 1; "
	    "3: as before).\n--ae-interval MS sets gossipd's ae_interval "
	    "(1000;\n2000 as before).\n"
	    "--threads T runs the nodes' events on T threads (1; the same "
	    "trace whatever T:\none millisecond at a time, nothing reaching "
	    "another node within it).\n"
	    "--progress prints a line on stderr every 10 virtual seconds, "
	    "and at the end the\nevents each thread ran.\n"
	    "Scenarios:\n");
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		fprintf(fp, "  %-10s %s (%d s)\n", scenarios[i].name,
		    scenarios[i].help, scenarios[i].duration);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "scenario", required_argument, NULL, 'c' },
		{ "plot", required_argument, NULL, 'p' },
		{ "dead-probe", required_argument, NULL, 'd' },
		{ "gossip-interval", required_argument, NULL, 'g' },
		{ "fanout", required_argument, NULL, 'f' },
		{ "ae-interval", required_argument, NULL, 'a' },
		{ "progress", no_argument, NULL, 'v' },
		{ "threads", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sim s;
	const struct scenario *sc = NULL;
	const char *name = NULL, *plot = NULL;
	size_t i;
	int c, rc, fanout = 0;
	mts_time_t ae = 1000;
	long long v;
	char *end;

	memset(&s, 0, sizeof(s));
	s.n = 50;
	s.cfg.seed = 1;
	s.threads = 1;
	s.cfg.dead_probe = -1;
	s.cfg.gossip_interval = -1;
	while ((c = getopt_long(argc, argv, "n:s:c:p:d:g:f:a:t:vh", opts,
	            NULL)) != -1) {
		switch (c) {
		case 'n':
			if (num_arg("--nodes", optarg, 2, 100000, &v) < 0)
				return 2;
			s.n = (int)v;
			break;
		case 's':
			errno = 0;
			s.cfg.seed = strtoull(optarg, &end, 0);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    optarg[0] == '-')
				return bad_arg("--seed: '%s' is not a number from 0 "
				               "to 2^64 - 1",
				    optarg);
			break;
		case 'c':
			name = optarg;
			break;
		case 'p':
			plot = optarg;
			break;
		case 'd':
			if (num_arg("--dead-probe", optarg, 0, 3600000, &v) < 0)
				return 2;
			s.cfg.dead_probe = v;
			break;
		case 'g':
			if (num_arg("--gossip-interval", optarg, 0, 3600000,
			        &v) < 0)
				return 2;
			s.cfg.gossip_interval = v;
			break;
		case 'f':
			if (num_arg("--fanout", optarg, 0, 16, &v) < 0)
				return 2;
			fanout = (int)v;
			break;
		case 'a':
			if (num_arg("--ae-interval", optarg, 1, 3600000, &v) <
			    0)
				return 2;
			ae = v;
			break;
		case 'v':
			s.cfg.verbose = 1;
			break;
		case 't':
			if (num_arg("--threads", optarg, 1, 64, &v) < 0)
				return 2;
			s.threads = (int)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default: /* getopt has said which option */
			fprintf(stderr,
			    USAGE "mts-sim --help lists the scenarios "
			          "and what each option does.\n");
			return 2;
		}
	}
	if (optind < argc)
		return bad_arg("unexpected argument '%s': mts-sim takes "
		               "options only",
		    argv[optind]);
	if (name == NULL)
		return bad_arg("--scenario NAME is required");
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (strcmp(scenarios[i].name, name) == 0)
			sc = &scenarios[i];
	if (sc == NULL)
		return bad_arg("--scenario: no scenario '%s'", name);
	setvbuf(stdout, NULL, _IOLBF, 0);
	log_init("mts-sim", 0);
	if (mts_crypto_init() < 0)
		fatalx("libsodium");
	sim_intern_init();
	s.cfg.nodes = s.n;
	s.cfg.lat_base = 1; /* at least 1: sim_at's window depends on it */
	s.cfg.lat_mean = 2;
	s.cfg.lat_max = 100;
	s.cfg.bw_bytes = 125000000; /* 1 Gbit/s */
	s.cfg.fanout = fanout;
	s.cfg.ae_interval = ae;
	s.rng = s.cfg.seed * 0x9e3779b97f4a7c15ull + 1;
	s.last_unhealthy = -1000000;
	mts_hash_init(&s.trace);
	printf("seed %llu\n", (unsigned long long)s.cfg.seed);
	sim_workers_start(&s);
	rc = run(&s, sc, plot);
	sim_free(&s);
	return rc;
}
