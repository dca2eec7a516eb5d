/* netd_disc.c: mts-netd's service directory — the s/ (services) and na/ (task addresses) records scanned every second and on every change statestore.pub announces, joined every 250 ms with the tasks netd_sync.c reads from t/ and gossipd's view of which nodes are alive into the directory the DNS server answers from; and na/<self>, this node's attachments, published. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mtserr.h"
#include "netaddr.pb-c.h"
#include "netd.pb-c.h"
#include "netd.h"
#include <nng/protocol/pubsub0/sub.h>
#include "service.pb-c.h"
#include "shim.pb-c.h"
#include "statestore.pb-c.h"
#include "svcrec.h"
#include "vip_core.h"
#include "xmalloc.h"

#define DISC_SCAN_MS 1000
#define DISC_ALIVE_MS 250
#define DISC_PAGE 500
#define ADDR_PREFIX "na/"
/* present when br_netfilter is loaded; 1 (its default) hands bridged
 * frames to the IP hooks */
#define BRIDGE_NF "/proc/sys/net/bridge/bridge-nf-call-iptables"

static const char *const prefixes[] = { "s/", ADDR_PREFIX, NULL };

/* A task address of another node's na/ record, until the scan ends. */
struct addr_ent {
	uint8_t node[MTS_NODE_ID_LEN];
	char task[DISC_TASK_MAX];
	uint32_t addr;
};

struct netd_disc {
	struct netd *n;
	struct disc cur; /* what DNS answers from */
	/* the services and na/ addresses of the last full scan, and of the
	 * scan under way */
	struct disc svcs, next;
	struct addr_ent *addrs, *naddrs_next;
	size_t naddrs, nnext, capnext;
	size_t pfx; /* which of prefixes is being scanned */
	char after[512];
	int busy, again;
	struct mts_timer scan_timer, alive_timer;
	nng_socket sub;
	int sub_open;
	struct mts_watch *sub_w;
	/* na/<self>: what the store holds (as seen or as written), and
	 * what the scan under way saw */
	char *vip_text; /* the VIP part of the table, as last built */
	uint8_t *have, *seen;
	size_t have_len, seen_len;
	int have_known, put_busy;
};

static uint32_t
vip_net(const struct netd *n)
{
	return netd_subnet_net(&n->cfg.cidr, netd_subnet_count(&n->cfg.cidr));
}

/* --- records into the directory --------------------------------------------- */

/* A published tcp or udp port of the spec (sctp and unpublished ones
 * are not ours to open). */
static void
port_of(struct disc_svc *s, const Mts__Service__Port *p)
{
	const char *proto = p->protocol && *p->protocol ? p->protocol : "tcp";
	struct disc_port *dp;

	if (p->published == 0 || p->published > 65535 || p->target == 0 ||
	    p->target > 65535 ||
	    (strcmp(proto, "tcp") != 0 && strcmp(proto, "udp") != 0))
		return;
	dp = &s->ports[s->nports++];
	dp->published = (uint16_t)p->published;
	dp->target = (uint16_t)p->target;
	dp->udp = strcmp(proto, "udp") == 0;
	dp->host = p->mode != NULL && strcmp(p->mode, "host") == 0;
}

static void
service_record(struct netd_disc *d, const Mts__Record *r)
{
	Mts__Service__ServiceRecord *sr =
	    mts__service__service_record__unpack(NULL, r->value.len,
	        r->value.data);
	const Mts__Service__ServiceSpec *sp;
	struct disc_svc *s;
	size_t i;

	if (sr == NULL)
		return;
	if ((sp = sr->spec) != NULL && sp->name != NULL && sp->stack != NULL &&
	    sp->short_name != NULL) {
		s = disc_add_svc(&d->next);
		snprintf(s->name, sizeof(s->name), "%s", sp->name);
		snprintf(s->stack, sizeof(s->stack), "%s", sp->stack);
		snprintf(s->short_name, sizeof(s->short_name), "%s",
		    sp->short_name);
		s->created = mts_svc_created(sr, r->hlc);
		s->dnsrr = sp->endpoint_mode != NULL &&
		    strcmp(sp->endpoint_mode, "dnsrr") == 0;
		for (i = 0; i < sp->n_networks && s->nnets < DISC_NET_MAX; i++)
			if (sp->networks[i]->name != NULL)
				snprintf(s->nets[s->nnets++], DISC_NAME_MAX,
				    "%s", sp->networks[i]->name);
		for (i = 0; i < sp->n_ports && s->nports < DISC_PORT_MAX; i++)
			port_of(s, sp->ports[i]);
	}
	mts__service__service_record__free_unpacked(sr, NULL);
}

