/* test_conn.c: unit tests of the connection core — IK and XXpsk3 handshakes over frames, large payload splitting, and rejection of tampered, replayed, oversized and unauthorized traffic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "agents/gossipd/conn_core.h"
#include "mtserr.h"

static int
rng(void *ctx, uint8_t *buf, size_t len)
{
	randombytes_buf(buf, len);
	return 0;
}

struct keys {
	uint8_t a_priv[32], b_priv[32];
	struct mts_noise_keypair a, b;
};

static void
mkkeys(struct keys *k)
{
	memset(k->a_priv, 0x11, 32);
	memset(k->b_priv, 0x22, 32);
	mts_noise_keypair_from_priv(&k->a, k->a_priv);
	mts_noise_keypair_from_priv(&k->b, k->b_priv);
}

static const uint8_t *allowed; /* the one key verify_one accepts */

static int
verify_one(void *ctx, const uint8_t pub[32])
{
	return memcmp(pub, allowed, 32) == 0 ? 0 : -MTS_ERR_DENIED;
}

/* Moves everything one side has to write into the other; returns the first
 * feed error. */
static int
pump(struct mts_conn *from, struct mts_conn *to)
{
	struct mts_buf *o = mts_conn_out(from);
	int rc = 0;

	if (o->len) {
		rc = mts_conn_feed(to, o->data, o->len);
		mts_conn_consumed(from, o->len);
	}
	return rc;
}

static int
pump_all(struct mts_conn *a, struct mts_conn *b)
{
	int i, rc;

	for (i = 0; i < 4; i++) {
		if ((rc = pump(a, b)) < 0 || (rc = pump(b, a)) < 0)
			return rc;
	}
	return 0;
}

static void
ik_pair(struct keys *k, struct mts_conn **a, struct mts_conn **b)
{
	struct mts_conn_cfg ca = { 0 }, cb = { 0 };

	mkkeys(k);
	ca.role = MTS_NOISE_INITIATOR;
	ca.protocol = MTS_NOISE_IK;
	ca.s_priv = k->a_priv;
	ca.rs = k->b.pub;
	ca.rng = rng;
	ca.hello = (const uint8_t *)"hello-a";
	ca.hello_len = 7;
	cb.role = MTS_NOISE_RESPONDER;
	cb.protocol = MTS_NOISE_IK;
	cb.s_priv = k->b_priv;
	cb.rng = rng;
	cb.verify = verify_one;
	cb.hello = (const uint8_t *)"hello-b";
	cb.hello_len = 7;
	allowed = k->a.pub;
	assert_int_equal(mts_conn_new(a, &ca), 0);
	assert_int_equal(mts_conn_new(b, &cb), 0);
}

static void
test_ik_and_big_payload(void **state)
{
	struct keys k;
	struct mts_conn *a, *b;
	const uint8_t *h;
	uint8_t *big, *got;
	size_t hl, glen, n = 300000, i;

	ik_pair(&k, &a, &b);
	assert_int_equal(pump_all(a, b), 0);
	assert_true(mts_conn_established(a));
	assert_true(mts_conn_established(b));
	assert_memory_equal(mts_conn_remote_static(b), k.a.pub, 32);
	h = mts_conn_peer_hello(b, &hl);
	assert_int_equal(hl, 7);
	assert_memory_equal(h, "hello-a", 7);
	h = mts_conn_peer_hello(a, &hl);
	assert_memory_equal(h, "hello-b", 7);
	big = malloc(n);
	for (i = 0; i < n; i++)
		big[i] = (uint8_t)(i * 7);
	assert_int_equal(mts_conn_send(a, big, n), 0);
	assert_int_equal(mts_conn_send(a, big, 0), 0);
	/* several Noise messages, none over 65535 bytes */
	assert_true(mts_conn_out(a)->len > n + 5 * 4);
	assert_int_equal(pump(a, b), 0);
	assert_int_equal(mts_conn_next(b, &got, &glen), 0);
	assert_int_equal(glen, n);
	assert_memory_equal(got, big, n);
	free(got);
	assert_int_equal(mts_conn_next(b, &got, &glen), 0);
	assert_int_equal(glen, 0);
	free(got);
	assert_int_equal(mts_conn_next(b, &got, &glen), -MTS_ERR_NOTFOUND);
	free(big);
	mts_conn_free(a);
	mts_conn_free(b);
}

static void
test_tampered_frame_closes(void **state)
{
	struct keys k;
	struct mts_conn *a, *b;
	struct mts_buf *o;

	ik_pair(&k, &a, &b);
	assert_int_equal(pump_all(a, b), 0);
	assert_int_equal(mts_conn_send(a, (const uint8_t *)"data", 4), 0);
	o = mts_conn_out(a);
	o->data[o->len - 1] ^= 0x80;
	assert_int_equal(pump(a, b), -MTS_ERR_CRYPTO);
	assert_non_null(strstr(mts_conn_error(b), "authenticate"));
	assert_false(mts_conn_established(b));
	mts_conn_free(a);
	mts_conn_free(b);
}

