/* noise.c: Noise handshake engine (patterns with psk modifiers) and cipher states over libsodium's X25519, ChaCha20-Poly1305 IETF and BLAKE2b. */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "mtserr.h"
#include "noise.h"
#include "xmalloc.h"

#define BLOCKLEN 128
#define MAXTOKENS 8
#define MAXMSGS 4
#define SUFFIX "_25519_ChaChaPoly_BLAKE2b"

enum tok { T_E = 1, T_S, T_EE, T_ES, T_SE, T_SS, T_PSK };

/*
 * Base patterns, spec section 7: pre-messages (initiator's, responder's)
 * then the messages, alternating initiator/responder; a one-way pattern has
 * a single message. Only "s" appears in pre-messages of these patterns.
 */
struct pattern {
	const char *name;
	const char *pre_i, *pre_r;
	const char *msgs[MAXMSGS];
};

static const struct pattern patterns[] = {
	{ "N", "", "s", { "e es" } },
	{ "K", "s", "s", { "e es ss" } },
	{ "X", "", "s", { "e es s ss" } },
	{ "NN", "", "", { "e", "e ee" } },
	{ "NK", "", "s", { "e es", "e ee" } },
	{ "NX", "", "", { "e", "e ee s es" } },
	{ "KN", "s", "", { "e", "e ee se" } },
	{ "KK", "s", "s", { "e es ss", "e ee se" } },
	{ "KX", "s", "", { "e", "e ee se s es" } },
	{ "XN", "", "", { "e", "e ee", "s se" } },
	{ "XK", "", "s", { "e es", "e ee", "s se" } },
	{ "XX", "", "", { "e", "e ee s es", "s se" } },
	{ "IN", "", "", { "e s", "e ee se" } },
	{ "IK", "", "s", { "e es s ss", "e ee se" } },
	{ "IX", "", "", { "e s", "e ee se s es" } },
};

struct symmetric {
	struct mts_noise_cipher c;
	uint8_t ck[MTS_NOISE_HASHLEN];
	uint8_t h[MTS_NOISE_HASHLEN];
};

struct mts_noise_hs {
	struct symmetric ss;
	enum mts_noise_role role;
	int oneway;
	int psk_mode;
	int failed;
	int started;
	uint8_t msgs[MAXMSGS][MAXTOKENS];
	int nmsgs;
	int cur;
	int pre_i_s, pre_r_s; /* pre-message carries s */
	struct mts_noise_keypair s, e;
	int has_s, has_e;
	uint8_t rs[32], re[32];
	int has_rs, has_re;
	uint8_t psks[MTS_NOISE_MAXPSKS][MTS_NOISE_PSKLEN];
	int npsks, psk_next;
	mts_noise_rng_fn rng;
	void *rng_ctx;
	char err[96];
};

/* --- primitives ------------------------------------------------------- */

static void
hash2(uint8_t out[MTS_NOISE_HASHLEN], const uint8_t *a, size_t alen,
    const uint8_t *b, size_t blen)
{
	crypto_generichash_blake2b_state st;

	crypto_generichash_blake2b_init(&st, NULL, 0, MTS_NOISE_HASHLEN);
	crypto_generichash_blake2b_update(&st, a, alen);
	if (blen)
		crypto_generichash_blake2b_update(&st, b, blen);
	crypto_generichash_blake2b_final(&st, out, MTS_NOISE_HASHLEN);
}

/* HMAC-BLAKE2b (RFC 2104 with a 128-byte block); key is HASHLEN bytes. The
 * data is the concatenation of d1 and d2. */
