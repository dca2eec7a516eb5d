/* prop.h: seeded generator for property tests; MTS_SEED overrides. */
#ifndef MTS_TEST_PROP_H
#define MTS_TEST_PROP_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct prop_rng {
	uint64_t s;
};

/* splitmix64: small, fast, and good enough to drive test cases. */
static inline uint64_t
prop_next(struct prop_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t
prop_below(struct prop_rng *r, uint64_t n)
{
	return prop_next(r) % n;
}

static inline void
prop_bytes(struct prop_rng *r, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = (uint8_t)prop_next(r);
}

/* Fisher-Yates over an array of size_t. */
static inline void
prop_shuffle(struct prop_rng *r, size_t *a, size_t n)
{
	size_t i, j, tmp;

	for (i = n; i > 1; i--) {
		j = (size_t)prop_below(r, i);
		tmp = a[i - 1];
		a[i - 1] = a[j];
		a[j] = tmp;
	}
}

/* The seed of one test: MTS_SEED if set, else from the clock; printed so a
 * failure can be replayed. */
static inline uint64_t
prop_seed(const char *test)
{
	const char *env = getenv("MTS_SEED");
	uint64_t seed;

	if (env != NULL && *env != '\0')
		seed = strtoull(env, NULL, 0);
	else
		seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	printf("%s: seed %" PRIu64 " (MTS_SEED=%" PRIu64 " replays it)\n", test,
	    seed, seed);
	fflush(stdout);
	return seed;
}

#endif