/* na/<node>: the node's task addresses; this node's own is remembered
 * as what the store holds. */
static void
addr_record(struct netd_disc *d, const char *key, size_t klen,
    const Mts__Record *r)
{
	Mts__Netaddr__NodeAddresses *na;
	uint8_t node[MTS_NODE_ID_LEN];
	size_t i;
	uint32_t a;

	if (klen != strlen(ADDR_PREFIX) + MTS_NODE_HEX_LEN ||
	    mts_unhex(node, sizeof(node), key + strlen(ADDR_PREFIX),
	        MTS_NODE_HEX_LEN) < 0)
		return;
	if (memcmp(node, d->n->self_id, MTS_NODE_ID_LEN) == 0) {
		free(d->seen);
		d->seen = xmalloc(r->value.len + 1);
		memcpy(d->seen, r->value.data, r->value.len);
		d->seen_len = r->value.len;
	}
	if ((na = mts__netaddr__node_addresses__unpack(NULL, r->value.len,
	         r->value.data)) == NULL)
		return;
	for (i = 0; i < na->n_tasks; i++) {
		struct addr_ent *e;

		if (na->tasks[i]->task == NULL ||
		    strlen(na->tasks[i]->task) >= DISC_TASK_MAX ||
		    netd_ip_parse(na->tasks[i]->address, &a) < 0)
			continue;
		if (d->nnext == d->capnext) {
			d->capnext = d->capnext ? 2 * d->capnext : 64;
			d->naddrs_next = xreallocarray(d->naddrs_next,
			    d->capnext, sizeof(*d->naddrs_next));
		}
		e = &d->naddrs_next[d->nnext++];
		memcpy(e->node, node, sizeof(node));
		snprintf(e->task, sizeof(e->task), "%s", na->tasks[i]->task);
		e->addr = a;
	}
	mts__netaddr__node_addresses__free_unpacked(na, NULL);
}

static void
record(struct netd_disc *d, const Mts__KeyRecord *kr)
{
	const char *key = (const char *)kr->key.data;

	if (kr->record == NULL || kr->record->tombstone)
		return;
	if (d->pfx == 0)
		service_record(d, kr->record);
	else
		addr_record(d, key, kr->key.len, kr->record);
}

/* --- the directory ------------------------------------------------------------ */

static int
node_alive(const struct netd *n, const uint8_t node[MTS_NODE_ID_LEN])
{
	size_t i;

	if (memcmp(node, n->self_id, MTS_NODE_ID_LEN) == 0)
		return 1;
	for (i = 0; i < n->view.len; i++)
		if (memcmp(n->view.e[i].node.node, node, MTS_NODE_ID_LEN) == 0)
			return n->view.e[i].node.alive;
	return 0;
}

static int
addr_cmp(const void *a, const void *b)
{
	const struct addr_ent *x = a, *y = b;
	int c = memcmp(x->node, y->node, MTS_NODE_ID_LEN);

	return c ? c : strcmp(x->task, y->task);
}

/* A task's address: its t/ record's (reconciled writes what Attach
 * gave), else its node's na/ record's. */
static uint32_t
task_addr(const struct netd_disc *d, const struct netd_task *t,
    const uint8_t node[MTS_NODE_ID_LEN])
{
	struct addr_ent key, *e;

	if (t->addr != 0 || d->naddrs == 0)
		return t->addr;
	memcpy(key.node, node, MTS_NODE_ID_LEN);
	snprintf(key.task, sizeof(key.task), "%s", t->id);
	e = bsearch(&key, d->addrs, d->naddrs, sizeof(*d->addrs), addr_cmp);
	return e ? e->addr : 0;
}

/* Answered: running, healthy or without a health check, on a node SWIM
 * has not marked dead. */
static int
task_up(const struct netd *n, const struct netd_task *t,
    const uint8_t node[MTS_NODE_ID_LEN])
{
	return strcmp(t->state, "running") == 0 &&
	    (t->health[0] == '\0' || strcmp(t->health, "healthy") == 0) &&
	    node_alive(n, node);
}

