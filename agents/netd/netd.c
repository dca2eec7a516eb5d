/* netd.c: mts-netd's main — the config and the node key, the bridge and mts0 on wireguard-go, the attachments read back, the sandbox, then the socket, the timers that follow the cluster (gossipd's members, the m/ and n/ records), the service directory and the DNS server. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <libmnl/libmnl.h>

#include "fsutil.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "netd.h"

#define CALL_TIMEOUT_MS 5000

/* The [netd] keys (netd_conf.c), checked. */
static int
netd_conf_load(struct netd_conf *c, const struct mts_cfg *cfg)
{
	const char *cidr = mts_cfg_str(cfg, NETD_SECTION, "cluster_cidr");
	int64_t port = mts_cfg_int(cfg, NETD_SECTION, "listen_port");
	int64_t mtu = mts_cfg_int(cfg, NETD_SECTION, "mtu");
	int64_t force = mts_cfg_int(cfg, NETD_SECTION, "subnet_force");
	int64_t dns = mts_cfg_int(cfg, NETD_SECTION, "dns_port");

	if (netd_cidr_parse(cidr, &c->cidr) < 0) {
		log_warnx("[netd] cluster_cidr '%s': not an IPv4 network of "
		          "prefix /8 to /23",
		    cidr);
		return -1;
	}
	snprintf(c->cidr_text, sizeof(c->cidr_text), "%s", cidr);
	if (port < 1 || port > 65535) {
		log_warnx("[netd] listen_port %lld: not a port",
		    (long long)port);
		return -1;
	}
	if (mtu != 0 && (mtu < 1280 || mtu > 65535)) {
		log_warnx("[netd] mtu %lld: 0 or 1280..65535", (long long)mtu);
		return -1;
	}
	if (force < -1 || force >= (int64_t)netd_subnet_count(&c->cidr)) {
		log_warnx("[netd] subnet_force %lld: -1 or a /24 number of %s",
		    (long long)force, cidr);
		return -1;
	}
	if (dns < 0 || dns > 65535) {
		log_warnx("[netd] dns_port %lld: 0 or a port", (long long)dns);
		return -1;
	}
	c->dns_port = (unsigned)dns;
	c->dns_upstream = mts_cfg_str(cfg, NETD_SECTION, "dns_upstream");
	c->listen_port = (unsigned)port;
	c->mtu = (unsigned)mtu;
	c->subnet_force = (int32_t)force;
	c->wireguard_go = mts_cfg_str(cfg, NETD_SECTION, "wireguard_go");
	return 0;
}

