/* test_netd_core.c: unit tests of mts-netd's core (agents/netd/netd_core.c, netd_nft_core.c) — the cluster CIDR, /24 claims converging to distinct subnets from forced collisions (seeded, printed), task host numbers and their persisted form with their networks, network names, the isolation table (read back by a small evaluator: a packet to a local task is accepted exactly when both share a network, 200 seeded cases), the element changes from one table to the next (checked against the sets of the next, 200 seeded cases), the WireGuard peer set, its UAPI diff and the UAPI answers read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/netd/netd_core.h"
#include "mtserr.h"

struct cidr_case {
	const char *text;
	int ok;
	uint32_t count;
};

static const struct cidr_case cidrs[] = {
	{ "10.210.0.0/16", 1, 255 },
	{ "10.0.0.0/8", 1, 65535 },
	{ "192.168.4.0/22", 1, 3 },
	{ "10.210.0.0/24", 0, 0 }, /* room for no node */
	{ "10.210.1.0/16", 0, 0 }, /* host bits set */
	{ "10.210.0.0", 0, 0 },
	{ "10.210.0.0/", 0, 0 },
	{ "10.210.0.0/16x", 0, 0 },
	{ "10.256.0.0/16", 0, 0 },
	{ "10.210.0.0/7", 0, 0 },
};

static void
test_cidr(void **state)
{
	struct netd_cidr c;
	char ip[16];
	size_t i;

	for (i = 0; i < sizeof(cidrs) / sizeof(cidrs[0]); i++) {
		int rc = netd_cidr_parse(cidrs[i].text, &c);

		assert_int_equal(rc == 0, cidrs[i].ok);
		if (rc == 0)
			assert_int_equal(netd_subnet_count(&c), cidrs[i].count);
	}
	assert_int_equal(netd_cidr_parse("10.210.0.0/16", &c), 0);
	netd_ip_str(ip, sizeof(ip), netd_subnet_net(&c, 7));
	assert_string_equal(ip, "10.210.7.0");
	assert_int_equal(netd_subnet_index(&c, netd_subnet_net(&c, 7)), 7);
	assert_int_equal(netd_subnet_index(&c, 0x0ad20701), -1);
	assert_int_equal(netd_subnet_index(&c, 0x0ad30000), -1);
}

static void
rand_id(uint8_t id[MTS_NODE_ID_LEN], unsigned *seed)
{
	for (size_t i = 0; i < MTS_NODE_ID_LEN; i++)
		id[i] = (uint8_t)rand_r(seed);
}

/* Each round every node (in an order given by the seed) looks at the
 * others' claims and re-chooses; views may be stale by one round for half
 * the nodes (they act on the previous round's claims). Returns the rounds
 * until nothing changes. */
static int
converge(struct netd_claim *c, size_t n, uint32_t space, unsigned *seed)
{
	struct netd_claim *prev = calloc(n, sizeof(*prev));
	size_t *order = calloc(n, sizeof(*order)), k, j, x;
	int round, changed;

	for (k = 0; k < n; k++)
		order[k] = k;
	for (round = 0; round < 100; round++) {
		memcpy(prev, c, n * sizeof(*c));
		changed = 0;
		for (k = n - 1; k > 0; k--) { /* every node once, shuffled */
			j = (size_t)rand_r(seed) % (k + 1);
			x = order[k];
			order[k] = order[j];
			order[j] = x;
		}
		for (k = 0; k < n; k++) {
			size_t i = order[k];
			const struct netd_claim *view =
			    rand_r(seed) % 2 ? prev : c;
			int32_t s = netd_subnet_choose(c[i].node, c[i].subnet,
			    view, n, space);

			changed |= s != c[i].subnet;
			c[i].subnet = s;
		}
		if (!changed)
			break;
	}
	free(order);
	free(prev);
	return round;
}

/* Forced collisions: every node starts on the same /24 (the test hook of
 * the acceptance test does the same through the config); after
 * convergence no two nodes share one, and the lowest id kept it. */