/* The VIP rules again; the table is replaced when they changed. */
static void
vips_update(struct netd_disc *d)
{
	struct netd *n = d->n;
	uint32_t *local = xcalloc(n->att.n + 1, sizeof(*local));
	struct vip_node nd;
	uint32_t net;
	size_t i, k = 0;
	char *text;

	memset(&nd, 0, sizeof(nd));
	if (n->applied >= 0) {
		net = netd_subnet_net(&n->cfg.cidr, (uint32_t)n->applied);
		for (i = 0; i < n->att.n; i++)
			local[k++] = net | n->att.a[i].host;
		nd.gateway = net | 1;
	}
	nd.local = local;
	nd.nlocal = k;
	memcpy(nd.self, n->self_id, MTS_NODE_ID_LEN);
	nd.cidr_base = n->cfg.cidr.base;
	nd.cidr_mask = ~0u << (32 - n->cfg.cidr.plen);
	nd.wg_if = NETD_WG_IF;
	text = vip_nft(&d->cur, &nd);
	free(local);
	if (d->vip_text != NULL && strcmp(text, d->vip_text) == 0) {
		free(text);
		return;
	}
	free(d->vip_text);
	d->vip_text = text;
	netd_nft_changed(n);
}

/* Whether service `name`'s port p was lost to `holder` in directory d. */
static int
lost_in(const struct disc *d, const char *name, const struct disc_port *p,
    const char *holder)
{
	const struct disc_svc *s = disc_svc_by_name(d, name);
	size_t i;

	for (i = 0; s != NULL && i < s->nports; i++)
		if (s->ports[i].published == p->published &&
		    s->ports[i].udp == p->udp && s->ports[i].lost_to >= 0 &&
		    strcmp(d->s[s->ports[i].lost_to].name, holder) == 0)
			return 1;
	return 0;
}

/* A published port another service created earlier holds: said once
 * (an event) when it starts to be lost, and when it is no longer. */
static void
port_conflicts(struct netd *n, const struct disc *was, const struct disc *x)
{
	struct mts_event ev = { .type = "port.conflict" };
	char msg[2 * DISC_NAME_MAX + 96];
	size_t i, j;

	for (i = 0; i < x->ns; i++)
		for (j = 0; j < x->s[i].nports; j++) {
			const struct disc_port *p = &x->s[i].ports[j];
			const char *h;

			if (p->lost_to < 0)
				continue;
			h = x->s[p->lost_to].name;
			if (lost_in(was, x->s[i].name, p, h))
				continue;
			snprintf(msg, sizeof(msg),
			    "port %u/%s is held by %s (created first): not "
			    "opened for %s, whose tasks run on",
			    p->published, p->udp ? "udp" : "tcp", h,
			    x->s[i].name);
			ev.service = x->s[i].name;
			ev.message = msg;
			(void)mts_event_emit(n->events, &ev);
		}
	for (i = 0; i < was->ns; i++)
		for (j = 0; j < was->s[i].nports; j++) {
			const struct disc_port *p = &was->s[i].ports[j];

			if (p->lost_to >= 0 &&
			    !lost_in(x, was->s[i].name, p,
			        was->s[p->lost_to].name))
				log_info("%s: port %u/%s no longer lost to %s",
				    was->s[i].name, p->published,
				    p->udp ? "udp" : "tcp",
				    was->s[p->lost_to].name);
		}
}

/* The directory again from the services, the tasks and the addresses. */
static void
build(struct netd_disc *d)
{
	struct netd *n = d->n;
	struct disc x;
	size_t i, before = d->cur.nt, up0 = 0, up1 = 0;

	disc_init(&x);
	x.cidr_base = n->cfg.cidr.base;
	x.cidr_mask = n->cfg.cidr.plen ? ~0u << (32 - n->cfg.cidr.plen) : 0;
	for (i = 0; i < d->svcs.ns; i++)
		*disc_add_svc(&x) = d->svcs.s[i];
	for (i = 0; i < n->tasks.n; i++) {
		const struct netd_task *t = &n->tasks.t[i];
		uint8_t node[MTS_NODE_ID_LEN];
		struct disc_task *dt;

		if (mts_unhex(node, sizeof(node), t->node, MTS_NODE_HEX_LEN) <
		    0)
			continue;
		dt = disc_add_task(&x);
		memcpy(dt->node, node, sizeof(node));
		snprintf(dt->task, sizeof(dt->task), "%s", t->id);
		snprintf(dt->service, sizeof(dt->service), "%s", t->service);
		dt->addr = task_addr(d, t, node);
		dt->up = task_up(n, t, node);
	}
	disc_finish(&x, vip_net(n));
	for (i = 0; i < d->cur.nt; i++)
		up0 += d->cur.t[i].up;
	for (i = 0; i < x.nt; i++)
		up1 += x.t[i].up;
	if (x.nt != before || up0 != up1 || x.ns != d->cur.ns)
		log_info("directory: %zu services, %zu tasks with an address, "
		         "%zu of them up",
		    x.ns, x.nt, up1);
	port_conflicts(n, &d->cur, &x);
	disc_free(&d->cur);
	d->cur = x;
	vips_update(d);
}

