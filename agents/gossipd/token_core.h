/* token_core.h: join tokens — "MTS1-" + base32 of cluster id, join secret, bootstrap address and check bytes. */
#ifndef MTS_TOKEN_CORE_H
#define MTS_TOKEN_CORE_H

#include <stddef.h>
#include <stdint.h>

#define MTS_CLUSTER_ID_LEN 16
#define MTS_JOIN_SECRET_LEN 32
#define MTS_TOKEN_ADDR_MAX 63
#define MTS_TOKEN_PREFIX "MTS1-"

struct mts_token {
	uint8_t cluster_id[MTS_CLUSTER_ID_LEN];
	uint8_t secret[MTS_JOIN_SECRET_LEN];
	char addr[MTS_TOKEN_ADDR_MAX + 1]; /* host:port of the bootstrap node */
};

/* Writes the token text into out (NUL-terminated); -MTS_ERR_TOOBIG if
 * outlen is too small or the address too long. */
int mts_token_encode(const struct mts_token *, char *out, size_t outlen);
/* Parses a token; -MTS_ERR_INVAL with a reason in err for anything
 * malformed (prefix, alphabet, length, address). */
int mts_token_decode(const char *text, struct mts_token *, char *err,
    size_t errlen);

#endif
