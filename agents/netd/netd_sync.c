/* netd_sync.c: mts-netd's view of the cluster — gossipd's members (polled every 250 ms and on every gossipd.pub event), the m/ (keys), n/ (the overlay_subnet of NodeInfo) and t/ (tasks' addresses and networks) records (scanned every second and on every change statestore.pub announces) — and what follows from it: the node's own claim written into n/<self>, the bridge's address, WireGuard's peers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gossip.pb-c.h"
#include "gossipd.pb-c.h"
#include "log.h"
#include "mtserr.h"
#include "netd.h"
#include "nodeinfo.h"
#include "shim.pb-c.h"
#include "statestore.pb-c.h"
#include <nng/protocol/pubsub0/sub.h>
#include "xmalloc.h"

#define SCAN_PAGE 500

/* --- the view -------------------------------------------------------------------- */

static struct netd_ventry *
view_get(struct netd_view *v, const uint8_t node[MTS_NODE_ID_LEN])
{
	struct netd_ventry *e;
	size_t i;

	for (i = 0; i < v->len; i++)
		if (memcmp(v->e[i].node.node, node, MTS_NODE_ID_LEN) == 0)
			return &v->e[i];
	if (v->len == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 16;
		v->e = xreallocarray(v->e, v->cap, sizeof(*v->e));
	}
	e = &v->e[v->len++];
	memset(e, 0, sizeof(*e));
	memcpy(e->node.node, node, MTS_NODE_ID_LEN);
	e->node.subnet = -1;
	return e;
}

void
netd_view_free(struct netd_view *v)
{
	free(v->e);
	memset(v, 0, sizeof(*v));
}

const char *
netd_view_name(const struct netd *n, const uint8_t node[16])
{
	size_t i;

	for (i = 0; i < n->view.len; i++)
		if (memcmp(n->view.e[i].node.node, node, MTS_NODE_ID_LEN) == 0)
			return n->view.e[i].name;
	return "";
}

/* "host:port" or "[v6]:port" -> host. */
static void
addr_host(const char *addr, char *out, size_t outlen)
{
	const char *end;

	if (addr[0] == '[' && (end = strchr(addr, ']')) != NULL) {
		snprintf(out, outlen, "%.*s", (int)(end - addr - 1), addr + 1);
		return;
	}
	end = strrchr(addr, ':');
	snprintf(out, outlen, "%.*s",
	    end ? (int)(end - addr) : (int)strlen(addr), addr);
}

/* --- peers ---------------------------------------------------------------------------- */

void
netd_peers_update(struct netd *n)
{
	/* not before mts0 is configured (netd_wg.c calls again), nor
	 * before gossipd's members were read once: a restarted netd whose
	 * first scan ends before the first members poll would see no live
	 * node and remove every peer, and the tunnels' sessions with them */
	if (!n->wg_ready || !n->polled)
		return;
	netd_uapi_push(n, NETD_UAPI_PEERS);
}

/* The peers wanted now (n->want, kept until the answer) and the set=1
 * that gets WireGuard there from what it has; NULL when it has them. */
char *
netd_peers_req(struct netd *n)
{
	struct netd_node *nodes;
	char *diff, *req = NULL;
	size_t i;

	nodes = xcalloc(n->view.len + 1, sizeof(*nodes));
	for (i = 0; i < n->view.len; i++) {
		nodes[i] = n->view.e[i].node;
		if (memcmp(nodes[i].node, n->self_id, MTS_NODE_ID_LEN) == 0)
			nodes[i].subnet = n->subnet;
	}
	netd_peers_want(&n->want, n->self_id, nodes, n->view.len, &n->cfg.cidr,
	    n->cfg.listen_port);
	free(nodes);
	diff = netd_peers_diff(&n->have, &n->want);
	if (diff[0] != '\0')
		req = xasprintf("set=1\n%s\n", diff);
	free(diff);
	return req;
}

/* WireGuard has the peers asked for, or not: then they are asked for
 * again at the next change or poll — unless mts0 is gone with its
 * wireguard-go, which a new netd replaces. */
