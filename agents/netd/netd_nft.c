/* netd_nft.c: mts-netd's nftables table `inet mts` — one text built from the parts of a table (isolation first; DNS, VIPs and published ports add theirs), replaced as a whole in one transaction through libnftables at start, when its sets or rules change and at the first change after a minute, and otherwise changed by adding and deleting set elements (netd_nft_delta) — both coalesced on the loop; no other table is touched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nftables/libnftables.h>

#include "buf.h"
#include "log.h"
#include "netd.h"
#include "xmalloc.h"

#define NFT_TABLE "inet mts"
#define NFT_RESYNC_MS 60000 /* a whole rebuild at least this often */

/* The isolation part: this node's attachments and the other nodes' tasks
 * (their t/ records) with their networks. */
static char *
part_isolation(struct netd *n)
{
	struct netd_member *m = xcalloc(n->att.n + n->tasks.n + 1, sizeof(*m));
	uint32_t net = n->subnet >= 0
	    ? netd_subnet_net(&n->cfg.cidr, (uint32_t)n->subnet)
	    : 0;
	size_t i, k = 0;
	char *text;

	for (i = 0; i < n->att.n && n->subnet >= 0; i++) {
		m[k].addr = net | n->att.a[i].host;
		m[k].nets = n->att.a[i].nets;
		m[k++].local = 1;
	}
	for (i = 0; i < n->tasks.n; i++) {
		const struct netd_task *t = &n->tasks.t[i];

		if (t->addr == 0 || t->local)
			continue;
		m[k].addr = t->addr;
		m[k++].nets = t->nets;
	}
	text = netd_nft_isolation(m, k, NETD_BRIDGE);
	free(m);
	return text;
}

/*
 * The parts of table inet mts, in order. Each returns declarations for
 * the inside of `table inet mts { ... }` (sets, maps, chains; a chain
 * declared again by a later part gets that part's rules appended), as a
 * malloc'd string. docs/network.md, "The nftables table".
 */
static const struct netd_nft_part {
	const char *name;
	char *(*emit)(struct netd *);
} parts[] = {
	{ "isolation", part_isolation },
	{ "vip", netd_disc_nft },
};

/* The whole transaction: create (so that delete finds it), delete, then
 * the table as the parts make it now. */
static char *
table_text(struct netd *n)
{
	struct mts_buf b;
	size_t i;
	char *p;

	mts_buf_init(&b);
	p = xasprintf("table " NFT_TABLE " {\n}\ndelete table " NFT_TABLE
	              "\ntable " NFT_TABLE " {\n");
	mts_buf_put(&b, p, strlen(p));
	free(p);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		p = parts[i].emit(n);
		mts_buf_put(&b, p, strlen(p));
		free(p);
	}
	mts_buf_put(&b, "}\n", 3);
	return (char *)b.data;
}

int
netd_nft_open(struct netd *n)
{
	if ((n->nft = nft_ctx_new(NFT_CTX_DEFAULT)) == NULL) {
		log_warnx("nftables: no context");
		return -1;
	}
	if (nft_ctx_buffer_output(n->nft) < 0 ||
	    nft_ctx_buffer_error(n->nft) < 0) {
		log_warnx("nftables: cannot buffer its output");
		return -1;
	}
	mts_timer_init(&n->nft_timer, "nftables", netd_nft_on_timer, n);
	return 0;
}

void
netd_nft_close(struct netd *n)
{
	if (n->loop != NULL)
		mts_timer_disarm(n->loop, &n->nft_timer);
	if (n->nft != NULL)
		nft_ctx_free(n->nft);
	n->nft = NULL;
	free(n->nft_applied);
	n->nft_applied = NULL;
}

/* The change from the table last applied to text as element additions
 * and deletions only, when that is all it is (an attach or detach on
 * networks that have other tasks, a remote task coming or going): one
 * small transaction instead of the whole table's (57 ms at 200
 * attachments). 1 when applied; 0 when the whole table must be: at
 * start, when a set or a rule changes, at least every NFT_RESYNC_MS (what
 * the kernel holds is then what netd says again, whatever happened to
 * it), and when nft refuses the change. */
static int
apply_delta(struct netd *n, const char *text)
{
	mts_time_t now = mts_now();
	char *delta;
	int rc;

	if (n->nft_applied == NULL || now - n->nft_full_at >= NFT_RESYNC_MS ||
	    (delta = netd_nft_delta(n->nft_applied, text, NFT_TABLE)) == NULL)
		return 0;
	rc = delta[0] == '\0' || nft_run_cmd_from_buffer(n->nft, delta) == 0;
	if (!rc)
		log_debug("nftables refused the change of %s (rebuilt):\n%s",
		    NFT_TABLE, delta);
	else
		n->nft_deltas++;
	free(delta);
	return rc;
}

int
netd_nft_apply(struct netd *n)
{
	char *text;
	const char *err;
	int rc = 0;

	n->nft_dirty = 0;
	if (n->nft == NULL || !n->scanned)
		return 0;
	text = table_text(n);
	if (n->nft_applied != NULL && strcmp(n->nft_applied, text) == 0) {
		free(text);
		return 0;
	}
	if (apply_delta(n, text)) {
		free(n->nft_applied);
		n->nft_applied = text;
		return 0;
	}
	if (nft_run_cmd_from_buffer(n->nft, text) != 0) {
		err = nft_ctx_get_error_buffer(n->nft);
		log_warnx("nftables refused table %s: %.*s", NFT_TABLE,
		    err ? (int)strcspn(err, "\n") : 0, err ? err : "");
		log_debug("the table was:\n%s", text);
		free(text);
		free(n->nft_applied);
		n->nft_applied = NULL; /* tried again at the next change */
		return -1;
	}
	log_debug("nftables: table %s replaced (%zu bytes)", NFT_TABLE,
	    strlen(text));
	n->nft_applies++;
	n->nft_full_at = mts_now();
	free(n->nft_applied);
	n->nft_applied = text;
	return rc;
}

void
netd_nft_on_timer(void *arg, mts_time_t now)
{
	netd_nft_apply(arg);
}

/* Not before the first full scan: until then the other nodes' tasks are
 * unknown, and the table the last netd left stays (a restart keeps the
 * tasks' traffic as it was); scan_end asks again. */
void
netd_nft_changed(struct netd *n)
{
	if (n->nft_dirty || n->nft == NULL || !n->scanned)
		return;
	n->nft_dirty = 1;
	mts_timer_arm(n->loop, &n->nft_timer, mts_now());
}
