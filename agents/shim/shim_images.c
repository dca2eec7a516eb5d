/* shim_images.c: mts-shim's images beyond the helper — the replicated i/<node> record of what the store holds, runs waiting for an image being fetched, and blob parts served to other nodes (with the test hook that spoils some). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_held.h"
#include "log.h"
#include "mtserr.h"
#include "shim.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

#define MAX_WAITS 256 /* runs waiting for images at once */

/* --- i/<node> ------------------------------------------------------------- */

static void
held_from(const struct mts_image_info *in, struct mts_held *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", in->name);
	snprintf(h->manifest, sizeof(h->manifest), "%s", in->manifest);
	snprintf(h->id, sizeof(h->id), "%s", in->id);
	h->size = (uint64_t)in->size;
	h->created_ms = in->created_ms;
}

/* Puts key = value; 0 or -1 (the client is dropped for the retry). */
static int
put(struct shim *s, const char *key, const uint8_t *val, size_t len)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq p = MTS__STATESTORE__PUT_REQ__INIT;
	ProtobufCMessage *rep = NULL;
	char err[256];

	if (shim_ss(s) == NULL)
		return -1;
	p.key.data = (uint8_t *)key;
	p.key.len = strlen(key);
	p.value.data = (uint8_t *)val;
	p.value.len = len;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &p;
	if (mts_ipc_client_call(s->ss, &req.base,
	        &mts__statestore__reply__descriptor, &rep, err,
	        sizeof(err)) == 0) {
		protobuf_c_message_free_unpacked(rep, NULL);
		return 0;
	}
	log_debug("statestore put %s: %s", key, err);
	mts_ipc_client_close(s->ss);
	s->ss = NULL;
	s->next_store_retry = mts_now() + 1000;
	return -1;
}

void
shim_images_publish(struct shim *s)
{
	struct mts_image_info *all;
	struct mts_held *held;
	char key[80];
	uint8_t *buf;
	size_t n, i, len;

	s->images_dirty = 0;
	if (s->cfg.node[0] == '\0')
		return;
	if (mts_store_list(s->store, &all, &n) != 0) {
		s->images_dirty = 1;
		return;
	}
	if (n > MTS_PEER_MAX_HELD)
		n = MTS_PEER_MAX_HELD; /* the rest stay local */
	held = xcalloc(n + 1, sizeof(*held));
	for (i = 0; i < n; i++)
		held_from(&all[i], &held[i]);
	mts_held_encode(held, n, &buf, &len);
	snprintf(key, sizeof(key), "i/%s", s->cfg.node);
	s->images_dirty = put(s, key, buf, len) != 0;
	free(buf);
	free(held);
	for (i = 0; i < n; i++)
		mts_image_info_free(&all[i]);
	free(all);
}

/* --- runs waiting for their image ----------------------------------------- */

void
shim_fetch_argv(struct shim *s, struct shim_fetch_argv *a, const char *source,
    const char *ref, int insecure)
{
	const int64_t nums[6] = { s->cfg.pull_low_speed, s->cfg.pull_low_time,
		s->cfg.pull_timeout, s->cfg.pull_max_blob, s->cfg.peer_rate,
		s->cfg.peer_chunk_timeout };
	static const char *const opt[6] = { "-s", "-t", "-d", "-m", "-r",
		"-c" };
	size_t i, k = 0;

	a->v[k++] = "fetch";
	for (i = 0; i < 6; i++) {
		snprintf(a->num[i], sizeof(a->num[i]), "%lld",
		    (long long)nums[i]);
		a->v[k++] = opt[i];
		a->v[k++] = a->num[i];
	}
	snprintf(a->store, sizeof(a->store), "%s/images", s->cfg.statedir);
	a->v[k++] = a->store;
	a->v[k++] = source;
	a->v[k++] = ref;
	a->v[k++] = s->cfg.rundir;
	a->v[k++] = s->cfg.node[0] ? s->cfg.node : "-";
	a->v[k++] = insecure ? "insecure" : "secure";
	a->v[k] = NULL;
}

static int
stored(struct shim *s, const char *image)
{
	struct mts_image_info in;

	if (mts_store_get(s->store, image, &in) != 0)
		return 0;
	mts_image_info_free(&in);
	return 1;
}

/* Starts a fetch for the first waiting run whose image is not being
 * fetched, unless an image job runs: one at a time per node. */
