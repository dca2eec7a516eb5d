/* hash.h: BLAKE2b-256 (libsodium) helpers and hex encoding used for keys, ids and page hashes. */
#ifndef MTS_HASH_H
#define MTS_HASH_H

#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define MTS_HASH_LEN 32
#define MTS_NODE_ID_LEN 16
#define MTS_NODE_HEX_LEN (MTS_NODE_ID_LEN * 2)

typedef struct {
	crypto_generichash_state st;
} mts_hash_ctx;

/* Must be called once per process before any other function here. */
int mts_crypto_init(void);

void mts_blake2b256(uint8_t out[MTS_HASH_LEN], const void *in, size_t len);
void mts_hash_init(mts_hash_ctx *ctx);
void mts_hash_update(mts_hash_ctx *ctx, const void *in, size_t len);
void mts_hash_final(mts_hash_ctx *ctx, uint8_t out[MTS_HASH_LEN]);

/* Writes 2*len hex digits plus NUL into out (size >= 2*len+1). */
void mts_hex(char *out, const uint8_t *in, size_t len);
/* Parses exactly 2*outlen hex digits (no more, no less); 0 or -MTS_ERR_INVAL. */
int mts_unhex(uint8_t *out, size_t outlen, const char *hex, size_t hexlen);

/* Node id: first 16 bytes of BLAKE2b-256 of the node's static public key. */
void mts_node_id(uint8_t id[MTS_NODE_ID_LEN], const uint8_t pubkey[32]);

#endif
