/* schedd.c: mts-schedd's main — the config and capacity, the ledger rebuilt from the node's own t/ records and its availability from n/<self> before the socket opens, the loop with its expiry, digest, n/ and rescan timers, the sandbox, readiness. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gossipd.pb-c.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "schedd.h"

#define STORE_TIMEOUT_MS 5000
#define START_TRIES 10 /* the first scan, STORE_TIMEOUT_MS each */
#define GOSSIP_TIMEOUT_MS 2000

static void
on_expire(void *arg, mts_time_t now)
{
	struct schedd *s = arg;

	if (mts_ledger_expire(&s->ledger, now) > 0)
		log_debug("leases expired");
	schedd_changed(s);
}

/* Members that became alive: d/<self> once more, soon, so that they get
 * it as a delta now (one write for a burst of joins). */
static void
on_member_feed(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct schedd *s = arg;
	ProtobufCMessage *body;
	int n, peer = 0;

	for (n = 0; n < 1024; n++) {
		const Mts__Gossipd__Event *ev;
		int rc = mts_sub_recv(s->msub, &mts__gossipd__event__descriptor,
		    &body, NNG_FLAG_NONBLOCK);

		if (rc == -MTS_ERR_INVAL)
			continue;
		if (rc < 0 || body == NULL)
			break;
		ev = (const Mts__Gossipd__Event *)body;
		peer |= ev->node.len != sizeof(s->self_id) ||
		    memcmp(ev->node.data, s->self_id, sizeof(s->self_id)) != 0;
		protobuf_c_message_free_unpacked(body, NULL);
	}
	if (peer && !s->rejoin_timer.armed)
		mts_timer_arm(s->loop, &s->rejoin_timer,
		    now + SCHEDD_REJOIN_MS);
}

static void
on_rejoin(void *arg, mts_time_t now)
{
	struct schedd *s = arg;

	(void)now;
	log_info("a member joined: d/%s written again", s->self);
	s->have_written = 0;
	schedd_changed(s);
}

/* gossipd.pub, "alive" events only. */
static int
member_feed(struct schedd *s, const char *rundir)
{
	char path[512], err[256];
	int fd;

	if (mts_ipc_sock_path(path, sizeof(path), rundir, "gossipd",
	        "gossipd.pub") < 0 ||
	    mts_sub_open(path, "alive", 5, &s->msub, err, sizeof(err)) < 0) {
		log_warnx("gossipd.pub: %s", err);
		return -1;
	}
	s->msub_open = 1;
	if (mts_ipc_recv_fd(s->msub, &fd) < 0 ||
	    (s->msub_w = mts_loop_watch(s->loop, fd, MTS_LOOP_IN, "gossipd.pub",
	         on_member_feed, s)) == NULL)
		return -1;
	return 0;
}

void
schedd_changed(struct schedd *s)
{
	mts_time_t due = s->digest_last + SCHEDD_DIGEST_MIN_MS;
	mts_time_t next = mts_ledger_next_deadline(&s->ledger);
	mts_time_t now = mts_now();

	if (next != MTS_TIME_NEVER)
		mts_timer_arm(s->loop, &s->expire_timer, next);
	else
		mts_timer_disarm(s->loop, &s->expire_timer);
	if (!s->digest_timer.armed)
		mts_timer_arm(s->loop, &s->digest_timer, due > now ? due : now);
}

