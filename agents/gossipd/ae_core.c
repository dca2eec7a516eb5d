/* ae_core.c: anti-entropy page walk over the Merkle Search Tree (DESIGN.md section 6). */
#include <stdlib.h>
#include <string.h>

#include "agents/gossipd/ae_core.h"
#include "mst_page.h"
#include "mtserr.h"
#include "xmalloc.h"

struct mts_ae {
	struct mts_ae_local local;
	uint8_t (*pages)[MTS_HASH_LEN]; /* page hashes to fetch (a stack) */
	size_t npages, cappages;
	struct mts_ae_key *keys; /* keys to pull (FIFO from keyhead) */
	size_t nkeys, capkeys, keyhead;
	uint64_t seen;
};

struct mts_ae *
mts_ae_new(const struct mts_ae_local *local)
{
	struct mts_ae *ae = xcalloc(1, sizeof(*ae));

	ae->local = *local;
	return ae;
}

void
mts_ae_free(struct mts_ae *ae)
{
	size_t i;

	if (ae == NULL)
		return;
	for (i = ae->keyhead; i < ae->nkeys; i++)
		free(ae->keys[i].key);
	free(ae->keys);
	free(ae->pages);
	free(ae);
}

static void
push_page(struct mts_ae *ae, const uint8_t h[MTS_HASH_LEN])
{
	if (ae->npages == ae->cappages) {
		ae->cappages = ae->cappages ? ae->cappages * 2 : 16;
		ae->pages =
		    xreallocarray(ae->pages, ae->cappages, sizeof(*ae->pages));
	}
	memcpy(ae->pages[ae->npages++], h, MTS_HASH_LEN);
}

static void
push_key(struct mts_ae *ae, const uint8_t *key, size_t klen)
{
	if (ae->nkeys == ae->capkeys) {
		if (ae->keyhead > 0) {
			memmove(ae->keys, ae->keys + ae->keyhead,
			    (ae->nkeys - ae->keyhead) * sizeof(*ae->keys));
			ae->nkeys -= ae->keyhead;
			ae->keyhead = 0;
		}
		if (ae->nkeys == ae->capkeys) {
			ae->capkeys = ae->capkeys ? ae->capkeys * 2 : 64;
			ae->keys = xreallocarray(ae->keys, ae->capkeys,
			    sizeof(*ae->keys));
		}
	}
	ae->keys[ae->nkeys].key = xmemdup(key, klen ? klen : 1);
	ae->keys[ae->nkeys].klen = klen;
	ae->nkeys++;
}

int
mts_ae_start(struct mts_ae *ae, const uint8_t local_root[MTS_HASH_LEN],
    const uint8_t remote_root[MTS_HASH_LEN])
{
	static const uint8_t zero[MTS_HASH_LEN];

	if (memcmp(local_root, remote_root, MTS_HASH_LEN) == 0 ||
	    memcmp(remote_root, zero, MTS_HASH_LEN) == 0)
		return 0;
	push_page(ae, remote_root);
	return 1;
}

size_t
mts_ae_next_pages(struct mts_ae *ae, uint8_t (*out)[MTS_HASH_LEN], size_t max)
{
	size_t k = 0;

	while (k < max && ae->npages > 0) {
		ae->npages--;
		if (ae->local.has_page &&
		    ae->local.has_page(ae->local.ctx, ae->pages[ae->npages]))
			continue;
		memcpy(out[k++], ae->pages[ae->npages], MTS_HASH_LEN);
	}
	return k;
}

/* Queues the keys of the page whose local rh is missing or different. */
static void
diff_items(struct mts_ae *ae, const struct mts_mst_page_view *v)
{
	const uint8_t **keys;
	size_t *klens, i;
	uint8_t(*rh)[MTS_HASH_LEN];
	int *found;

	if (v->nitems == 0)
		return;
	keys = xreallocarray(NULL, v->nitems, sizeof(*keys));
	klens = xreallocarray(NULL, v->nitems, sizeof(*klens));
	rh = xreallocarray(NULL, v->nitems, sizeof(*rh));
	found = xcalloc(v->nitems, sizeof(*found));
	for (i = 0; i < v->nitems; i++) {
		keys[i] = v->items[i].key;
		klens[i] = v->items[i].klen;
	}
	ae->local.rh(ae->local.ctx, keys, klens, v->nitems, rh, found);
	for (i = 0; i < v->nitems; i++)
		if (!found[i] ||
		    memcmp(rh[i], v->items[i].rh, MTS_HASH_LEN) != 0)
			push_key(ae, keys[i], klens[i]);
	free(keys);
	free(klens);
	free(rh);
	free(found);
}

int
mts_ae_on_page(struct mts_ae *ae, const uint8_t h[MTS_HASH_LEN],
    const uint8_t *page, size_t len)
{
	struct mts_mst_page_view v;
	uint8_t got[MTS_HASH_LEN];
	size_t i;

	mts_blake2b256(got, page, len);
	if (memcmp(got, h, MTS_HASH_LEN) != 0)
		return -MTS_ERR_INVAL;
	if (mts_mst_page_decode(page, len, &v) < 0)
		return -MTS_ERR_INVAL;
	ae->seen++;
	for (i = 0; i < v.nitems; i++)
		if (v.items[i].child)
			push_page(ae, v.items[i].child);
	if (v.last_child)
		push_page(ae, v.last_child);
	diff_items(ae, &v);
	mts_mst_page_view_free(&v);
	return 0;
}

size_t
mts_ae_next_keys(struct mts_ae *ae, struct mts_ae_key *out, size_t max,
    size_t max_bytes)
{
	size_t k = 0, bytes = 0;

	while (k < max && ae->keyhead < ae->nkeys) {
		if (k > 0 && bytes + ae->keys[ae->keyhead].klen > max_bytes)
			break;
		bytes += ae->keys[ae->keyhead].klen;
		out[k++] = ae->keys[ae->keyhead++];
	}
	if (ae->keyhead == ae->nkeys)
		ae->keyhead = ae->nkeys = 0;
	return k;
}

int
mts_ae_idle(const struct mts_ae *ae)
{
	return ae->npages == 0 && ae->keyhead == ae->nkeys;
}

uint64_t
mts_ae_pages_seen(const struct mts_ae *ae)
{
	return ae->seen;
}