static void
test_subnets_converge(void **state)
{
	unsigned seed0 = (unsigned)(getenv("SEED") ? atoi(getenv("SEED")) : 1);

	for (unsigned t = 0; t < 200; t++) {
		unsigned seed = seed0 + t;
		size_t n = 2 + (size_t)(rand_r(&seed) % 40), i, j, low = 0;
		uint32_t space = (uint32_t)n + (uint32_t)(rand_r(&seed) % 8);
		struct netd_claim *c = calloc(n, sizeof(*c));

		for (i = 0; i < n; i++) {
			rand_id(c[i].node, &seed);
			c[i].subnet = 3 % space;
			if (memcmp(c[i].node, c[low].node, MTS_NODE_ID_LEN) < 0)
				low = i;
		}
		assert_true(converge(c, n, space, &seed) < 100);
		for (i = 0; i < n; i++) {
			assert_true(c[i].subnet >= 0);
			for (j = i + 1; j < n; j++)
				if (c[i].subnet == c[j].subnet) {
					print_error("seed %u: nodes %zu and %zu "
					            "share %d\n",
					    seed0 + t, i, j, c[i].subnet);
					fail();
				}
		}
		assert_int_equal(c[low].subnet, 3 % space);
		free(c);
	}
}

/* A node keeps its claim against higher ids, yields to a lower one, and
 * a full space is reported. */
static void
test_subnet_rules(void **state)
{
	struct netd_claim o[2];
	uint8_t self[MTS_NODE_ID_LEN];
	int32_t s;

	memset(self, 0x50, sizeof(self));
	memset(o[0].node, 0x60, sizeof(o[0].node));
	o[0].subnet = 5;
	assert_int_equal(netd_subnet_choose(self, 5, o, 1, 10), 5);
	memset(o[0].node, 0x40, sizeof(o[0].node));
	s = netd_subnet_choose(self, 5, o, 1, 10);
	assert_true(s >= 0 && s != 5);
	/* no claim yet: the first candidate nobody holds */
	s = netd_subnet_choose(self, -1, o, 0, 10);
	assert_int_equal(s, (int32_t)netd_candidate(self, 0, 10));
	/* the only two /24s are held by others */
	o[0].subnet = 0;
	memset(o[1].node, 0x70, sizeof(o[1].node));
	o[1].subnet = 1;
	assert_int_equal(netd_subnet_choose(self, -1, o, 2, 2), -1);
	/* one left */
	assert_int_equal(netd_subnet_choose(self, -1, o, 1, 2), 1);
	/* candidates differ between nodes and are in range */
	for (uint32_t k = 0; k < 100; k++)
		assert_true(netd_candidate(self, k, 7) < 7);
}