static void
hmac(uint8_t out[MTS_NOISE_HASHLEN], const uint8_t key[MTS_NOISE_HASHLEN],
    const uint8_t *d1, size_t l1, const uint8_t *d2, size_t l2)
{
	crypto_generichash_blake2b_state st;
	uint8_t pad[BLOCKLEN], inner[MTS_NOISE_HASHLEN];
	size_t i;

	memset(pad, 0, sizeof(pad));
	memcpy(pad, key, MTS_NOISE_HASHLEN);
	for (i = 0; i < BLOCKLEN; i++)
		pad[i] ^= 0x36;
	crypto_generichash_blake2b_init(&st, NULL, 0, MTS_NOISE_HASHLEN);
	crypto_generichash_blake2b_update(&st, pad, BLOCKLEN);
	if (l1)
		crypto_generichash_blake2b_update(&st, d1, l1);
	if (l2)
		crypto_generichash_blake2b_update(&st, d2, l2);
	crypto_generichash_blake2b_final(&st, inner, sizeof(inner));
	for (i = 0; i < BLOCKLEN; i++)
		pad[i] ^= 0x36 ^ 0x5c;
	hash2(out, pad, BLOCKLEN, inner, sizeof(inner));
	sodium_memzero(pad, sizeof(pad));
	sodium_memzero(inner, sizeof(inner));
}

/* HKDF(ck, ikm) with 2 or 3 outputs (o3 may be NULL). */
static void
hkdf(const uint8_t ck[MTS_NOISE_HASHLEN], const uint8_t *ikm, size_t ilen,
    uint8_t o1[MTS_NOISE_HASHLEN], uint8_t o2[MTS_NOISE_HASHLEN], uint8_t *o3)
{
	uint8_t temp[MTS_NOISE_HASHLEN];
	uint8_t one = 1, two = 2, three = 3;

	hmac(temp, ck, ikm, ilen, NULL, 0);
	hmac(o1, temp, &one, 1, NULL, 0);
	hmac(o2, temp, o1, MTS_NOISE_HASHLEN, &two, 1);
	if (o3)
		hmac(o3, temp, o2, MTS_NOISE_HASHLEN, &three, 1);
	sodium_memzero(temp, sizeof(temp));
}

static void
nonce12(uint8_t out[12], uint64_t n)
{
	int i;

	memset(out, 0, 4);
	for (i = 0; i < 8; i++)
		out[4 + i] = (uint8_t)(n >> (8 * i));
}

/* --- CipherState ------------------------------------------------------ */

static void
cipher_init(struct mts_noise_cipher *c, const uint8_t *k)
{
	memcpy(c->k, k, MTS_NOISE_KEYLEN);
	c->n = 0;
	c->has_key = 1;
}

int
mts_noise_encrypt(struct mts_noise_cipher *c, const uint8_t *ad, size_t adlen,
    const uint8_t *pt, size_t ptlen, uint8_t *out, size_t *outlen)
{
	uint8_t nonce[12];
	unsigned long long clen;

	if (!c->has_key) {
		if (ptlen > MTS_NOISE_MAXMSG)
			return -MTS_ERR_TOOBIG;
		memmove(out, pt, ptlen);
		*outlen = ptlen;
		return 0;
	}
	if (ptlen > MTS_NOISE_MAXPLAIN)
		return -MTS_ERR_TOOBIG;
	if (c->n == UINT64_MAX)
		return -MTS_ERR_STATE;
	nonce12(nonce, c->n);
	if (crypto_aead_chacha20poly1305_ietf_encrypt(out, &clen, pt, ptlen, ad,
	        adlen, NULL, nonce, c->k) != 0)
		return -MTS_ERR_CRYPTO;
	c->n++;
	*outlen = (size_t)clen;
	return 0;
}

int
mts_noise_decrypt(struct mts_noise_cipher *c, const uint8_t *ad, size_t adlen,
    const uint8_t *ct, size_t ctlen, uint8_t *out, size_t *outlen)
{
	uint8_t nonce[12];
	unsigned long long plen;

	if (ctlen > MTS_NOISE_MAXMSG)
		return -MTS_ERR_TOOBIG;
	if (!c->has_key) {
		memmove(out, ct, ctlen);
		*outlen = ctlen;
		return 0;
	}
	if (ctlen < MTS_NOISE_TAGLEN)
		return -MTS_ERR_CRYPTO;
	if (c->n == UINT64_MAX)
		return -MTS_ERR_STATE;
	nonce12(nonce, c->n);
	if (crypto_aead_chacha20poly1305_ietf_decrypt(out, &plen, NULL, ct,
	        ctlen, ad, adlen, nonce, c->k) != 0)
		return -MTS_ERR_CRYPTO;
	c->n++;
	*outlen = (size_t)plen;
	return 0;
}

