/* reconciled.c: mts-reconciled's main — the config, the clients of the node's statestore, schedd, shim, gossipd and netd (when it runs), the change feeds of the statestore and of membership that trigger a refresh, the periodic tick, the sandbox, readiness. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gossipd.pb-c.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "reconciled.h"

#define CALL_TIMEOUT_MS 5000

void
rc_event(struct recond *r, const char *type, const char *service,
    const char *task, const char *node, const char *fmt, ...)
{
	struct mts_event ev = { type, service, task, node, NULL };
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev.message = msg;
	(void)mts_event_emit(r->events, &ev);
}

static void
on_tick(void *arg, mts_time_t now)
{
	struct recond *r = arg;

	rc_refresh(r);
	mts_timer_arm(r->loop, &r->tick_timer, now + r->cfg.tick_ms);
}

static void
on_kick(void *arg, mts_time_t now)
{
	rc_refresh(arg);
}

/* Keys whose change can change a decision: services, tasks, labels,
 * availabilities. */
static int
relevant(const ProtobufCBinaryData *k)
{
	return k->len >= 2 &&
	    (memcmp(k->data, "s/", 2) == 0 || memcmp(k->data, "t/", 2) == 0 ||
	        memcmp(k->data, "n/", 2) == 0 ||
	        (k->len >= 3 && memcmp(k->data, "nl/", 3) == 0));
}

static void
on_store_feed(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct recond *r = arg;
	ProtobufCMessage *body;
	int n, kick = 0;

	for (n = 0; n < 1024; n++) {
		int rc =
		    mts_sub_recv(r->ssub, &mts__statestore__change__descriptor,
		        &body, NNG_FLAG_NONBLOCK);

		if (rc == -MTS_ERR_INVAL)
			continue;
		if (rc < 0 || body == NULL)
			break;
		kick |= relevant(&((Mts__Statestore__Change *)body)->key);
		protobuf_c_message_free_unpacked(body, NULL);
	}
	if (kick)
		rc_kick(r);
}

static void
on_member_feed(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct recond *r = arg;
	ProtobufCMessage *body;
	int n, kick = 0;

	for (n = 0; n < 1024; n++) {
		int rc = mts_sub_recv(r->gsub, &mts__gossipd__event__descriptor,
		    &body, NNG_FLAG_NONBLOCK);

		if (rc == -MTS_ERR_INVAL)
			continue;
		if (rc < 0 || body == NULL)
			break;
		kick = 1;
		protobuf_c_message_free_unpacked(body, NULL);
	}
	if (kick)
		rc_kick(r);
}

