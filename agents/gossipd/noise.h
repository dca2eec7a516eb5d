/* noise.h: the Noise protocol framework (rev 34) for 25519_ChaChaPoly_BLAKE2b — handshake engine and transport cipher states, pure (no I/O, randomness passed in). */
#ifndef MTS_NOISE_H
#define MTS_NOISE_H

#include <stddef.h>
#include <stdint.h>

#define MTS_NOISE_DHLEN 32
#define MTS_NOISE_KEYLEN 32
#define MTS_NOISE_HASHLEN 64
#define MTS_NOISE_TAGLEN 16
#define MTS_NOISE_PSKLEN 32
#define MTS_NOISE_MAXMSG 65535
#define MTS_NOISE_MAXPSKS 4
/* Largest plaintext one transport message can carry. */
#define MTS_NOISE_MAXPLAIN (MTS_NOISE_MAXMSG - MTS_NOISE_TAGLEN)

/* Fills buf with len random bytes; returns 0 or a negative mts_err. The
 * caller of the engine decides where randomness comes from (libsodium in
 * gossipd, a seeded generator in tests). */
typedef int (*mts_noise_rng_fn)(void *ctx, uint8_t *buf, size_t len);

struct mts_noise_keypair {
	uint8_t priv[MTS_NOISE_DHLEN];
	uint8_t pub[MTS_NOISE_DHLEN];
};

/* Derives pub from priv. 0 or -MTS_ERR_CRYPTO. */
int mts_noise_keypair_from_priv(struct mts_noise_keypair *kp,
    const uint8_t priv[MTS_NOISE_DHLEN]);
/* Draws a private key from rng and derives its public key. */
int mts_noise_keypair_generate(struct mts_noise_keypair *kp,
    mts_noise_rng_fn rng, void *rng_ctx);

/* A CipherState: key, nonce. Nonce 2^64-1 is reserved and never used. */
struct mts_noise_cipher {
	uint8_t k[MTS_NOISE_KEYLEN];
	uint64_t n;
	int has_key;
};

/* Encrypts pt (ptlen bytes) with ad into out, which must hold ptlen + 16
 * bytes (ptlen when the cipher has no key); *outlen gets the length. The
 * nonce advances only on success. -MTS_ERR_STATE when the nonce space is
 * exhausted, -MTS_ERR_TOOBIG when the result exceeds 65535 bytes. */
int mts_noise_encrypt(struct mts_noise_cipher *c, const uint8_t *ad,
    size_t adlen, const uint8_t *pt, size_t ptlen, uint8_t *out,
    size_t *outlen);
/* Decrypts ct into out (room for ctlen - 16 bytes). On authentication
 * failure returns -MTS_ERR_CRYPTO and leaves the nonce unchanged, so a
 * tampered or replayed message never advances the state. */
int mts_noise_decrypt(struct mts_noise_cipher *c, const uint8_t *ad,
    size_t adlen, const uint8_t *ct, size_t ctlen, uint8_t *out,
    size_t *outlen);
/* REKEY(): k = first 32 bytes of ENCRYPT(k, 2^64-1, "", zeros). */
int mts_noise_rekey(struct mts_noise_cipher *c);
/* Wipes the key. */
void mts_noise_cipher_clear(struct mts_noise_cipher *c);

enum mts_noise_role {
	MTS_NOISE_INITIATOR = 0,
	MTS_NOISE_RESPONDER = 1,
};

struct mts_noise_hs; /* a HandshakeState, opaque */

/*
 * Creates a handshake for a full protocol name such as
 * "Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b". Supported: the one-way patterns
 * N, K, X and the interactive NN NK NX KN KK KX XN XK XX IN IK IX, each with
 * any set of psk0..psk3 modifiers joined by '+'. On 0, *out is the new
 * handshake (free with mts_noise_hs_free); -MTS_ERR_INVAL names an unknown
 * protocol. Keys and psks are set next, then mts_noise_hs_start.
 */
int mts_noise_hs_new(struct mts_noise_hs **out, const char *protocol,
    enum mts_noise_role role);
void mts_noise_hs_free(struct mts_noise_hs *);

/* Local static key pair (from its private key). */
int mts_noise_hs_set_s(struct mts_noise_hs *, const uint8_t priv[32]);
/* Fixes the ephemeral private key instead of drawing one (test vectors). */
int mts_noise_hs_set_e(struct mts_noise_hs *, const uint8_t priv[32]);
/* The remote party's static public key known in advance. */
int mts_noise_hs_set_rs(struct mts_noise_hs *, const uint8_t pub[32]);
/* Appends a 32-byte psk; psk tokens consume them in order. */
int mts_noise_hs_add_psk(struct mts_noise_hs *, const uint8_t psk[32]);
/* Where ephemeral keys come from when none was fixed. */
void mts_noise_hs_set_rng(struct mts_noise_hs *, mts_noise_rng_fn, void *ctx);
/* Mixes the prologue and the pre-message keys; checks that every key the
 * pattern needs was given (-MTS_ERR_STATE names none: see hs_error). */
int mts_noise_hs_start(struct mts_noise_hs *, const uint8_t *prologue,
    size_t prologue_len);

/* 1 when it is this side's turn to write, 0 to read. */
int mts_noise_hs_is_writer(const struct mts_noise_hs *);
/* Handshake messages still to be written or read. */
int mts_noise_hs_msgs_left(const struct mts_noise_hs *);
/* 1 once every handshake message was written or read. */
int mts_noise_hs_done(const struct mts_noise_hs *);
/* Writes the next handshake message carrying payload into out (capacity
 * outcap, at most 65535 used); *outlen gets its length. */
int mts_noise_hs_write(struct mts_noise_hs *, const uint8_t *payload,
    size_t plen, uint8_t *out, size_t outcap, size_t *outlen);
/* Reads the next handshake message; the payload goes into out (capacity
 * outcap). Any failure leaves the handshake unusable (-MTS_ERR_STATE after). */
int mts_noise_hs_read(struct mts_noise_hs *, const uint8_t *msg, size_t mlen,
    uint8_t *out, size_t outcap, size_t *outlen);
/* After done: the transport ciphers for this side (send, recv). For one-way
 * patterns the responder's send cipher and the initiator's recv cipher stay
 * keyless. */
int mts_noise_hs_split(struct mts_noise_hs *, struct mts_noise_cipher *send,
    struct mts_noise_cipher *recv);
/* The handshake hash h (64 bytes), for channel binding. */
const uint8_t *mts_noise_hs_hash(const struct mts_noise_hs *);
/* The remote static public key once known, else NULL. */
const uint8_t *mts_noise_hs_remote_static(const struct mts_noise_hs *);
/* A short human-readable reason for the last failure ("" if none). */
const char *mts_noise_hs_error(const struct mts_noise_hs *);

#endif