int
mts_noise_rekey(struct mts_noise_cipher *c)
{
	uint8_t zeros[MTS_NOISE_KEYLEN], out[MTS_NOISE_KEYLEN + 16];
	uint8_t nonce[12];
	unsigned long long clen;

	if (!c->has_key)
		return -MTS_ERR_STATE;
	memset(zeros, 0, sizeof(zeros));
	nonce12(nonce, UINT64_MAX);
	if (crypto_aead_chacha20poly1305_ietf_encrypt(out, &clen, zeros,
	        sizeof(zeros), NULL, 0, NULL, nonce, c->k) != 0)
		return -MTS_ERR_CRYPTO;
	memcpy(c->k, out, MTS_NOISE_KEYLEN);
	sodium_memzero(out, sizeof(out));
	return 0;
}

void
mts_noise_cipher_clear(struct mts_noise_cipher *c)
{
	sodium_memzero(c, sizeof(*c));
}

/* --- key pairs ---------------------------------------------------------- */

int
mts_noise_keypair_from_priv(struct mts_noise_keypair *kp,
    const uint8_t priv[MTS_NOISE_DHLEN])
{
	memcpy(kp->priv, priv, MTS_NOISE_DHLEN);
	if (crypto_scalarmult_base(kp->pub, kp->priv) != 0)
		return -MTS_ERR_CRYPTO;
	return 0;
}

int
mts_noise_keypair_generate(struct mts_noise_keypair *kp, mts_noise_rng_fn rng,
    void *rng_ctx)
{
	uint8_t priv[MTS_NOISE_DHLEN];
	int rc;

	if (rng == NULL)
		return -MTS_ERR_STATE;
	if ((rc = rng(rng_ctx, priv, sizeof(priv))) < 0)
		return rc;
	rc = mts_noise_keypair_from_priv(kp, priv);
	sodium_memzero(priv, sizeof(priv));
	return rc;
}

/* --- SymmetricState ----------------------------------------------------- */

static void
mix_hash(struct symmetric *ss, const uint8_t *data, size_t len)
{
	hash2(ss->h, ss->h, MTS_NOISE_HASHLEN, data, len);
}

static void
mix_key(struct symmetric *ss, const uint8_t *ikm, size_t len)
{
	uint8_t k[MTS_NOISE_HASHLEN];

	hkdf(ss->ck, ikm, len, ss->ck, k, NULL);
	cipher_init(&ss->c, k);
	sodium_memzero(k, sizeof(k));
}

static void
mix_key_and_hash(struct symmetric *ss, const uint8_t *ikm, size_t len)
{
	uint8_t th[MTS_NOISE_HASHLEN], tk[MTS_NOISE_HASHLEN];

	hkdf(ss->ck, ikm, len, ss->ck, th, tk);
	mix_hash(ss, th, sizeof(th));
	cipher_init(&ss->c, tk);
	sodium_memzero(tk, sizeof(tk));
}

static int
encrypt_and_hash(struct symmetric *ss, const uint8_t *pt, size_t len,
    uint8_t *out, size_t *outlen)
{
	int rc;

	rc = mts_noise_encrypt(&ss->c, ss->h, MTS_NOISE_HASHLEN, pt, len, out,
	    outlen);
	if (rc == 0)
		mix_hash(ss, out, *outlen);
	return rc;
}

static int
decrypt_and_hash(struct symmetric *ss, const uint8_t *ct, size_t len,
    uint8_t *out, size_t *outlen)
{
	uint8_t h[MTS_NOISE_HASHLEN];
	int rc;

	/* h after this step covers the ciphertext, which out may overwrite */
	hash2(h, ss->h, MTS_NOISE_HASHLEN, ct, len);
	rc = mts_noise_decrypt(&ss->c, ss->h, MTS_NOISE_HASHLEN, ct, len, out,
	    outlen);
	if (rc == 0)
		memcpy(ss->h, h, MTS_NOISE_HASHLEN);
	return rc;
}

/* --- pattern parsing ---------------------------------------------------- */