/*
 * With br_netfilter's bridge-nf-call-iptables on, a connection DNAT'ed to
 * a VIP's task behind the same bridge is bridged, not routed: it skips
 * the forward hook (the isolation) and its replies are not translated
 * back. Every packet between tasks is routed here (isolated ports), so
 * netd turns it off in its namespace; checked after every scan, since
 * the module may be loaded later.
 */
static void
bridge_nf_off(void)
{
	char v[4] = "";
	int fd = open(BRIDGE_NF, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return; /* no br_netfilter: nothing to do */
	if (read(fd, v, sizeof(v) - 1) > 0 && v[0] != '0') {
		if (lseek(fd, 0, SEEK_SET) == 0 && write(fd, "0", 1) == 1)
			log_info("%s: 0 (VIPs on the bridge are routed)",
			    BRIDGE_NF);
		else
			log_warn("%s", BRIDGE_NF);
	}
	close(fd);
}

static void
scan_end(struct netd_disc *d)
{
	bridge_nf_off();
	if (!d->put_busy) {
		free(d->have);
		d->have = d->seen;
		d->have_len = d->seen_len;
		d->have_known = 1;
		d->seen = NULL;
		d->seen_len = 0;
	}
	disc_free(&d->svcs);
	d->svcs = d->next;
	disc_init(&d->next);
	free(d->addrs);
	d->addrs = d->naddrs_next;
	d->naddrs = d->nnext;
	d->naddrs_next = NULL;
	d->nnext = d->capnext = 0;
	if (d->naddrs > 1)
		qsort(d->addrs, d->naddrs, sizeof(*d->addrs), addr_cmp);
	build(d);
}

static void scan_next(struct netd_disc *);
static void disc_scan(struct netd_disc *);

static void
scan_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct netd_disc *d = arg;
	const Mts__Statestore__Reply *rep = (const Mts__Statestore__Reply *)m;
	size_t i;

	d->busy = 0;
	if (rc == -MTS_ERR_CANCELED)
		return;
	if (rc < 0 || rep->scan == NULL) {
		log_warnx("directory scan of %s: %s", prefixes[d->pfx],
		    rc < 0 ? err : "no scan in the reply");
		disc_free(&d->next);
		d->nnext = 0;
		return;
	}
	for (i = 0; i < rep->scan->n_items; i++) {
		const Mts__KeyRecord *kr = rep->scan->items[i];

		record(d, kr);
		if (kr->key.len < sizeof(d->after)) {
			memcpy(d->after, kr->key.data, kr->key.len);
			d->after[kr->key.len] = '\0';
		}
	}
	if (!rep->scan->more || rep->scan->n_items == 0) {
		d->after[0] = '\0';
		if (prefixes[++d->pfx] == NULL) {
			scan_end(d);
			if (d->again) {
				d->again = 0;
				disc_scan(d);
			}
			return;
		}
	}
	scan_next(d);
}

static void
scan_next(struct netd_disc *d)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;

	sc.prefix.data = (uint8_t *)prefixes[d->pfx];
	sc.prefix.len = strlen(prefixes[d->pfx]);
	sc.start_after.data = (uint8_t *)d->after;
	sc.start_after.len = strlen(d->after);
	sc.limit = DISC_PAGE;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
	req.scan = &sc;
	if (mts_ipc_async_call(d->n->store, &req.base,
	        &mts__statestore__reply__descriptor, 0, scan_done, d) != NULL)
		d->busy = 1;
}

static void
disc_scan(struct netd_disc *d)
{
	if (d->busy) {
		d->again = 1;
		return;
	}
	disc_free(&d->next);
	d->nnext = 0;
	free(d->seen);
	d->seen = NULL;
	d->seen_len = 0;
	d->pfx = 0;
	d->after[0] = '\0';
	scan_next(d);
}

