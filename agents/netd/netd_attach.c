/* netd_attach.c: mts-netd's node-side plumbing — the bridge mtsbr0 with the node's gateway address, each task's network namespace (a bind mount under <rundir>/netd/ns), its veth pair eth0 <-> mtsvN in the bridge with an address of the node's /24 and a default route, the persisted list read back and repaired at start. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <libmnl/libmnl.h>

#include "fsutil.h"
#include "log.h"
#include "mtserr.h"
#include "netd.h"

void
netd_veth_name(unsigned host, char *out, size_t outlen)
{
	snprintf(out, outlen, NETD_VETH_PREFIX "%u", host);
}

void
netd_attach_path(const struct netd *n, const char *task, char *out,
    size_t outlen)
{
	snprintf(out, outlen, "%s/%s", n->nsdir, task);
}

static uint32_t
subnet_net(const struct netd *n)
{
	return netd_subnet_net(&n->cfg.cidr, (uint32_t)n->subnet);
}

/* Writes v to a net sysctl (CAP_NET_ADMIN may, in its namespace). */
static int
sysctl_write(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -1;
	if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		rc = -1;
	close(fd);
	return rc;
}

static int
persist(struct netd *n)
{
	char *text = netd_att_format(&n->att);
	int rc = mts_write_atomic(n->attfile, text, strlen(text), 0600, 1);

	if (rc < 0)
		log_warn("writing %s", n->attfile);
	free(text);
	return rc;
}

/* --- inside a task's namespace -------------------------------------------------- */

/* A netlink socket of the namespace ns (the loop thread visits it just
 * long enough to open the socket). NULL on failure (logged). */
static struct mnl_socket *
nl_in(struct netd *n, int ns)
{
	struct mnl_socket *nl = NULL;

	if (setns(ns, CLONE_NEWNET) < 0) {
		log_warn("setns into a task's namespace");
		return NULL;
	}
	nl = netd_nl_open();
	if (setns(n->hostns, CLONE_NEWNET) < 0)
		fatal("setns back into netd's own namespace");
	if (nl == NULL)
		log_warn("netlink socket in a task's namespace");
	return nl;
}

/* lo up; eth0 with the task's address only, up; default via the bridge. */
static int
task_config(struct netd *n, int ns, unsigned host)
{
	struct mnl_socket *nl = nl_in(n, ns);
	uint32_t net = subnet_net(n), addr = net | host;
	int rc;

	if (nl == NULL)
		return -1;
	if ((rc = netd_nl_set(nl, "lo", 1, NULL, 0)) < 0 ||
	    (rc = netd_nl_addr_prune(nl, NETD_TASK_IF, &n->cfg.cidr, addr)) <
	        0 ||
	    (rc = netd_nl_addr(nl, NETD_TASK_IF, addr, 24, 1)) < 0 ||
	    (rc = netd_nl_set(nl, NETD_TASK_IF, 1, NULL, n->mtu)) < 0 ||
	    (rc = netd_nl_route(nl, 0, 0, net | 1, NETD_TASK_IF)) < 0) {
		errno = -rc;
		log_warn("configuring %s of a task (host .%u)", NETD_TASK_IF,
		    host);
		rc = -1;
	}
	mnl_socket_close(nl);
	return rc;
}

static int
is_netns(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == NSFS_MAGIC;
}

/* A new network namespace bind-mounted on path. */
static int
ns_make(struct netd *n, const char *path)
{
	int fd, rc = -1;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		log_warn("creating %s", path);
		return -1;
	}
	close(fd);
	if (unshare(CLONE_NEWNET) < 0) {
		log_warn("unshare(CLONE_NEWNET)");
		goto out;
	}
	if (mount("/proc/thread-self/ns/net", path, NULL, MS_BIND, NULL) < 0)
		log_warn("bind-mounting the namespace on %s", path);
	else
		rc = 0;
	if (setns(n->hostns, CLONE_NEWNET) < 0)
		fatal("setns back into netd's own namespace");
out:
	if (rc < 0)
		unlink(path);
	return rc;
}

static void
ns_remove(const char *path)
{
	if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
		log_warn("umount %s", path);
	if (unlink(path) < 0 && errno != ENOENT)
		log_warn("unlink %s", path);
}

