/* statestore.c: mts-statestore main — start-up (identity, MST rebuild, ACLs, sockets) and the loop; the node's replica of the cluster state. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acl.h"
#include "agent.h"
#include "cfg.h"
#include "fsutil.h"
#include "hash.h"
#include "hlc.h"
#include "ipc.h"
#include "log.h"
#include "loop.h"
#include "mst_core.h"
#include "mtstime.h"
#include "record.h"
#include "statestore.h"
#include "store.h"
#include "committer.h"
#include "round.h"

static const char meta_node_id[] = "node_id";

/* --- start-up ---------------------------------------------------------------- */

/* The node id: MTS_NODE_ID (32 hex digits, bound to the node's static key;
 * see docs/agents.md), else the one stored, else a random one (a
 * standalone statestore). */
static void
load_identity(struct statestore *ss)
{
	const char *env = getenv("MTS_NODE_ID");
	struct mts_store_batch *b;
	uint8_t *v = NULL;
	size_t vlen;
	char err[256];
	int stored;

	stored =
	    mts_store_get(ss->db, MTS_CF_META, meta_node_id,
	        sizeof(meta_node_id) - 1, &v, &vlen, err, sizeof(err)) == 0 &&
	    vlen == MTS_NODE_ID_LEN;
	if (env != NULL && *env != '\0') {
		if (mts_unhex(ss->node, MTS_NODE_ID_LEN, env, strlen(env)) < 0)
			fatalx("MTS_NODE_ID must be %d hex digits, got '%s'",
			    MTS_NODE_HEX_LEN, env);
	} else if (stored) {
		memcpy(ss->node, v, MTS_NODE_ID_LEN);
	} else {
		randombytes_buf(ss->node, MTS_NODE_ID_LEN);
	}
	if (!stored || memcmp(v, ss->node, MTS_NODE_ID_LEN) != 0) {
		b = mts_store_batch_new(ss->db);
		mts_store_batch_put(b, MTS_CF_META, meta_node_id,
		    sizeof(meta_node_id) - 1, ss->node, MTS_NODE_ID_LEN);
		if (mts_store_commit(ss->db, b, err, sizeof(err)) < 0)
			fatalx("store node id: %s", err);
		mts_store_batch_free(b);
	}
	free(v);
	mts_hex(ss->node_hex, ss->node, MTS_NODE_ID_LEN);
	v = NULL;
	if (mts_store_get(ss->db, MTS_CF_META, SS_META_HLC,
	        sizeof(SS_META_HLC) - 1, &v, &vlen, err, sizeof(err)) == 0 &&
	    vlen == 8)
		mts_hlc_observe(&ss->hlc, mts_get_u64be(v));
	free(v);
}

/* Rebuilds the in-memory MST from the records column family. */
static void
rebuild(struct statestore *ss)
{
	struct mts_store_iter *it;
	struct mts_record rec;
	uint8_t rh[MTS_HASH_LEN];
	size_t bad = 0;
	int64_t t0 = mts_now_us();

	it = mts_store_iter_new(ss->db, MTS_CF_RECORDS, NULL, 0);
	for (; mts_store_iter_valid(it); mts_store_iter_next(it)) {
		size_t klen, vlen;
		const uint8_t *k = mts_store_iter_key(it, &klen);
		const uint8_t *v = mts_store_iter_val(it, &vlen);

		if (mts_record_decode(v, vlen, &rec) < 0) {
			bad++;
			continue;
		}
		mts_blake2b256(rh, v, vlen);
		mts_mst_put(ss->mst, k, klen, rh);
		mts_hlc_observe(&ss->hlc, rec.hlc);
		if (!rec.tombstone)
			ss->live++;
	}
	mts_store_iter_free(it);
	ss->nfrontiers = ss_frontier_count(ss);
	mts_mst_root(ss->mst, rh);
	if (bad)
		log_warnx("%zu stored records are corrupt and were skipped",
		    bad);
	log_info("loaded %zu records (%llu live) in %lld ms",
	    mts_mst_count(ss->mst), (unsigned long long)ss->live,
	    (long long)(mts_now_us() - t0) / 1000);
}

