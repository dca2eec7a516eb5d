/* bench_mst.c: MST build, update, memory and page numbers at 100k keys. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/statestore/mst_core.h"
#include "hash.h"
#include "xmalloc.h"

#define NKEYS 100000
#define NUPDATES 2000

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* VmRSS of this process in KiB, or -1. */
static long
rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

/* A deterministic pseudo-random rh for update number i. */
static void
fake_rh(uint8_t rh[MTS_HASH_LEN], uint64_t i)
{
	mts_blake2b256(rh, &i, sizeof(i));
}

/* Fetches every page reachable from root by hash, as a peer's full
 * anti-entropy walk would; returns the number of pages or 0 on error. */
static size_t
walk_all(struct mts_mst *t, const uint8_t root[MTS_HASH_LEN])
{
	struct mts_mst_page_view v;
	uint8_t(*stack)[MTS_HASH_LEN];
	size_t n = 1, seen = 0, cap = 64, i;
	const uint8_t *enc;
	size_t len;

	stack = xcalloc(cap, sizeof(*stack));
	memcpy(stack[0], root, MTS_HASH_LEN);
	while (n > 0) {
		n--;
		if (mts_mst_page(t, stack[n], &enc, &len) != 0 ||
		    mts_mst_page_decode(enc, len, &v) != 0) {
			seen = 0;
			break;
		}
		seen++;
		if (n + v.nitems + 1 > cap) {
			cap = 2 * (n + v.nitems + 1);
			stack = xreallocarray(stack, cap, sizeof(*stack));
		}
		for (i = 0; i < v.nitems; i++)
			if (v.items[i].child != NULL)
				memcpy(stack[n++], v.items[i].child,
				    MTS_HASH_LEN);
		if (v.last_child != NULL)
			memcpy(stack[n++], v.last_child, MTS_HASH_LEN);
		mts_mst_page_view_free(&v);
	}
	free(stack);
	return seen;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(void)
{
	struct mts_mst *t;
	char **keys = xcalloc(NKEYS, sizeof(*keys));
	double *lat = xcalloc(NUPDATES, sizeof(*lat));
	uint8_t node[MTS_HASH_LEN], rh[MTS_HASH_LEN], root[MTS_HASH_LEN];
	char hex[MTS_NODE_HEX_LEN + 1];
	const uint8_t *enc;
	size_t i, k, len, walked;
	long rss0, rss1, rss2;
	double t0, build, lookup, walk;
	uint64_t x = 88172645463325252ull;

	if (mts_crypto_init() < 0)
		return 1;
	for (i = 0; i < NKEYS; i++) {
		if (i % 10 == 0) { /* ten tasks per node */
			fake_rh(node, 1000000 + i);
			mts_hex(hex, node, MTS_NODE_ID_LEN);
		}
		keys[i] = xasprintf("t/%s/%zu", hex, i);
	}
	rss0 = rss_kib();
	t0 = now_ms();
	t = mts_mst_new();
	for (i = 0; i < NKEYS; i++) {
		fake_rh(rh, i);
		mts_mst_put(t, (uint8_t *)keys[i], strlen(keys[i]), rh);
	}
	mts_mst_root(t, root);
	build = now_ms() - t0;
	rss1 = rss_kib();
	for (i = 0; i < NUPDATES; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = (size_t)(x % NKEYS);
		fake_rh(rh, NKEYS + i);
		mts_mst_put(t, (uint8_t *)keys[k], strlen(keys[k]), rh);
		t0 = now_ms();
		mts_mst_root(t, root);
		lat[i] = now_ms() - t0;
	}
	qsort(lat, NUPDATES, sizeof(*lat), cmp_double);
	t0 = now_ms();
	walked = walk_all(t, root);
	walk = now_ms() - t0;
	rss2 = rss_kib(); /* every page's encoding cached, 512 retired */
	if (walked != mts_mst_pages(t))
		return 1;
	t0 = now_ms();
	for (i = 0; i < NUPDATES; i++)
		if (mts_mst_page(t, root, &enc, &len) != 0)
			return 1;
	lookup = (now_ms() - t0) / NUPDATES;
	printf("%-44s %12s\n", "metric", "value");
	printf("%-44s %12d\n", "keys (t/<32hex>/<n>)", NKEYS);
	printf("%-44s %12.1f\n", "build from scratch + root (ms)", build);
	printf("%-44s %12.2f\n", "build per key (us)", build * 1e3 / NKEYS);
	printf("%-44s %12.1f\n", "root after 1 random update, median (us)",
	    lat[NUPDATES / 2] * 1e3);
	printf("%-44s %12.1f\n", "root after 1 random update, p99 (us)",
	    lat[NUPDATES * 99 / 100] * 1e3);
	printf("%-44s %12.1f\n", "page by hash, cached encoding (ns)",
	    lookup * 1e6);
	printf("%-44s %12.1f\n", "fetch + decode every page by hash (ms)",
	    walk);
	printf("%-44s %12zu\n", "pages", mts_mst_pages(t));
	printf("%-44s %12ld\n", "VmRSS with the tree (KiB)", rss1);
	printf("%-44s %12ld\n", "VmRSS growth from building the tree (KiB)",
	    rss1 - rss0);
	printf("%-44s %12ld\n", "VmRSS growth, every page served since (KiB)",
	    rss2 - rss0);
	mts_mst_free(t);
	for (i = 0; i < NKEYS; i++)
		free(keys[i]);
	free(keys);
	free(lat);
	return 0;
}
