/* token_core.c: join-token encoding (RFC 4648 base32, no padding) and strict parsing. */
#include <stdio.h>
#include <string.h>

#include "agents/gossipd/token_core.h"
#include "hash.h"
#include "mtserr.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/* raw = cluster id | secret | address | 4-byte check (BLAKE2b-256 prefix) */
#define CHECK_LEN 4
#define RAW_MAX \
	(MTS_CLUSTER_ID_LEN + MTS_JOIN_SECRET_LEN + MTS_TOKEN_ADDR_MAX + \
	    CHECK_LEN)

int
mts_token_encode(const struct mts_token *t, char *out, size_t outlen)
{
	uint8_t raw[RAW_MAX], h[MTS_HASH_LEN];
	size_t alen = strnlen(t->addr, sizeof(t->addr)), n, i, o;
	uint32_t acc = 0;
	int bits = 0;

	if (alen == 0 || alen > MTS_TOKEN_ADDR_MAX)
		return -MTS_ERR_INVAL;
	memcpy(raw, t->cluster_id, MTS_CLUSTER_ID_LEN);
	memcpy(raw + MTS_CLUSTER_ID_LEN, t->secret, MTS_JOIN_SECRET_LEN);
	memcpy(raw + MTS_CLUSTER_ID_LEN + MTS_JOIN_SECRET_LEN, t->addr, alen);
	n = MTS_CLUSTER_ID_LEN + MTS_JOIN_SECRET_LEN + alen;
	mts_blake2b256(h, raw, n);
	memcpy(raw + n, h, CHECK_LEN);
	n += CHECK_LEN;
	if (outlen < strlen(MTS_TOKEN_PREFIX) + (n * 8 + 4) / 5 + 1)
		return -MTS_ERR_TOOBIG;
	o = (size_t)snprintf(out, outlen, "%s", MTS_TOKEN_PREFIX);
	for (i = 0; i < n; i++) {
		acc = acc << 8 | raw[i];
		bits += 8;
		while (bits >= 5) {
			out[o++] = alphabet[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		out[o++] = alphabet[(acc << (5 - bits)) & 31];
	out[o] = '\0';
	return 0;
}

static int
b32val(char c)
{
	const char *p;

	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	p = c ? strchr(alphabet, c) : NULL;
	return p ? (int)(p - alphabet) : -1;
}

static int
bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "invalid join token: %s", why);
	return -MTS_ERR_INVAL;
}

int
mts_token_decode(const char *text, struct mts_token *t, char *err,
    size_t errlen)
{
	uint8_t raw[RAW_MAX], h[MTS_HASH_LEN];
	size_t n = 0, i, plen = strlen(MTS_TOKEN_PREFIX), alen;
	uint32_t acc = 0;
	int bits = 0, v;

	memset(t, 0, sizeof(*t));
	if (strncmp(text, MTS_TOKEN_PREFIX, plen) != 0)
		return bad(err, errlen, "it does not start with MTS1-");
	for (i = plen; text[i]; i++) {
		if ((v = b32val(text[i])) < 0)
			return bad(err, errlen, "character outside base32");
		acc = acc << 5 | (uint32_t)v;
		bits += 5;
		if (bits >= 8) {
			if (n == sizeof(raw))
				return bad(err, errlen, "too long");
			raw[n++] = (uint8_t)(acc >> (bits - 8));
			bits -= 8;
		}
	}
	if (bits >= 5 || (acc & ((1u << bits) - 1)) != 0)
		return bad(err, errlen, "truncated");
	if (n <= MTS_CLUSTER_ID_LEN + MTS_JOIN_SECRET_LEN + CHECK_LEN)
		return bad(err, errlen, "too short");
	n -= CHECK_LEN;
	mts_blake2b256(h, raw, n);
	if (memcmp(h, raw + n, CHECK_LEN) != 0)
		return bad(err, errlen,
		    "check digits do not match (mistyped "
		    "or truncated)");
	alen = n - MTS_CLUSTER_ID_LEN - MTS_JOIN_SECRET_LEN;
	memcpy(t->cluster_id, raw, MTS_CLUSTER_ID_LEN);
	memcpy(t->secret, raw + MTS_CLUSTER_ID_LEN, MTS_JOIN_SECRET_LEN);
	for (i = 0; i < alen; i++) {
		char c =
		    (char)raw[MTS_CLUSTER_ID_LEN + MTS_JOIN_SECRET_LEN + i];

		if (c <= ' ' || c > '~')
			return bad(err, errlen, "address is not printable");
		t->addr[i] = c;
	}
	t->addr[alen] = '\0';
	if (strchr(t->addr, ':') == NULL)
		return bad(err, errlen, "address has no port");
	return 0;
}