void
netd_peers_done(struct netd *n, int rc, char *rep)
{
	if (rc == 0 && netd_uapi_errno(rep) == 0) {
		log_info("wireguard: %zu peers (was %zu)", n->want.n,
		    n->have.n);
		netd_peers_copy(&n->have, &n->want);
		return;
	}
	if (rc == 0)
		log_warnx("wireguard refused the peers: %.*s",
		    (int)strcspn(rep, "\n"), rep);
	if (netd_nl_ifindex(n->nl, NETD_WG_IF, NULL) < 0) {
		log_warnx("%s is gone (wireguard-go died): stopping",
		    NETD_WG_IF);
		n->failed = 1;
		mts_loop_stop(n->loop);
	}
}

/* --- gossipd's members ------------------------------------------------------------ */

static void
members_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct netd *n = arg;
	const Mts__Gossipd__Reply *rep = (const Mts__Gossipd__Reply *)m;
	size_t i;

	n->poll_busy = 0;
	if (rc == -MTS_ERR_CANCELED)
		return;
	if (n->repoll) {
		n->repoll = 0;
		netd_on_poll(n, 0);
	}
	if (rc < 0 || rep->members == NULL) {
		log_debug("gossipd members: %s", rc < 0 ? err : "no answer");
		return;
	}
	n->polled = 1;
	for (i = 0; i < n->view.len; i++)
		n->view.e[i].node.alive = 0;
	for (i = 0; i < rep->members->n_nodes; i++) {
		const Mts__Gossipd__NodeInfo *x = rep->members->nodes[i];
		struct netd_ventry *e;

		if (x->node.len != MTS_NODE_ID_LEN)
			continue;
		e = view_get(&n->view, x->node.data);
		e->node.alive = !x->removed &&
		    (strcmp(x->state, "alive") == 0 ||
		        strcmp(x->state, "suspect") == 0);
		addr_host(x->addr, e->node.host, sizeof(e->node.host));
		snprintf(e->name, sizeof(e->name), "%s", x->name);
	}
	if (n->scanned)
		netd_peers_update(n);
}

void
netd_on_poll(void *arg, mts_time_t now)
{
	struct netd *n = arg;
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__MembersReq mr = MTS__GOSSIPD__MEMBERS_REQ__INIT;

	if (now != 0)
		mts_timer_arm(n->loop, &n->poll_timer, now + NETD_POLL_MS);
	if (n->poll_busy) {
		n->repoll = now == 0;
		return;
	}
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_MEMBERS;
	req.members = &mr;
	if (mts_ipc_async_call(n->gossip, &req.base,
	        &mts__gossipd__reply__descriptor, NETD_POLL_MS * 4,
	        members_done, n) != NULL)
		n->poll_busy = 1;
}

/* --- the claim --------------------------------------------------------------------- */

static void
claim_done(void *arg, int rc, const struct mts_nodeinfo *now, const char *err)
{
	struct netd *n = arg;

	n->claim_busy = 0;
	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc < 0) {
		log_warnx("writing the subnet to n/%s: %s", n->self, err);
		n->claim_put = -1; /* try again after the next scan */
	}
}

static void
subnet_text(const struct netd *n, int32_t idx, char *out, size_t outlen)
{
	char ip[16];

	netd_ip_str(ip, sizeof(ip),
	    netd_subnet_net(&n->cfg.cidr, (uint32_t)idx));
	snprintf(out, outlen, "%s/24", ip);
}

/* The edit of n/<self>: netd's fields only (the subnet, its version). */
static int
claim_edit(struct mts_nodeinfo *ni, void *arg)
{
	struct netd *n = arg;
	char text[sizeof(ni->overlay_subnet)];
	int changed;

	subnet_text(n, n->subnet, text, sizeof(text));
	changed = strcmp(ni->overlay_subnet, text) != 0;
	snprintf(ni->overlay_subnet, sizeof(ni->overlay_subnet), "%s", text);
	changed |= mts_nodeinfo_set_version(ni, "netd", MTS_VERSION);
	return changed;
}

static void
claim_write(struct netd *n)
{
	if (mts_nodeinfo_update(n->store, n->self, claim_edit, n, claim_done,
	        n) == 0) {
		n->claim_busy = 1;
		n->claim_put = n->subnet;
	}
}

/* After a full scan: the /24 to keep or take, written when it changed,
 * then the bridge and the peers. */