static int
parse_tokens(const char *s, uint8_t out[MAXTOKENS])
{
	static const struct {
		const char *name;
		enum tok t;
	} names[] = { { "e", T_E }, { "s", T_S }, { "ee", T_EE },
		{ "es", T_ES }, { "se", T_SE }, { "ss", T_SS } };
	char word[4];
	size_t i, n = 0, len;

	memset(out, 0, MAXTOKENS);
	while (*s) {
		len = strcspn(s, " ");
		if (len == 0 || len >= sizeof(word) || n >= MAXTOKENS - 1)
			return -MTS_ERR_INVAL;
		memcpy(word, s, len);
		word[len] = '\0';
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(word, names[i].name) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -MTS_ERR_INVAL;
		out[n++] = (uint8_t)names[i].t;
		s += len;
		while (*s == ' ')
			s++;
	}
	return 0;
}

/* Inserts a psk token: psk0 at the start of message 0, pskN at the end of
 * message N-1. */
static int
add_psk_token(struct mts_noise_hs *hs, int which)
{
	uint8_t *m;
	size_t n;
	int idx = which == 0 ? 0 : which - 1;

	if (idx >= hs->nmsgs)
		return -MTS_ERR_INVAL;
	m = hs->msgs[idx];
	n = strnlen((const char *)m, MAXTOKENS);
	if (n >= MAXTOKENS - 1)
		return -MTS_ERR_INVAL;
	if (which == 0) {
		memmove(m + 1, m, n);
		m[0] = T_PSK;
	} else {
		m[n] = T_PSK;
	}
	m[n + 1] = 0;
	return 0;
}

/* Parses "psk0+psk2" (may be empty). */
static int
parse_modifiers(struct mts_noise_hs *hs, const char *mods, size_t len)
{
	unsigned seen = 0;
	size_t i = 0;
	int d, rc;

	while (i < len) {
		if (len - i < 4 || strncmp(mods + i, "psk", 3) != 0)
			return -MTS_ERR_INVAL;
		d = mods[i + 3] - '0';
		if (d < 0 || d > 3 || (seen & (1u << d)))
			return -MTS_ERR_INVAL;
		seen |= 1u << d;
		if ((rc = add_psk_token(hs, d)) < 0)
			return rc;
		hs->psk_mode = 1;
		i += 4;
		if (i < len) {
			if (mods[i] != '+' || i + 1 == len)
				return -MTS_ERR_INVAL;
			i++;
		}
	}
	return 0;
}

static int
parse_protocol(struct mts_noise_hs *hs, const char *name)
{
	size_t nlen = strlen(name), slen = strlen(SUFFIX), plen, i;
	const char *p;
	const struct pattern *pat = NULL;
	int rc;

	if (nlen < 6 + slen || strncmp(name, "Noise_", 6) != 0 ||
	    strcmp(name + nlen - slen, SUFFIX) != 0)
		return -MTS_ERR_INVAL;
	p = name + 6;
	plen = nlen - 6 - slen;
	for (i = 0; i < plen && p[i] >= 'A' && p[i] <= 'Z'; i++)
		;
	for (size_t j = 0; j < sizeof(patterns) / sizeof(patterns[0]); j++)
		if (strlen(patterns[j].name) == i &&
		    strncmp(patterns[j].name, p, i) == 0)
			pat = &patterns[j];
	if (pat == NULL)
		return -MTS_ERR_INVAL;
	hs->pre_i_s = strcmp(pat->pre_i, "s") == 0;
	hs->pre_r_s = strcmp(pat->pre_r, "s") == 0;
	for (hs->nmsgs = 0; hs->nmsgs < MAXMSGS && pat->msgs[hs->nmsgs];
	     hs->nmsgs++)
		if ((rc = parse_tokens(pat->msgs[hs->nmsgs],
		         hs->msgs[hs->nmsgs])) < 0)
			return rc;
	hs->oneway = hs->nmsgs == 1;
	return parse_modifiers(hs, p + i, plen - i);
}

/* --- HandshakeState ----------------------------------------------------- */

static int
fail(struct mts_noise_hs *hs, int rc, const char *why)
{
	snprintf(hs->err, sizeof(hs->err), "%s", why);
	hs->failed = 1;
	return rc;
}

int
mts_noise_hs_new(struct mts_noise_hs **out, const char *protocol,
    enum mts_noise_role role)
{
	struct mts_noise_hs *hs = xcalloc(1, sizeof(*hs));
	size_t len = strlen(protocol);

