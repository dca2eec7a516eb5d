/* image_peer.c: fetches an image from other nodes of the cluster — finds the holders in the replicated i/<node> records, asks them for its blobs in chunks through gossipd's relay, paced, verifies every blob by its digest before it is staged, and moves on to another holder (resuming) when one fails. Runs in mts-shim-image. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "gossipd.pb-c.h"
#include "hash.h"
#include "image_held.h"
#include "image_stage.h"
#include "image_store.h"
#include "ipc.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "record.h"
#include "shim.pb-c.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

#define HELD_PREFIX "i/"
#define SCAN_LIMIT 1000
#define LOCAL_WAIT_MS 5000
#define MAX_CANDS 64
/* Chunks of one blob in flight at once (each its own relayed call): the
 * round trip of one chunk through two gossipds and the holder's shim is
 * hidden behind the others. Well under [gossipd] relay_inflight. */
#define WINDOW 4

/* One fetch in progress. */
struct peer_fetch {
	const struct mts_peer_opts *o;
	struct mts_ipc_client *gd;
	struct mts_ipc_client *win[WINDOW]; /* one per chunk in flight */
	pthread_mutex_t mu;                 /* pace, bytes */
	struct mts_stage *sg;
	struct mts_peer_cand cands[MAX_CANDS];
	size_t ncand, cur; /* the holder asked now */
	struct mts_held chosen;
	struct mts_pace pace;
	mts_time_t deadline;
	uint64_t bytes;     /* fetched from peers, verified or not */
	mts_time_t fetched; /* when the last blob was verified */
};

/* --- who holds it --------------------------------------------------------- */

struct holders {
	struct mts_holder *v;
	size_t n;
};

