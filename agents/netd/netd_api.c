/* netd_api.c: mts-netd's requests — its access table, the dispatch table of {type, name, caller classes, handler}, and the handlers of netd.proto (status with WireGuard's peer counters — read on the loop, waited for at most STATUS_WAIT_MS —, attach, detach). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "mtserr.h"
#include "netd.h"
#include "netd.pb-c.h"
#include "xmalloc.h"

/* Status answers with counters read at most STATUS_FRESH_MS ago, or
 * waits up to STATUS_WAIT_MS for new ones: a stalled wireguard-go (its
 * request times out on its own) delays it no longer. */
#define STATUS_FRESH_MS 250
#define STATUS_WAIT_MS 50

/* The networks of a comma-joined list as a string vector pointing into
 * buf (a copy of the list, NETD_NETS_TEXT bytes; the vector is malloc'd,
 * the caller frees it). */
static char **
nets_vec(const char *nets, char *buf, size_t *n)
{
	char **v = xcalloc(NETD_NETS_MAX + 1, sizeof(*v)), *p = buf;

	snprintf(buf, NETD_NETS_TEXT, "%s", nets);
	*n = 0;
	while (*p != '\0' && *n < NETD_NETS_MAX) {
		v[(*n)++] = p;
		if ((p = strchr(p, ',')) == NULL)
			break;
		*p++ = '\0';
	}
	return v;
}

/* out's strings point into path, addr, veth and netbuf; out->networks is
 * malloc'd (the caller frees it). */
static void
fill_attachment(const struct netd *n, const struct netd_attach *a,
    Mts__Netd__Attachment *out, char *path, size_t plen, char *addr,
    size_t alen, char *veth, size_t vlen, char *netbuf)
{
	char ip[16];

	netd_attach_path(n, a->task, path, plen);
	netd_veth_name(a->host, veth, vlen);
	netd_ip_str(ip, sizeof(ip),
	    n->subnet >= 0
	        ? netd_subnet_net(&n->cfg.cidr, (uint32_t)n->subnet) | a->host
	        : 0);
	snprintf(addr, alen, "%s/24", ip);
	out->task = (char *)a->task;
	out->netns = path;
	out->address = addr;
	out->veth = veth;
	out->networks = nets_vec(a->nets, netbuf, &out->n_networks);
}

/* The peers' part of the status (strings in one block freed by the
 * caller: *blk). */
static void
status_peers(struct netd *n, Mts__Netd__StatusRep *s, char **blk)
{
	const char *get = n->wg_stats;
	char ip[16];
	Mts__Netd__Peer *pp = xcalloc(n->have.n + 1, sizeof(*pp));
	char(*allowed)[24] = xcalloc(n->have.n + 1, sizeof(*allowed));
	time_t now = time(NULL);
	size_t i;

	s->peers = xcalloc(n->have.n + 1, sizeof(*s->peers));
	for (i = 0; i < n->have.n; i++) {
		const struct netd_peer *p = &n->have.p[i];
		struct netd_wg_stat st;

		mts__netd__peer__init(&pp[i]);
		netd_uapi_stat(get, p->key, &st);
		netd_ip_str(ip, sizeof(ip), p->net);
		snprintf(allowed[i], sizeof(allowed[i]), "%s/24", ip);
		pp[i].node.data = (uint8_t *)p->node;
		pp[i].node.len = MTS_NODE_ID_LEN;
		pp[i].name = (char *)netd_view_name(n, p->node);
		pp[i].endpoint = (char *)p->endpoint;
		pp[i].allowed_ips = allowed[i];
		if (st.handshake_sec > 0)
			pp[i].latest_handshake_ms =
			    (uint64_t)(now > (time_t)st.handshake_sec
			            ? now - (time_t)st.handshake_sec
			            : 0) *
			        1000 +
			    1;
		pp[i].rx_bytes = st.rx;
		pp[i].tx_bytes = st.tx;
		s->peers[i] = &pp[i];
	}
	s->n_peers = n->have.n;
	blk[0] = (char *)pp;
	blk[1] = (char *)allowed;
}

static void
status_reply(struct netd *n, struct mts_ipc_call *call)
{
	Mts__Netd__Reply rep = MTS__NETD__REPLY__INIT;
	Mts__Netd__StatusRep s = MTS__NETD__STATUS_REP__INIT;
	Mts__Netd__Attachment *aa = xcalloc(n->att.n + 1, sizeof(*aa));
	char(*strs)[3][512] = xcalloc(n->att.n + 1, sizeof(*strs));
	char(*nets)[NETD_NETS_TEXT] = xcalloc(n->att.n + 1, sizeof(*nets));
	char subnet[32] = "", ip[16], *blk[2];
	size_t i;

	if (n->subnet >= 0) {
		netd_ip_str(ip, sizeof(ip),
		    netd_subnet_net(&n->cfg.cidr, (uint32_t)n->subnet));
		snprintf(subnet, sizeof(subnet), "%s/24", ip);
	}
	s.subnet = subnet;
	s.cluster_cidr = n->cfg.cidr_text;
	s.backend = "wireguard-go";
	s.listen_port = n->cfg.listen_port;
	s.mtu = n->mtu;
	s.public_key.data = n->pub;
	s.public_key.len = sizeof(n->pub);
	status_peers(n, &s, blk);
	s.attachments = xcalloc(n->att.n + 1, sizeof(*s.attachments));
	for (i = 0; i < n->att.n; i++) {
		mts__netd__attachment__init(&aa[i]);
		fill_attachment(n, &n->att.a[i], &aa[i], strs[i][0], 512,
		    strs[i][1], 512, strs[i][2], 512, nets[i]);
		s.attachments[i] = &aa[i];
	}
	s.n_attachments = n->att.n;
	s.services = netd_disc_status(n, &s.n_services);
	rep.body_case = MTS__NETD__REPLY__BODY_STATUS;
	rep.status = &s;
	mts_ipc_reply(call, &rep.base);
	for (i = 0; i < n->att.n; i++)
		free(aa[i].networks);
	free(nets);
	free(s.attachments);
	free(s.services);
	free(s.peers);
	free(blk[0]);
	free(blk[1]);
	free(strs);
	free(aa);
}

