/* test_schedd_conf.c: unit tests of mts-schedd's config (agents/schedd/schedd_conf.c) — CPU counts to millicores, and the capacity as cpus/memory less the reserve, from a parsed [schedd] section. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agents/schedd/schedd.h"
#include "cfg.h"

static const struct {
	const char *s;
	int ok;
	uint32_t millis;
} cpus[] = {
	{ "2", 1, 2000 },
	{ "0.5", 1, 500 },
	{ "1.25", 1, 1250 },
	{ "0.001", 1, 1 },
	{ "3.", 1, 3000 },
	{ ".5", 1, 500 },
	{ "0.0005", 0, 0 }, /* finer than a millicore */
	{ "", 0, 0 },
	{ ".", 0, 0 },
	{ "-1", 0, 0 },
	{ "1e3", 0, 0 },
	{ "2 ", 0, 0 },
	{ "99999999", 0, 0 },
};

static void
test_parse_cpus(void **state)
{
	size_t i;
	uint32_t m;

	for (i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		m = 0;
		if ((schedd_parse_cpus(cpus[i].s, &m) == 0) != cpus[i].ok)
			fail_msg("'%s': expected %s", cpus[i].s,
			    cpus[i].ok ? "ok" : "an error");
		if (cpus[i].ok && m != cpus[i].millis)
			fail_msg("'%s': %u, expected %u", cpus[i].s, m,
			    cpus[i].millis);
	}
}

static void
load(const char *text, int want, uint32_t cpu, uint64_t mem)
{
	struct mts_cfg *cfg;
	struct schedd_conf c;
	char err[256];

	if (mts_cfg_parse(text, "t.conf", mts_conf_schema(), &cfg, err,
	        sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(schedd_conf_load(&c, cfg), want);
	if (want == 0) {
		assert_int_equal(c.capacity.cpu_millis, cpu);
		assert_int_equal(c.capacity.memory, mem);
	}
	mts_cfg_free(cfg);
}

/* cpus and memory replace /proc; the reserve comes off; a reserve beyond
 * the capacity leaves nothing, not a wrapped number. */
static void
test_capacity(void **state)
{
	load("[schedd]\ncpus = 1.5\nmemory = 1G\nreserve_cpus = 0.5\n"
	     "reserve_memory = 256M\n",
	    0, 1000, 768ull << 20);
	load("[schedd]\ncpus = 1\nmemory = 1M\nreserve_cpus = 2\n"
	     "reserve_memory = 2M\n",
	    0, 0, 0);
	load("[schedd]\ncpus = lots\n", -1, 0, 0);
	load("[schedd]\nlease_ttl = 0s\n", -1, 0, 0);
}

/* Without cpus and memory: what this machine has. */
static void
test_proc(void **state)
{
	struct mts_cfg *cfg;
	struct schedd_conf c;
	char err[256];

	assert_int_equal(mts_cfg_parse("", "t.conf", mts_conf_schema(), &cfg,
	                     err, sizeof(err)),
	    0);
	assert_int_equal(schedd_conf_load(&c, cfg), 0);
	assert_true(c.capacity.cpu_millis >= 1000);
	assert_true(c.capacity.cpu_millis % 1000 == 0);
	assert_true(c.capacity.memory > (16ull << 20));
	assert_int_equal(c.lease_ttl_ms, 10000);
	mts_cfg_free(cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_cpus),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_proc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