static void
test_replayed_frame_closes(void **state)
{
	struct keys k;
	struct mts_conn *a, *b;
	struct mts_buf *o;
	uint8_t copy[256], *got;
	size_t len, glen;

	ik_pair(&k, &a, &b);
	assert_int_equal(pump_all(a, b), 0);
	assert_int_equal(mts_conn_send(a, (const uint8_t *)"once", 4), 0);
	o = mts_conn_out(a);
	len = o->len;
	memcpy(copy, o->data, len);
	assert_int_equal(pump(a, b), 0);
	assert_int_equal(mts_conn_next(b, &got, &glen), 0);
	free(got);
	assert_int_equal(mts_conn_feed(b, copy, len), -MTS_ERR_CRYPTO);
	mts_conn_free(a);
	mts_conn_free(b);
}

static void
test_bad_frame_lengths(void **state)
{
	struct keys k;
	struct mts_conn *a, *b;
	uint8_t zero[4] = { 0, 0, 0, 0 }, huge[4] = { 0, 1, 0, 0 };

	ik_pair(&k, &a, &b);
	assert_int_equal(mts_conn_feed(b, huge, 4), -MTS_ERR_TOOBIG);
	assert_non_null(strstr(mts_conn_error(b), "bad frame length"));
	mts_conn_free(a);
	mts_conn_free(b);
	ik_pair(&k, &a, &b);
	assert_int_equal(mts_conn_feed(b, zero, 4), -MTS_ERR_TOOBIG);
	mts_conn_free(a);
	mts_conn_free(b);
}

static void
test_garbage_handshake(void **state)
{
	struct keys k;
	struct mts_conn *a, *b;
	uint8_t g[100];
	int i;

	for (i = 0; i < 50; i++) {
		ik_pair(&k, &a, &b);
		randombytes_buf(g, sizeof(g));
		g[0] = 0;
		g[1] = 0;
		g[2] = 0;
		g[3] = (uint8_t)(sizeof(g) - 4);
		assert_true(mts_conn_feed(b, g, sizeof(g)) < 0);
		assert_false(mts_conn_established(b));
		mts_conn_free(a);
		mts_conn_free(b);
	}
}

static void
test_unknown_key_refused(void **state)
{
	struct keys k;
	struct mts_conn *a, *b;
	uint8_t other[32];

	ik_pair(&k, &a, &b);
	memset(other, 0x33, 32);
	allowed = other;
	assert_int_equal(pump(a, b), -MTS_ERR_DENIED);
	assert_non_null(strstr(mts_conn_error(b), "refused"));
	mts_conn_free(a);
	mts_conn_free(b);
}

static void
xx_pair(struct keys *k, const uint8_t *psk_a, const uint8_t *psk_b,
    struct mts_conn **a, struct mts_conn **b)
{
	struct mts_conn_cfg ca = { 0 }, cb = { 0 };

	mkkeys(k);
	ca.role = MTS_NOISE_INITIATOR;
	ca.protocol = MTS_NOISE_XXPSK3;
	ca.s_priv = k->a_priv;
	ca.psk = psk_a;
	ca.rng = rng;
	ca.hello = (const uint8_t *)"join";
	ca.hello_len = 4;
	cb = ca;
	cb.role = MTS_NOISE_RESPONDER;
	cb.s_priv = k->b_priv;
	cb.psk = psk_b;
	cb.hello = (const uint8_t *)"welcome";
	cb.hello_len = 7;
	assert_int_equal(mts_conn_new(a, &ca), 0);
	assert_int_equal(mts_conn_new(b, &cb), 0);
}

static void
test_join_psk(void **state)
{
	struct keys k;
	struct mts_conn *a, *b;
	uint8_t good[32], bad[32];
	const uint8_t *h;
	size_t hl;

	memset(good, 0x44, 32);
	memset(bad, 0x45, 32);
	xx_pair(&k, good, good, &a, &b);
	assert_int_equal(pump_all(a, b), 0);
	assert_true(mts_conn_established(a) && mts_conn_established(b));
	h = mts_conn_peer_hello(b, &hl);
	assert_int_equal(hl, 4);
	assert_memory_equal(h, "join", 4);
	assert_memory_equal(mts_conn_remote_static(a), k.b.pub, 32);
	mts_conn_free(a);
	mts_conn_free(b);

	/* a wrong join secret fails on the responder's final read */
	xx_pair(&k, bad, good, &a, &b);
	assert_int_equal(pump_all(a, b), -MTS_ERR_CRYPTO);
	assert_false(mts_conn_established(b));
	assert_non_null(strstr(mts_conn_error(b), "handshake failed"));
	mts_conn_free(a);
	mts_conn_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ik_and_big_payload),
		cmocka_unit_test(test_tampered_frame_closes),
		cmocka_unit_test(test_replayed_frame_closes),
		cmocka_unit_test(test_bad_frame_lengths),
		cmocka_unit_test(test_garbage_handshake),
		cmocka_unit_test(test_unknown_key_refused),
		cmocka_unit_test(test_join_psk),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