	*out = NULL;
	if (parse_protocol(hs, protocol) < 0) {
		mts_noise_hs_free(hs);
		return -MTS_ERR_INVAL;
	}
	hs->role = role;
	if (len <= MTS_NOISE_HASHLEN)
		memcpy(hs->ss.h, protocol, len);
	else
		hash2(hs->ss.h, (const uint8_t *)protocol, len, NULL, 0);
	memcpy(hs->ss.ck, hs->ss.h, MTS_NOISE_HASHLEN);
	*out = hs;
	return 0;
}

void
mts_noise_hs_free(struct mts_noise_hs *hs)
{
	if (hs == NULL)
		return;
	sodium_memzero(hs, sizeof(*hs));
	free(hs);
}

int
mts_noise_hs_set_s(struct mts_noise_hs *hs, const uint8_t priv[32])
{
	int rc = mts_noise_keypair_from_priv(&hs->s, priv);

	hs->has_s = rc == 0;
	return rc;
}

int
mts_noise_hs_set_e(struct mts_noise_hs *hs, const uint8_t priv[32])
{
	int rc = mts_noise_keypair_from_priv(&hs->e, priv);

	hs->has_e = rc == 0;
	return rc;
}

int
mts_noise_hs_set_rs(struct mts_noise_hs *hs, const uint8_t pub[32])
{
	memcpy(hs->rs, pub, 32);
	hs->has_rs = 1;
	return 0;
}

int
mts_noise_hs_add_psk(struct mts_noise_hs *hs, const uint8_t psk[32])
{
	if (hs->npsks >= MTS_NOISE_MAXPSKS)
		return -MTS_ERR_TOOBIG;
	memcpy(hs->psks[hs->npsks++], psk, MTS_NOISE_PSKLEN);
	return 0;
}

void
mts_noise_hs_set_rng(struct mts_noise_hs *hs, mts_noise_rng_fn fn, void *ctx)
{
	hs->rng = fn;
	hs->rng_ctx = ctx;
}

/* Whether this side's key material suffices for the pattern. */
static int
check_keys(struct mts_noise_hs *hs)
{
	int i, j, me_writes, init = hs->role == MTS_NOISE_INITIATOR;
	int npsk = 0;

	if ((init ? hs->pre_i_s : hs->pre_r_s) && !hs->has_s)
		return fail(hs, -MTS_ERR_STATE,
		    "pre-message needs local static");
	if ((init ? hs->pre_r_s : hs->pre_i_s) && !hs->has_rs)
		return fail(hs, -MTS_ERR_STATE,
		    "pre-message needs remote static");
	for (i = 0; i < hs->nmsgs; i++) {
		me_writes = (i % 2 == 0) == init;
		for (j = 0; hs->msgs[i][j]; j++) {
			if (hs->msgs[i][j] == T_PSK)
				npsk++;
			if (me_writes && hs->msgs[i][j] == T_S && !hs->has_s)
				return fail(hs, -MTS_ERR_STATE,
				    "pattern sends a static key but none set");
		}
	}
	if (npsk != hs->npsks)
		return fail(hs, -MTS_ERR_STATE, "wrong number of psks");
	return 0;
}

int
mts_noise_hs_start(struct mts_noise_hs *hs, const uint8_t *prologue,
    size_t prologue_len)
{
	int init = hs->role == MTS_NOISE_INITIATOR;
	int rc;

	if (hs->started)
		return -MTS_ERR_STATE;
	if ((rc = check_keys(hs)) < 0)
		return rc;
	mix_hash(&hs->ss, prologue, prologue_len);
	if (hs->pre_i_s)
		mix_hash(&hs->ss, init ? hs->s.pub : hs->rs, 32);
	if (hs->pre_r_s)
		mix_hash(&hs->ss, init ? hs->rs : hs->s.pub, 32);
	hs->started = 1;
	return 0;
}

int
mts_noise_hs_is_writer(const struct mts_noise_hs *hs)
{
	return (hs->cur % 2 == 0) == (hs->role == MTS_NOISE_INITIATOR);
}