/* Makes whatever of the attachment the kernel lacks: the namespace, the
 * veth pair in the bridge; then the task's address when the node has its
 * /24. Idempotent. */
static int
plumb(struct netd *n, const struct netd_attach *a)
{
	char path[512], veth[IFNAMSIZ];
	int ns, rc = -1, e;

	netd_attach_path(n, a->task, path, sizeof(path));
	netd_veth_name(a->host, veth, sizeof(veth));
	if (!is_netns(path) && ns_make(n, path) < 0)
		return -1;
	if ((ns = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		log_warn("open %s", path);
		return -1;
	}
	if (netd_nl_ifindex(n->nl, veth, NULL) == -ENODEV &&
	    (e = netd_nl_veth(n->nl, veth, NETD_TASK_IF, ns, n->mtu)) < 0) {
		errno = -e;
		log_warn("veth %s for task %s", veth, a->task);
		goto out;
	}
	if ((e = netd_nl_set(n->nl, veth, 1, NETD_BRIDGE, n->mtu)) < 0 ||
	    (e = netd_nl_port_isolate(n->nl, veth)) < 0) {
		errno = -e;
		log_warn("%s into %s, isolated", veth, NETD_BRIDGE);
		goto out;
	}
	rc = n->subnet >= 0 ? task_config(n, ns, a->host) : 0;
out:
	close(ns);
	return rc;
}

/* --- the bridge ----------------------------------------------------------------- */

/* The bridge's sysctls. The tasks' ports are isolated: the bridge answers
 * their ARP for each other (proxy_arp_pvlan, at once: proxy_delay 0) and
 * routes between them (forwarding; no redirects, which would point a task
 * at another task it cannot reach at layer 2), so that every packet to a
 * task, from this node too, passes table inet mts. mts0's forwarding is
 * written when mts0 is configured (netd_wg.c). */
static const struct {
	const char *path, *value;
} bridge_sys[] = {
	{ "/proc/sys/net/ipv4/conf/" NETD_BRIDGE "/forwarding", "1" },
	{ "/proc/sys/net/ipv4/conf/" NETD_BRIDGE "/proxy_arp_pvlan", "1" },
	{ "/proc/sys/net/ipv4/conf/" NETD_BRIDGE "/send_redirects", "0" },
	{ "/proc/sys/net/ipv4/neigh/" NETD_BRIDGE "/proxy_delay", "0" },
};

static void
bridge_sysctls(void)
{
	size_t i;

	for (i = 0; i < sizeof(bridge_sys) / sizeof(bridge_sys[0]); i++)
		if (sysctl_write(bridge_sys[i].path, bridge_sys[i].value) < 0)
			log_warn("writing %s to %s", bridge_sys[i].value,
			    bridge_sys[i].path);
}

int
netd_sysctl_write(const char *path, const char *v)
{
	return sysctl_write(path, v);
}

/* mtsbr0 up with the node's gateway address (.1 of its /24) and no other
 * of the cluster CIDR; forwarding on; every task re-addressed when the
 * /24 changed. */
int
netd_bridge_apply(struct netd *n)
{
	/* a fixed MAC (locally administered, from the node id): a bridge
	 * takes its lowest port's otherwise, so detaching one task changed
	 * the gateway's MAC under the others, cut off until their ARP
	 * entries expired (seconds) */
	uint8_t mac[6] = { 0x02, n->self_id[0], n->self_id[1], n->self_id[2],
		n->self_id[3], n->self_id[4] };
	uint32_t gw;
	char ip[16];
	size_t i;
	int rc;

	if ((rc = netd_nl_bridge(n->nl, NETD_BRIDGE, n->mtu)) < 0 ||
	    (rc = netd_nl_set_mac(n->nl, NETD_BRIDGE, mac)) < 0 ||
	    (rc = netd_nl_set(n->nl, NETD_BRIDGE, 1, NULL, n->mtu)) < 0) {
		errno = -rc;
		log_warn("bridge %s", NETD_BRIDGE);
		return -1;
	}
	if (n->subnet < 0 || n->subnet == n->applied)
		return 0;
	gw = subnet_net(n) | 1;
	if ((rc = netd_nl_addr_prune(n->nl, NETD_BRIDGE, &n->cfg.cidr, gw)) <
	        0 ||
	    (rc = netd_nl_addr(n->nl, NETD_BRIDGE, gw, 24, 1)) < 0) {
		errno = -rc;
		log_warn("address of %s", NETD_BRIDGE);
		return -1;
	}
	bridge_sysctls();
	netd_ip_str(ip, sizeof(ip), subnet_net(n));
	log_info("subnet %s/24 (gateway .1) on %s", ip, NETD_BRIDGE);
	n->applied = n->subnet;
	for (i = 0; i < n->att.n; i++)
		plumb(n, &n->att.a[i]);
	netd_nft_changed(n);
	return 0;
}

/* --- the API's side ---------------------------------------------------------------- */

int
netd_attach(struct netd *n, const char *task, const char *nets,
    const struct netd_attach **out)
{
	const struct netd_attach *a;
	int created, changed;

	if (n->subnet < 0 || n->applied != n->subnet)
		return -MTS_ERR_STATE;
	if ((a = netd_att_add(&n->att, task, &created)) == NULL)
		return netd_att_find(&n->att, task) ? -MTS_ERR_TOOBIG
		                                    : -MTS_ERR_INVAL;
	if (plumb(n, a) < 0) {
		if (created) {
			char path[512];

			netd_attach_path(n, task, path, sizeof(path));
			ns_remove(path);
			netd_att_remove(&n->att, task);
		}
		return -MTS_ERR_IO;
	}
	/* asked again without networks (by hand): the task keeps its own */
	changed = (created || nets[0] != '\0') &&
	    netd_att_set_nets(&n->att, task, nets) > 0;
	if ((created || changed) && persist(n) < 0)
		return -MTS_ERR_IO;
	/* in place before the task starts: the reply says it may */
	if (netd_nft_apply(n) < 0)
		return -MTS_ERR_IO;
	*out = netd_att_find(&n->att, task);
	return 0;
}

int
netd_detach(struct netd *n, const char *task, int *found)
{
	const struct netd_attach *a = netd_att_find(&n->att, task);
	char path[512], veth[IFNAMSIZ];
	int rc;

	*found = a != NULL;
	if (a == NULL)
		return 0;
	netd_veth_name(a->host, veth, sizeof(veth));
	netd_attach_path(n, task, path, sizeof(path));
	if ((rc = netd_nl_del(n->nl, veth)) < 0 && rc != -ENODEV) {
		errno = -rc;
		log_warn("deleting %s", veth);
	}
	ns_remove(path);
	netd_att_remove(&n->att, task);
	netd_nft_changed(n);
	return persist(n) < 0 ? -MTS_ERR_IO : 0;
}

/* What the file says, checked against the kernel: an attachment whose
 * namespace is gone (the node rebooted) is dropped, one whose veth went
 * missing gets a new one; addresses follow once the /24 is known. */
int
netd_attach_restore(struct netd *n)
{
	char *text = NULL, path[512];
	size_t len = 0, i;
	FILE *f = fopen(n->attfile, "r");
	int dropped = 0;

	if (f == NULL)
		return errno == ENOENT ? 0 : -1;
	if (getdelim(&text, &len, '\0', f) < 0 || text == NULL) {
		free(text);
		text = NULL;
	}
	fclose(f);
	if (text != NULL && netd_att_parse(&n->att, text) < 0)
		log_warnx("%s: not an attachment list: ignored", n->attfile);
	free(text);
	for (i = 0; i < n->att.n;) {
		netd_attach_path(n, n->att.a[i].task, path, sizeof(path));
		if (!is_netns(path)) {
			log_info("task %s: namespace gone, attachment dropped",
			    n->att.a[i].task);
			unlink(path);
			netd_att_remove(&n->att, n->att.a[i].task);
			dropped++;
			continue;
		}
		plumb(n, &n->att.a[i]);
		i++;
	}
	log_info("%zu attachments restored, %d dropped", n->att.n, dropped);
	return dropped ? persist(n) : 0;
}
