/* netd_nl.c: mts-netd's rtnetlink requests through libmnl — links (bridge, veth pairs, up, master, MTU), IPv4 addresses and routes, the underlay's MTU — each one request answered by its acknowledgement. */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include "netd.h"

static uint32_t seq;

struct mnl_socket *
netd_nl_open(void)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);

	if (nl == NULL)
		return NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(nl);
		return NULL;
	}
	if (seq == 0)
		seq = (uint32_t)time(NULL);
	return nl;
}

/* Sends nlh and reads until its acknowledgement (or the end of a dump),
 * passing every other answer to cb. 0 or -errno. */
static int
talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned portid = mnl_socket_get_portid(nl);
	ssize_t n;
	int rc;

	nlh->nlmsg_seq = ++seq;
	if ((nlh->nlmsg_flags & NLM_F_DUMP) != NLM_F_DUMP)
		nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		if ((n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) < 0)
			return -errno;
		rc = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, cb,
		    data);
		if (rc == MNL_CB_STOP)
			return 0;
		if (rc < 0)
			return errno ? -errno : -EIO;
	}
}

static struct nlmsghdr *
link_msg(char *buf, uint16_t type, uint16_t flags, struct ifinfomsg **ifm)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	*ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(**ifm));
	(*ifm)->ifi_family = AF_UNSPEC;
	return nlh;
}

struct link_info {
	unsigned index, mtu, flags;
	char name[IFNAMSIZ];
};

static int
link_attr(const struct nlattr *a, void *data)
{
	struct link_info *li = data;

	if (mnl_attr_get_type(a) == IFLA_MTU &&
	    mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
		li->mtu = mnl_attr_get_u32(a);
	else if (mnl_attr_get_type(a) == IFLA_IFNAME &&
	    mnl_attr_validate(a, MNL_TYPE_STRING) >= 0)
		snprintf(li->name, sizeof(li->name), "%s", mnl_attr_get_str(a));
	return MNL_CB_OK;
}

static void
link_parse(const struct nlmsghdr *nlh, struct link_info *li)
{
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);

	memset(li, 0, sizeof(*li));
	li->index = (unsigned)ifm->ifi_index;
	li->flags = ifm->ifi_flags;
	mnl_attr_parse(nlh, sizeof(*ifm), link_attr, li);
}

static int
link_one(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWLINK)
		link_parse(nlh, data);
	return MNL_CB_OK;
}

int
netd_nl_ifindex(struct mnl_socket *nl, const char *name, unsigned *mtu)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifm;
	struct nlmsghdr *nlh = link_msg(buf, RTM_GETLINK, 0, &ifm);
	struct link_info li = { 0 };
	int rc;

	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if ((rc = talk(nl, nlh, link_one, &li)) < 0)
		return rc;
	if (li.index == 0)
		return -ENODEV;
	if (mtu != NULL)
		*mtu = li.mtu;
	return (int)li.index;
}

int
netd_nl_bridge(struct mnl_socket *nl, const char *name, unsigned mtu)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifm;
	struct nlmsghdr *nlh =
	    link_msg(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifm);
	struct nlattr *info;
	int rc;

	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "bridge");
	mnl_attr_nest_end(nlh, info);
	rc = talk(nl, nlh, NULL, NULL);
	return rc == -EEXIST ? 0 : rc;
}

int
netd_nl_veth(struct mnl_socket *nl, const char *host, const char *peer,
    int netns_fd, unsigned mtu)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifm, *pifm;
	struct nlmsghdr *nlh =
	    link_msg(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifm);
	struct nlattr *info, *data, *p;

	mnl_attr_put_strz(nlh, IFLA_IFNAME, host);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	p = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	pifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*pifm));
	memset(pifm, 0, sizeof(*pifm));
	pifm->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, peer);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)netns_fd);
	mnl_attr_nest_end(nlh, p);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return talk(nl, nlh, NULL, NULL);
}

int
netd_nl_set_mac(struct mnl_socket *nl, const char *name, const uint8_t mac[6])
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifm;
	struct nlmsghdr *nlh = link_msg(buf, RTM_NEWLINK, 0, &ifm);
	int idx;

	if ((idx = netd_nl_ifindex(nl, name, NULL)) < 0)
		return idx;
	ifm->ifi_index = idx;
	mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	return talk(nl, nlh, NULL, NULL);
}

int
netd_nl_port_isolate(struct mnl_socket *nl, const char *name)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifm;
	struct nlmsghdr *nlh = link_msg(buf, RTM_NEWLINK, 0, &ifm);
	struct nlattr *info, *data;
	int idx;

	if ((idx = netd_nl_ifindex(nl, name, NULL)) < 0)
		return idx;
	ifm->ifi_index = idx;
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, "bridge");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_SLAVE_DATA);
	mnl_attr_put_u8(nlh, IFLA_BRPORT_ISOLATED, 1);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return talk(nl, nlh, NULL, NULL);
}