static void
decide(struct netd *n)
{
	struct netd_claim *c = xcalloc(n->view.len + 1, sizeof(*c));
	int32_t cur = n->subnet, pick;
	size_t i, k = 0;

	if (cur < 0 && n->cfg.subnet_force >= 0)
		cur = n->cfg.subnet_force;
	for (i = 0; i < n->view.len; i++) {
		const struct netd_node *x = &n->view.e[i].node;

		/* a removed node's claim is void (its m/ record is gone) */
		if (!x->has_key || x->subnet < 0)
			continue;
		memcpy(c[k].node, x->node, MTS_NODE_ID_LEN);
		c[k++].subnet = x->subnet;
	}
	pick = netd_subnet_choose(n->self_id, cur, c, k,
	    netd_subnet_count(&n->cfg.cidr));
	free(c);
	if (pick < 0 && n->subnet >= 0)
		log_warnx("no free /24 in %s", n->cfg.cidr_text);
	if (pick != n->subnet) {
		if (n->subnet >= 0)
			log_info("/24 number %d is claimed by a lower node id: "
			         "moving to %d",
			    n->subnet, pick);
		n->subnet = pick;
	}
	if (n->subnet >= 0 && n->claim_put != n->subnet && !n->claim_busy)
		claim_write(n);
	netd_bridge_apply(n);
	netd_peers_update(n);
}

/* --- the records ------------------------------------------------------------------------ */

static void
member_record(struct netd *n, struct netd_ventry *e, const Mts__Record *r)
{
	Mts__Gossip__MemberRecord *m = mts__gossip__member_record__unpack(NULL,
	    r->value.len, r->value.data);

	if (m == NULL)
		return;
	if (m->pubkey.len == NETD_KEY_LEN) {
		memcpy(e->node.key, m->pubkey.data, NETD_KEY_LEN);
		e->key_gen = n->view.gen;
	}
	mts__gossip__member_record__free_unpacked(m, NULL);
}

static void
claim_record(struct netd *n, struct netd_ventry *e, const Mts__Record *r)
{
	struct mts_nodeinfo ni;
	char ip[32];
	uint32_t net;
	int32_t idx;

	if (mts_nodeinfo_decode(r->value.data, r->value.len, &ni) < 0 ||
	    ni.overlay_subnet[0] == '\0')
		return;
	snprintf(ip, sizeof(ip), "%.*s", (int)strcspn(ni.overlay_subnet, "/"),
	    ni.overlay_subnet);
	if (netd_ip_parse(ip, &net) < 0 ||
	    (idx = netd_subnet_index(&n->cfg.cidr, net)) < 0 ||
	    (uint32_t)idx >= netd_subnet_count(&n->cfg.cidr))
		return; /* another cluster_cidr: not a claim here */
	e->node.subnet = idx;
	e->claim_gen = n->view.gen;
	if (memcmp(e->node.node, n->self_id, MTS_NODE_ID_LEN) == 0 &&
	    n->claim_put < 0) {
		n->claim_put = idx; /* what the store holds already */
		if (n->subnet < 0)
			n->subnet = idx; /* a restart keeps the /24 */
	}
}

static struct netd_task *
task_get(struct netd_tasks *ts, const char *node, const char *id)
{
	struct netd_task *t;
	size_t i;

	for (i = 0; i < ts->n; i++)
		if (strcmp(ts->t[i].id, id) == 0 &&
		    strcmp(ts->t[i].node, node) == 0)
			return &ts->t[i];
	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? 2 * ts->cap : 64;
		ts->t = xreallocarray(ts->t, ts->cap, sizeof(*ts->t));
	}
	t = &ts->t[ts->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->node, sizeof(t->node), "%s", node);
	snprintf(t->id, sizeof(t->id), "%s", id);
	return t;
}

/* t/<node>/<task>: the task's address and networks (the shim's own tasks,
 * and reconciled's before netd attached them, have none). */
static void
task_record(struct netd *n, const char *node, const char *id,
    const Mts__Record *r)
{
	Mts__Shim__TaskStatus *st =
	    mts__shim__task_status__unpack(NULL, r->value.len, r->value.data);
	char nets[NETD_NETS_TEXT];
	struct netd_task *t;
	uint32_t addr = 0;

	if (st == NULL)
		return;
	if (st->address && st->address[0] != '\0' &&
	    netd_ip_parse(st->address, &addr) < 0)
		addr = 0;
	if (netd_nets_join(st->networks, st->n_networks, nets, sizeof(nets)) <
	    0)
		nets[0] = '\0';
	t = task_get(&n->tasks, node, id);
	t->addr = addr;
	snprintf(t->nets, sizeof(t->nets), "%s", nets);
	snprintf(t->service, sizeof(t->service), "%s",
	    st->spec && st->spec->service ? st->spec->service : "");
	snprintf(t->state, sizeof(t->state), "%s", st->state ? st->state : "");
	snprintf(t->health, sizeof(t->health), "%s",
	    st->health ? st->health : "");
	t->local = strcmp(node, n->self) == 0;
	t->gen = n->view.gen;
	mts__shim__task_status__free_unpacked(st, NULL);
}

