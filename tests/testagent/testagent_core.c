/* testagent_core.c: the test agent's store and fault names as pure code — binary search over sorted records, HLC stamps from a given wall clock, prefix scans, the root digest. */
#include <stdlib.h>
#include <string.h>

#include "testagent_core.h"
#include "xmalloc.h"

void
ta_core_init(struct ta_core *c)
{
	memset(c, 0, sizeof(*c));
}

void
ta_core_free(struct ta_core *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->r[i].key);
		free(c->r[i].value);
	}
	free(c->r);
	memset(c, 0, sizeof(*c));
}

static int
cmpkey(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	size_t n = al < bl ? al : bl;
	int c = n ? memcmp(a, b, n) : 0; /* empty keys may be NULL */

	return c != 0 ? c : (al > bl) - (al < bl);
}

/* The first index whose key is >= key; *found when it is equal. */
static size_t
lower_bound(const struct ta_core *c, const uint8_t *key, size_t klen,
    int *found)
{
	size_t lo = 0, hi = c->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cmpkey(c->r[mid].key, c->r[mid].klen, key, klen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found =
	    lo < c->n && cmpkey(c->r[lo].key, c->r[lo].klen, key, klen) == 0;
	return lo;
}

const struct ta_record *
ta_get(const struct ta_core *c, const uint8_t *key, size_t klen)
{
	int found;
	size_t i = lower_bound(c, key, klen, &found);

	return found ? &c->r[i] : NULL;
}

const struct ta_record *
ta_put(struct ta_core *c, const uint8_t *key, size_t klen, const uint8_t *value,
    size_t vlen, int tomb, uint64_t wall_ms)
{
	int found;
	size_t i = lower_bound(c, key, klen, &found);
	struct ta_record *r;

	if (tomb || value == NULL)
		vlen = 0;
	if (!found) {
		c->r = xreallocarray(c->r, c->n + 1, sizeof(*c->r));
		memmove(&c->r[i + 1], &c->r[i], (c->n - i) * sizeof(*c->r));
		c->n++;
		r = &c->r[i];
		r->key = xmemdup(key, klen ? klen : 1);
		r->klen = klen;
	} else {
		r = &c->r[i];
		free(r->value);
	}
	r->value = xmemdup(vlen ? value : (const uint8_t *)"", vlen ? vlen : 1);
	r->vlen = vlen;
	r->tomb = tomb;
	r->hlc = mts_hlc_now(&c->hlc, wall_ms);
	return r;
}

static int
has_prefix(const struct ta_record *r, const struct ta_scan *q)
{
	return r->klen >= q->plen &&
	    (q->plen == 0 || memcmp(r->key, q->prefix, q->plen) == 0);
}

size_t
ta_scan(const struct ta_core *c, const struct ta_scan *q,
    const struct ta_record **out, int *more)
{
	size_t limit = q->limit ? q->limit : TA_SCAN_DEFAULT, n = 0, i;
	int found;

	*more = 0;
	i = lower_bound(c, q->after, q->alen, &found);
	if (found)
		i++; /* after is exclusive */
	for (; i < c->n; i++) {
		if (!has_prefix(&c->r[i], q) ||
		    (c->r[i].tomb && !q->tombstones))
			continue;
		if (n == limit) {
			*more = 1;
			break;
		}
		out[n++] = &c->r[i];
	}
	return n;
}

void
ta_root(const struct ta_core *c, uint8_t hash[MTS_HASH_LEN], uint64_t *live)
{
	mts_hash_ctx hc;
	size_t i;

	memset(hash, 0, MTS_HASH_LEN);
	*live = 0;
	if (c->n == 0)
		return;
	mts_hash_init(&hc);
	for (i = 0; i < c->n; i++) {
		mts_hash_update(&hc, c->r[i].key, c->r[i].klen);
		mts_hash_update(&hc, &c->r[i].hlc, sizeof(c->r[i].hlc));
		*live += !c->r[i].tomb;
	}
	mts_hash_final(&hc, hash);
}

/* --- faults ------------------------------------------------------------- */

static const char *const fault_names[TA_NFAULTS] = {
	[TA_FAULT_EXIT] = "exit:",
	[TA_FAULT_ABORT] = "abort",
	[TA_FAULT_SYSCALL] = "syscall",
	[TA_FAULT_INET] = "inet",
	[TA_FAULT_ORPHAN] = "orphan",
};

int
ta_fault_parse(const char *text, struct ta_fault *f)
{
	char *end;
	long code;
	int k;

	memset(f, 0, sizeof(*f));
	if (strncmp(text, fault_names[TA_FAULT_EXIT], 5) == 0) {
		code = strtol(text + 5, &end, 10);
		if (end == text + 5 || *end != '\0' || code < 0 || code > 255)
			return -1;
		f->kind = TA_FAULT_EXIT;
		f->code = (int)code;
		return 0;
	}
	for (k = TA_FAULT_ABORT; k < TA_NFAULTS; k++)
		if (strcmp(text, fault_names[k]) == 0) {
			f->kind = k;
			return 0;
		}
	return -1;
}