int
netd_nl_set(struct mnl_socket *nl, const char *name, int up, const char *master,
    unsigned mtu)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifm;
	struct nlmsghdr *nlh = link_msg(buf, RTM_NEWLINK, 0, &ifm);
	int idx, midx;

	if ((idx = netd_nl_ifindex(nl, name, NULL)) < 0)
		return idx;
	ifm->ifi_index = idx;
	if (up) {
		ifm->ifi_flags = IFF_UP;
		ifm->ifi_change = IFF_UP;
	}
	if (master != NULL) {
		if ((midx = netd_nl_ifindex(nl, master, NULL)) < 0)
			return midx;
		mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)midx);
	}
	if (mtu > 0)
		mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	return talk(nl, nlh, NULL, NULL);
}

int
netd_nl_del(struct mnl_socket *nl, const char *name)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifm;
	struct nlmsghdr *nlh = link_msg(buf, RTM_DELLINK, 0, &ifm);

	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return talk(nl, nlh, NULL, NULL);
}

/* --- addresses and routes -------------------------------------------------------- */

int
netd_nl_addr(struct mnl_socket *nl, const char *name, uint32_t addr,
    unsigned plen, int add)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;
	uint32_t a = htonl(addr), bcast = htonl(addr | (~0u >> plen));
	int idx, rc;

	if ((idx = netd_nl_ifindex(nl, name, NULL)) < 0)
		return idx;
	nlh->nlmsg_type = add ? RTM_NEWADDR : RTM_DELADDR;
	nlh->nlmsg_flags =
	    NLM_F_REQUEST | (add ? NLM_F_CREATE | NLM_F_REPLACE : 0);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (uint8_t)plen;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (unsigned)idx;
	mnl_attr_put_u32(nlh, IFA_LOCAL, a);
	mnl_attr_put_u32(nlh, IFA_ADDRESS, a);
	if (plen < 31)
		mnl_attr_put_u32(nlh, IFA_BROADCAST, bcast);
	rc = talk(nl, nlh, NULL, NULL);
	return !add && rc == -EADDRNOTAVAIL ? 0 : rc;
}

struct addr_list {
	unsigned index;
	uint32_t addr[64];
	unsigned plen[64];
	size_t n;
};

static int
addr_attr(const struct nlattr *a, void *data)
{
	uint32_t *out = data;

	if (mnl_attr_get_type(a) == IFA_LOCAL &&
	    mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
		*out = ntohl(mnl_attr_get_u32(a));
	return MNL_CB_OK;
}

static int
addr_one(const struct nlmsghdr *nlh, void *data)
{
	struct addr_list *l = data;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	uint32_t addr = 0;

	if (nlh->nlmsg_type != RTM_NEWADDR || ifa->ifa_family != AF_INET ||
	    ifa->ifa_index != l->index || l->n == 64)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ifa), addr_attr, &addr);
	l->plen[l->n] = ifa->ifa_prefixlen;
	l->addr[l->n++] = addr;
	return MNL_CB_OK;
}

int
netd_nl_addr_prune(struct mnl_socket *nl, const char *name,
    const struct netd_cidr *cidr, uint32_t keep)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;
	struct addr_list l;
	uint32_t mask = ~0u << (32 - cidr->plen);
	int idx, rc;
	size_t i;

	if ((idx = netd_nl_ifindex(nl, name, NULL)) < 0)
		return idx;
	memset(&l, 0, sizeof(l));
	l.index = (unsigned)idx;
	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	if ((rc = talk(nl, nlh, addr_one, &l)) < 0)
		return rc;
	for (i = 0; i < l.n; i++)
		if ((l.addr[i] & mask) == cidr->base && l.addr[i] != keep &&
		    (rc = netd_nl_addr(nl, name, l.addr[i], l.plen[i], 0)) < 0)
			return rc;
	return 0;
}

int
netd_nl_route(struct mnl_socket *nl, uint32_t dst, unsigned plen, uint32_t gw,
    const char *dev)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	int idx = 0;

	if (dev != NULL && (idx = netd_nl_ifindex(nl, dev, NULL)) < 0)
		return idx;
	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = (uint8_t)plen;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
	rtm->rtm_type = RTN_UNICAST;
	if (plen > 0)
		mnl_attr_put_u32(nlh, RTA_DST, htonl(dst));
	if (gw)
		mnl_attr_put_u32(nlh, RTA_GATEWAY, htonl(gw));
	if (idx > 0)
		mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)idx);
	return talk(nl, nlh, NULL, NULL);
}

/* --- the underlay ------------------------------------------------------------------ */

static int
mtu_one(const struct nlmsghdr *nlh, void *data)
{
	unsigned *low = data;
	struct link_info li;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	link_parse(nlh, &li);
	if ((li.flags & IFF_UP) == 0 || (li.flags & IFF_LOOPBACK) != 0 ||
	    strncmp(li.name, "mts", 3) == 0 || li.mtu < 576)
		return MNL_CB_OK;
	if (*low == 0 || li.mtu < *low)
		*low = li.mtu;
	return MNL_CB_OK;
}

unsigned
netd_nl_underlay_mtu(struct mnl_socket *nl)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct ifinfomsg *ifm;
	struct nlmsghdr *nlh = link_msg(buf, RTM_GETLINK, NLM_F_DUMP, &ifm);
	unsigned low = 0;

	if (talk(nl, nlh, mtu_one, &low) < 0 || low == 0)
		return 1500;
	return low;
}