static int
setup(struct recond *r, struct mts_agent *a)
{
	char err[512], path[512], *slash;
	const char *id = a->node_id;

	if (id == NULL || strlen(id) != MTS_NODE_HEX_LEN ||
	    mts_unhex(r->self_id, sizeof(r->self_id), id, MTS_NODE_HEX_LEN) <
	        0) {
		log_warnx("no node id (MTS_NODE_ID): mts-reconciled runs under "
		          "mts-init");
		return -1;
	}
	mts_hex(r->self, r->self_id, sizeof(r->self_id));
	if (rc_conf_load(&r->cfg, a->cfg) < 0)
		return -1;
	if (mts_acl_table_load(&r->cfg.acl, reconciled_service.acl, a->cfg,
	        RC_SECTION, err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	if (mts_ipc_sock_path(r->shim_path, sizeof(r->shim_path), a->rundir,
	        "shim", NULL) < 0)
		return -1;
	/* before the sandbox: the agent's run directory is its own */
	if (mts_ipc_sock_path(path, sizeof(path), a->rundir, "reconciled",
	        NULL) == 0 &&
	    (slash = strrchr(path, '/')) != NULL) {
		*slash = '\0';
		r->events = mts_event_log_open(path, 0, a->node, "reconciled");
	}
	if ((r->loop = mts_loop_new()) == NULL ||
	    mts_loop_stop_on_signals(r->loop) < 0)
		return -1;
	mts_timer_init(&r->tick_timer, "tick", on_tick, r);
	mts_timer_init(&r->kick_timer, "kick", on_kick, r);
	return 0;
}

static struct mts_ipc_async *
client(struct recond *r, const char *agent)
{
	struct mts_ipc_async *c;
	char path[512], err[256];

	if (mts_ipc_sock_path(path, sizeof(path), r->agent->rundir, agent,
	        NULL) < 0)
		return NULL;
	if ((c = mts_ipc_async_open(r->loop, path, CALL_TIMEOUT_MS, err,
	         sizeof(err))) == NULL)
		log_warnx("%s: %s", agent, err);
	return c;
}

/* A change feed whose every message triggers fn. */
static int
feed(struct recond *r, const char *agent, const char *file, nng_socket *s,
    int *open, struct mts_watch **w, mts_watch_fn fn)
{
	char path[512], err[256];
	int fd;

	if (mts_ipc_sock_path(path, sizeof(path), r->agent->rundir, agent,
	        file) < 0)
		return -1;
	if (mts_sub_open(path, "", 0, s, err, sizeof(err)) < 0) {
		log_warnx("%s: %s", file, err);
		return -1;
	}
	*open = 1;
	if (mts_ipc_recv_fd(*s, &fd) < 0 ||
	    (*w = mts_loop_watch(r->loop, fd, MTS_LOOP_IN, file, fn, r)) ==
	        NULL)
		return -1;
	return 0;
}

static int
serve(struct recond *r, struct mts_agent *a)
{
	char path[512], err[256];

	if ((r->store = client(r, "statestore")) == NULL ||
	    (r->schedd = client(r, "schedd")) == NULL ||
	    (r->shim = client(r, "shim")) == NULL ||
	    (r->gossipd = client(r, "gossipd")) == NULL ||
	    (r->cfg.netd && (r->netd = client(r, "netd")) == NULL))
		return -1;
	if (feed(r, "statestore", "statestore.pub", &r->ssub, &r->ssub_open,
	        &r->ssub_w, on_store_feed) < 0 ||
	    feed(r, "gossipd", "gossipd.pub", &r->gsub, &r->gsub_open,
	        &r->gsub_w, on_member_feed) < 0)
		return -1;
	if (mts_ipc_sock_path(path, sizeof(path), a->rundir, a->name, NULL) <
	    0) {
		log_warnx("socket path too long");
		return -1;
	}
	if ((r->srv = mts_ipc_server_open(path, &reconciled_service, r, err,
	         sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	mts_ipc_server_set_acl(r->srv, &r->cfg.acl);
	if (mts_loop_add_server(r->loop, r->srv) < 0)
		return -1;
	log_info("ready on %s: node %.8s, tick %lld ms%s", path, r->self,
	    (long long)r->cfg.tick_ms,
	    r->cfg.netd ? ", tasks attached by netd" : "");
	return 0;
}

static void
cleanup(struct recond *r, struct mts_agent *a)
{
	/* the clients first: their callbacks run (canceled) while the
	 * state they point into is still here */
	mts_ipc_async_close(r->gossipd);
	if (r->netd != NULL)
		mts_ipc_async_close(r->netd);
	mts_ipc_async_close(r->shim);
	mts_ipc_async_close(r->schedd);
	mts_ipc_async_close(r->store);
	if (r->srv != NULL) {
		mts_loop_remove_server(r->loop, r->srv);
		mts_ipc_server_close(r->srv);
	}
	mts_watch_free(r->ssub_w);
	mts_watch_free(r->gsub_w);
	if (r->ssub_open)
		nng_close(r->ssub);
	if (r->gsub_open)
		nng_close(r->gsub);
	if (r->loop != NULL) {
		mts_timer_disarm(r->loop, &r->tick_timer);
		mts_timer_disarm(r->loop, &r->kick_timer);
	}
	rc_view_clear(&r->view);
	rc_view_clear(&r->next);
	rc_local_free_all(r);
	rc_owner_free(r);
	mts_loop_free(r->loop);
	mts_acl_table_free(&r->cfg.acl);
	mts_event_log_close(r->events);
	mts_agent_free(a);
}

int
main(int argc, char **argv)
{
	struct recond r;
	struct mts_agent a;
	int rc = MTS_EXIT_FAILURE;

	memset(&r, 0, sizeof(r));
	mts_agent_init(&a, "reconciled", argc, argv, "", NULL, NULL);
	r.agent = &a;
	if (setup(&r, &a) < 0) {
		cleanup(&r, &a);
		return MTS_EXIT_USAGE;
	}
	if (mts_crypto_init() < 0 || mts_agent_sandbox(&a) < 0 ||
	    serve(&r, &a) < 0)
		goto out;
	mts_agent_ready(&a);
	r.started = mts_now();
	mts_timer_arm(r.loop, &r.tick_timer, r.started);
	if (mts_loop_run(r.loop) == 0)
		rc = MTS_EXIT_OK;
	log_info("stopping");
out:
	cleanup(&r, &a);
	return rc;
}