static void
test_networks(void **state)
{
	char *v[NETD_NETS_MAX + 2], out[NETD_NETS_TEXT], name[8];
	char *dup[] = { "shop_default", "shared", "shop_default", "a.b-c" };
	char *bad[] = { "ok", "no/slash" };
	char *empty[] = { "" };
	char big[NETD_NET_MAX + 1];
	int i;

	assert_true(netd_net_ok("shop_default"));
	assert_false(netd_net_ok(""));
	assert_false(netd_net_ok("a,b"));
	assert_false(netd_net_ok("a b"));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_false(netd_net_ok(big));
	big[NETD_NET_MAX - 1] = '\0';
	assert_true(netd_net_ok(big));
	/* sorted, without duplicates */
	assert_int_equal(netd_nets_join(dup, 4, out, sizeof(out)), 0);
	assert_string_equal(out, "a.b-c,shared,shop_default");
	assert_true(netd_nets_valid(out));
	assert_true(netd_nets_has(out, "shared"));
	assert_true(netd_nets_has(out, "a.b-c"));
	assert_false(netd_nets_has(out, "shop"));
	assert_false(netd_nets_has(out, "default"));
	assert_int_equal(netd_nets_join(bad, 2, out, sizeof(out)),
	    -MTS_ERR_INVAL);
	assert_string_equal(out, "");
	assert_int_equal(netd_nets_join(empty, 1, out, sizeof(out)),
	    -MTS_ERR_INVAL);
	assert_int_equal(netd_nets_join(NULL, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	for (i = 0; i < NETD_NETS_MAX + 1; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		v[i] = strdup(name);
	}
	assert_int_equal(netd_nets_join(v, NETD_NETS_MAX, out, sizeof(out)), 0);
	assert_int_equal(netd_nets_join(v, NETD_NETS_MAX + 1, out, sizeof(out)),
	    -MTS_ERR_INVAL);
	for (i = 0; i < NETD_NETS_MAX + 1; i++)
		free(v[i]);
	assert_true(netd_nets_valid(""));
	assert_false(netd_nets_valid(","));
	assert_false(netd_nets_valid("a,"));
	assert_false(netd_nets_valid("a b"));
}

/* --- the isolation table, read back by a small evaluator ----------------------- */

#define EV_SETS 64
#define EV_ADDRS 64

/* The sets and the rules of chain isolate as the text declares them. */
struct ev {
	char name[EV_SETS][32];
	uint32_t addr[EV_SETS][EV_ADDRS];
	size_t naddr[EV_SETS], nsets;
	int rule[EV_SETS]; /* saddr and daddr in set i: accept */
	size_t nrules;
	int none_rule, jump_allow, drop;
};

static int
ev_set(const struct ev *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->nsets; i++)
		if (strcmp(e->name[i], name) == 0)
			return (int)i;
	return -1;
}

static void
ev_parse(struct ev *e, const char *text)
{
	const char *p;
	char name[32], a[20], b[20];
	int cur = -1;

	memset(e, 0, sizeof(*e));
	for (p = text; *p; p = strchr(p, '\n') + 1) {
		const char *q = p + strspn(p, "\t");

		if (sscanf(q, "set %31s {", name) == 1) {
			cur = (int)e->nsets++;
			snprintf(e->name[cur], sizeof(e->name[cur]), "%s",
			    name);
		} else if (strncmp(q, "elements = { ", 13) == 0) {
			const char *x = q + 13;
			uint32_t ip;

			assert_true(cur >= 0);
			while (sscanf(x, "%19[0-9.]", a) == 1 &&
			    netd_ip_parse(a, &ip) == 0) {
				e->addr[cur][e->naddr[cur]++] = ip;
				x += strlen(a);
				if (strncmp(x, ", ", 2) != 0)
					break;
				x += 2;
			}
		} else if (sscanf(q, "ip saddr @%19s ip daddr @%19s accept", a,
		               b) == 2) {
			assert_string_equal(a, b);
			assert_true(ev_set(e, a) >= 0);
			e->rule[e->nrules++] = ev_set(e, a);
		} else if (strncmp(q,
		               "ip saddr != @known ip daddr != @known accept",
		               44) == 0) {
			e->none_rule = 1;
		} else if (strncmp(q, "jump allow", 10) == 0) {
			e->jump_allow = 1;
		} else if (strncmp(q, "counter drop", 12) == 0) {
			e->drop = 1;
		}
		if (strchr(p, '\n') == NULL)
			break;
	}
}

static int
ev_in(const struct ev *e, int set, uint32_t ip)
{
	size_t i;

	for (i = 0; set >= 0 && i < e->naddr[set]; i++)
		if (e->addr[set][i] == ip)
			return 1;
	return 0;
}

/* Whether chain isolate accepts src -> dst. */
static int
ev_accepts(const struct ev *e, uint32_t src, uint32_t dst)
{
	int known = ev_set(e, "known");
	size_t i;

	for (i = 0; i < e->nrules; i++)
		if (ev_in(e, e->rule[i], src) && ev_in(e, e->rule[i], dst))
			return 1;
	return e->none_rule && !ev_in(e, known, src) && !ev_in(e, known, dst);
}

/* Whether two members share a network, or are both on none. */
static int
share(const struct netd_member *a, const struct netd_member *b)
{
	char name[NETD_NET_MAX];
	const char *p = a->nets;
	size_t k;

	if (a->nets[0] == '\0' || b->nets[0] == '\0')
		return a->nets[0] == '\0' && b->nets[0] == '\0';
	while (*p) {
		k = strcspn(p, ",");
		snprintf(name, sizeof(name), "%.*s", (int)k, p);
		if (netd_nets_has(b->nets, name))
			return 1;
		p += k + (p[k] == ',');
	}
	return 0;
}

static void
test_isolation(void **state)
{
	static const char *nets[] = { "", "a", "b", "a,b", "shared", "b,shared",
		"x" };
	struct netd_member m[24];
	struct ev e;
	char *text;
	size_t i, j, n;
	unsigned seed;

	for (seed = 1; seed <= 200; seed++) {
		srand(seed);
		n = 1 + (size_t)rand() % 24;
		for (i = 0; i < n; i++) {
			m[i].addr = (10u << 24) | (210u << 16) |
			    ((unsigned)(rand() % 3) << 8) | (2 + (unsigned)i);
			m[i].nets = nets[rand() % 7];
			m[i].local = (m[i].addr >> 8 & 0xff) == 0;
		}
		text = netd_nft_isolation(m, n, "mtsbr0");
		assert_non_null(strstr(text,
		    "oifname \"mtsbr0\" ct state established,related accept"));
		assert_non_null(
		    strstr(text, "oifname \"mtsbr0\" jump isolate"));
		ev_parse(&e, text);
		assert_true(e.drop && e.jump_allow && e.none_rule);
		/* every packet to a task of this node: accepted exactly
		 * when both share a network (or neither is on one) */
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++) {
				if (!m[j].local)
					continue;
				if (ev_accepts(&e, m[i].addr, m[j].addr) !=
				    share(&m[i], &m[j])) {
					print_message("seed %u: %zu -> %zu "
					              "(%s -> %s)\n%s",
					    seed, i, j, m[i].nets, m[j].nets,
					    text);
					fail();
				}
			}
		free(text);
	}
	/* no member: only the rule for addresses on no network */
	text = netd_nft_isolation(NULL, 0, "mtsbr0");
	ev_parse(&e, text);
	assert_int_equal(e.nrules, 0);
	assert_true(e.none_rule);
	free(text);
}

