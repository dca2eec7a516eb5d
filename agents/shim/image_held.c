/* image_held.c: encoding and checked decoding of the i/<node> record value (image_held.h). */
#include <stdlib.h>
#include <string.h>

#include "image_held.h"
#include "mtserr.h"
#include "shim.pb-c.h"
#include "xmalloc.h"

void
mts_held_encode(const struct mts_held *held, size_t n, uint8_t **buf,
    size_t *len)
{
	Mts__Shim__ImageSet set = MTS__SHIM__IMAGE_SET__INIT;
	Mts__Shim__ImageHeld *v = xcalloc(n + 1, sizeof(*v));
	Mts__Shim__ImageHeld **p = xcalloc(n + 1, sizeof(*p));
	size_t i;

	for (i = 0; i < n; i++) {
		mts__shim__image_held__init(&v[i]);
		v[i].name = (char *)held[i].name;
		v[i].manifest = (char *)held[i].manifest;
		v[i].id = (char *)held[i].id;
		v[i].size = held[i].size;
		v[i].created_at = held[i].created_ms;
		p[i] = &v[i];
	}
	set.images = p;
	set.n_images = n;
	*len = protobuf_c_message_get_packed_size(&set.base);
	*buf = xmalloc(*len + 1);
	protobuf_c_message_pack(&set.base, *buf);
	free(v);
	free(p);
}

/* "" or a valid digest. */
static int
digest_ok(const char *d)
{
	return d[0] == '\0' || mts_digest_valid(d) == 0;
}

static int
entry_ok(const Mts__Shim__ImageHeld *h)
{
	size_t n = strlen(h->name);

	return n > 0 && n <= MTS_PEER_NAME_MAX && digest_ok(h->manifest) &&
	    digest_ok(h->id);
}

int
mts_held_decode(const uint8_t *buf, size_t len, struct mts_held **out,
    size_t *n)
{
	Mts__Shim__ImageSet *set;
	size_t i;

	*out = NULL;
	*n = 0;
	if ((set = mts__shim__image_set__unpack(NULL, len, buf)) == NULL)
		return -MTS_ERR_INVAL;
	/* protobuf-c tolerates unknown fields; a record is ours only when it
	 * packs back to the same size */
	if (set->n_images > MTS_PEER_MAX_HELD ||
	    protobuf_c_message_get_packed_size(&set->base) != len) {
		mts__shim__image_set__free_unpacked(set, NULL);
		return -MTS_ERR_INVAL;
	}
	*out = xcalloc(set->n_images + 1, sizeof(**out));
	for (i = 0; i < set->n_images; i++) {
		const Mts__Shim__ImageHeld *h = set->images[i];
		struct mts_held *d = &(*out)[*n];
		if (!entry_ok(h))
			continue;
		memcpy(d->name, h->name, strlen(h->name) + 1);
		memcpy(d->manifest, h->manifest, strlen(h->manifest) + 1);
		memcpy(d->id, h->id, strlen(h->id) + 1);
		d->size = h->size;
		d->created_ms = h->created_at;
		(*n)++;
	}
	mts__shim__image_set__free_unpacked(set, NULL);
	return 0;
}
