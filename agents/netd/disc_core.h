/* disc_core.h: mts-netd's pure service directory — every service's stack, short name, networks, endpoint mode and VIP, and every task's address and whether it may be answered — with the lookups the DNS server and the VIPs need (which task an address is, which services it may see). */
#ifndef DISC_CORE_H
#define DISC_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

#define DISC_NAME_MAX 128 /* <stack>_<service>, a network's name */
#define DISC_LABEL_MAX 64 /* a stack, a short name (one DNS label) */
#define DISC_NET_MAX 16   /* networks of one service */
#define DISC_TASK_MAX 128
#define DISC_PORT_MAX 16 /* published ports of one service */
#define DISC_VIP_FIRST 2 /* in the VIP /24: .1 is not handed out */
#define DISC_VIP_LAST 254

/* A published port: ingress (every node) or host (the nodes with a
 * task). */
struct disc_port {
	uint16_t published, target;
	uint8_t udp;  /* else tcp */
	uint8_t host; /* mode: host */
	/* after disc_finish: -1 when this service holds the port, else the
	 * index (in s) of the service created earlier that holds it
	 * (mts_port_holders): this one's port is not opened */
	int lost_to;
};

struct disc_svc {
	char name[DISC_NAME_MAX]; /* <stack>_<service> */
	char stack[DISC_LABEL_MAX];
	char short_name[DISC_LABEL_MAX];
	uint64_t created; /* creation HLC (mts_svc_created): the older first */
	int dnsrr;        /* endpoint_mode: dnsrr; else a VIP */
	uint32_t vip;     /* host order; 0: none (dnsrr, or the VIP /24 full) */
	char nets[DISC_NET_MAX][DISC_NAME_MAX];
	size_t nnets; /* 0: <stack>_default */
	struct disc_port ports[DISC_PORT_MAX];
	size_t nports;
};

struct disc_task {
	char task[DISC_TASK_MAX];
	uint8_t node[MTS_NODE_ID_LEN];
	char service[DISC_NAME_MAX]; /* "" when it is no service's */
	uint32_t addr;               /* host order; 0: no attachment seen */
	int up;                      /* running, healthy or no health check */
};

struct disc {
	/* the cluster CIDR (host order): its reverse names (in-addr.arpa)
	 * are the DNS server's to answer; mask 0: none are */
	uint32_t cidr_base, cidr_mask;
	struct disc_svc *s; /* sorted by name after disc_finish */
	size_t ns, caps;
	struct disc_task *t; /* sorted by address after disc_finish */
	size_t nt, capt;
};

void disc_init(struct disc *);
void disc_free(struct disc *);
/* Appends a service (copied); the fields are checked by disc_finish. */
struct disc_svc *disc_add_svc(struct disc *);
struct disc_task *disc_add_task(struct disc *);
/* Sorts both tables, drops services whose names are not DNS labels or
 * repeat, tasks without an address and repeated addresses (the first one
 * by task id stays), then gives every VIP service its VIP from the /24
 * at vip_net (host order; 0: no VIPs) and every contested published port
 * to the service created first (disc_port.lost_to). VIPs go out oldest
 * service first (creation HLC, then name), each taking the first of its
 * candidates nobody older holds: a service's VIP depends only on the
 * services older than it, so a new one never moves it. */
void disc_finish(struct disc *, uint32_t vip_net);

/* The VIP host number service `name` tries k-th: BLAKE2b of (name, k)
 * modulo the VIP range, plus DISC_VIP_FIRST. */
unsigned disc_vip_candidate(const char *name, unsigned k);

/* Lookups (after disc_finish). */
const struct disc_task *disc_task_by_addr(const struct disc *, uint32_t addr);
const struct disc_svc *disc_svc_by_name(const struct disc *, const char *);
/* The service whose VIP is addr, NULL when none. */
const struct disc_svc *disc_svc_by_vip(const struct disc *, uint32_t addr);
/* The task with id `task` (case-insensitive), NULL when none. */
const struct disc_task *disc_task_by_id(const struct disc *, const char *task);
/* The service a task with address `addr` belongs to, NULL when the
 * address is no service's task. */
const struct disc_svc *disc_asker(const struct disc *, uint32_t addr);
/* Whether `from` may see `to`: they share a network. */
int disc_visible(const struct disc_svc *from, const struct disc_svc *to);
/* Service `short_name` of stack `stack`, NULL when none. */
const struct disc_svc *disc_svc_find(const struct disc *, const char *stack,
    const char *short_name);
/* The addresses of svc's tasks that are up, sorted, into out (at most
 * max); how many there are in all. */
size_t disc_svc_addrs(const struct disc *, const struct disc_svc *,
    uint32_t *out, size_t max);
/* The network `i` of svc: its own, or <stack>_default. */
void disc_svc_net(const struct disc_svc *, size_t i, char *out, size_t outlen);
size_t disc_svc_nnets(const struct disc_svc *);

#endif