static void
test_attachments(void **state)
{
	struct netd_attachments s, back;
	const struct netd_attach *a;
	char task[16], *text;
	int created;

	netd_att_init(&s);
	netd_att_init(&back);
	a = netd_att_add(&s, "web.1", &created);
	assert_non_null(a);
	assert_int_equal(created, 1);
	assert_int_equal(a->host, NETD_HOST_FIRST);
	a = netd_att_add(&s, "web.1", &created); /* idempotent */
	assert_int_equal(created, 0);
	assert_int_equal(a->host, NETD_HOST_FIRST);
	assert_null(netd_att_add(&s, "", &created));
	assert_null(netd_att_add(&s, "a/b", &created));
	/* the namespace directory itself and its parent are no task's */
	assert_null(netd_att_add(&s, ".", &created));
	assert_null(netd_att_add(&s, "..", &created));
	assert_non_null(netd_att_add(&s, "...", &created));
	netd_att_remove(&s, "...");
	assert_int_equal(netd_att_restore(&s, "..", 9), -MTS_ERR_INVAL);
	assert_non_null(netd_att_add(&s, "db.1", &created));
	assert_int_equal(netd_att_remove(&s, "web.1"), 1);
	assert_int_equal(netd_att_remove(&s, "web.1"), 0);
	/* the freed host number is reused */
	a = netd_att_add(&s, "api.1", &created);
	assert_int_equal(a->host, NETD_HOST_FIRST);
	/* persisted and read back */
	text = netd_att_format(&s);
	assert_string_equal(text, "api.1 2\ndb.1 3\n");
	assert_int_equal(netd_att_parse(&back, text), 0);
	assert_int_equal(back.n, 2);
	assert_int_equal(netd_att_find(&back, "db.1")->host, 3);
	free(text);
	assert_int_equal(netd_att_parse(&back, "x 2\ny 2\n"), -MTS_ERR_INVAL);
	assert_int_equal(back.n, 0);
	assert_int_equal(netd_att_parse(&back, "x 1\n"), -MTS_ERR_INVAL);
	assert_int_equal(netd_att_parse(&back, "x 2"), -MTS_ERR_INVAL);
	assert_int_equal(netd_att_parse(&back, "x 2 a b\n"), -MTS_ERR_INVAL);
	assert_int_equal(netd_att_parse(&back, "x 2 a/b\n"), -MTS_ERR_INVAL);
	assert_int_equal(netd_att_parse(&back, "x 2 a,,b\n"), -MTS_ERR_INVAL);
	/* networks persist with their attachment */
	assert_int_equal(netd_att_parse(&back, "x 2 a,b\ny 3\n"), 0);
	assert_string_equal(netd_att_find(&back, "x")->nets, "a,b");
	assert_string_equal(netd_att_find(&back, "y")->nets, "");
	assert_int_equal(netd_att_set_nets(&back, "y", "c"), 1);
	assert_int_equal(netd_att_set_nets(&back, "y", "c"), 0);
	assert_int_equal(netd_att_set_nets(&back, "z", "c"), -MTS_ERR_NOTFOUND);
	text = netd_att_format(&back);
	assert_string_equal(text, "x 2 a,b\ny 3 c\n");
	free(text);
	assert_int_equal(netd_att_parse(&back, ""), 0);
	/* a full /24 */
	for (int i = 0; i < 300; i++) {
		snprintf(task, sizeof(task), "t%d", i);
		a = netd_att_add(&s, task, &created);
		if (a == NULL)
			break;
	}
	assert_int_equal(s.n, NETD_HOST_LAST - NETD_HOST_FIRST + 1);
	netd_att_free(&s);
	netd_att_free(&back);
}

