/* test_noise.c: unit tests of the Noise engine — tamper/replay rejection, nonce exhaustion, rekey, psk and static-key mismatches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "agents/gossipd/noise.h"
#include "mtserr.h"

#define PROLOGUE ((const uint8_t *)"mts/1")

/* A deterministic generator: BLAKE2b of a counter and a seed. */
struct seeded {
	uint64_t seed, ctr;
};

static int
seeded_rng(void *ctx, uint8_t *buf, size_t len)
{
	struct seeded *s = ctx;
	uint8_t in[16];

	memcpy(in, &s->seed, 8);
	memcpy(in + 8, &s->ctr, 8);
	s->ctr++;
	crypto_generichash(buf, len, in, sizeof(in), NULL, 0);
	return 0;
}

static void
fixed_key(uint8_t k[32], uint8_t v)
{
	memset(k, v, 32);
}

/* Runs a whole handshake between two prepared states, returns 0 on success
 * or the first error. */
static int
handshake(struct mts_noise_hs *i, struct mts_noise_hs *r)
{
	uint8_t msg[1024], pl[1024];
	size_t mlen, plen;
	struct mts_noise_hs *w, *rd;
	int rc;

	while (!mts_noise_hs_done(i) || !mts_noise_hs_done(r)) {
		w = mts_noise_hs_is_writer(i) ? i : r;
		rd = w == i ? r : i;
		if ((rc = mts_noise_hs_write(w, (const uint8_t *)"hi", 2, msg,
		         sizeof(msg), &mlen)) < 0)
			return rc;
		if ((rc = mts_noise_hs_read(rd, msg, mlen, pl, sizeof(pl),
		         &plen)) < 0)
			return rc;
		assert_int_equal(plen, 2);
	}
	return 0;
}

static void
pair_ciphers(struct mts_noise_cipher *tx, struct mts_noise_cipher *rx)
{
	uint8_t k[32];

	fixed_key(k, 7);
	memset(tx, 0, sizeof(*tx));
	memcpy(tx->k, k, 32);
	tx->has_key = 1;
	*rx = *tx;
}

static void
test_tamper_rejected(void **state)
{
	struct mts_noise_cipher tx, rx;
	uint8_t ct[64], pt[64];
	size_t clen, plen;
	size_t i;

	pair_ciphers(&tx, &rx);
	assert_int_equal(mts_noise_encrypt(&tx, NULL, 0,
	                     (const uint8_t *)"hello", 5, ct, &clen),
	    0);
	assert_int_equal(clen, 5 + MTS_NOISE_TAGLEN);
	for (i = 0; i < clen; i++) {
		ct[i] ^= 0x01;
		assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, ct, clen, pt,
		                     &plen),
		    -MTS_ERR_CRYPTO);
		assert_int_equal(rx.n, 0);
		ct[i] ^= 0x01;
	}
	/* truncated */
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, ct, 10, pt, &plen),
	    -MTS_ERR_CRYPTO);
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, ct, clen, pt, &plen),
	    0);
	assert_memory_equal(pt, "hello", 5);
	assert_int_equal(rx.n, 1);
}

static void
test_replay_rejected(void **state)
{
	struct mts_noise_cipher tx, rx;
	uint8_t c1[64], c2[64], pt[64];
	size_t l1, l2, plen;

	pair_ciphers(&tx, &rx);
	assert_int_equal(mts_noise_encrypt(&tx, NULL, 0, (const uint8_t *)"one",
	                     3, c1, &l1),
	    0);
	assert_int_equal(mts_noise_encrypt(&tx, NULL, 0, (const uint8_t *)"two",
	                     3, c2, &l2),
	    0);
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, c1, l1, pt, &plen), 0);
	/* the same frame again, and an out-of-order one, fail */
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, c1, l1, pt, &plen),
	    -MTS_ERR_CRYPTO);
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, c2, l2, pt, &plen), 0);
	assert_memory_equal(pt, "two", 3);
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, c2, l2, pt, &plen),
	    -MTS_ERR_CRYPTO);
}

