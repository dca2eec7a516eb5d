/* noise_vectors.c: runs a Noise test vector file (cacophony/snow JSON format) through the handshake engine; one line per vector, then "N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "mtserr.h"
#include "agents/gossipd/noise.h"
#include "xmalloc.h"

#define DEFAULT_FILE "tests/data/noise/vectors-25519-chachapoly-blake2b.json"

struct side {
	struct mts_noise_hs *hs;
	struct mts_noise_cipher send, recv;
};

/* Decodes a hex string member into a new buffer; NULL when absent. */
static uint8_t *
hexfield(json_t *v, const char *name, size_t *len, char *err, size_t errlen)
{
	json_t *f = json_object_get(v, name);
	const char *s;
	uint8_t *out;
	size_t bin;

	*len = 0;
	if (f == NULL)
		return NULL;
	if (!json_is_string(f)) {
		snprintf(err, errlen, "%s is not a string", name);
		return NULL;
	}
	s = json_string_value(f);
	out = xmalloc(strlen(s) / 2 + 1);
	if (sodium_hex2bin(out, strlen(s) / 2 + 1, s, strlen(s), NULL, &bin,
	        NULL) != 0 ||
	    bin * 2 != strlen(s)) {
		snprintf(err, errlen, "%s is not valid hex", name);
		free(out);
		return NULL;
	}
	*len = bin;
	return out;
}

/* Sets a 32-byte key from a vector field, if present. */
static int
key32(json_t *v, const char *name, struct mts_noise_hs *hs,
    int (*set)(struct mts_noise_hs *, const uint8_t *), char *err,
    size_t errlen)
{
	size_t len;
	uint8_t *k = hexfield(v, name, &len, err, errlen);
	int rc = 0;

	if (k == NULL)
		return err[0] ? -1 : 0;
	if (len != 32) {
		snprintf(err, errlen, "%s is %zu bytes, not 32", name, len);
		rc = -1;
	} else if (set(hs, k) < 0) {
		snprintf(err, errlen, "%s rejected", name);
		rc = -1;
	}
	free(k);
	return rc;
}

static int
setup_side(json_t *v, const char *proto, const char *who,
    enum mts_noise_role role, struct side *sd, char *err, size_t errlen)
{
	char name[64];
	json_t *psks, *p;
	uint8_t *prologue, *psk;
	size_t plen, i;
	int rc = -1;