/* The config (capacity, acl), the node id, the loop and its timers. */
static int
setup(struct schedd *s, struct mts_agent *a)
{
	char err[512];
	const char *id = a->node_id;

	if (id == NULL || strlen(id) != MTS_NODE_HEX_LEN ||
	    mts_unhex(s->self_id, sizeof(s->self_id), id, MTS_NODE_HEX_LEN) <
	        0) {
		log_warnx("no node id (MTS_NODE_ID): mts-schedd runs under "
		          "mts-init");
		return -1;
	}
	mts_hex(s->self, s->self_id, sizeof(s->self_id));
	s->agent = a;
	schedd_node_platform(s);
	if (schedd_conf_load(&s->cfg, a->cfg) < 0)
		return -1;
	if (mts_acl_table_load(&s->cfg.acl, schedd_service.acl, a->cfg,
	        SCHEDD_SECTION, err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	mts_ledger_init(&s->ledger, s->cfg.capacity, 0);
	s->jfd = -1;
	mts_buf_init(&s->jbuf);
	if ((s->loop = mts_loop_new()) == NULL ||
	    mts_loop_stop_on_signals(s->loop) < 0 ||
	    mts_loop_on_turn(s->loop, schedd_save_turn, s) < 0)
		return -1;
	mts_timer_init(&s->expire_timer, "expire", on_expire, s);
	mts_timer_init(&s->digest_timer, "digest", schedd_on_digest, s);
	mts_timer_init(&s->scan_timer, "scan", schedd_on_scan, s);
	mts_timer_init(&s->nodeinfo_timer, "nodeinfo", schedd_on_nodeinfo, s);
	mts_timer_init(&s->rejoin_timer, "rejoin", on_rejoin, s);
	return 0;
}

/* The availability n/<self> holds, before any prepare is answered. */
static int
restore_blocking(struct schedd *s, const char *path)
{
	struct mts_ipc_client *c;
	char err[256];
	int rc;

	if ((c = mts_ipc_client_open(path, STORE_TIMEOUT_MS, err,
	         sizeof(err))) == NULL) {
		log_warnx("statestore: %s", err);
		return -1;
	}
	rc = schedd_node_restore(s, c);
	mts_ipc_client_close(c);
	return rc;
}

/* After the sandbox: the ledger from t/<self>/, then the socket. */
static int
serve(struct schedd *s, struct mts_agent *a)
{
	char path[512], err[256];
	int i;

	if (mts_ipc_sock_path(path, sizeof(path), a->rundir, "statestore",
	        NULL) < 0 ||
	    schedd_save_load(s) < 0)
		return -1;
	for (i = 0; schedd_scan_blocking(s, path, STORE_TIMEOUT_MS) < 0 ||
	     restore_blocking(s, path) < 0;
	     i++)
		if (i + 1 == START_TRIES || mts_loop_stopped(s->loop))
			return -1;
	if ((s->store = mts_ipc_async_open(s->loop, path, STORE_TIMEOUT_MS, err,
	         sizeof(err))) == NULL) {
		log_warnx("statestore: %s", err);
		return -1;
	}
	if (mts_ipc_sock_path(path, sizeof(path), a->rundir, "gossipd", NULL) <
	        0 ||
	    (s->gossip = mts_ipc_async_open(s->loop, path, GOSSIP_TIMEOUT_MS,
	         err, sizeof(err))) == NULL) {
		log_warnx("gossipd: %s", err);
		return -1;
	}
	if (member_feed(s, a->rundir) < 0)
		return -1;
	if (mts_ipc_sock_path(path, sizeof(path), a->rundir, a->name, NULL) <
	    0) {
		log_warnx("socket path too long");
		return -1;
	}
	if ((s->srv = mts_ipc_server_open(path, &schedd_service, s, err,
	         sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	mts_ipc_server_set_acl(s->srv, &s->cfg.acl);
	if (mts_loop_add_server(s->loop, s->srv) < 0)
		return -1;
	log_info("ready on %s: %u millicores, %llu bytes (reserve %u, %llu), "
	         "%zu tasks found, availability %s",
	    path, s->cfg.capacity.cpu_millis,
	    (unsigned long long)s->cfg.capacity.memory,
	    s->cfg.reserve.cpu_millis,
	    (unsigned long long)s->cfg.reserve.memory, s->ledger.ntasks,
	    mts_availability_str(s->avail));
	return 0;
}

static void
cleanup(struct schedd *s, struct mts_agent *a)
{
	/* the statestore client first: dry-runs waiting on it are answered
	 * (canceled) while their server is still open */
	if (s->store != NULL)
		mts_ipc_async_close(s->store);
	if (s->gossip != NULL)
		mts_ipc_async_close(s->gossip);
	schedd_save_free(s); /* before the server: it may hold calls */
	if (s->srv != NULL) {
		mts_loop_remove_server(s->loop, s->srv);
		mts_ipc_server_close(s->srv);
	}
	if (s->loop != NULL) {
		mts_timer_disarm(s->loop, &s->expire_timer);
		mts_timer_disarm(s->loop, &s->digest_timer);
		mts_timer_disarm(s->loop, &s->scan_timer);
		mts_timer_disarm(s->loop, &s->nodeinfo_timer);
		mts_timer_disarm(s->loop, &s->rejoin_timer);
	}
	mts_watch_free(s->msub_w);
	if (s->msub_open)
		nng_close(s->msub);
	mts_loop_free(s->loop);
	mts_acl_table_free(&s->cfg.acl);
	mts_ledger_free(&s->ledger);
	mts_agent_free(a);
}

int
main(int argc, char **argv)
{
	struct schedd s;
	struct mts_agent a;
	int rc = MTS_EXIT_FAILURE;

	memset(&s, 0, sizeof(s));
	mts_agent_init(&a, "schedd", argc, argv, "", NULL, NULL);
	s.agent = &a;
	if (setup(&s, &a) < 0) {
		cleanup(&s, &a);
		return MTS_EXIT_USAGE;
	}
	if (mts_crypto_init() < 0 || mts_agent_sandbox(&a) < 0 ||
	    serve(&s, &a) < 0)
		goto out;
	mts_agent_ready(&a);
	schedd_changed(&s);
	schedd_node_changed(&s);
	mts_timer_arm(s.loop, &s.scan_timer, mts_now() + SCHEDD_SCAN_MS);
	if (mts_loop_run(s.loop) == 0)
		rc = MTS_EXIT_OK;
	log_info("stopping");
out:
	cleanup(&s, &a);
	return rc;
}
