/* image_pull.c: pulls an image from an OCI distribution registry over HTTP(S) with libcurl — bearer-token auth, index resolution for linux/amd64, bounded in time (low-speed limit, deadline) and size (declared sizes checked first, no byte beyond them), every blob verified before it is stored. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>

#include "buf.h"
#include "image_store.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "xmalloc.h"

#define CONNECT_TIMEOUT_MS 10000
/* curl's clock and ours differ by a few ms: a timeout this close to the
 * pull's deadline is the deadline (curl ended one at 7987 ms of 7990). */
#define DEADLINE_SLACK_MS 100

static const char accept_hdr[] =
    "Accept: application/vnd.oci.image.index.v1+json, "
    "application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

struct pull {
	struct mts_ref ref;
	char base[600];   /* scheme://registry/v2/repo */
	char token[8192]; /* bearer token, "" = none */
	char challenge[1024];
	const struct mts_pull_limits *lim;
	mts_time_t deadline; /* of the whole pull */
};

/* Where a response body goes: a bounded memory buffer or a file. */
struct sink {
	struct mts_buf *mem;
	int fd;
	int64_t got, max;
	int over;
};

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct sink *k = arg;
	size_t len = sz * n;

	if (k->got + (int64_t)len > k->max) {
		k->over = 1;
		return 0;
	}
	k->got += (int64_t)len;
	if (k->mem != NULL)
		mts_buf_put(k->mem, p, len);
	else if (write(k->fd, p, len) != (ssize_t)len)
		return 0;
	return len;
}

static size_t
on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct pull *pl = arg;
	size_t len = sz * n;

	if (len > 18 && strncasecmp(p, "WWW-Authenticate:", 17) == 0)
		snprintf(pl->challenge, sizeof(pl->challenge), "%.*s",
		    (int)(len - 17), p + 17);
	return len;
}

/* One GET; returns the HTTP status (or -1 with err set). */
static long
get(struct pull *pl, const char *url, int manifest, struct sink *k, char *err,
    size_t errlen)
{
	struct curl_slist *h = NULL;
	char auth[8300], cerr[CURL_ERROR_SIZE] = "";
	mts_time_t left = pl->deadline - mts_now();
	long status = -1;
	CURLcode r;
	CURL *c;

	if (left <= 0) {
		snprintf(err, errlen, "%s: pull deadline passed", url);
		return -1;
	}
	if ((c = curl_easy_init()) == NULL) {
		snprintf(err, errlen, "curl init failed");
		return -1;
	}
	if (manifest)
		h = curl_slist_append(h, accept_hdr);
	if (pl->token[0] != '\0') {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		    pl->token);
		h = curl_slist_append(h, auth);
	}
	pl->challenge[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)left);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(left < CONNECT_TIMEOUT_MS ? left : CONNECT_TIMEOUT_MS));
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, (long)pl->lim->low_speed);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
	    (long)((pl->lim->low_time_ms + 999) / 1000));
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, k);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, pl);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "mts-shim/0.1");
	r = curl_easy_perform(c);
	if (r == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else if (k->over)
		snprintf(err, errlen, "%s: response larger than %lld bytes",
		    url, (long long)k->max);
	else if (r == CURLE_OPERATION_TIMEDOUT &&
	    pl->deadline - mts_now() <= DEADLINE_SLACK_MS)
		snprintf(err, errlen,
		    "%s: pull deadline passed ([shim] "
		    "pull_timeout %lld ms)",
		    url, (long long)pl->lim->deadline_ms);
	else
		snprintf(err, errlen, "%s: %s", url,
		    cerr[0] ? cerr : curl_easy_strerror(r));
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return status;
}

/* Extracts key="value" from a Bearer challenge. */
static int
challenge_param(const char *ch, const char *key, char *out, size_t outlen)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "%s=\"", key);
	if ((p = strstr(ch, pat)) == NULL)
		return -1;
	p += strlen(pat);
	if ((e = strchr(p, '"')) == NULL || (size_t)(e - p) >= outlen)
		return -1;
	snprintf(out, outlen, "%.*s", (int)(e - p), p);
	return 0;
}