	if (mts_noise_hs_new(&sd->hs, proto, role) < 0) {
		snprintf(err, errlen, "unsupported protocol");
		return -1;
	}
	snprintf(name, sizeof(name), "%s_static", who);
	if (key32(v, name, sd->hs, mts_noise_hs_set_s, err, errlen) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s_ephemeral", who);
	if (key32(v, name, sd->hs, mts_noise_hs_set_e, err, errlen) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s_remote_static", who);
	if (key32(v, name, sd->hs, mts_noise_hs_set_rs, err, errlen) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s_psks", who);
	psks = json_object_get(v, name);
	json_array_foreach(psks, i, p)
	{
		json_t *wrap = json_pack("{sO}", "psk", p);

		psk = hexfield(wrap, "psk", &plen, err, errlen);
		json_decref(wrap);
		if (psk == NULL || plen != 32 ||
		    mts_noise_hs_add_psk(sd->hs, psk) < 0) {
			if (!err[0])
				snprintf(err, errlen, "bad psk %zu", i);
			free(psk);
			return -1;
		}
		free(psk);
	}
	snprintf(name, sizeof(name), "%s_prologue", who);
	prologue = hexfield(v, name, &plen, err, errlen);
	if (err[0])
		return -1;
	if (mts_noise_hs_start(sd->hs, prologue ? prologue : (uint8_t *)"",
	        plen) < 0)
		snprintf(err, errlen, "start: %s", mts_noise_hs_error(sd->hs));
	else
		rc = 0;
	free(prologue);
	return rc;
}

/* One message: the sender encrypts payload and must produce ct exactly; the
 * receiver must recover payload. */
static int
run_message(struct side *snd, struct side *rcv, const uint8_t *payload,
    size_t plen, const uint8_t *ct, size_t clen, char *err, size_t errlen)
{
	uint8_t out[MTS_NOISE_MAXMSG], back[MTS_NOISE_MAXMSG];
	size_t olen, blen;
	int rc;

	if (!mts_noise_hs_done(snd->hs)) {
		rc = mts_noise_hs_write(snd->hs, payload, plen, out,
		    sizeof(out), &olen);
		if (rc < 0) {
			snprintf(err, errlen, "write: %s",
			    mts_noise_hs_error(snd->hs));
			return -1;
		}
	} else if (mts_noise_encrypt(&snd->send, NULL, 0, payload, plen, out,
	               &olen) < 0) {
		snprintf(err, errlen, "transport encrypt failed");
		return -1;
	}
	if (olen != clen || memcmp(out, ct, clen) != 0) {
		snprintf(err, errlen, "ciphertext differs");
		return -1;
	}
	if (!mts_noise_hs_done(rcv->hs))
		rc = mts_noise_hs_read(rcv->hs, ct, clen, back, sizeof(back),
		    &blen);
	else
		rc = mts_noise_decrypt(&rcv->recv, NULL, 0, ct, clen, back,
		    &blen);
	if (rc < 0 || blen != plen || memcmp(back, payload, plen) != 0) {
		snprintf(err, errlen, "receiver did not recover the payload");
		return -1;
	}
	return 0;
}

static int
split_both(struct side *a, struct side *b, json_t *v, char *err, size_t errlen)
{
	uint8_t *hh;
	size_t hlen;

	if (mts_noise_hs_split(a->hs, &a->send, &a->recv) < 0 ||
	    mts_noise_hs_split(b->hs, &b->send, &b->recv) < 0) {
		snprintf(err, errlen, "split failed");
		return -1;
	}
	hh = hexfield(v, "handshake_hash", &hlen, err, errlen);
	if (err[0])
		return -1;
	if (hh != NULL &&
	    (hlen != MTS_NOISE_HASHLEN ||
	        memcmp(hh, mts_noise_hs_hash(a->hs), hlen) != 0 ||
	        memcmp(hh, mts_noise_hs_hash(b->hs), hlen) != 0))
		snprintf(err, errlen, "handshake hash differs");
	free(hh);
	return err[0] ? -1 : 0;
}

static int
run_vector(json_t *v, const char *proto, char *err, size_t errlen)
{
	struct side in = { 0 }, re = { 0 }, *snd, *rcv;
	json_t *msgs = json_object_get(v, "messages"), *m;
	uint8_t *payload = NULL, *ct = NULL;
	size_t i, plen, clen;
	int oneway, split = 0, rc = -1;

	if (setup_side(v, proto, "init", MTS_NOISE_INITIATOR, &in, err,
	        errlen) < 0 ||
	    setup_side(v, proto, "resp", MTS_NOISE_RESPONDER, &re, err,
	        errlen) < 0)
		goto out;
	oneway = strlen(proto) > 7 &&
	    (proto[7] < 'A' || proto[7] > 'Z'); /* "Noise_N_…" */
	if (!json_is_array(msgs) || json_array_size(msgs) == 0) {
		snprintf(err, errlen, "no messages");
		goto out;
	}
	json_array_foreach(msgs, i, m)
	{
		if (!split && mts_noise_hs_done(in.hs) &&
		    mts_noise_hs_done(re.hs)) {
			if (split_both(&in, &re, v, err, errlen) < 0)
				goto out;
			split = 1;
		}
		snd = (oneway || i % 2 == 0) ? &in : &re;
		rcv = snd == &in ? &re : &in;
		payload = hexfield(m, "payload", &plen, err, errlen);
		ct = hexfield(m, "ciphertext", &clen, err, errlen);
		if (err[0] || ct == NULL) {
			if (!err[0])
				snprintf(err, errlen,
				    "message %zu lacks fields", i);
			goto out;
		}
		if (run_message(snd, rcv, payload ? payload : ct, plen, ct,
		        clen, err, errlen) < 0) {
			size_t l = strlen(err);

			snprintf(err + l, errlen - l, " (message %zu)", i);
			goto out;
		}
		free(payload);
		free(ct);
		payload = ct = NULL;
	}
	rc = 0;
out:
	free(payload);
	free(ct);
	mts_noise_hs_free(in.hs);
	mts_noise_hs_free(re.hs);
	return rc;
}

static char *
default_path(void)
{
	const char *b = getenv("BUILD");

	if (b && *b)
		return xasprintf("%s/../%s", b, DEFAULT_FILE);
	return xstrdup(DEFAULT_FILE);
}

int
main(int argc, char **argv)
{
	json_error_t jerr;
	json_t *root, *vecs, *v, *name;
	char *path = argc > 1 ? xstrdup(argv[1]) : default_path();
	char err[256];
	size_t i;
	int passed = 0, failed = 0;

	if (sodium_init() < 0) {
		fprintf(stderr, "noise_vectors: libsodium failed to start\n");
		return 2;
	}
	root = json_load_file(path, 0, &jerr);
	if (root == NULL) {
		fprintf(stderr, "noise_vectors: %s:%d: %s\n", path, jerr.line,
		    jerr.text);
		free(path);
		return 2;
	}
	vecs = json_object_get(root, "vectors");
	if (!json_is_array(vecs)) {
		fprintf(stderr, "noise_vectors: %s: no \"vectors\" array\n",
		    path);
		json_decref(root);
		free(path);
		return 2;
	}
	json_array_foreach(vecs, i, v)
	{
		name = json_object_get(v, "protocol_name");
		if (name == NULL)
			name = json_object_get(v, "name");
		err[0] = '\0';
		if (!json_is_string(name)) {
			printf("FAIL: vector %zu: no protocol name\n", i);
			failed++;
		} else if (run_vector(v, json_string_value(name), err,
		               sizeof(err)) < 0) {
			printf("FAIL: vector %zu %s: %s\n", i,
			    json_string_value(name), err);
			failed++;
		} else {
			printf("PASS: vector %zu %s\n", i,
			    json_string_value(name));
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	json_decref(root);
	free(path);
	return failed ? 1 : 0;
}