static void
node(struct netd_node *x, uint8_t id, int alive, int32_t subnet)
{
	memset(x, 0, sizeof(*x));
	memset(x->node, id, sizeof(x->node));
	memset(x->key, id ^ 0xff, sizeof(x->key));
	x->has_key = 1;
	x->alive = alive;
	snprintf(x->host, sizeof(x->host), "10.99.0.%u", id);
	x->subnet = subnet;
}

static void
test_peers(void **state)
{
	struct netd_node nodes[5];
	struct netd_peers have, want;
	struct netd_cidr c;
	uint8_t self[MTS_NODE_ID_LEN];
	char *d;

	assert_int_equal(netd_cidr_parse("10.210.0.0/16", &c), 0);
	netd_peers_init(&have);
	netd_peers_init(&want);
	memset(self, 1, sizeof(self));
	node(&nodes[0], 1, 1, 1); /* self */
	node(&nodes[1], 2, 1, 2);
	node(&nodes[2], 3, 0, 3); /* dead */
	node(&nodes[3], 4, 1, 2); /* contested by node 2, which wins */
	node(&nodes[4], 5, 1, -1);
	netd_peers_want(&want, self, nodes, 5, &c, 51820);
	assert_int_equal(want.n, 1);
	assert_string_equal(want.p[0].endpoint, "10.99.0.2:51820");
	d = netd_peers_diff(&have, &want);
	assert_string_equal(d,
	    "public_key="
	    "fdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfd\n"
	    "endpoint=10.99.0.2:51820\nreplace_allowed_ips=true\n"
	    "allowed_ip=10.210.2.0/24\n");
	free(d);
	netd_peers_copy(&have, &want);
	d = netd_peers_diff(&have, &want);
	assert_string_equal(d, "");
	free(d);
	/* node 2 is removed: its peer goes; node 5 got a /24: it comes */
	nodes[1].alive = 0;
	nodes[4].subnet = 9;
	netd_peers_want(&want, self, nodes, 5, &c, 51820);
	d = netd_peers_diff(&have, &want);
	assert_non_null(strstr(d,
	    "public_key="
	    "fdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfd\n"
	    "remove=true\n"));
	/* node 4 still shares node 2's claim (a removed node's record stays
	 * until its tombstone): no route to it until it moved */
	assert_null(strstr(d, "allowed_ip=10.210.2.0/24\n"));
	assert_non_null(strstr(d, "allowed_ip=10.210.9.0/24\n"));
	free(d);
	/* an endpoint change is one update */
	netd_peers_copy(&have, &want);
	snprintf(nodes[4].host, sizeof(nodes[4].host), "fd00::5");
	netd_peers_want(&want, self, nodes, 5, &c, 7);
	d = netd_peers_diff(&have, &want);
	assert_non_null(strstr(d, "endpoint=[fd00::5]:7\n"));
	assert_null(strstr(d, "remove"));
	free(d);
	netd_peers_free(&have);
	netd_peers_free(&want);
}