/* The config, the node id and key, the loop and its timers. */
static int
setup(struct netd *n, struct mts_agent *a)
{
	char err[512];
	const char *id = a->node_id;

	if (id == NULL || strlen(id) != MTS_NODE_HEX_LEN ||
	    mts_unhex(n->self_id, sizeof(n->self_id), id, MTS_NODE_HEX_LEN) <
	        0) {
		log_warnx("no node id (MTS_NODE_ID): mts-netd runs under "
		          "mts-init");
		return -1;
	}
	mts_hex(n->self, n->self_id, sizeof(n->self_id));
	if (netd_conf_load(&n->cfg, a->cfg) < 0)
		return -1;
	if (mts_acl_table_load(&n->cfg.acl, netd_service.acl, a->cfg,
	        NETD_SECTION, err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	if (mts_agent_node_key(n->priv) < 0) {
		log_warnx("no node key: [netd] needs node_key = yes (the "
		          "node's X25519 key is its WireGuard key)");
		return -1;
	}
	crypto_scalarmult_base(n->pub, n->priv);
	if ((n->loop = mts_loop_new()) == NULL ||
	    mts_loop_stop_on_signals(n->loop) < 0)
		return -1;
	mts_timer_init(&n->poll_timer, "members", netd_on_poll, n);
	mts_timer_init(&n->scan_timer, "records", netd_on_scan, n);
	mts_timer_init(&n->wg_timer, "wireguard-go", netd_wg_on_wait, n);
	mts_timer_init(&n->status_timer, "status", netd_status_on_timer, n);
	return 0;
}

/* Before the sandbox: netd's own namespace, netlink, its directories, the
 * bridge, mts0 and the attachments that survived a restart. */
static int
open_net(struct netd *n, struct mts_agent *a)
{
	char dir[256];

	if ((n->hostns = open("/proc/thread-self/ns/net",
	         O_RDONLY | O_CLOEXEC)) < 0) {
		log_warn("open /proc/thread-self/ns/net");
		return -1;
	}
	if ((n->nl = netd_nl_open()) == NULL) {
		log_warn("netlink");
		return -1;
	}
	n->mtu = n->cfg.mtu ? n->cfg.mtu
	                    : netd_nl_underlay_mtu(n->nl) - NETD_WG_OVERHEAD;
	if (mts_ipc_agent_dir(dir, sizeof(dir), a->rundir, a->name) < 0 ||
	    mts_path_join(n->nsdir, sizeof(n->nsdir), dir, "ns") < 0 ||
	    mts_path_join(n->wgdir, sizeof(n->wgdir), dir, "wg") < 0 ||
	    mts_path_join(n->wgsock, sizeof(n->wgsock), n->wgdir,
	        "wireguard/" NETD_WG_IF ".sock") < 0 ||
	    mts_path_join(n->attfile, sizeof(n->attfile),
	        a->statedir ? a->statedir : ".", "attachments") < 0) {
		log_warnx("run directory path too long");
		return -1;
	}
	if (mts_mkdir_p(n->nsdir, 0755, 0750) < 0) {
		log_warn("mkdir %s", n->nsdir);
		return -1;
	}
	n->events = mts_event_log_open(dir, 0, a->node, "netd");
	if (netd_nft_open(n) < 0 || netd_bridge_apply(n) < 0 ||
	    netd_wg_start(n) < 0 || netd_attach_restore(n) < 0)
		return -1;
	return 0;
}

/* After the sandbox: the clients of the statestore and gossipd, then the
 * socket. */
static int
serve(struct netd *n, struct mts_agent *a)
{
	char path[512], err[256];

	if (mts_ipc_sock_path(path, sizeof(path), a->rundir, "statestore",
	        NULL) < 0 ||
	    (n->store = mts_ipc_async_open(n->loop, path, CALL_TIMEOUT_MS, err,
	         sizeof(err))) == NULL)
		goto fail;
	if (mts_ipc_sock_path(path, sizeof(path), a->rundir, "gossipd", NULL) <
	        0 ||
	    (n->gossip = mts_ipc_async_open(n->loop, path, CALL_TIMEOUT_MS, err,
	         sizeof(err))) == NULL)
		goto fail;
	if (mts_ipc_sock_path(path, sizeof(path), a->rundir, a->name, NULL) <
	        0 ||
	    (n->srv = mts_ipc_server_open(path, &netd_service, n, err,
	         sizeof(err))) == NULL)
		goto fail;
	mts_ipc_server_set_acl(n->srv, &n->cfg.acl);
	if (mts_loop_add_server(n->loop, n->srv) < 0 ||
	    netd_feeds_open(n) < 0 || netd_disc_open(n) < 0 ||
	    netd_dns_open(n) < 0)
		return -1;
	log_info("ready on %s: %s, port %u, mtu %u, %zu attachments", path,
	    n->cfg.cidr_text, n->cfg.listen_port, n->mtu, n->att.n);
	return 0;
fail:
	log_warnx("%s: %s", path, err);
	return -1;
}

static void
cleanup(struct netd *n, struct mts_agent *a)
{
	netd_feeds_close(n);
	netd_dns_close(n);
	if (n->store != NULL)
		mts_ipc_async_close(n->store);
	netd_disc_close(n); /* after the client: its callbacks ran */
	if (n->gossip != NULL)
		mts_ipc_async_close(n->gossip);
	if (n->loop != NULL) {
		netd_uapi_close(n);
		netd_status_flush(n);
	}
	free(n->wg_stats);
	if (n->srv != NULL) {
		mts_loop_remove_server(n->loop, n->srv);
		mts_ipc_server_close(n->srv);
	}
	if (n->loop != NULL) {
		mts_timer_disarm(n->loop, &n->poll_timer);
		mts_timer_disarm(n->loop, &n->scan_timer);
		mts_timer_disarm(n->loop, &n->wg_timer);
	}
	netd_nft_close(n);
	mts_event_log_close(n->events);
	mts_loop_free(n->loop);
	if (n->nl != NULL)
		mnl_socket_close(n->nl);
	if (n->hostns >= 0)
		close(n->hostns);
	sodium_memzero(n->priv, sizeof(n->priv));
	mts_acl_table_free(&n->cfg.acl);
	netd_att_free(&n->att);
	free(n->tasks.t);
	netd_peers_free(&n->have);
	netd_peers_free(&n->want);
	netd_view_free(&n->view);
	mts_agent_free(a);
}

int
main(int argc, char **argv)
{
	struct netd n;
	struct mts_agent a;
	int rc = MTS_EXIT_FAILURE;

	memset(&n, 0, sizeof(n));
	n.hostns = -1;
	netd_uapi_init(&n);
	n.subnet = n.applied = n.claim_put = -1;
	netd_att_init(&n.att);
	mts_agent_init(&a, "netd", argc, argv, "", NULL, NULL);
	n.agent = &a;
	if (mts_crypto_init() < 0 || setup(&n, &a) < 0) {
		cleanup(&n, &a);
		return MTS_EXIT_USAGE;
	}
	if (open_net(&n, &a) < 0 || mts_agent_sandbox(&a) < 0 ||
	    serve(&n, &a) < 0)
		goto out;
	mts_agent_ready(&a);
	netd_wg_wait(&n);
	mts_timer_arm(n.loop, &n.poll_timer, mts_now());
	mts_timer_arm(n.loop, &n.scan_timer, mts_now());
	if (mts_loop_run(n.loop) == 0 && !n.failed)
		rc = MTS_EXIT_OK;
	log_info("stopping");
out:
	cleanup(&n, &a);
	return rc;
}
