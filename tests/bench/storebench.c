/* storebench.c: the raw rate of synced RocksDB WriteBatches (through agents/statestore/store.c), the baseline for the statestore API benchmark. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/statestore/store.h"
#include "mtstime.h"

/* usage: storebench DIR SECONDS PUTS_PER_BATCH VALUE_BYTES
 * prints "puts/s batches/s" */
int
main(int argc, char **argv)
{
	struct mts_store_opts o = {.sync = 1, .cache_bytes = 8u << 20,
	    .write_buffer = 8u << 20};
	struct mts_store *st;
	char err[256], key[64];
	int64_t start, until;
	size_t batches = 0, puts = 0, per, vsize, i;
	char *val;

	if (argc != 5) {
		fprintf(stderr, "usage: storebench DIR SECONDS PUTS_PER_BATCH "
				"VALUE_BYTES\n");
		return 2;
	}
	per = strtoul(argv[3], NULL, 10);
	vsize = strtoul(argv[4], NULL, 10);
	if ((st = mts_store_open(argv[1], &o, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	val = calloc(1, vsize + 1);
	memset(val, 'x', vsize);
	start = mts_now_us();
	until = start + (int64_t)(atof(argv[2]) * 1e6);
	while (mts_now_us() < until) {
		struct mts_store_batch *b = mts_store_batch_new(st);

		for (i = 0; i < per; i++) {
			snprintf(key, sizeof(key), "b/%zu", puts++);
			mts_store_batch_put(b, MTS_CF_RECORDS, key, strlen(key),
			    val, vsize);
		}
		if (mts_store_commit(st, b, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		mts_store_batch_free(b);
		batches++;
	}
	printf("%.0f %.0f\n", puts / ((mts_now_us() - start) / 1e6),
	    batches / ((mts_now_us() - start) / 1e6));
	mts_store_close(st);
	free(val);
	return 0;
}