/* What wireguard-go answers to get=1 (abridged): two peers, counters. */
static void
test_uapi(void **state)
{
	static const char get[] =
	    "private_key=0101010101010101010101010101010101010101010101010101010101010101\n"
	    "listen_port=51820\n"
	    "public_key=fdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfdfd\n"
	    "endpoint=10.99.0.2:51820\n"
	    "last_handshake_time_sec=1700000000\n"
	    "last_handshake_time_nsec=5\n"
	    "tx_bytes=1234\n"
	    "rx_bytes=5678\n"
	    "allowed_ip=10.210.2.0/24\n"
	    "public_key=0202020202020202020202020202020202020202020202020202020202020202\n"
	    "rx_bytes=9\n"
	    "public_key=zz\n" /* not a key: skipped */
	    "errno=0\n\n";
	struct netd_peers p;
	struct netd_wg_stat st;
	uint8_t k[NETD_KEY_LEN];

	netd_peers_init(&p);
	netd_uapi_peers(&p, get);
	assert_int_equal(p.n, 2);
	memset(k, 0x02, sizeof(k));
	assert_memory_equal(p.p[0].key, k, sizeof(k)); /* sorted */
	netd_uapi_stat(get, k, &st);
	assert_int_equal(st.rx, 9);
	assert_int_equal(st.tx, 0);
	assert_int_equal(st.handshake_sec, 0);
	memset(k, 0xfd, sizeof(k));
	netd_uapi_stat(get, k, &st);
	assert_int_equal(st.handshake_sec, 1700000000);
	assert_int_equal(st.rx, 5678);
	assert_int_equal(st.tx, 1234);
	memset(k, 0x33, sizeof(k));
	netd_uapi_stat(get, k, &st);
	assert_int_equal(st.rx, 0);
	netd_uapi_peers(&p, "errno=0\n\n");
	assert_int_equal(p.n, 0);
	netd_peers_free(&p);
}

/* --- table deltas ---------------------------------------------------------- */

#define MAX_SETS 8
#define MAX_ELEMS 64

/* The sets of a table text, or of one after nft commands: name and
 * sorted addresses as text. */
struct tsets {
	char name[MAX_SETS][16];
	char elem[MAX_SETS][MAX_ELEMS][16];
	size_t n, ne[MAX_SETS];
};

static size_t
tset_get(struct tsets *t, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strlen(t->name[i]) == len &&
		    strncmp(t->name[i], name, len) == 0)
			return i;
	assert_true(t->n < MAX_SETS);
	snprintf(t->name[t->n], sizeof(t->name[0]), "%.*s", (int)len, name);
	t->ne[t->n] = 0;
	return t->n++;
}

