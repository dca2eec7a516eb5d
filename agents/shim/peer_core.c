/* peer_core.c: pure logic of obtaining an image a node lacks — sources in order, the holders to ask and their order, retries, pacing (peer_core.h). */
#include <stdio.h>
#include <string.h>

#include "agents/shim/peer_core.h"

int
mts_ref_has_registry(const char *ref)
{
	size_t n = strcspn(ref, "/");

	if (ref[n] != '/')
		return 0; /* one component: a Docker Hub library name */
	if (n == 9 && strncmp(ref, "localhost", 9) == 0)
		return 1;
	return memchr(ref, '.', n) != NULL || memchr(ref, ':', n) != NULL;
}

size_t
mts_img_sources(const char *ref, enum mts_img_mode mode,
    enum mts_img_source out[2])
{
	switch (mode) {
	case MTS_MODE_PEERS:
		out[0] = MTS_SRC_PEERS;
		return 1;
	case MTS_MODE_REGISTRY:
		out[0] = MTS_SRC_REGISTRY;
		return 1;
	case MTS_MODE_AUTO:
		if (!mts_ref_has_registry(ref)) {
			out[0] = MTS_SRC_PEERS;
			return 1;
		}
		break;
	case MTS_MODE_PULL:
		break;
	}
	out[0] = MTS_SRC_REGISTRY;
	out[1] = MTS_SRC_PEERS;
	return 2;
}

int
mts_img_name_match(const char *want, const char *have)
{
	const char *slash = strrchr(want, '/');
	const char *last = slash ? slash + 1 : want;
	size_t n = strlen(want);

	if (strcmp(want, have) == 0)
		return 1;
	if (strchr(last, ':') != NULL || strchr(want, '@') != NULL)
		return 0;
	return strncmp(want, have, n) == 0 && strcmp(have + n, ":latest") == 0;
}

/* Whether a is a newer entry than b (the same choice on every node). */
static int
newer(const struct mts_held *a, const struct mts_held *b)
{
	if (a->created_ms != b->created_ms)
		return a->created_ms > b->created_ms;
	return strcmp(a->manifest, b->manifest) > 0;
}

/* The entry of h for name, or NULL. */
static const struct mts_held *
held_by(const struct mts_holder *h, const char *name)
{
	size_t i;

	for (i = 0; i < h->nheld; i++)
		if (h->held[i].manifest[0] != '\0' &&
		    mts_img_name_match(name, h->held[i].name))
			return &h->held[i];
	return NULL;
}

static int
usable(const struct mts_holder *h, const char *self)
{
	return h->alive && strcmp(h->node, self) != 0;
}

size_t
mts_peer_pick(const struct mts_holder *holders, size_t n, const char *self,
    const char *name, uint64_t seed, struct mts_peer_cand *cands, size_t max,
    struct mts_held *chosen)
{
	const struct mts_held *best = NULL, *e;
	struct mts_peer_cand tmp;
	size_t i, k = 0, r, j;

	for (i = 0; i < n; i++)
		if (usable(&holders[i], self) &&
		    (e = held_by(&holders[i], name)) != NULL &&
		    (best == NULL || newer(e, best)))
			best = e;
	if (best == NULL || max == 0)
		return 0;
	*chosen = *best;
	for (i = 0; i < n && k < max; i++)
		if (usable(&holders[i], self) &&
		    (e = held_by(&holders[i], name)) != NULL &&
		    strcmp(e->manifest, chosen->manifest) == 0)
			snprintf(cands[k++].node, sizeof(cands[0].node), "%s",
			    holders[i].node);
	/* rotate by seed: a fixed order otherwise sends every node to the
	 * first holder */
	for (r = (size_t)(seed % k); r > 0; r--) {
		tmp = cands[0];
		for (j = 1; j < k; j++)
			cands[j - 1] = cands[j];
		cands[k - 1] = tmp;
	}
	return k;
}

unsigned
mts_peer_tries(size_t ncand)
{
	return ncand * 2 > MTS_PEER_MIN_TRIES ? (unsigned)ncand * 2
	                                      : MTS_PEER_MIN_TRIES;
}

/* The budget can hold one chunk: a request never waits for more. */
static int64_t
pace_cap(const struct mts_pace *p)
{
	return MTS_PEER_CHUNK;
}

static int64_t
pace_budget(const struct mts_pace *p, mts_time_t now)
{
	int64_t b = p->budget;

	if (now > p->at)
		b += p->rate * (int64_t)(now - p->at) / 1000;
	return b > pace_cap(p) ? pace_cap(p) : b;
}

void
mts_pace_init(struct mts_pace *p, int64_t rate, mts_time_t now)
{
	p->rate = rate > 0 ? rate : 0;
	p->at = now;
	p->budget = pace_cap(p);
}

mts_time_t
mts_pace_wait(const struct mts_pace *p, int64_t bytes, mts_time_t now)
{
	int64_t b;

	if (p->rate == 0)
		return 0;
	if (bytes > pace_cap(p))
		bytes = pace_cap(p);
	b = pace_budget(p, now);
	if (b >= bytes)
		return 0;
	return (mts_time_t)(((bytes - b) * 1000 + p->rate - 1) / p->rate);
}

void
mts_pace_took(struct mts_pace *p, int64_t bytes, mts_time_t now)
{
	if (p->rate == 0)
		return;
	p->budget = pace_budget(p, now) - bytes;
	p->at = now;
}