/* Resolves the access table; an unknown user stops the agent (a typo must
 * not silently lock an agent out). */
static void
load_acls(struct statestore *ss)
{
	char err[512];

	if (mts_acl_table_load(&ss->acl, ss_service.acl, ss->cfg, "statestore",
	        err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		exit(MTS_EXIT_USAGE);
	}
}

/* Opens the database and rebuilds the MST: everything that needs the file
 * system beyond the sockets, done before the seccomp filter goes on. */
static void
open_store(struct statestore *ss, const char *statedir)
{
	struct mts_store_opts o = {
		.sync = mts_cfg_bool(ss->cfg, "statestore", "sync"),
		.cache_bytes = 8u << 20,
		.write_buffer = 8u << 20,
	};
	char path[PATH_MAX], err[512];

	if (mts_mkdir_p(statedir, 0750, 0750) < 0)
		fatal("%s", statedir);
	if (mts_path_join(path, sizeof(path), statedir, "statestore") < 0)
		fatalx("state directory path too long");
	if ((ss->db = mts_store_open(path, &o, err, sizeof(err))) == NULL)
		fatalx("open %s: %s", path, err);
	round_init(ss->open, ss->db);
	round_init(ss->syncing, ss->db);
	round_init(ss->spare, ss->db);
	ss->committer = committer_start(ss->db);
	load_identity(ss);
	rebuild(ss);
}

static void
open_sockets(struct statestore *ss, const char *rundir)
{
	char path[PATH_MAX], err[512];

	if (mts_mkdir_p(rundir, 0750, 0750) < 0)
		fatal("%s", rundir);
	if (mts_ipc_sock_path(path, sizeof(path), rundir, "statestore", NULL) <
	    0)
		fatalx("run directory path too long");
	if ((ss->srv = mts_ipc_server_open(path, &ss_service, ss, err,
	         sizeof(err))) == NULL)
		fatalx("%s", err);
	mts_ipc_server_set_acl(ss->srv, &ss->acl);
	if (mts_ipc_sock_path(path, sizeof(path), rundir, "statestore",
	        "statestore.pub") < 0)
		fatalx("run directory path too long");
	if ((ss->pub = mts_pub_open(path, err, sizeof(err))) == NULL)
		fatalx("%s", err);
}

/* -r and -s override the directories init (or the config) gives. */
struct dirs {
	const char *rundir, *statedir;
};

static int
dir_opt(void *arg, int opt, const char *val)
{
	struct dirs *d = arg;

	if (opt == 'r')
		d->rundir = val;
	else if (opt == 's')
		d->statedir = val;
	else
		return -1;
	return 0;
}

/* SIGTERM/SIGINT: stop taking requests; the loop ends once the rounds
 * already accepted are durable and answered (after_turn). */
static void
on_stop_signal(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	struct statestore *ss = arg;

	log_info("signal %u: shutting down", si->ssi_signo);
	ss->stop = 1;
	mts_loop_remove_server(ss->loop, ss->srv);
}

/* The commit thread is done with the syncing round. */
static void
on_commit(void *arg, int fd, uint32_t events, mts_time_t now)
{
	ss_round_finish(arg);
}

static void
on_prune(void *arg, mts_time_t now)
{
	struct statestore *ss = arg;

	ss->prune_due = 1;
}

/* After every turn: the open round goes to the disk if the commit thread
 * is idle; a due prune runs only when no write is pending (it reads and
 * deletes outside the rounds, so it cannot undo one); a stop ends the
 * loop once nothing is pending. */
static void
after_turn(void *arg, mts_time_t now)
{
	struct statestore *ss = arg;
	int idle;

	ss_round_submit(ss);
	idle = ss->open->n == 0 && !committer_busy(ss->committer);
	if (!idle)
		return;
	if (ss->stop) {
		mts_loop_stop(ss->loop);
		return;
	}
	if (ss->prune_due) {
		ss->prune_due = 0;
		ss_prune(ss);
		mts_timer_arm(ss->loop, &ss->prune_timer,
		    now + ss->prune_interval_ms);
	}
}

/* The loop and its signals, set up before the sandbox goes on. */
static void
setup_loop(struct statestore *ss)
{
	if ((ss->loop = mts_loop_new()) == NULL)
		fatalx("cannot create the event loop");
	/* the usual set (SIGHUP ignored), then a graceful stop instead of
	 * an immediate one */
	if (mts_loop_stop_on_signals(ss->loop) < 0 ||
	    mts_loop_signal(ss->loop, SIGTERM, on_stop_signal, ss) < 0 ||
	    mts_loop_signal(ss->loop, SIGINT, on_stop_signal, ss) < 0)
		fatalx("cannot take signals through the loop");
	if (mts_loop_on_turn(ss->loop, after_turn, ss) < 0)
		fatalx("cannot hook the event loop");
	mts_timer_init(&ss->prune_timer, "prune", on_prune, ss);
}

/* Serves the sockets and the commit thread on the loop, then runs it. */
static void
run(struct statestore *ss)
{
	if (mts_loop_watch(ss->loop, committer_fd(ss->committer), MTS_LOOP_IN,
	        "commit", on_commit, ss) == NULL ||
	    mts_loop_add_server(ss->loop, ss->srv) < 0 ||
	    mts_loop_add_pub(ss->loop, ss->pub) < 0)
		fatalx("cannot serve on the event loop");
	mts_timer_arm(ss->loop, &ss->prune_timer,
	    mts_now() + ss->prune_interval_ms);
	if (mts_loop_run(ss->loop) < 0)
		fatalx("event loop failed");
	mts_loop_remove_server(ss->loop, ss->srv);
	mts_loop_remove_pub(ss->loop, ss->pub);
}

int
main(int argc, char **argv)
{
	struct statestore ss;
	struct round rounds[3];
	struct mts_agent agent;
	struct dirs dirs = { NULL, NULL };

	memset(&ss, 0, sizeof(ss));
	memset(rounds, 0, sizeof(rounds));
	ss.open = &rounds[0];
	ss.syncing = &rounds[1];
	ss.spare = &rounds[2];
	mts_agent_init(&agent, "statestore", argc, argv, "r:s:", dir_opt,
	    &dirs);
	if (agent.argc != 0) {
		log_warnx("unexpected argument '%s'", agent.argv[0]);
		return MTS_EXIT_USAGE;
	}
	ss.cfg = agent.cfg;
	if (mts_crypto_init() < 0)
		fatalx("libsodium failed to initialize");
	load_acls(&ss);
	ss.retention_ms =
	    mts_cfg_int(ss.cfg, "statestore", "tombstone_retention");
	ss.prune_interval_ms =
	    mts_cfg_int(ss.cfg, "statestore", "prune_interval");
	ss.mst = mts_mst_new();
	setup_loop(&ss);
	open_store(&ss, dirs.statedir ? dirs.statedir : agent.statedir);
	/* The filter covers RocksDB's threads (TSYNC) and every nng thread
	 * started after it. */
	if (mts_agent_sandbox(&agent) < 0)
		return MTS_EXIT_FAILURE;
	open_sockets(&ss, dirs.rundir ? dirs.rundir : agent.rundir);
	log_info("node %s serving", ss.node_hex);
	mts_agent_ready(&agent);
	run(&ss);
	log_info("stopped: %llu writes in %llu synced rounds",
	    (unsigned long long)ss.writes, (unsigned long long)ss.commits);
	mts_ipc_server_close(ss.srv);
	mts_pub_close(ss.pub);
	committer_stop(ss.committer);
	mts_loop_free(ss.loop);
	round_free(&rounds[0]);
	round_free(&rounds[1]);
	round_free(&rounds[2]);
	mts_store_close(ss.db);
	mts_mst_free(ss.mst);
	mts_acl_table_free(&ss.acl);
	mts_agent_free(&agent);
	return MTS_EXIT_OK;
}