/* Applies "{ a, b }" to set i: added or removed. */
static void
tset_elems(struct tsets *t, size_t i, const char *p, int add)
{
	char ip[16];
	size_t k, j;

	p = strchr(p, '{') + 2;
	while (*p != '}') {
		k = strcspn(p, ", }");
		snprintf(ip, sizeof(ip), "%.*s", (int)k, p);
		for (j = 0; j < t->ne[i] && strcmp(t->elem[i][j], ip) != 0; j++)
			;
		if (add) {
			assert_int_equal(j, t->ne[i]); /* not there yet */
			snprintf(t->elem[i][t->ne[i]++], 16, "%s", ip);
		} else {
			if (j >= t->ne[i])
				fail_msg("%s not in %s (%zu)", ip, t->name[i],
				    t->ne[i]);
			memmove(t->elem[i][j], t->elem[i][j + 1],
			    (t->ne[i] - j - 1) * 16);
			t->ne[i]--;
		}
		p += k;
		p += *p == ',' ? 2 : 1;
	}
}

static void
tsets_parse(struct tsets *t, const char *text)
{
	const char *p;
	size_t i = 0;

	t->n = 0;
	for (p = text; p != NULL && *p;
	     p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, "\tset ", 5) == 0)
			i = tset_get(t, p + 5, strcspn(p + 5, " "));
		else if (strncmp(p, "\t\telements = {", 14) == 0)
			tset_elems(t, i, p, 1);
	}
}

static void
tsets_apply(struct tsets *t, const char *delta)
{
	const char *p, *set;
	int add;

	for (p = delta; *p; p = strchr(p, '\n') + 1) {
		add = strncmp(p, "add element inet mts ", 21) == 0;
		assert_true(
		    add || strncmp(p, "delete element inet mts ", 24) == 0);
		set = p + (add ? 21 : 24);
		tset_elems(t, tset_get(t, set, strcspn(set, " ")), set, add);
	}
}

static int
elem_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void
tsets_equal(struct tsets *a, struct tsets *b)
{
	size_t i, j, k;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		j = tset_get(b, a->name[i], strlen(a->name[i]));
		assert_int_equal(a->ne[i], b->ne[j]);
		qsort(a->elem[i], a->ne[i], 16, elem_cmp);
		qsort(b->elem[j], b->ne[j], 16, elem_cmp);
		for (k = 0; k < a->ne[i]; k++)
			assert_string_equal(a->elem[i][k], b->elem[j][k]);
	}
}