static void
fetch_next(struct shim *s)
{
	struct shim_fetch_argv a;
	struct shim_wait *w, *o;

	if (s->image_job)
		return;
	for (w = s->waits; w != NULL && w->fetching; w = w->next)
		;
	if (w == NULL)
		return;
	for (o = s->waits; o != NULL; o = o->next)
		if (strcmp(o->spec->image, w->spec->image) == 0)
			o->fetching = 1;
	log_info("image %s: not stored here; fetching it", w->spec->image);
	shim_fetch_argv(s, &a, "auto", w->spec->image, 0);
	if (shim_image_start(s, a.v, 1, w->spec->image, NULL) != 0)
		shim_images_job_done(s, w->spec->image, -1, MTS_ERR_IO,
		    "cannot run the image helper");
}

void
shim_run_wait(struct shim *s, const Mts__Shim__TaskSpec *sp,
    struct mts_ipc_call *call)
{
	struct shim_wait *w, **pp;
	size_t n = 0;

	for (pp = &s->waits; *pp != NULL; pp = &(*pp)->next)
		n++;
	if (n >= MAX_WAITS) {
		mts_ipc_reply_error(call, MTS_ERR_TOOBIG,
		    "image %s: %zu runs already wait for images", sp->image, n);
		return;
	}
	w = xcalloc(1, sizeof(*w));
	w->spec = mts_pb_copy(&sp->base);
	w->call = call;
	*pp = w;
	fetch_next(s);
}

/* Takes w off the list; the caller frees it. */
static void
unlink_wait(struct shim *s, struct shim_wait *w)
{
	struct shim_wait **pp;

	for (pp = &s->waits; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			return;
		}
}

static void
wait_free(struct shim_wait *w)
{
	mts__shim__task_spec__free_unpacked(w->spec, NULL);
	free(w);
}

void
shim_images_job_done(struct shim *s, const char *want, int rc, int code,
    const char *msg)
{
	struct shim_wait *w, *next;

	if (rc == 0)
		shim_images_publish(s);
	for (w = s->waits; w != NULL; w = next) {
		next = w->next;
		if (stored(s, w->spec->image)) {
			unlink_wait(s, w);
			shim_run(s, w->spec, w->call);
			wait_free(w);
		} else if (w->fetching && strcmp(w->spec->image, want) == 0) {
			unlink_wait(s, w);
			log_warnx("task %s: %s", w->spec->id ? w->spec->id : "",
			    msg);
			mts_ipc_reply_error(w->call,
			    code ? code : MTS_ERR_NOTFOUND, "%s", msg);
			wait_free(w);
		}
	}
	fetch_next(s);
}

void
shim_waits_free(struct shim *s)
{
	struct shim_wait *w;

	while ((w = s->waits) != NULL) {
		s->waits = w->next;
		mts_ipc_call_drop(w->call);
		wait_free(w);
	}
}

/* --- blobs for other nodes ------------------------------------------------- */

/* The test hook ([shim] test_corrupt_chunks = N): the first N chunks this
 * node serves have one byte flipped, so tests see a corrupted transfer
 * refused by its digest. Off (0) unless configured. */
static void
test_corrupt(struct shim *s, uint8_t *buf, size_t len, const char *digest,
    uint64_t off)
{
	if (len == 0 || s->corrupted >= s->cfg.test_corrupt)
		return;
	s->corrupted++;
	buf[len / 2] ^= 0x20;
	log_warnx("test_corrupt_chunks: flipped a byte of %s at offset %llu",
	    digest, (unsigned long long)(off + len / 2));
}

void
shim_h_image_blob(void *ctx, const ProtobufCMessage *m,
    struct mts_ipc_call *call)
{
	const Mts__Shim__ImageBlobReq *r =
	    ((const Mts__Shim__Request *)m)->image_blob;
	struct shim *s = ctx;
	Mts__Shim__Reply rep = MTS__SHIM__REPLY__INIT;
	Mts__Shim__ImageBlobRep out = MTS__SHIM__IMAGE_BLOB_REP__INIT;
	const char *dg = r->digest ? r->digest : "";
	size_t max = r->max_bytes == 0 || r->max_bytes > MTS_PEER_CHUNK
	    ? MTS_PEER_CHUNK
	    : r->max_bytes;
	uint8_t *buf;
	size_t len;
	uint64_t size;
	int rc;

	if ((rc = mts_store_read_blob(s->store, dg, r->offset, max, &buf, &len,
	         &size)) != 0) {
		mts_ipc_reply_error(call, -rc, "blob %.80s: %s", dg,
		    rc == -MTS_ERR_NOTFOUND    ? "no image here has it"
		        : rc == -MTS_ERR_INVAL ? "offset beyond its end"
		                               : "cannot read it");
		return;
	}
	test_corrupt(s, buf, len, dg, r->offset);
	out.data.data = buf;
	out.data.len = len;
	out.size = size;
	rep.body_case = MTS__SHIM__REPLY__BODY_IMAGE_BLOB;
	rep.image_blob = &out;
	mts_ipc_reply(call, &rep.base);
	free(buf);
}