static void
on_scan(void *arg, mts_time_t now)
{
	struct netd_disc *d = arg;

	mts_timer_arm(d->n->loop, &d->scan_timer, now + DISC_SCAN_MS);
	disc_scan(d);
}

/* --- na/<self> ------------------------------------------------------------------ */

/* This node's attachments as a packed NodeAddresses (malloc'd). */
static uint8_t *
own_addresses(const struct netd *n, size_t *len)
{
	Mts__Netaddr__NodeAddresses na = MTS__NETADDR__NODE_ADDRESSES__INIT;
	Mts__Netaddr__TaskAddress *ta = xcalloc(n->att.n + 1, sizeof(*ta));
	Mts__Netaddr__TaskAddress **tp = xcalloc(n->att.n + 1, sizeof(*tp));
	char(*ip)[16] = xcalloc(n->att.n + 1, sizeof(*ip));
	uint32_t net = netd_subnet_net(&n->cfg.cidr, (uint32_t)n->applied);
	uint8_t *buf;
	size_t i;

	na.format = 1;
	for (i = 0; i < n->att.n; i++) {
		mts__netaddr__task_address__init(&ta[i]);
		netd_ip_str(ip[i], sizeof(ip[i]), net | n->att.a[i].host);
		ta[i].task = (char *)n->att.a[i].task;
		ta[i].address = ip[i];
		tp[i] = &ta[i];
	}
	na.n_tasks = n->att.n;
	na.tasks = tp;
	*len = mts__netaddr__node_addresses__get_packed_size(&na);
	buf = xmalloc(*len + 1);
	mts__netaddr__node_addresses__pack(&na, buf);
	free(ta);
	free(tp);
	free(ip);
	return buf;
}

struct put_ctx {
	struct netd_disc *d;
	uint8_t *buf;
	size_t len;
};

static void
put_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct put_ctx *p = arg;
	struct netd_disc *d = p->d;

	d->put_busy = 0;
	if (rc == 0) {
		free(d->have);
		d->have = p->buf;
		d->have_len = p->len;
		d->have_known = 1;
		disc_scan(
		    d); /* the directory holds the new addresses at once */
	} else {
		if (rc != -MTS_ERR_CANCELED)
			log_warnx("writing %s%s: %s", ADDR_PREFIX, d->n->self,
			    err);
		free(p->buf);
	}
	free(p);
}

/* Writes na/<self> when the attachments differ from what it holds. */
static void
publish(struct netd_disc *d)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	struct netd *n = d->n;
	struct put_ctx *p;
	char key[64];
	size_t len;
	uint8_t *buf;

	if (d->put_busy || !d->have_known || n->applied < 0)
		return;
	buf = own_addresses(n, &len);
	if (len == d->have_len && memcmp(buf, d->have, len) == 0) {
		free(buf);
		return;
	}
	snprintf(key, sizeof(key), ADDR_PREFIX "%s", n->self);
	put.key.data = (uint8_t *)key;
	put.key.len = strlen(key);
	put.value.data = buf;
	put.value.len = len;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	p = xcalloc(1, sizeof(*p));
	p->d = d;
	p->buf = buf;
	p->len = len;
	if (mts_ipc_async_call(n->store, &req.base,
	        &mts__statestore__reply__descriptor, 0, put_done, p) == NULL) {
		free(buf);
		free(p);
		return;
	}
	d->put_busy = 1;
}

static void
on_alive(void *arg, mts_time_t now)
{
	struct netd_disc *d = arg;

	mts_timer_arm(d->n->loop, &d->alive_timer, now + DISC_ALIVE_MS);
	build(d);
	publish(d);
	netd_dns_tick(d->n);
}

/* --- the feed -------------------------------------------------------------------- */

static void
on_feed(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct netd_disc *d = arg;
	nng_msg *m;
	int any = 0;

	while (nng_recvmsg(d->sub, &m, NNG_FLAG_NONBLOCK) == 0) {
		nng_msg_free(m);
		any = 1;
	}
	if (any)
		disc_scan(d);
}