static void
test_nft_delta_cases(void **state)
{
	const uint32_t net = 0x0ad20700; /* 10.210.7.0 */
	struct netd_member m[4] = {
		{ net | 2, "a", 1 },
		{ net | 3, "a,b", 1 },
		{ 0x0ad20805, "a", 0 }, /* a task of another node */
		{ net | 4, "a", 1 },
	};
	char *t3, *t4, *d, *tb;

	(void)state;
	t3 = netd_nft_isolation(m, 3, "mtsbr0");
	t4 = netd_nft_isolation(m, 4, "mtsbr0");
	d = netd_nft_delta(t3, t4, "inet mts");
	assert_non_null(d);
	assert_string_equal(d,
	    "add element inet mts net0 { 10.210.7.4 }\n"
	    "add element inet mts known { 10.210.7.4 }\n");
	free(d);
	d = netd_nft_delta(t4, t3, "inet mts");
	assert_string_equal(d,
	    "delete element inet mts net0 { 10.210.7.4 }\n"
	    "delete element inet mts known { 10.210.7.4 }\n");
	free(d);
	d = netd_nft_delta(t4, t4, "inet mts");
	assert_string_equal(d, "");
	free(d);
	/* the last local task on b goes: its set and rule go, a rebuild */
	m[1].nets = "a";
	tb = netd_nft_isolation(m, 4, "mtsbr0");
	assert_null(netd_nft_delta(t4, tb, "inet mts"));
	assert_null(netd_nft_delta(tb, t4, "inet mts"));
	free(tb);
	/* text that is not in emit_set's form: unsorted, not an address,
	 * cut short, another line changed */
	assert_null(netd_nft_delta(
	    "\tset s {\n\t\ttype ipv4_addr\n\t\telements = { 10.0.0.2, 10.0.0.1 }\n\t}\n",
	    "\tset s {\n\t\ttype ipv4_addr\n\t}\n", "inet mts"));
	assert_null(netd_nft_delta(
	    "\tset s {\n\t\ttype ipv4_addr\n\t\telements = { x }\n\t}\n",
	    "\tset s {\n\t\ttype ipv4_addr\n\t}\n", "inet mts"));
	assert_null(netd_nft_delta("\tset s {\n\t\ttype ipv4_addr\n",
	    "\tset s {\n\t\ttype ipv4_addr\n", "inet mts"));
	assert_null(netd_nft_delta(t3, "", "inet mts"));
	assert_null(netd_nft_delta("\tchain c {\n\t\taccept\n\t}\n",
	    "\tchain c {\n\t\tdrop\n\t}\n", "inet mts"));
	/* a map's elements are not a set's: a rebuild */
	assert_null(netd_nft_delta(
	    "\tset m {\n\t\ttype ipv4_addr : ipv4_addr\n\t\telements = { 10.0.0.1 }\n\t}\n",
	    "\tset m {\n\t\ttype ipv4_addr : ipv4_addr\n\t}\n", "inet mts"));
	free(t3);
	free(t4);
}

/* Random tables over three networks that always have a local task: the
 * delta exists, and applied to the first table's sets gives the second's
 * (every add new, every delete there). */
static void
test_nft_delta_random(void **state)
{
	static const char *const nets[] = { "a", "b", "c", "a,b", "b,c", "",
		"a,b,c" };
	struct netd_member m[2][24];
	struct tsets from, to;
	char *t[2], *d;
	unsigned seed;
	size_t n[2], i, k;

	(void)state;
	for (seed = 1; seed <= 200; seed++) {
		srand(seed);
		for (k = 0; k < 2; k++) {
			m[k][0] =
			    (struct netd_member){ 0x0ad20702, "a,b,c", 1 };
			n[k] = 1 + (size_t)rand() % 23;
			for (i = 1; i < n[k]; i++) {
				m[k][i].local = rand() % 2;
				m[k][i].addr =
				    (m[k][i].local ? 0x0ad20700 : 0x0ad20800) |
				    (3 + (unsigned)(rand() % 40));
				m[k][i].nets = nets[rand() % 7];
			}
			/* one address, one task */
			for (i = 1; i < n[k]; i++)
				if (m[k][i].addr == (m[k][i - 1].addr))
					m[k][i].addr ^= 0x80;
			t[k] = netd_nft_isolation(m[k], n[k], "mtsbr0");
		}
		d = netd_nft_delta(t[0], t[1], "inet mts");
		if (d == NULL)
			fail_msg("seed %u: no delta", seed);
		tsets_parse(&from, t[0]);
		tsets_parse(&to, t[1]);
		tsets_apply(&from, d);
		tsets_equal(&from, &to);
		free(d);
		free(t[0]);
		free(t[1]);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cidr),
		cmocka_unit_test(test_subnets_converge),
		cmocka_unit_test(test_subnet_rules),
		cmocka_unit_test(test_attachments),
		cmocka_unit_test(test_networks),
		cmocka_unit_test(test_isolation),
		cmocka_unit_test(test_nft_delta_cases),
		cmocka_unit_test(test_nft_delta_random),
		cmocka_unit_test(test_peers),
		cmocka_unit_test(test_uapi),
	};

	if (mts_crypto_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
