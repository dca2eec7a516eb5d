/* test_testagent_core.c: unit tests of the test agent's core (tests/testagent/testagent_core.c) — ordering, overwrite and tombstones, HLC stamps from the given clock, scans by prefix and position with limits, the root digest, fault names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "tests/testagent/testagent_core.h"

#define K(s) (const uint8_t *)(s), strlen(s)

/* Records stay in key order whatever the order of writes; a rewrite keeps
 * one record; stamps grow even when the clock goes back. */
static void
test_put_get(void **state)
{
	static const char *const keys[] = { "m", "a", "z", "ab", "", "m" };
	static const char *const order[] = { "", "a", "ab", "m", "z" };
	struct ta_core c;
	const struct ta_record *r;
	uint64_t last = 0;
	size_t i;

	ta_core_init(&c);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		r = ta_put(&c, K(keys[i]), K("v"), 0, 1000 - i);
		assert_true(r->hlc > last);
		last = r->hlc;
	}
	assert_int_equal(c.n, 5);
	for (i = 0; i < c.n; i++) {
		assert_int_equal(c.r[i].klen, strlen(order[i]));
		assert_memory_equal(c.r[i].key, order[i], c.r[i].klen);
	}
	assert_non_null(ta_get(&c, K("")));
	assert_null(ta_get(&c, K("b")));
	r = ta_put(&c, K("a"), NULL, 0, 1, 2000);
	assert_true(r->tomb);
	assert_int_equal(r->vlen, 0);
	assert_ptr_equal(ta_get(&c, K("a")), r);
	assert_int_equal(c.n, 5);
	ta_core_free(&c);
}

struct scan_case {
	const char *prefix, *after;
	int tombstones;
	size_t limit;
	const char *want; /* the keys, space-separated */
	int more;
};

static const struct scan_case scans[] = {
	{ "", "", 0, 0, "a/1 a/2 a/4 b/1", 0 },
	{ "", "", 1, 0, "a/1 a/2 a/3 a/4 b/1", 0 },
	{ "a/", "", 0, 0, "a/1 a/2 a/4", 0 },
	{ "a/", "a/1", 0, 0, "a/2 a/4", 0 },
	{ "a/", "a/0", 0, 2, "a/1 a/2", 1 },
	{ "a/", "a/2", 0, 2, "a/4", 0 },
	{ "a/", "a/2", 1, 1, "a/3", 1 },
	{ "b/", "", 0, 1, "b/1", 0 },
	{ "c/", "", 1, 0, "", 0 },
	{ "a/1/", "", 1, 0, "", 0 },
};

static void
test_scan(void **state)
{
	static const char *const keys[] = { "b/1", "a/2", "a/1", "a/4", "a/3" };
	const struct ta_record *out[8];
	char got[64];
	struct ta_core c;
	size_t i, j, n;
	int more;

	ta_core_init(&c);
	for (i = 0; i < 5; i++)
		ta_put(&c, K(keys[i]), K("v"), 0, 1);
	ta_put(&c, K("a/3"), NULL, 0, 1, 2);
	for (i = 0; i < sizeof(scans) / sizeof(scans[0]); i++) {
		const struct scan_case *sc = &scans[i];
		struct ta_scan q = { .prefix = (const uint8_t *)sc->prefix,
			.plen = strlen(sc->prefix),
			.after = (const uint8_t *)sc->after,
			.alen = strlen(sc->after),
			.tombstones = sc->tombstones,
			.limit = sc->limit };

		n = ta_scan(&c, &q, out, &more);
		got[0] = '\0';
		for (j = 0; j < n; j++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
			    "%s%.*s", j ? " " : "", (int)out[j]->klen,
			    (const char *)out[j]->key);
		assert_string_equal(got, sc->want);
		assert_int_equal(more, sc->more);
	}
	ta_core_free(&c);
}

/* The root digest is zero when empty, changes with every write, and
 * counts live records. */
static void
test_root(void **state)
{
	uint8_t zero[MTS_HASH_LEN] = { 0 }, h1[MTS_HASH_LEN], h2[MTS_HASH_LEN];
	struct ta_core c;
	uint64_t live;

	ta_core_init(&c);
	ta_root(&c, h1, &live);
	assert_memory_equal(h1, zero, MTS_HASH_LEN);
	assert_int_equal(live, 0);
	ta_put(&c, K("k"), K("v"), 0, 1);
	ta_put(&c, K("l"), K("v"), 0, 1);
	ta_root(&c, h1, &live);
	assert_int_equal(live, 2);
	ta_put(&c, K("k"), NULL, 0, 1, 1);
	ta_root(&c, h2, &live);
	assert_int_equal(live, 1);
	assert_memory_not_equal(h1, h2, MTS_HASH_LEN);
	assert_memory_not_equal(h1, zero, MTS_HASH_LEN);
	ta_core_free(&c);
}

static const struct {
	const char *text;
	int rc;
	enum ta_fault_kind kind;
	int code;
} fault_cases[] = {
	{ "exit:78", 0, TA_FAULT_EXIT, 78 },
	{ "exit:0", 0, TA_FAULT_EXIT, 0 },
	{ "exit:", -1, TA_FAULT_NONE, 0 },
	{ "exit:7x", -1, TA_FAULT_NONE, 0 },
	{ "exit:256", -1, TA_FAULT_NONE, 0 },
	{ "abort", 0, TA_FAULT_ABORT, 0 },
	{ "syscall", 0, TA_FAULT_SYSCALL, 0 },
	{ "inet", 0, TA_FAULT_INET, 0 },
	{ "orphan", 0, TA_FAULT_ORPHAN, 0 },
	{ "aborts", -1, TA_FAULT_NONE, 0 },
	{ "", -1, TA_FAULT_NONE, 0 },
};

static void
test_faults(void **state)
{
	struct ta_fault f;
	size_t i;

	for (i = 0; i < sizeof(fault_cases) / sizeof(fault_cases[0]); i++) {
		assert_int_equal(ta_fault_parse(fault_cases[i].text, &f),
		    fault_cases[i].rc);
		assert_int_equal(f.kind, fault_cases[i].kind);
		assert_int_equal(f.code, fault_cases[i].code);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_faults),
	};

	log_init("test_testagent_core", MTS_LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