static int
feed_open(struct netd_disc *d)
{
	char path[512], err[256];
	size_t i;
	int fd;

	if (mts_ipc_sock_path(path, sizeof(path), d->n->agent->rundir,
	        "statestore", "statestore.pub") < 0 ||
	    mts_sub_open(path, prefixes[0], strlen(prefixes[0]), &d->sub, err,
	        sizeof(err)) < 0) {
		log_warnx("statestore.pub: %s", err);
		return -1;
	}
	d->sub_open = 1;
	for (i = 1; prefixes[i] != NULL; i++)
		if (nng_socket_set(d->sub, NNG_OPT_SUB_SUBSCRIBE, prefixes[i],
		        strlen(prefixes[i])) != 0)
			return -1;
	if (mts_ipc_recv_fd(d->sub, &fd) < 0 ||
	    (d->sub_w = mts_loop_watch(d->n->loop, fd, MTS_LOOP_IN,
	         "directory feed", on_feed, d)) == NULL) {
		log_warnx("statestore.pub: no receive descriptor");
		return -1;
	}
	return 0;
}

/* --- the agent's side ------------------------------------------------------------ */

int
netd_disc_open(struct netd *n)
{
	struct netd_disc *d = xcalloc(1, sizeof(*d));

	d->n = n;
	disc_init(&d->cur);
	disc_init(&d->svcs);
	disc_init(&d->next);
	n->disc = d;
	mts_timer_init(&d->scan_timer, "directory", on_scan, d);
	mts_timer_init(&d->alive_timer, "directory liveness", on_alive, d);
	if (feed_open(d) < 0)
		return -1;
	mts_timer_arm(n->loop, &d->scan_timer, mts_loop_now(n->loop));
	mts_timer_arm(n->loop, &d->alive_timer, mts_loop_now(n->loop));
	return 0;
}

void
netd_disc_close(struct netd *n)
{
	struct netd_disc *d = n->disc;

	if (d == NULL)
		return;
	mts_timer_disarm(n->loop, &d->scan_timer);
	mts_timer_disarm(n->loop, &d->alive_timer);
	mts_watch_free(d->sub_w);
	if (d->sub_open)
		nng_close(d->sub);
	disc_free(&d->cur);
	disc_free(&d->svcs);
	disc_free(&d->next);
	free(d->addrs);
	free(d->naddrs_next);
	free(d->have);
	free(d->seen);
	free(d->vip_text);
	free(d);
	n->disc = NULL;
}

const struct disc *
netd_disc_get(const struct netd *n)
{
	return n->disc ? &n->disc->cur : NULL;
}

char *
netd_disc_nft(struct netd *n)
{
	return xstrdup(n->disc && n->disc->vip_text ? n->disc->vip_text : "");
}

/* One block: the pointers, the messages, the task pointer arrays and the
 * address texts, so that the caller frees it whole. */
Mts__Netd__ServiceEndpoint **
netd_disc_status(const struct netd *n, size_t *count)
{
	const struct disc *d = netd_disc_get(n);
	Mts__Netd__ServiceEndpoint **pp, *e;
	size_t i, j, k, ntasks = 0, size;
	uint32_t *a;
	char *txt, **tp;
	uint8_t *blk;

	*count = 0;
	if (d == NULL || d->ns == 0)
		return NULL;
	for (i = 0; i < d->ns; i++)
		ntasks += disc_svc_addrs(d, &d->s[i], NULL, 0);
	size = d->ns * (sizeof(*pp) + sizeof(*e) + 16) +
	    ntasks * (sizeof(char *) + 16);
	blk = xcalloc(1, size);
	pp = (Mts__Netd__ServiceEndpoint **)blk;
	e = (Mts__Netd__ServiceEndpoint *)(pp + d->ns);
	tp = (char **)(e + d->ns);
	txt = (char *)(tp + ntasks);
	a = xcalloc(ntasks + 1, sizeof(*a));
	for (i = 0; i < d->ns; i++) {
		const struct disc_svc *s = &d->s[i];

		mts__netd__service_endpoint__init(&e[i]);
		e[i].service = (char *)s->name;
		e[i].endpoint_mode = s->dnsrr ? "dnsrr" : "vip";
		e[i].vip = txt;
		if (s->vip != 0)
			netd_ip_str(txt, 16, s->vip);
		txt += 16;
		k = disc_svc_addrs(d, s, a, ntasks + 1);
		e[i].tasks = tp;
		e[i].n_tasks = k;
		for (j = 0; j < k; j++) {
			netd_ip_str(txt, 16, a[j]);
			*tp++ = txt;
			txt += 16;
		}
		pp[i] = &e[i];
	}
	free(a);
	*count = d->ns;
	return pp;
}