static void
task_key(struct netd *n, const Mts__KeyRecord *kr)
{
	const char *k = (const char *)kr->key.data + strlen(NETD_TASK_PREFIX);
	size_t len = kr->key.len - strlen(NETD_TASK_PREFIX);
	char node[MTS_NODE_HEX_LEN + 1], id[NETD_TASK_MAX];

	if (kr->record == NULL || kr->record->tombstone ||
	    len <= MTS_NODE_HEX_LEN + 1 || k[MTS_NODE_HEX_LEN] != '/' ||
	    len - MTS_NODE_HEX_LEN - 1 >= sizeof(id))
		return;
	memcpy(node, k, MTS_NODE_HEX_LEN);
	node[MTS_NODE_HEX_LEN] = '\0';
	memcpy(id, k + MTS_NODE_HEX_LEN + 1, len - MTS_NODE_HEX_LEN - 1);
	id[len - MTS_NODE_HEX_LEN - 1] = '\0';
	if (memchr(id, '\0', len - MTS_NODE_HEX_LEN - 1) != NULL)
		return;
	task_record(n, node, id, kr->record);
}

/* The tasks whose records the last full scan did not see are gone. */
static void
tasks_end(struct netd *n)
{
	size_t i;

	for (i = 0; i < n->tasks.n;)
		if (n->tasks.t[i].gen != n->view.gen)
			n->tasks.t[i] = n->tasks.t[--n->tasks.n];
		else
			i++;
}

static void
record(struct netd *n, const Mts__KeyRecord *kr)
{
	size_t plen = strlen(n->scan_prefix);
	uint8_t id[MTS_NODE_ID_LEN];

	if (n->scan_prefix[0] == 't') {
		task_key(n, kr);
		return;
	}
	if (kr->record == NULL || kr->record->tombstone ||
	    kr->key.len != plen + MTS_NODE_HEX_LEN ||
	    mts_unhex(id, sizeof(id), (const char *)kr->key.data + plen,
	        MTS_NODE_HEX_LEN) < 0)
		return;
	if (n->scan_prefix[0] == 'm')
		member_record(n, view_get(&n->view, id), kr->record);
	else
		claim_record(n, view_get(&n->view, id), kr->record);
}

/* The end of a full scan: records not seen in it are gone. */
static void
scan_end(struct netd *n)
{
	size_t i;

	for (i = 0; i < n->view.len;) {
		struct netd_ventry *e = &n->view.e[i];

		e->node.has_key = e->key_gen == n->view.gen;
		if (e->claim_gen != n->view.gen)
			e->node.subnet = -1;
		/* a node gone from the records and from gossipd's members
		 * (removed long ago) leaves the view */
		if (!e->node.has_key && e->node.subnet < 0 && !e->node.alive) {
			n->view.e[i] = n->view.e[--n->view.len];
			continue;
		}
		i++;
	}
	tasks_end(n);
	n->scanned = 1;
	decide(n);
	netd_nft_changed(n);
	if (n->rescan) {
		n->rescan = 0;
		netd_on_scan(n, 0);
	}
}

static void scan_next(struct netd *);

static void
scan_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct netd *n = arg;
	const Mts__Statestore__Reply *rep = (const Mts__Statestore__Reply *)m;
	size_t i;

	n->scan_busy = 0;
	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc < 0 || rep->scan == NULL) {
		log_warnx("statestore scan of %s: %s", n->scan_prefix,
		    rc < 0 ? err : "no scan in the reply");
		return;
	}
	for (i = 0; i < rep->scan->n_items; i++) {
		const Mts__KeyRecord *kr = rep->scan->items[i];

		record(n, kr);
		if (kr->key.len < sizeof(n->scan_after)) {
			memcpy(n->scan_after, kr->key.data, kr->key.len);
			n->scan_after[kr->key.len] = '\0';
		}
	}
	if (rep->scan->more && rep->scan->n_items > 0) {
		scan_next(n);
	} else if (n->scan_prefix[0] != 't') {
		n->scan_prefix = n->scan_prefix[0] == 'm' ? NETD_CLAIM_PREFIX
		                                          : NETD_TASK_PREFIX;
		n->scan_after[0] = '\0';
		scan_next(n);
	} else {
		scan_end(n);
	}
}