static void
holders_free(struct holders *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		free((void *)h->v[i].held);
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/* Adds the holder of one i/<node> record (malformed ones are skipped). */
static void
holder_add(struct holders *h, const Mts__KeyRecord *kr)
{
	struct mts_holder *d;
	struct mts_held *held;
	size_t n, klen = kr->key.len;

	if (kr->record == NULL || kr->record->tombstone || klen != 2 + 32 ||
	    mts_held_decode(kr->record->value.data, kr->record->value.len,
	        &held, &n) != 0)
		return;
	h->v = xreallocarray(h->v, h->n + 1, sizeof(*h->v));
	d = &h->v[h->n++];
	memset(d, 0, sizeof(*d));
	memcpy(d->node, kr->key.data + 2, 32);
	d->node[32] = '\0';
	d->held = held;
	d->nheld = n;
}

/* Every i/<node> record of the local replica. */
static int
scan_holders(const char *rundir, struct holders *h, char *err, size_t errlen)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq sc = MTS__STATESTORE__SCAN_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	struct mts_ipc_client *ss;
	uint8_t last[MTS_KEY_MAX];
	size_t i, lastlen = 0;
	char path[PATHMAX], e[256];
	int rc = 0, more = 1;

	if (mts_ipc_sock_path(path, sizeof(path), rundir, "statestore", NULL) ||
	    (ss = mts_ipc_client_open(path, LOCAL_WAIT_MS, e, sizeof(e))) ==
	        NULL) {
		snprintf(err, errlen, "statestore: cannot open its socket");
		return -MTS_ERR_IO;
	}
	req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
	req.scan = &sc;
	sc.prefix.data = (uint8_t *)HELD_PREFIX;
	sc.prefix.len = strlen(HELD_PREFIX);
	sc.limit = SCAN_LIMIT;
	while (more && rc == 0) {
		sc.start_after.data = last;
		sc.start_after.len = lastlen;
		if ((rc = mts_ipc_client_call(ss, &req.base,
		         &mts__statestore__reply__descriptor,
		         (ProtobufCMessage **)&rep, e, sizeof(e))) != 0) {
			snprintf(err, errlen, "statestore scan: %s", e);
			break;
		}
		for (i = 0; rep->scan && i < rep->scan->n_items; i++) {
			const Mts__KeyRecord *kr = rep->scan->items[i];
			holder_add(h, kr);
			if (kr->key.len <= sizeof(last)) {
				memcpy(last, kr->key.data, kr->key.len);
				lastlen = kr->key.len;
			}
		}
		more = rep->scan && rep->scan->more && rep->scan->n_items > 0;
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	mts_ipc_client_close(ss);
	return rc;
}

/* Marks the holders gossipd sees alive. */
static int
mark_alive(struct mts_ipc_client *gd, struct holders *h, char *err,
    size_t errlen)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__MembersReq mr = MTS__GOSSIPD__MEMBERS_REQ__INIT;
	Mts__Gossipd__Reply *rep = NULL;
	char hex[33], e[256];
	size_t i, k;

	req.body_case = MTS__GOSSIPD__REQUEST__BODY_MEMBERS;
	req.members = &mr;
	if (mts_ipc_client_call(gd, &req.base, &mts__gossipd__reply__descriptor,
	        (ProtobufCMessage **)&rep, e, sizeof(e)) != 0) {
		snprintf(err, errlen, "gossipd members: %s", e);
		return -MTS_ERR_IO;
	}
	for (i = 0; rep->members && i < rep->members->n_nodes; i++) {
		const Mts__Gossipd__NodeInfo *ni = rep->members->nodes[i];
		if (ni->node.len != 16 || ni->removed ||
		    strcmp(ni->state, "alive") != 0)
			continue;
		mts_hex(hex, ni->node.data, 16);
		for (k = 0; k < h->n; k++)
			if (strcmp(h->v[k].node, hex) == 0)
				h->v[k].alive = 1;
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

/* --- one chunk through the relay -------------------------------------------- */

/* Asks node for len bytes of digest at off; on 0, *rep is the shim's reply
 * (the caller frees it). */
static int
ask_chunk(struct peer_fetch *f, struct mts_ipc_client *c, const char *node,
    const char *digest, uint64_t off, uint32_t len, Mts__Shim__Reply **out,
    char *err, size_t errlen)
{
	Mts__Shim__Request sreq = MTS__SHIM__REQUEST__INIT;
	Mts__Shim__ImageBlobReq br = MTS__SHIM__IMAGE_BLOB_REQ__INIT;
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__RelayReq rr = MTS__GOSSIPD__RELAY_REQ__INIT;
	Mts__Gossipd__Reply *rep = NULL;
	uint8_t id[16], *payload;
	int rc;

	br.digest = (char *)digest;
	br.offset = off;
	br.max_bytes = len;
	sreq.version = MTS_IPC_VERSION;
	sreq.body_case = MTS__SHIM__REQUEST__BODY_IMAGE_BLOB;
	sreq.image_blob = &br;
	payload = xmalloc(protobuf_c_message_get_packed_size(&sreq.base) + 1);
	rr.payload.len = protobuf_c_message_pack(&sreq.base, payload);
	rr.payload.data = payload;
	mts_unhex(id, sizeof(id), node, 32);
	rr.to_node.data = id;
	rr.to_node.len = sizeof(id);
	rr.agent = "shim";
	rr.timeout_ms = (uint32_t)f->o->chunk_timeout_ms;
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_RELAY;
	req.relay = &rr;
	rc = mts_ipc_client_call(c, &req.base, &mts__gossipd__reply__descriptor,
	    (ProtobufCMessage **)&rep, err, errlen);
	free(payload);
	if (rc != 0)
		return rc;
	*out = rep->relay
	    ? mts__shim__reply__unpack(NULL, rep->relay->payload.len,
	          rep->relay->payload.data)
	    : NULL;
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	if (*out == NULL ||
	    (*out)->body_case != MTS__SHIM__REPLY__BODY_IMAGE_BLOB) {
		if (*out != NULL && (*out)->error && (*out)->error->message)
			snprintf(err, errlen, "%s", (*out)->error->message);
		else
			snprintf(err, errlen, "not an image blob reply");
		if (*out != NULL)
			mts__shim__reply__free_unpacked(*out, NULL);
		*out = NULL;
		return -MTS_ERR_IO;
	}
	return 0;
}

/* Sleeps until the pace allows a chunk more, then counts it (when asked,
 * so that the budget refills while the chunk travels). */
static void
pace(struct peer_fetch *f)
{
	mts_time_t w;
	struct timespec ts;

	for (;;) {
		pthread_mutex_lock(&f->mu);
		w = mts_pace_wait(&f->pace, MTS_PEER_CHUNK, mts_now());
		if (w <= 0)
			mts_pace_took(&f->pace, MTS_PEER_CHUNK, mts_now());
		pthread_mutex_unlock(&f->mu);
		if (w <= 0)
			return;
		ts = (struct timespec){ w / 1000, (w % 1000) * 1000000 };
		nanosleep(&ts, NULL);
	}
}

/* One blob being fetched by the window's workers from one holder. */
struct blob_job {
	struct peer_fetch *f;
	const char *digest, *node;
	int fd;
	int64_t size;  /* known: declared, or learnt from the first chunk */
	int64_t max;   /* largest size accepted when none was declared */
	uint8_t *done; /* per chunk */
	size_t nchunks, next;
	int failed;
	char why[600];
};

/* Checks and writes one reply for chunk k; 0, or -1 with why filled. */
static int
put_chunk(struct blob_job *j, size_t k, const Mts__Shim__ImageBlobRep *b,
    char *why, size_t whylen)
{
	uint64_t off = (uint64_t)k * MTS_PEER_CHUNK;
	uint64_t want = (uint64_t)j->size - off < MTS_PEER_CHUNK
	    ? (uint64_t)j->size - off
	    : MTS_PEER_CHUNK;

	if (b->size != (uint64_t)j->size) {
		snprintf(why, whylen, "size %llu, expected %lld",
		    (unsigned long long)b->size, (long long)j->size);
		return -1;
	}
	if (b->data.len != want) {
		snprintf(why, whylen, "%zu bytes at offset %llu of %llu",
		    b->data.len, (unsigned long long)off,
		    (unsigned long long)b->size);
		return -1;
	}
	if (pwrite(j->fd, b->data.data, b->data.len, (off_t)off) !=
	    (ssize_t)b->data.len) {
		snprintf(why, whylen, "write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The chunk to ask for next (one not done), or -1 when none is left or
 * the job failed. Called with f->mu held. */
static long
take_chunk(struct blob_job *j)
{
	while (!j->failed && j->next < j->nchunks && j->done[j->next])
		j->next++;
	if (j->failed || j->next >= j->nchunks)
		return -1;
	return (long)j->next++;
}

/* Asks for chunk k with client c and records the outcome. */
static void
get_chunk(struct blob_job *j, struct mts_ipc_client *c, size_t k)
{
	struct peer_fetch *f = j->f;
	Mts__Shim__Reply *rep = NULL;
	char why[600];
	int rc;

	pace(f);
	if (mts_now() >= f->deadline) {
		snprintf(why, sizeof(why), "deadline passed");
		rc = -1;
	} else
		rc = ask_chunk(f, c, j->node, j->digest,
		    (uint64_t)k * MTS_PEER_CHUNK, MTS_PEER_CHUNK, &rep, why,
		    sizeof(why));
	if (rc == 0)
		rc = put_chunk(j, k, rep->image_blob, why, sizeof(why));
	pthread_mutex_lock(&f->mu);
	if (rep != NULL)
		f->bytes += rep->image_blob->data.len;
	if (rc == 0)
		j->done[k] = 1;
	else if (!j->failed) {
		j->failed = 1;
		snprintf(j->why, sizeof(j->why), "%s", why);
	}
	pthread_mutex_unlock(&f->mu);
	if (rep != NULL)
		mts__shim__reply__free_unpacked(rep, NULL);
}

struct worker {
	struct blob_job *j;
	struct mts_ipc_client *c;
	pthread_t th;
};

static void *
work(void *arg)
{
	struct worker *w = arg;
	long k;

	for (;;) {
		pthread_mutex_lock(&w->j->f->mu);
		k = take_chunk(w->j);
		pthread_mutex_unlock(&w->j->f->mu);
		if (k < 0)
			return NULL;
		get_chunk(w->j, w->c, (size_t)k);
	}
}

/* Learns the size of a blob declared without one (the manifest) from
 * its first chunk, which is kept. */
static int
learn_size(struct blob_job *j, char *why, size_t whylen)
{
	Mts__Shim__Reply *rep = NULL;
	const Mts__Shim__ImageBlobRep *b;
	int rc = -1;

	pace(j->f);
	if (ask_chunk(j->f, j->f->win[0], j->node, j->digest, 0, MTS_PEER_CHUNK,
	        &rep, why, whylen) != 0)
		return -1;
	b = rep->image_blob;
	j->f->bytes += b->data.len;
	if (b->size > (uint64_t)j->max)
		snprintf(why, whylen, "size %llu, over %lld",
		    (unsigned long long)b->size, (long long)j->max);
	else {
		j->size = (int64_t)b->size;
		rc = put_chunk(j, 0, b, why, whylen);
	}
	mts__shim__reply__free_unpacked(rep, NULL);
	return rc;
}

/* Fetches the chunks of j not done yet from j->node, WINDOW at a time;
 * 0 when all are there, else -1 with j->why filled. */
static int
fetch_chunks(struct blob_job *j)
{
	struct worker w[WINDOW];
	size_t i, n;

	j->failed = 0;
	j->next = 0;
	n = j->nchunks < WINDOW ? j->nchunks : WINDOW;
	for (i = 0; i < n; i++) {
		w[i] = (struct worker){ .j = j, .c = j->f->win[i] };
		if (pthread_create(&w[i].th, NULL, work, &w[i]) != 0)
			fatalx("cannot start a fetch thread");
	}
	for (i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);
	return j->failed ? -1 : 0;
}

/* Sets up the chunk map once the size is known. */
static void
job_size(struct blob_job *j)
{
	j->nchunks = (size_t)((j->size + MTS_PEER_CHUNK - 1) / MTS_PEER_CHUNK);
	free(j->done);
	j->done = xcalloc(j->nchunks + 1, 1);
}

/* One attempt at a blob from the current holder: the chunks still
 * missing, then the digest. 0, or -1 with j->why filled; a blob that
 * failed its digest is wiped (*restart set). */
static int
attempt(struct blob_job *j, int *restart)
{
	struct peer_fetch *f = j->f;

	*restart = 0;
	j->node = f->cands[f->cur].node;
	if (j->size < 0) {
		if (learn_size(j, j->why, sizeof(j->why)) != 0)
			return -1;
		job_size(j);
		j->done[0] = 1;
	}
	if (fetch_chunks(j) != 0)
		return -1;
	/* all of it: verified before it is staged */
	if (mts_stage_add_blob(f->sg, f->sg->incoming, j->digest, j->size,
	        j->why, sizeof(j->why)) == 0)
		return 0;
	*restart = 1;
	memset(j->done, 0, j->nchunks);
	if (ftruncate(j->fd, 0) != 0)
		snprintf(j->why, sizeof(j->why), "%s", strerror(errno));
	return -1;
}

/* The store already has the blob: linked into the stage, not fetched. */
static int
link_stored(struct peer_fetch *f, const char *digest)
{
	char src[PATHMAX], dst[PATHMAX];

	if (mts_img_staged_has(f->sg, digest, 0))
		return 0;
	if (mts_img_path(src, sizeof(src), "%s/blobs/sha256/%s",
	        f->sg->st->root, mts_img_hex(digest)) ||
	    mts_img_path(dst, sizeof(dst), "%s/blob-%s", f->sg->dir,
	        mts_img_hex(digest)) ||
	    link(src, dst) != 0)
		return -1;
	mts_img_staged_add(f->sg, digest, 0);
	return 0;
}

/* The next holder (after a failure). */
static void
next_holder(struct peer_fetch *f, const char *digest, const char *why)
{
	size_t was = f->cur;

	f->cur = (f->cur + 1) % f->ncand;
	log_warnx("blob %s from node %s: %s; retrying from node %s", digest,
	    f->cands[was].node, why, f->cands[f->cur].node);
}

/*
 * Fetches one blob into the stage, verified by its digest (and its size,
 * when declared: size >= 0). A transfer error resumes the chunks still
 * missing from the next holder; a blob that fails its digest is refused
 * and fetched again from the start, from the next holder. At most
 * mts_peer_tries() attempts.
 */
static int
fetch_blob(struct peer_fetch *f, const char *digest, int64_t size, int64_t max,
    char *err, size_t errlen)
{
	struct blob_job j = { .f = f,
		.digest = digest,
		.size = size,
		.max = max };
	unsigned tries = mts_peer_tries(f->ncand), t = 0;
	int rc = -1, restart;

	if (link_stored(f, digest) == 0)
		return 0;
	if (size > max) {
		snprintf(err, errlen, "blob %s: declared size %lld, over %lld",
		    digest, (long long)size, (long long)max);
		return -MTS_ERR_TOOBIG;
	}
	if ((j.fd = open(f->sg->incoming,
	         O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		snprintf(err, errlen, "%s: %s", f->sg->incoming,
		    strerror(errno));
		return -MTS_ERR_IO;
	}
	if (size >= 0)
		job_size(&j);
	while ((rc = attempt(&j, &restart)) != 0 && ++t < tries &&
	    mts_now() < f->deadline) {
		next_holder(f, digest, j.why);
		if (restart)
			j.size = size; /* learnt again if it was not declared */
	}
	close(j.fd);
	free(j.done);
	if (rc != 0)
		snprintf(err, errlen, "blob %s: %s (after %u attempts)", digest,
		    j.why, t);
	return rc ? -MTS_ERR_IO : 0;
}

/* --- the image --------------------------------------------------------------- */

/* Fetches the chosen manifest, then its config and layers. */
static int
fetch_image(struct peer_fetch *f, const char *name, char *err, size_t errlen)
{
	struct mts_oci_manifest man;
	enum mts_blob_kind kind;
	char *buf = NULL, msg[512];
	size_t len, i;
	int rc;

	memset(&man, 0, sizeof(man));
	if ((rc = fetch_blob(f, f->chosen.manifest, -1, MTS_IMAGE_MAX_JSON, err,
	         errlen)) != 0 ||
	    (rc = mts_stage_read_blob(f->sg, f->chosen.manifest, &buf, &len,
	         err, errlen)) != 0)
		goto out;
	if ((rc = mts_oci_blob_kind(buf, len, &kind, msg, sizeof(msg))) != 0 ||
	    kind != MTS_BLOB_MANIFEST ||
	    (rc = mts_oci_parse_manifest(buf, len, &man, msg, sizeof(msg))) !=
	        0) {
		snprintf(err, errlen, "manifest %s: %s", f->chosen.manifest,
		    rc ? msg : "an index, not a manifest");
		rc = -MTS_ERR_INVAL;
		goto out;
	}
	if ((rc = fetch_blob(f, man.config.digest, man.config.size,
	         MTS_IMAGE_MAX_JSON, err, errlen)) != 0)
		goto out;
	for (i = 0; i < man.nlayers; i++)
		if ((rc = fetch_blob(f, man.layers[i].digest,
		         man.layers[i].size, f->o->max_blob, err, errlen)) != 0)
			goto out;
	f->fetched = mts_now();
	rc = mts_stage_commit_oci(f->sg, f->chosen.name, f->chosen.manifest,
	    &man, err, errlen);
out:
	free(buf);
	mts_oci_manifest_free(&man);
	return rc;
}

/* The holders to ask (alive peers with the newest image of that name). */
static int
find_holders(struct peer_fetch *f, const char *name, char *err, size_t errlen)
{
	struct holders h = { NULL, 0 };
	uint64_t seed;
	int rc;

	if ((rc = scan_holders(f->o->rundir, &h, err, errlen)) != 0 ||
	    (rc = mark_alive(f->gd, &h, err, errlen)) != 0)
		goto out;
	randombytes_buf(&seed, sizeof(seed));
	f->ncand = mts_peer_pick(h.v, h.n, f->o->self, name, seed, f->cands,
	    MAX_CANDS, &f->chosen);
	if (f->ncand == 0) {
		snprintf(err, errlen, "no peer has it");
		rc = -MTS_ERR_NOTFOUND;
	}
out:
	holders_free(&h);
	return rc;
}

int
mts_store_fetch_peers(struct mts_image_store *st, const char *name,
    const struct mts_peer_opts *o, char *name_out, size_t name_outlen,
    char *err, size_t errlen)
{
	struct peer_fetch f;
	char path[PATHMAX], e[256];
	mts_time_t t0 = mts_now();
	size_t i;
	int rc;

	memset(&f, 0, sizeof(f));
	f.o = o;
	f.deadline = t0 + o->deadline_ms;
	mts_pace_init(&f.pace, o->rate, t0);
	if (o->self == NULL || o->self[0] == '\0') {
		snprintf(err, errlen,
		    "no peer has it (this shim has no node id, so no "
		    "cluster to ask)");
		return -MTS_ERR_NOTFOUND;
	}
	if (mts_ipc_sock_path(path, sizeof(path), o->rundir, "gossipd", NULL) ||
	    (f.gd = mts_ipc_client_open(path, (int)o->chunk_timeout_ms + 1000,
	         e, sizeof(e))) == NULL) {
		snprintf(err, errlen, "gossipd: cannot open its socket");
		return -MTS_ERR_IO;
	}
	for (i = 0; i < WINDOW; i++)
		if ((f.win[i] = mts_ipc_client_open(path,
		         (int)o->chunk_timeout_ms + 1000, e, sizeof(e))) ==
		    NULL)
			fatalx("gossipd client: %s", e);
	pthread_mutex_init(&f.mu, NULL);
	if ((rc = find_holders(&f, name, err, errlen)) == 0 &&
	    (rc = mts_stage_new(st, &f.sg, err, errlen)) == 0)
		rc = fetch_image(&f, name, err, errlen);
	if (rc == 0) {
		snprintf(name_out, name_outlen, "%s", f.chosen.name);
		log_info("image %s: %llu bytes from %zu holder(s) in %lld ms "
		         "(%lld ms to fetch and verify the blobs, the rest to "
		         "unpack)",
		    f.chosen.name, (unsigned long long)f.bytes, f.ncand,
		    (long long)(mts_now() - t0), (long long)(f.fetched - t0));
	}
	mts_stage_free(f.sg);
	mts_ipc_client_close(f.gd);
	for (i = 0; i < WINDOW; i++)
		mts_ipc_client_close(f.win[i]);
	pthread_mutex_destroy(&f.mu);
	return rc;
}