/* Answers a 401 Bearer challenge by fetching a token from the realm. */
static int
authenticate(struct pull *pl, char *err, size_t errlen)
{
	char realm[512], service[256] = "", scope[512] = "", url[1600];
	struct mts_buf body;
	struct sink k = { .max = 1 << 20 };
	json_t *j;
	const char *tok;
	long st;
	CURL *c;
	char *es, *esc;

	if (strstr(pl->challenge, "Bearer") == NULL ||
	    challenge_param(pl->challenge, "realm", realm, sizeof(realm))) {
		snprintf(err, errlen,
		    "registry wants authentication we do not "
		    "speak: %.400s",
		    pl->challenge);
		return -MTS_ERR_DENIED;
	}
	challenge_param(pl->challenge, "service", service, sizeof(service));
	if (challenge_param(pl->challenge, "scope", scope, sizeof(scope)))
		snprintf(scope, sizeof(scope), "repository:%s:pull",
		    pl->ref.repo);
	c = curl_easy_init();
	es = curl_easy_escape(c, service, 0);
	esc = curl_easy_escape(c, scope, 0);
	snprintf(url, sizeof(url), "%s%sservice=%s&scope=%s", realm,
	    strchr(realm, '?') ? "&" : "?", es, esc);
	curl_free(es);
	curl_free(esc);
	curl_easy_cleanup(c);
	mts_buf_init(&body);
	k.mem = &body;
	pl->token[0] = '\0';
	st = get(pl, url, 0, &k, err, errlen);
	if (st != 200) {
		if (st > 0)
			snprintf(err, errlen, "token request to %s: HTTP %ld",
			    realm, st);
		mts_buf_free(&body);
		return -MTS_ERR_DENIED;
	}
	j = json_loadb((const char *)body.data, body.len, 0, NULL);
	mts_buf_free(&body);
	tok = j ? json_string_value(json_object_get(j, "token")) : NULL;
	if (tok == NULL && j != NULL)
		tok = json_string_value(json_object_get(j, "access_token"));
	if (tok == NULL || strlen(tok) >= sizeof(pl->token)) {
		snprintf(err, errlen, "token reply from %s has no usable token",
		    realm);
		json_decref(j);
		return -MTS_ERR_DENIED;
	}
	snprintf(pl->token, sizeof(pl->token), "%s", tok);
	json_decref(j);
	return 0;
}

/* GET with one retry after answering a 401 challenge. */
static int
fetch(struct pull *pl, const char *url, int manifest, struct sink *k, char *err,
    size_t errlen)
{
	long st;
	int rc, tries;

	for (tries = 0; tries < 2; tries++) {
		k->got = 0;
		k->over = 0;
		if (k->mem != NULL)
			mts_buf_reset(k->mem);
		else if (ftruncate(k->fd, 0) < 0 ||
		    lseek(k->fd, 0, SEEK_SET) < 0)
			return -MTS_ERR_IO;
		st = get(pl, url, manifest, k, err, errlen);
		if (st == 401 && tries == 0 && pl->challenge[0] != '\0') {
			if ((rc = authenticate(pl, err, errlen)) != 0)
				return rc;
			continue;
		}
		if (st == 200)
			return 0;
		if (st > 0)
			snprintf(err, errlen, "%s: HTTP %ld", url, st);
		return st == 404 ? -MTS_ERR_NOTFOUND : -MTS_ERR_IO;
	}
	snprintf(err, errlen, "%s: still unauthorized after the token", url);
	return -MTS_ERR_DENIED;
}

/* Fetches a manifest or index by tag or digest into the stage; fills the
 * digest it has (verified against `want` when that is a digest). */
static int
fetch_manifest(struct pull *pl, struct mts_stage *sg, const char *ref,
    char *digest, struct mts_buf *body, char *err, size_t errlen)
{
	char url[1200], path[4200];
	uint8_t sha[32];
	struct sink k = { .mem = body, .max = MTS_IMAGE_MAX_JSON };
	int rc, fd;

	snprintf(url, sizeof(url), "%s/manifests/%s", pl->base, ref);
	if ((rc = fetch(pl, url, 1, &k, err, errlen)) != 0)
		return rc;
	crypto_hash_sha256(sha, body->data, body->len);
	mts_digest_format(digest, sha);
	if (strncmp(ref, "sha256:", 7) == 0 && strcmp(ref, digest) != 0) {
		snprintf(err, errlen,
		    "manifest %s: digest mismatch (content "
		    "hashes to %s)",
		    ref, digest);
		return -MTS_ERR_INVAL;
	}
	snprintf(path, sizeof(path), "%s/incoming", mts_stage_dir(sg));
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) <
	    0)
		return -MTS_ERR_IO;
	rc = write(fd, body->data, body->len) == (ssize_t)body->len
	    ? 0
	    : -MTS_ERR_IO;
	close(fd);
	return rc ? rc : mts_stage_add_blob(sg, path, digest, -1, err, errlen);
}

/* Refuses a blob whose declared size is over the limit or the store's
 * free space, before a byte of it is fetched. */
static int
blob_fits(struct pull *pl, struct mts_stage *sg, const struct mts_desc *d,
    char *err, size_t errlen)
{
	struct statvfs vfs;
	int64_t avail;

	if (d->size > pl->lim->max_blob) {
		snprintf(err, errlen,
		    "blob %s: declared size %lld bytes is over "
		    "the limit of %lld ([shim] pull_max_blob)",
		    d->digest, (long long)d->size,
		    (long long)pl->lim->max_blob);
		return -MTS_ERR_TOOBIG;
	}
	if (statvfs(mts_stage_dir(sg), &vfs) != 0)
		return 0; /* the writes will tell */
	avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
	if (d->size > avail) {
		snprintf(err, errlen,
		    "blob %s: declared size %lld bytes, but "
		    "the image store has %lld bytes free",
		    d->digest, (long long)d->size, (long long)avail);
		return -MTS_ERR_TOOBIG;
	}
	return 0;
}

/* Fetches a blob into the stage: at most its declared size (more is
 * refused as it comes), then checked against its size and digest. */