static void
scan_next(struct netd *n)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;

	sc.prefix.data = (uint8_t *)n->scan_prefix;
	sc.prefix.len = strlen(n->scan_prefix);
	sc.start_after.data = (uint8_t *)n->scan_after;
	sc.start_after.len = strlen(n->scan_after);
	sc.limit = SCAN_PAGE;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
	req.scan = &sc;
	if (mts_ipc_async_call(n->store, &req.base,
	        &mts__statestore__reply__descriptor, 0, scan_done, n) != NULL)
		n->scan_busy = 1;
}

void
netd_on_scan(void *arg, mts_time_t now)
{
	struct netd *n = arg;

	/* wireguard-go died (mts0 went with it): a new netd starts a new one */
	if (now != 0 && n->wg_ready &&
	    netd_nl_ifindex(n->nl, NETD_WG_IF, NULL) == -ENODEV) {
		log_warnx("%s is gone (wireguard-go died): stopping, to be "
		          "restarted with a new one",
		    NETD_WG_IF);
		n->failed = 1;
		mts_loop_stop(n->loop);
		return;
	}

	if (now != 0)
		mts_timer_arm(n->loop, &n->scan_timer, now + NETD_SCAN_MS);
	if (n->scan_busy) {
		n->rescan = now == 0;
		return;
	}
	n->view.gen++;
	n->scan_prefix = NETD_MEMBER_PREFIX;
	n->scan_after[0] = '\0';
	scan_next(n);
}

/* --- the feeds ------------------------------------------------------------------------ */

/* Drops what came (the view is read again as a whole) and reports
 * whether anything did. */
static int
drain(nng_socket s)
{
	nng_msg *m;
	int any = 0;

	while (nng_recvmsg(s, &m, NNG_FLAG_NONBLOCK) == 0) {
		nng_msg_free(m);
		any = 1;
	}
	return any;
}

static void
on_store_feed(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct netd *n = arg;

	if (drain(n->store_sub))
		netd_on_scan(n, 0);
}

static void
on_gossip_feed(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct netd *n = arg;

	if (drain(n->gossip_sub))
		netd_on_poll(n, 0);
}

static int
feed_open(struct netd *n, const char *agent, const char *file,
    const char *prefix, nng_socket *s, int *open_, struct mts_watch **w,
    mts_watch_fn fn)
{
	char path[512], err[256];
	int fd;

	if (mts_ipc_sock_path(path, sizeof(path), n->agent->rundir, agent,
	        file) < 0 ||
	    mts_sub_open(path, prefix, strlen(prefix), s, err, sizeof(err)) <
	        0) {
		log_warnx("%s: %s", file, err);
		return -1;
	}
	*open_ = 1;
	if (mts_ipc_recv_fd(*s, &fd) < 0 ||
	    (*w = mts_loop_watch(n->loop, fd, MTS_LOOP_IN, file, fn, n)) ==
	        NULL) {
		log_warnx("%s: no receive descriptor", file);
		return -1;
	}
	return 0;
}

int
netd_feeds_open(struct netd *n)
{
	if (feed_open(n, "statestore", "statestore.pub", NETD_MEMBER_PREFIX,
	        &n->store_sub, &n->store_open, &n->store_w,
	        on_store_feed) < 0 ||
	    nng_socket_set(n->store_sub, NNG_OPT_SUB_SUBSCRIBE,
	        NETD_CLAIM_PREFIX, strlen(NETD_CLAIM_PREFIX)) != 0 ||
	    nng_socket_set(n->store_sub, NNG_OPT_SUB_SUBSCRIBE,
	        NETD_TASK_PREFIX, strlen(NETD_TASK_PREFIX)) != 0)
		return -1;
	return feed_open(n, "gossipd", "gossipd.pub", "", &n->gossip_sub,
	    &n->gossip_open, &n->gossip_w, on_gossip_feed);
}

void
netd_feeds_close(struct netd *n)
{
	mts_watch_free(n->store_w);
	mts_watch_free(n->gossip_w);
	n->store_w = n->gossip_w = NULL;
	if (n->store_open)
		nng_close(n->store_sub);
	if (n->gossip_open)
		nng_close(n->gossip_sub);
	n->store_open = n->gossip_open = 0;
}