int
mts_noise_hs_msgs_left(const struct mts_noise_hs *hs)
{
	return hs->cur < hs->nmsgs ? hs->nmsgs - hs->cur : 0;
}

int
mts_noise_hs_done(const struct mts_noise_hs *hs)
{
	return hs->started && !hs->failed && hs->cur >= hs->nmsgs;
}

/* DH for a token from this side's point of view. */
static int
dh_token(struct mts_noise_hs *hs, int t)
{
	int init = hs->role == MTS_NOISE_INITIATOR;
	const uint8_t *priv = NULL, *pub = NULL;
	int need_local_s = 0, need_remote_s = 0;
	uint8_t shared[32];
	int rc = 0;

	switch (t) {
	case T_EE:
		priv = hs->e.priv, pub = hs->re;
		break;
	case T_ES: /* initiator's e with responder's s */
		if (init)
			priv = hs->e.priv, pub = hs->rs, need_remote_s = 1;
		else
			priv = hs->s.priv, pub = hs->re, need_local_s = 1;
		break;
	case T_SE:
		if (init)
			priv = hs->s.priv, pub = hs->re, need_local_s = 1;
		else
			priv = hs->e.priv, pub = hs->rs, need_remote_s = 1;
		break;
	case T_SS:
		priv = hs->s.priv, pub = hs->rs;
		need_local_s = need_remote_s = 1;
		break;
	}
	if ((need_local_s && !hs->has_s) || (need_remote_s && !hs->has_rs))
		return fail(hs, -MTS_ERR_STATE,
		    "DH needs a missing static key");
	if (crypto_scalarmult(shared, priv, pub) != 0)
		rc = fail(hs, -MTS_ERR_CRYPTO, "DH result is the zero point");
	else
		mix_key(&hs->ss, shared, sizeof(shared));
	sodium_memzero(shared, sizeof(shared));
	return rc;
}

static int
write_token(struct mts_noise_hs *hs, int t, uint8_t *out, size_t outcap,
    size_t *off)
{
	size_t n;
	int rc;

	switch (t) {
	case T_E:
		if (!hs->has_e) {
			if (mts_noise_keypair_generate(&hs->e, hs->rng,
			        hs->rng_ctx) < 0)
				return fail(hs, -MTS_ERR_STATE,
				    "no ephemeral key and no rng");
			hs->has_e = 1;
		}
		if (outcap - *off < 32)
			return fail(hs, -MTS_ERR_TOOBIG, "output too small");
		memcpy(out + *off, hs->e.pub, 32);
		*off += 32;
		mix_hash(&hs->ss, hs->e.pub, 32);
		if (hs->psk_mode)
			mix_key(&hs->ss, hs->e.pub, 32);
		return 0;
	case T_S:
		if (outcap - *off < 32 + MTS_NOISE_TAGLEN)
			return fail(hs, -MTS_ERR_TOOBIG, "output too small");
		rc = encrypt_and_hash(&hs->ss, hs->s.pub, 32, out + *off, &n);
		if (rc < 0)
			return fail(hs, rc, "encrypting static key");
		*off += n;
		return 0;
	case T_PSK:
		mix_key_and_hash(&hs->ss, hs->psks[hs->psk_next++],
		    MTS_NOISE_PSKLEN);
		return 0;
	default:
		return dh_token(hs, t);
	}
}

int
mts_noise_hs_write(struct mts_noise_hs *hs, const uint8_t *payload, size_t plen,
    uint8_t *out, size_t outcap, size_t *outlen)
{
	size_t off = 0, n;
	int j, rc;

	if (!hs->started || hs->failed || hs->cur >= hs->nmsgs ||
	    !mts_noise_hs_is_writer(hs))
		return -MTS_ERR_STATE;
	if (outcap > MTS_NOISE_MAXMSG)
		outcap = MTS_NOISE_MAXMSG;
	for (j = 0; hs->msgs[hs->cur][j]; j++)
		if ((rc = write_token(hs, hs->msgs[hs->cur][j], out, outcap,
		         &off)) < 0)
			return rc;
	if (outcap - off < plen + (hs->ss.c.has_key ? MTS_NOISE_TAGLEN : 0))
		return fail(hs, -MTS_ERR_TOOBIG, "payload too large");
	if ((rc = encrypt_and_hash(&hs->ss, payload, plen, out + off, &n)) < 0)
		return fail(hs, rc, "encrypting payload");
	*outlen = off + n;
	hs->cur++;
	return 0;
}