static void
test_nonce_exhaustion(void **state)
{
	struct mts_noise_cipher tx, rx;
	uint8_t ct[64], pt[64];
	size_t clen, plen;

	pair_ciphers(&tx, &rx);
	tx.n = rx.n = UINT64_MAX - 1;
	assert_int_equal(mts_noise_encrypt(&tx, NULL, 0, (const uint8_t *)"x",
	                     1, ct, &clen),
	    0);
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, ct, clen, pt, &plen),
	    0);
	assert_true(tx.n == UINT64_MAX);
	assert_int_equal(mts_noise_encrypt(&tx, NULL, 0, (const uint8_t *)"x",
	                     1, ct, &clen),
	    -MTS_ERR_STATE);
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, ct, clen, pt, &plen),
	    -MTS_ERR_STATE);
}

static void
test_rekey(void **state)
{
	struct mts_noise_cipher tx, rx;
	uint8_t ct[64], pt[64], before[32];
	size_t clen, plen;

	pair_ciphers(&tx, &rx);
	memcpy(before, tx.k, 32);
	assert_int_equal(mts_noise_rekey(&tx), 0);
	assert_memory_not_equal(before, tx.k, 32);
	assert_int_equal(tx.n, 0);
	assert_int_equal(mts_noise_encrypt(&tx, NULL, 0, (const uint8_t *)"k",
	                     1, ct, &clen),
	    0);
	/* the old key no longer decrypts; after the peer rekeys it does */
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, ct, clen, pt, &plen),
	    -MTS_ERR_CRYPTO);
	assert_int_equal(mts_noise_rekey(&rx), 0);
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, ct, clen, pt, &plen),
	    0);
}

static void
test_oversized(void **state)
{
	struct mts_noise_cipher tx, rx;
	static uint8_t big[MTS_NOISE_MAXMSG + 16];
	size_t clen;

	pair_ciphers(&tx, &rx);
	assert_int_equal(mts_noise_encrypt(&tx, NULL, 0, big,
	                     MTS_NOISE_MAXPLAIN + 1, big, &clen),
	    -MTS_ERR_TOOBIG);
	assert_int_equal(mts_noise_decrypt(&rx, NULL, 0, big,
	                     MTS_NOISE_MAXMSG + 1, big, &clen),
	    -MTS_ERR_TOOBIG);
}

static struct mts_noise_hs *
xxpsk3(enum mts_noise_role role, uint8_t skey, uint8_t pskv, struct seeded *rng)
{
	struct mts_noise_hs *hs;
	uint8_t k[32], psk[32];

	assert_int_equal(mts_noise_hs_new(&hs,
	                     "Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b", role),
	    0);
	fixed_key(k, skey);
	fixed_key(psk, pskv);
	assert_int_equal(mts_noise_hs_set_s(hs, k), 0);
	assert_int_equal(mts_noise_hs_add_psk(hs, psk), 0);
	mts_noise_hs_set_rng(hs, seeded_rng, rng);
	assert_int_equal(mts_noise_hs_start(hs, PROLOGUE, 5), 0);
	return hs;
}

static void
test_xxpsk3_roundtrip(void **state)
{
	struct seeded r1 = { 1, 0 }, r2 = { 2, 0 };
	struct mts_noise_hs *i = xxpsk3(MTS_NOISE_INITIATOR, 1, 9, &r1);
	struct mts_noise_hs *r = xxpsk3(MTS_NOISE_RESPONDER, 2, 9, &r2);
	struct mts_noise_cipher is, ir, rs, rr;
	struct mts_noise_keypair kp;
	uint8_t k[32], ct[64], pt[64];
	size_t clen, plen;

	assert_int_equal(handshake(i, r), 0);
	fixed_key(k, 1);
	mts_noise_keypair_from_priv(&kp, k);
	assert_memory_equal(mts_noise_hs_remote_static(r), kp.pub, 32);
	assert_memory_equal(mts_noise_hs_hash(i), mts_noise_hs_hash(r), 64);
	assert_int_equal(mts_noise_hs_split(i, &is, &ir), 0);
	assert_int_equal(mts_noise_hs_split(r, &rs, &rr), 0);
	assert_int_equal(mts_noise_encrypt(&rs, NULL, 0,
	                     (const uint8_t *)"back", 4, ct, &clen),
	    0);
	assert_int_equal(mts_noise_decrypt(&ir, NULL, 0, ct, clen, pt, &plen),
	    0);
	assert_memory_equal(pt, "back", 4);
	mts_noise_hs_free(i);
	mts_noise_hs_free(r);
}

