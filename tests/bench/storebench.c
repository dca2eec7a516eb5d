/* storebench.c: the raw rate of synced RocksDB WriteBatches (through agents/statestore/store.c) from T threads, the baseline for the statestore API benchmark. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/statestore/store.h"
#include "mtstime.h"

struct writer {
	struct mts_store *st;
	int id;
	size_t per, vsize, puts;
	int64_t until;
	int failed;
};

static void *
write_loop(void *arg)
{
	struct writer *w = arg;
	char key[64], err[256], *val = calloc(1, w->vsize + 1);
	size_t i;

	memset(val, 'x', w->vsize);
	while (mts_now_us() < w->until) {
		struct mts_store_batch *b = mts_store_batch_new(w->st);

		for (i = 0; i < w->per; i++) {
			snprintf(key, sizeof(key), "b/%d/%zu", w->id,
			    w->puts++);
			mts_store_batch_put(b, MTS_CF_RECORDS, key, strlen(key),
			    val, w->vsize);
		}
		if (mts_store_commit(w->st, b, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			w->failed = 1;
			mts_store_batch_free(b);
			break;
		}
		mts_store_batch_free(b);
	}
	free(val);
	return NULL;
}

/* usage: storebench DIR SECONDS THREADS PUTS_PER_BATCH VALUE_BYTES
 * prints "puts/s": every thread commits synced batches as fast as it can
 * (RocksDB groups concurrent writers' WAL syncs itself). */
int
main(int argc, char **argv)
{
	struct mts_store_opts o = { .sync = 1,
		.cache_bytes = 8u << 20,
		.write_buffer = 8u << 20 };
	struct mts_store *st;
	struct writer *w;
	pthread_t *t;
	char err[256];
	int64_t start;
	size_t total = 0;
	int n, i, failed = 0;

	if (argc != 6) {
		fprintf(stderr,
		    "usage: storebench DIR SECONDS THREADS "
		    "PUTS_PER_BATCH VALUE_BYTES\n");
		return 2;
	}
	n = atoi(argv[3]);
	if ((st = mts_store_open(argv[1], &o, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	w = calloc(n, sizeof(*w));
	t = calloc(n, sizeof(*t));
	start = mts_now_us();
	for (i = 0; i < n; i++) {
		w[i].st = st;
		w[i].id = i;
		w[i].per = strtoul(argv[4], NULL, 10);
		w[i].vsize = strtoul(argv[5], NULL, 10);
		w[i].until = start + (int64_t)(atof(argv[2]) * 1e6);
		pthread_create(&t[i], NULL, write_loop, &w[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		total += w[i].puts;
		failed |= w[i].failed;
	}
	printf("%.0f\n", total / ((mts_now_us() - start) / 1e6));
	mts_store_close(st);
	free(w);
	free(t);
	return failed;
}