static int
read_token(struct mts_noise_hs *hs, int t, const uint8_t *msg, size_t mlen,
    size_t *off)
{
	size_t need, n;

	switch (t) {
	case T_E:
		if (mlen - *off < 32)
			return fail(hs, -MTS_ERR_INVAL, "message too short");
		memcpy(hs->re, msg + *off, 32);
		hs->has_re = 1;
		*off += 32;
		mix_hash(&hs->ss, hs->re, 32);
		if (hs->psk_mode)
			mix_key(&hs->ss, hs->re, 32);
		return 0;
	case T_S:
		need = 32 + (hs->ss.c.has_key ? MTS_NOISE_TAGLEN : 0);
		if (mlen - *off < need)
			return fail(hs, -MTS_ERR_INVAL, "message too short");
		if (decrypt_and_hash(&hs->ss, msg + *off, need, hs->rs, &n) < 0)
			return fail(hs, -MTS_ERR_CRYPTO,
			    "static key failed to decrypt");
		hs->has_rs = 1;
		*off += need;
		return 0;
	case T_PSK:
		mix_key_and_hash(&hs->ss, hs->psks[hs->psk_next++],
		    MTS_NOISE_PSKLEN);
		return 0;
	default:
		return dh_token(hs, t);
	}
}

int
mts_noise_hs_read(struct mts_noise_hs *hs, const uint8_t *msg, size_t mlen,
    uint8_t *out, size_t outcap, size_t *outlen)
{
	size_t off = 0, n, tag;
	int j, rc;

	if (!hs->started || hs->failed || hs->cur >= hs->nmsgs ||
	    mts_noise_hs_is_writer(hs))
		return -MTS_ERR_STATE;
	if (mlen > MTS_NOISE_MAXMSG)
		return fail(hs, -MTS_ERR_TOOBIG, "message over 65535 bytes");
	for (j = 0; hs->msgs[hs->cur][j]; j++)
		if ((rc = read_token(hs, hs->msgs[hs->cur][j], msg, mlen,
		         &off)) < 0)
			return rc;
	tag = hs->ss.c.has_key ? MTS_NOISE_TAGLEN : 0;
	if (mlen - off < tag)
		return fail(hs, -MTS_ERR_INVAL, "message too short");
	if (outcap < mlen - off - tag)
		return fail(hs, -MTS_ERR_TOOBIG, "payload buffer too small");
	if (decrypt_and_hash(&hs->ss, msg + off, mlen - off, out, &n) < 0)
		return fail(hs, -MTS_ERR_CRYPTO, "payload failed to decrypt");
	*outlen = n;
	hs->cur++;
	return 0;
}

int
mts_noise_hs_split(struct mts_noise_hs *hs, struct mts_noise_cipher *send,
    struct mts_noise_cipher *recv)
{
	uint8_t k1[MTS_NOISE_HASHLEN], k2[MTS_NOISE_HASHLEN];
	int init = hs->role == MTS_NOISE_INITIATOR;

	if (!mts_noise_hs_done(hs))
		return -MTS_ERR_STATE;
	hkdf(hs->ss.ck, NULL, 0, k1, k2, NULL);
	memset(send, 0, sizeof(*send));
	memset(recv, 0, sizeof(*recv));
	if (init) {
		cipher_init(send, k1);
		if (!hs->oneway)
			cipher_init(recv, k2);
	} else {
		cipher_init(recv, k1);
		if (!hs->oneway)
			cipher_init(send, k2);
	}
	sodium_memzero(k1, sizeof(k1));
	sodium_memzero(k2, sizeof(k2));
	return 0;
}

const uint8_t *
mts_noise_hs_hash(const struct mts_noise_hs *hs)
{
	return hs->ss.h;
}

const uint8_t *
mts_noise_hs_remote_static(const struct mts_noise_hs *hs)
{
	return hs->has_rs ? hs->rs : NULL;
}

const char *
mts_noise_hs_error(const struct mts_noise_hs *hs)
{
	return hs->err;
}
