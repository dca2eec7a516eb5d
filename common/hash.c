/* hash.c: BLAKE2b-256 and hex helpers on top of libsodium. */
#include <string.h>

#include "hash.h"
#include "mtserr.h"

int
mts_crypto_init(void)
{
	return sodium_init() < 0 ? -MTS_ERR_IO : 0;
}

void
mts_blake2b256(uint8_t out[MTS_HASH_LEN], const void *in, size_t len)
{
	crypto_generichash(out, MTS_HASH_LEN, in, len, NULL, 0);
}

void
mts_hash_init(mts_hash_ctx *ctx)
{
	crypto_generichash_init(&ctx->st, NULL, 0, MTS_HASH_LEN);
}

void
mts_hash_update(mts_hash_ctx *ctx, const void *in, size_t len)
{
	crypto_generichash_update(&ctx->st, in, len);
}

void
mts_hash_final(mts_hash_ctx *ctx, uint8_t out[MTS_HASH_LEN])
{
	crypto_generichash_final(&ctx->st, out, MTS_HASH_LEN);
}

void
mts_hex(char *out, const uint8_t *in, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
mts_unhex(uint8_t *out, size_t outlen, const char *hex, size_t hexlen)
{
	size_t i;

	if (hexlen != 2 * outlen)
		return -MTS_ERR_INVAL;
	for (i = 0; i < outlen; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -MTS_ERR_INVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void
mts_node_id(uint8_t id[MTS_NODE_ID_LEN], const uint8_t pubkey[32])
{
	uint8_t h[MTS_HASH_LEN];

	mts_blake2b256(h, pubkey, 32);
	memcpy(id, h, MTS_NODE_ID_LEN);
}