void
netd_status_flush(struct netd *n)
{
	size_t i, k = n->status_waiting;

	mts_timer_disarm(n->loop, &n->status_timer);
	n->status_waiting = 0;
	for (i = 0; i < k; i++)
		status_reply(n, n->status_wait[i]);
}

void
netd_status_on_timer(void *arg, mts_time_t now)
{
	(void)now;
	netd_status_flush(arg);
}

/* Counters fresh enough (or no room to hold the call): answered now;
 * otherwise held until the get asked for answers, or STATUS_WAIT_MS. */
static void
h_status(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	struct netd *n = ctx;
	mts_time_t now = mts_loop_now(n->loop);

	(void)m;
	if ((n->wg_stats != NULL && now - n->wg_stats_at < STATUS_FRESH_MS) ||
	    n->status_waiting == NETD_STATUS_WAIT_MAX) {
		status_reply(n, call);
		return;
	}
	n->status_wait[n->status_waiting++] = call;
	if (!n->status_timer.armed)
		mts_timer_arm(n->loop, &n->status_timer, now + STATUS_WAIT_MS);
	netd_uapi_push(n, NETD_UAPI_STATS);
}

static void
h_attach(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Netd__AttachReq *q = ((const Mts__Netd__Request *)m)->attach;
	struct netd *n = ctx;
	Mts__Netd__Reply rep = MTS__NETD__REPLY__INIT;
	Mts__Netd__AttachRep ar = MTS__NETD__ATTACH_REP__INIT;
	Mts__Netd__Attachment at = MTS__NETD__ATTACHMENT__INIT;
	const struct netd_attach *a;
	char path[512], addr[32], veth[16], gw[16], nets[NETD_NETS_TEXT],
	    netbuf[NETD_NETS_TEXT];
	int rc;

	if (netd_nets_join(q->networks, q->n_networks, nets, sizeof(nets)) <
	    0) {
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "attaching task '%s': at most %d networks, each 1-%d of "
		    "[A-Za-z0-9_.-]",
		    q->task, NETD_NETS_MAX, NETD_NET_MAX - 1);
		return;
	}
	rc = netd_attach(n, q->task, nets, &a);
	if (rc == -MTS_ERR_STATE) {
		mts_ipc_reply_error(call, MTS_ERR_STATE,
		    "this node has no /24 of %s yet", n->cfg.cidr_text);
		return;
	}
	if (rc < 0) {
		mts_ipc_reply_error(call, -rc, "attaching task '%s': %s",
		    q->task,
		    rc == -MTS_ERR_INVAL
		        ? "not a task id ([A-Za-z0-9_.-], not . or ..)"
		        : rc == -MTS_ERR_TOOBIG ? "the node's /24 is full"
		                                : "see netd's log");
		return;
	}
	fill_attachment(n, a, &at, path, sizeof(path), addr, sizeof(addr), veth,
	    sizeof(veth), netbuf);
	netd_ip_str(gw, sizeof(gw),
	    netd_subnet_net(&n->cfg.cidr, (uint32_t)n->subnet) | 1);
	ar.attachment = &at;
	ar.gateway = gw;
	ar.mtu = n->mtu;
	log_info("task %s attached: %s in %s%s%s", a->task, addr, path,
	    a->nets[0] ? ", networks " : "", a->nets);
	rep.body_case = MTS__NETD__REPLY__BODY_ATTACH;
	rep.attach = &ar;
	mts_ipc_reply(call, &rep.base);
	free(at.networks);
}

static void
h_detach(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Netd__DetachReq *q = ((const Mts__Netd__Request *)m)->detach;
	Mts__Netd__Reply rep = MTS__NETD__REPLY__INIT;
	Mts__Netd__DetachRep dr = MTS__NETD__DETACH_REP__INIT;
	int found = 0;

	if (netd_detach(ctx, q->task, &found) < 0) {
		mts_ipc_reply_error(call, MTS_ERR_IO,
		    "detaching task '%s': see netd's log", q->task);
		return;
	}
	if (found)
		log_info("task %s detached", q->task);
	dr.found = found;
	rep.body_case = MTS__NETD__REPLY__BODY_DETACH;
	rep.detach = &dr;
	mts_ipc_reply(call, &rep.base);
}

#define READ MTS_CALLER_READ
#define WRITE MTS_CALLER_WRITE

static const struct mts_ipc_route routes[] = {
	{ MTS__NETD__REQUEST__BODY_STATUS, "status", READ, h_status },
	{ MTS__NETD__REQUEST__BODY_ATTACH, "attach", WRITE, h_attach },
	{ MTS__NETD__REQUEST__BODY_DETACH, "detach", WRITE, h_detach },
};

/* [netd] acl (root, the node's reconciled) attach and detach; anyone who
 * reaches the socket (the admin group) may look. */
static const struct mts_acl_rule acl_rules[] = {
	{ READ | WRITE, MTS_ACL_USERS, "acl" },
	{ READ, MTS_ACL_ANYONE, NULL },
	{ 0, 0, NULL },
};

const struct mts_ipc_service netd_service = {
	.name = "netd",
	.request = &mts__netd__request__descriptor,
	.reply = &mts__netd__reply__descriptor,
	.routes = routes,
	.nroutes = sizeof(routes) / sizeof(routes[0]),
	.acl = acl_rules,
};
