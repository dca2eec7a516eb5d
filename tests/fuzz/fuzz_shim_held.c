/* fuzz_shim_held.c: libFuzzer target for the i/<node> record decoder (what other nodes say they hold) and the choice of holders made from it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agents/shim/image_held.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every accepted entry is well formed, and encodes and decodes to itself;
 * picking holders from it never returns more than there is room for. */
static void
check(const struct mts_held *h, size_t n)
{
	struct mts_holder hs[2] = {
		{ "00000000000000000000000000000001", 1, h, n },
		{ "00000000000000000000000000000002", 1, h, n },
	};
	struct mts_peer_cand c[1];
	struct mts_held chosen, *back;
	uint8_t *buf;
	size_t len, m, i;

	for (i = 0; i < n; i++)
		if (h[i].name[0] == '\0' ||
		    strlen(h[i].name) > MTS_PEER_NAME_MAX ||
		    (h[i].manifest[0] && mts_digest_valid(h[i].manifest)) ||
		    (h[i].id[0] && mts_digest_valid(h[i].id)))
			abort();
	mts_held_encode(h, n, &buf, &len);
	if (mts_held_decode(buf, len, &back, &m) != 0 || m != n ||
	    (n > 0 && memcmp(back, h, n * sizeof(*h)) != 0))
		abort();
	free(buf);
	free(back);
	if (n > 0 && mts_peer_pick(hs, 2, "3", h[0].name, n, c, 1, &chosen) > 1)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mts_held *h;
	size_t n;

	if (mts_held_decode(data, size, &h, &n) == 0)
		check(h, n);
	free(h);
	return 0;
}