static void
test_wrong_psk_rejected(void **state)
{
	struct seeded r1 = { 1, 0 }, r2 = { 2, 0 };
	struct mts_noise_hs *i = xxpsk3(MTS_NOISE_INITIATOR, 1, 9, &r1);
	struct mts_noise_hs *r = xxpsk3(MTS_NOISE_RESPONDER, 2, 8, &r2);

	assert_int_equal(handshake(i, r), -MTS_ERR_CRYPTO);
	assert_string_equal(mts_noise_hs_error(r), "payload failed to decrypt");
	/* a failed handshake refuses further use */
	assert_false(mts_noise_hs_done(r));
	mts_noise_hs_free(i);
	mts_noise_hs_free(r);
}

static void
test_ik_wrong_responder_key(void **state)
{
	struct seeded r1 = { 3, 0 }, r2 = { 4, 0 };
	struct mts_noise_hs *i, *r;
	struct mts_noise_keypair other;
	uint8_t k[32];

	assert_int_equal(mts_noise_hs_new(&i,
	                     "Noise_IK_25519_ChaChaPoly_BLAKE2b",
	                     MTS_NOISE_INITIATOR),
	    0);
	assert_int_equal(mts_noise_hs_new(&r,
	                     "Noise_IK_25519_ChaChaPoly_BLAKE2b",
	                     MTS_NOISE_RESPONDER),
	    0);
	fixed_key(k, 5);
	mts_noise_hs_set_s(i, k);
	fixed_key(k, 6);
	mts_noise_hs_set_s(r, k);
	fixed_key(k, 7); /* initiator believes the responder has key 7 */
	mts_noise_keypair_from_priv(&other, k);
	mts_noise_hs_set_rs(i, other.pub);
	mts_noise_hs_set_rng(i, seeded_rng, &r1);
	mts_noise_hs_set_rng(r, seeded_rng, &r2);
	assert_int_equal(mts_noise_hs_start(i, PROLOGUE, 5), 0);
	assert_int_equal(mts_noise_hs_start(r, PROLOGUE, 5), 0);
	assert_int_equal(handshake(i, r), -MTS_ERR_CRYPTO);
	mts_noise_hs_free(i);
	mts_noise_hs_free(r);
}

static void
test_bad_protocols(void **state)
{
	static const char *bad[] = { "Noise_ZZ_25519_ChaChaPoly_BLAKE2b",
		"Noise_XXpsk4_25519_ChaChaPoly_BLAKE2b",
		"Noise_XXpsk0+psk0_25519_ChaChaPoly_BLAKE2b",
		"Noise_XXpsk1+_25519_ChaChaPoly_BLAKE2b",
		"Noise_Npsk2_25519_ChaChaPoly_BLAKE2b",
		"Noise_XX_25519_AESGCM_SHA256", "Noise_XX", "" };
	struct mts_noise_hs *hs;
	size_t n;

	for (n = 0; n < sizeof(bad) / sizeof(bad[0]); n++) {
		assert_int_equal(mts_noise_hs_new(&hs, bad[n],
		                     MTS_NOISE_INITIATOR),
		    -MTS_ERR_INVAL);
		assert_null(hs);
	}
	/* a pattern needing a static key refuses to start without one */
	assert_int_equal(mts_noise_hs_new(&hs,
	                     "Noise_IK_25519_ChaChaPoly_BLAKE2b",
	                     MTS_NOISE_INITIATOR),
	    0);
	assert_int_equal(mts_noise_hs_start(hs, NULL, 0), -MTS_ERR_STATE);
	mts_noise_hs_free(hs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tamper_rejected),
		cmocka_unit_test(test_replay_rejected),
		cmocka_unit_test(test_nonce_exhaustion),
		cmocka_unit_test(test_rekey),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_xxpsk3_roundtrip),
		cmocka_unit_test(test_wrong_psk_rejected),
		cmocka_unit_test(test_ik_wrong_responder_key),
		cmocka_unit_test(test_bad_protocols),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
