/* conn_core.h: one peer connection as a pure byte-stream state machine — length-prefixed frames, Noise handshake, encrypted transport, payload splitting and reassembly. */
#ifndef MTS_CONN_CORE_H
#define MTS_CONN_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "agents/gossipd/noise.h"
#include "buf.h"

/* Frame = u32be length | Noise message (1..65535 bytes). */
#define MTS_FRAME_HDR 4
#define MTS_FRAME_MAX MTS_NOISE_MAXMSG
/* Default cap on one reassembled payload. */
#define MTS_CONN_DEFAULT_MAXPAYLOAD (8u << 20)

#define MTS_PROLOGUE "mts/1"
#define MTS_NOISE_IK "Noise_IK_25519_ChaChaPoly_BLAKE2b"
#define MTS_NOISE_XXPSK3 "Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b"

/* Decides whether a remote static key may talk to us; 0 accepts, a negative
 * mts_err refuses (the connection fails with that error). */
typedef int (*mts_conn_verify_fn)(void *ctx, const uint8_t pub[32]);

struct mts_conn_cfg {
	enum mts_noise_role role;
	const char *protocol;  /* MTS_NOISE_IK or MTS_NOISE_XXPSK3 */
	const uint8_t *s_priv; /* 32 bytes, required */
	const uint8_t *rs;     /* IK initiator: the responder's key */
	const uint8_t *psk;    /* XXpsk3: the join secret (32 bytes) */
	mts_noise_rng_fn rng;
	void *rng_ctx;
	mts_conn_verify_fn verify;
	void *verify_ctx;
	size_t max_payload; /* 0 = MTS_CONN_DEFAULT_MAXPAYLOAD */
	/* The first handshake message's payload (initiator), or the
	 * responder's first message payload; both may be empty. */
	const uint8_t *hello;
	size_t hello_len;
};

struct mts_conn;

/* Creates a connection; an initiator's first frame is queued in the output
 * at once. 0 or a negative mts_err (bad protocol or keys). */
int mts_conn_new(struct mts_conn **out, const struct mts_conn_cfg *cfg);
void mts_conn_free(struct mts_conn *);

/* Feeds bytes received from the socket. Handshake replies and anything else
 * to send are appended to the output buffer; complete payloads are queued
 * for mts_conn_next. After a negative return the connection is dead
 * (mts_conn_error says why) and must be closed. */
int mts_conn_feed(struct mts_conn *, const uint8_t *data, size_t len);
/* Pops the next received payload (the caller frees *msg); 0 when one was
 * returned, -MTS_ERR_NOTFOUND when none is waiting. */
int mts_conn_next(struct mts_conn *, uint8_t **msg, size_t *len);
/* Encrypts payload (split over as many Noise messages as needed) into the
 * output buffer. Only once established. */
int mts_conn_send(struct mts_conn *, const uint8_t *payload, size_t len);

/* Bytes waiting to be written to the socket; the caller writes some and
 * then calls mts_conn_consumed with how many were written. */
struct mts_buf *mts_conn_out(struct mts_conn *);
void mts_conn_consumed(struct mts_conn *, size_t n);

int mts_conn_established(const struct mts_conn *);
/* The peer's static public key, once known (else NULL). */
const uint8_t *mts_conn_remote_static(const struct mts_conn *);
/* The peer's handshake payload (its hello), once received. */
const uint8_t *mts_conn_peer_hello(const struct mts_conn *, size_t *len);
const char *mts_conn_error(const struct mts_conn *);
/* Payload bytes received so far (after decryption), for accounting. */
uint64_t mts_conn_rx_bytes(const struct mts_conn *);

#endif
