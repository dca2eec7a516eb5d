/* units.c: Compose's units — durations (1m30s, 250ms, 2h), byte sizes (512m, 1g, 100kb; binary multiples as Docker reads them) and CPU counts (0.5). */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compose.h"

struct unit {
	const char *name;
	int64_t mult;
};

/* Longest names first, so "ms" is not read as "m" then "s". */
static const struct unit dur_units[] = {
	{ "ns", 0 },
	{ "us", 0 },
	{ "\xc2\xb5s", 0 },
	{ "ms", 1 },
	{ "s", 1000 },
	{ "m", 60000 },
	{ "h", 3600000 },
};

static const struct unit *
find_unit(const struct unit *t, size_t n, const char *s, size_t *len)
{
	size_t i, best = n;

	for (i = 0; i < n; i++) {
		size_t l = strlen(t[i].name);

		if (strncmp(s, t[i].name, l) == 0 &&
		    (best == n || l > strlen(t[best].name)))
			best = i;
	}
	if (best == n)
		return NULL;
	*len = strlen(t[best].name);
	return &t[best];
}

/* A Go-style duration: a sequence of NUMBER UNIT, e.g. "1h2m3.5s"; a bare
 * number is seconds (as Compose reads integers). Sub-millisecond parts
 * round down. */
int
mts_compose_duration(const char *s, int64_t *ms)
{
	const struct unit *u;
	double total = 0;
	char *end;
	size_t ul;

	if (s == NULL || *s == '\0')
		return -1;
	if (strspn(s, "0123456789") == strlen(s)) {
		long long v = strtoll(s, &end, 10);

		if (v < 0 || v > INT64_MAX / 1000)
			return -1;
		*ms = (int64_t)v * 1000;
		return 0;
	}
	while (*s) {
		double v;

		if (!isdigit((unsigned char)*s) && *s != '.')
			return -1;
		v = strtod(s, &end);
		if (end == s || v < 0)
			return -1;
		u = find_unit(dur_units,
		    sizeof(dur_units) / sizeof(dur_units[0]), end, &ul);
		if (u == NULL)
			return -1;
		total += v * (double)u->mult;
		s = end + ul;
	}
	if (total > 9.2e18)
		return -1;
	*ms = (int64_t)total;
	return 0;
}

static const struct unit byte_units[] = {
	{ "b", 1 },
	{ "k", 1 << 10 },
	{ "kb", 1 << 10 },
	{ "m", 1 << 20 },
	{ "mb", 1 << 20 },
	{ "g", 1 << 30 },
	{ "gb", 1 << 30 },
	{ "t", 1ll << 40 },
	{ "tb", 1ll << 40 },
};

int
mts_compose_bytes(const char *s, uint64_t *bytes)
{
	char low[16], *end;
	const struct unit *u;
	double v;
	size_t i, ul;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -1;
	v = strtod(s, &end);
	if (end == s || v < 0)
		return -1;
	if (*end == '\0') {
		*bytes = (uint64_t)v;
		return v == (double)(uint64_t)v ? 0 : -1;
	}
	for (i = 0; end[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)tolower((unsigned char)end[i]);
	low[i] = '\0';
	if (end[i] != '\0')
		return -1;
	u = find_unit(byte_units, sizeof(byte_units) / sizeof(byte_units[0]),
	    low, &ul);
	if (u == NULL || low[ul] != '\0')
		return -1;
	if (v * (double)u->mult > 1.8e19)
		return -1;
	*bytes = (uint64_t)(v * (double)u->mult);
	return 0;
}

int
mts_compose_cpus(const char *s, uint32_t *millis)
{
	char *end;
	double v;

	if (s == NULL || (!isdigit((unsigned char)*s) && *s != '.'))
		return -1;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || v < 0 || v > 1e6)
		return -1;
	*millis = (uint32_t)(v * 1000 + 0.5);
	return 0;
}