static int
fetch_blob(struct pull *pl, struct mts_stage *sg, const struct mts_desc *d,
    char *err, size_t errlen)
{
	char url[1200], path[4200];
	struct sink k = { .max = d->size >= 0 ? d->size : pl->lim->max_blob };
	int rc;

	if ((rc = blob_fits(pl, sg, d, err, errlen)) != 0)
		return rc;
	snprintf(url, sizeof(url), "%s/blobs/%s", pl->base, d->digest);
	snprintf(path, sizeof(path), "%s/incoming", mts_stage_dir(sg));
	if ((k.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) <
	    0)
		return -MTS_ERR_IO;
	rc = fetch(pl, url, 0, &k, err, errlen);
	close(k.fd);
	if (rc != 0 && k.over && d->size >= 0) {
		snprintf(err, errlen,
		    "blob %s: size mismatch (the registry "
		    "sent more than the declared %lld bytes)",
		    d->digest, (long long)d->size);
		return -MTS_ERR_INVAL;
	}
	if (rc == 0)
		rc = mts_stage_add_blob(sg, path, d->digest, d->size, err,
		    errlen);
	return rc;
}

static int
resolve(struct pull *pl, struct mts_stage *sg, char *digest,
    struct mts_oci_manifest *man, char *err, size_t errlen)
{
	struct mts_buf body;
	struct mts_oci_index idx;
	enum mts_blob_kind kind;
	char ref[MTS_DIGEST_LEN + 130], msg[400];
	int rc, k, depth;

	mts_buf_init(&body);
	snprintf(ref, sizeof(ref), "%s",
	    pl->ref.digest[0] ? pl->ref.digest : pl->ref.tag);
	for (depth = 0; depth < 3; depth++) {
		if ((rc = fetch_manifest(pl, sg, ref, digest, &body, err,
		         errlen)) != 0)
			goto out;
		if ((rc = mts_oci_blob_kind((char *)body.data, body.len, &kind,
		         msg, sizeof(msg))) != 0) {
			snprintf(err, errlen, "manifest %s: %s", ref, msg);
			goto out;
		}
		if (kind == MTS_BLOB_MANIFEST) {
			rc = mts_oci_parse_manifest((char *)body.data, body.len,
			    man, msg, sizeof(msg));
			if (rc)
				snprintf(err, errlen, "manifest %s: %s", digest,
				    msg);
			goto out;
		}
		if ((rc = mts_oci_parse_index((char *)body.data, body.len, &idx,
		         msg, sizeof(msg))) != 0) {
			snprintf(err, errlen, "index %s: %s", digest, msg);
			goto out;
		}
		k = mts_oci_pick(&idx, "linux", "amd64");
		if (k >= 0)
			snprintf(ref, sizeof(ref), "%s", idx.m[k].digest);
		mts_oci_index_free(&idx);
		if (k < 0) {
			snprintf(err, errlen, "index %s: no linux/amd64 image",
			    digest);
			rc = -MTS_ERR_NOTFOUND;
			goto out;
		}
	}
	snprintf(err, errlen, "indexes nested too deep");
	rc = -MTS_ERR_INVAL;
out:
	mts_buf_free(&body);
	return rc;
}

int
mts_store_pull(struct mts_image_store *st, const char *refstr, int insecure,
    const struct mts_pull_limits *lim, char *name_out, size_t name_outlen,
    char *err, size_t errlen)
{
	struct pull pl;
	struct mts_stage *sg = NULL;
	struct mts_oci_manifest man;
	char digest[MTS_DIGEST_LEN + 1], msg[1024];
	size_t i;
	int rc;

	memset(&pl, 0, sizeof(pl));
	memset(&man, 0, sizeof(man));
	pl.lim = lim;
	pl.deadline = mts_now() + lim->deadline_ms;
	if (mts_ref_parse(refstr, &pl.ref) != 0) {
		snprintf(err, errlen, "invalid image reference \"%s\"", refstr);
		return -MTS_ERR_INVAL;
	}
	snprintf(pl.base, sizeof(pl.base), "%s://%s/v2/%s",
	    insecure ? "http" : "https", pl.ref.registry, pl.ref.repo);
	if ((rc = mts_stage_new(st, &sg, err, errlen)) != 0)
		return rc;
	if ((rc = resolve(&pl, sg, digest, &man, msg, sizeof(msg))) != 0)
		goto fail;
	if ((rc = fetch_blob(&pl, sg, &man.config, msg, sizeof(msg))) != 0)
		goto fail;
	for (i = 0; i < man.nlayers; i++)
		if ((rc = fetch_blob(&pl, sg, &man.layers[i], msg,
		         sizeof(msg))) != 0)
			goto fail;
	snprintf(name_out, name_outlen, "%s", refstr);
	if ((rc = mts_stage_commit_oci(sg, refstr, digest, &man, msg,
	         sizeof(msg))) != 0)
		goto fail;
	mts_stage_free(sg);
	mts_oci_manifest_free(&man);
	return 0;
fail:
	snprintf(err, errlen, "pull %s: %s", refstr, msg);
	mts_stage_free(sg);
	mts_oci_manifest_free(&man);
	return rc;
}
