/* fuzz_gossip_frame.c: libFuzzer target for what gossipd decodes from the network — frames into a handshaking and an established Noise connection, peer messages, join tokens. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "agents/gossipd/conn_core.h"
#include "agents/gossipd/token_core.h"
#include "gossip.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
rng(void *ctx, uint8_t *buf, size_t len)
{
	memset(buf, 0x42, len); /* deterministic: the fuzzer must replay */
	return 0;
}

static int
accept_all(void *ctx, const uint8_t pub[32])
{
	return 0;
}

static void
mkpair(struct mts_conn **a, struct mts_conn **b)
{
	static const uint8_t ka[32] = { 1 }, kb[32] = { 2 };
	struct mts_noise_keypair pb;
	struct mts_conn_cfg ca = { 0 }, cb = { 0 };
	struct mts_buf *o;

	mts_noise_keypair_from_priv(&pb, kb);
	ca.role = MTS_NOISE_INITIATOR;
	ca.protocol = MTS_NOISE_IK;
	ca.s_priv = ka;
	ca.rs = pb.pub;
	ca.rng = rng;
	cb.role = MTS_NOISE_RESPONDER;
	cb.protocol = MTS_NOISE_IK;
	cb.s_priv = kb;
	cb.rng = rng;
	cb.verify = accept_all;
	cb.max_payload = 1 << 20;
	*a = *b = NULL;
	if (mts_conn_new(a, &ca) < 0 || mts_conn_new(b, &cb) < 0)
		abort();
	o = mts_conn_out(*a);
	if (mts_conn_feed(*b, o->data, o->len) < 0)
		abort();
	mts_conn_consumed(*a, o->len);
	o = mts_conn_out(*b);
	if (mts_conn_feed(*a, o->data, o->len) < 0)
		abort();
	mts_conn_consumed(*b, o->len);
}

/* Drains every reassembled payload and decodes it as a peer message. */
static void
drain(struct mts_conn *c)
{
	Mts__Gossip__Msg *m;
	uint8_t *msg;
	size_t len;

	while (mts_conn_next(c, &msg, &len) == 0) {
		m = mts__gossip__msg__unpack(NULL, len, msg);
		if (m)
			mts__gossip__msg__free_unpacked(m, NULL);
		free(msg);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mts_conn *a, *b;
	struct mts_token t;
	Mts__Gossip__Msg *m;
	char err[128], *text;

	if (sodium_init() < 0)
		abort();
	/* raw bytes from a stranger, before and after the handshake */
	mkpair(&a, &b);
	mts_conn_free(b);
	{
		struct mts_conn_cfg cb = { 0 };
		static const uint8_t kb[32] = { 2 };

		cb.role = MTS_NOISE_RESPONDER;
		cb.protocol =
		    size && data[0] & 1 ? MTS_NOISE_XXPSK3 : MTS_NOISE_IK;
		cb.s_priv = kb;
		cb.psk = kb;
		cb.rng = rng;
		cb.verify = accept_all;
		if (mts_conn_new(&b, &cb) == 0) {
			(void)mts_conn_feed(b, data, size);
			drain(b);
			mts_conn_free(b);
		}
	}
	mts_conn_free(a);
	/* authenticated payloads: what an admitted member could send */
	mkpair(&a, &b);
	if (mts_conn_send(a, data, size) == 0) {
		struct mts_buf *o = mts_conn_out(a);

		(void)mts_conn_feed(b, o->data, o->len);
		drain(b);
	}
	mts_conn_free(a);
	mts_conn_free(b);
	m = mts__gossip__msg__unpack(NULL, size, data);
	if (m)
		mts__gossip__msg__free_unpacked(m, NULL);
	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	(void)mts_token_decode(text, &t, err, sizeof(err));
	free(text);
	return 0;
}
