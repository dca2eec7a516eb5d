/* test_common.c: unit tests of common/ — buffers, hex, HLC, config parsing and printing, task ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "acl.h"
#include "buf.h"
#include "cfg.h"
#include "hash.h"
#include "hlc.h"
#include "rendezvous.h"
#include "mtserr.h"
#include "taskid.h"

static void
test_buf_roundtrip(void **state)
{
	struct mts_buf b;
	struct mts_rd r;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	const uint8_t *p;

	mts_buf_init(&b);
	mts_buf_put_u8(&b, 7);
	mts_buf_put_u16be(&b, 0x1234);
	mts_buf_put_u32be(&b, 0xdeadbeef);
	mts_buf_put_u64be(&b, 0x0102030405060708ull);
	mts_buf_put(&b, "xyz", 3);
	assert_int_equal(b.len, 1 + 2 + 4 + 8 + 3);
	assert_int_equal(b.data[1], 0x12);
	mts_rd_init(&r, b.data, b.len);
	assert_int_equal(mts_rd_u8(&r, &u8), 0);
	assert_int_equal(mts_rd_u16be(&r, &u16), 0);
	assert_int_equal(mts_rd_u32be(&r, &u32), 0);
	assert_int_equal(mts_rd_u64be(&r, &u64), 0);
	assert_int_equal(u8, 7);
	assert_int_equal(u16, 0x1234);
	assert_int_equal(u32, 0xdeadbeef);
	assert_true(u64 == 0x0102030405060708ull);
	assert_int_equal(mts_rd_bytes(&r, &p, 4), -MTS_ERR_INVAL);
	assert_int_equal(mts_rd_bytes(&r, &p, 3), 0);
	assert_memory_equal(p, "xyz", 3);
	assert_int_equal(mts_rd_u8(&r, &u8), -MTS_ERR_INVAL);
	mts_buf_free(&b);
}

static void
test_hex(void **state)
{
	uint8_t in[3] = { 0x00, 0xab, 0xff }, out[3];
	char hex[7];

	mts_hex(hex, in, 3);
	assert_string_equal(hex, "00abff");
	assert_int_equal(mts_unhex(out, 3, "00ABff", 6), 0);
	assert_memory_equal(in, out, 3);
	assert_int_equal(mts_unhex(out, 3, "00abf", 5), -MTS_ERR_INVAL);
	assert_int_equal(mts_unhex(out, 3, "00abfg", 6), -MTS_ERR_INVAL);
}

static void
test_blake2b(void **state)
{
	/* BLAKE2b-256 of the empty string (RFC 7693 parameterization). */
	uint8_t h[32];
	char hex[65];

	mts_blake2b256(h, "", 0);
	mts_hex(hex, h, 32);
	assert_string_equal(hex,
	    "0e5751c026e543b2e8ab2eb06099daa1d1e5df47"
	    "778f7787faab45cdf12fe3a8");
}

static void
test_hlc(void **state)
{
	struct mts_hlc c = { 0 };
	uint64_t a, b, d;

	a = mts_hlc_now(&c, 1000);
	assert_true(a == mts_hlc_make(1000, 0));
	b = mts_hlc_now(&c, 1000); /* same ms: counter ticks */
	assert_true(b == mts_hlc_make(1000, 1));
	d = mts_hlc_now(&c, 900); /* clock stepped back: still monotonic */
	assert_true(d > b);
	mts_hlc_observe(&c, mts_hlc_make(5000, 9));
	assert_true(mts_hlc_now(&c, 1001) == mts_hlc_make(5000, 10));
	assert_true(mts_hlc_now(&c, 6000) == mts_hlc_make(6000, 0));
	/* at the top it stays there instead of wrapping to 0 */
	mts_hlc_observe(&c, UINT64_MAX);
	assert_true(mts_hlc_now(&c, 1002) == UINT64_MAX);
	assert_true(mts_hlc_now(&c, 1003) == UINT64_MAX);
}

static const struct mts_cfg_schema test_schema[] = {
	{ "node", "", MTS_CFG_PLAIN, NULL, NULL },
	{ "node", "name", MTS_CFG_STR, "n", NULL },
	{ "node", "debug", MTS_CFG_BOOL, "no", NULL },
	{ "*", "executable", MTS_CFG_STR, NULL, NULL },
	{ "*", "restart_delay", MTS_CFG_DURATION, "100ms", NULL },
	{ "a", "limit", MTS_CFG_SIZE, "4M", NULL },
	{ "a", "users", MTS_CFG_LIST, "root, 1000", NULL },
	{ NULL, NULL, 0, NULL, NULL },
};

static void
test_cfg_parse(void **state)
{
	struct mts_cfg *cfg;
	char err[256];
	char **list;
	const char *text = "# comment\n[node]\nname = alpha\ndebug = yes\n"
	                   "\n[a]\nexecutable = /bin/a\nlimit = 64K\n"
	                   "[b]\nrestart_delay = 2s\n";

	assert_int_equal(mts_cfg_parse(text, "t.conf", test_schema, &cfg, err,
	                     sizeof(err)),
	    0);
	assert_string_equal(mts_cfg_str(cfg, "node", "name"), "alpha");
	assert_int_equal(mts_cfg_bool(cfg, "node", "debug"), 1);
	assert_int_equal(mts_cfg_int(cfg, "a", "limit"), 65536);
	assert_int_equal(mts_cfg_int(cfg, "a", "restart_delay"), 100);
	assert_int_equal(mts_cfg_int(cfg, "b", "restart_delay"), 2000);
	assert_int_equal(mts_cfg_line(cfg, "a", "limit"), 8);
	assert_true(mts_cfg_has_section(cfg, "b"));
	list = mts_cfg_list(cfg, "a", "users");
	assert_string_equal(list[0], "root");
	assert_string_equal(list[1], "1000");
	assert_null(list[2]);
	mts_cfg_list_free(list);
	mts_cfg_free(cfg);
}

static void
expect_error(const char *text, const char *want)
{
	struct mts_cfg *cfg = NULL;
	char err[256];

	assert_int_equal(mts_cfg_parse(text, "bad.conf", test_schema, &cfg, err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_null(cfg);
	if (strstr(err, want) == NULL)
		fail_msg("error '%s' lacks '%s'", err, want);
}

static void
test_cfg_errors(void **state)
{
	expect_error("[node]\nname = x\nbogus = 1\n",
	    "bad.conf:3: unknown key 'bogus' in section [node]");
	expect_error("[node]\nexecutable = /x\n", "bad.conf:2: unknown key");
	expect_error("[a]\nlimit = lots\n", "bad.conf:2: [a] limit = 'lots'");
	expect_error("[b]\nrestart_delay = 5\n", "expected a duration");
	expect_error("[node]\nname = a\nname = b\n",
	    "set twice (first on line 2)");
	expect_error("\n\n[node\n", "bad.conf:3:");
	expect_error("name = x\n", "outside a section");
}

static void
test_cfg_print_roundtrip(void **state)
{
	struct mts_cfg *cfg, *again;
	char err[256], *out1 = NULL, *out2 = NULL;
	size_t n1, n2;
	FILE *f;

	assert_int_equal(mts_cfg_parse("[a]\nlimit = 1M\n[zz]\nexecutable = /z\n",
	                     "t", test_schema, &cfg, err, sizeof(err)),
	    0);
	f = open_memstream(&out1, &n1);
	mts_cfg_print(cfg, f);
	fclose(f);
	assert_non_null(strstr(out1, "[node]\nname = n\ndebug = no\n"));
	assert_non_null(strstr(out1, "[a]\nrestart_delay = 100ms\n"));
	assert_non_null(strstr(out1, "limit = 1M\n"));
	assert_non_null(
	    strstr(out1, "[zz]\nexecutable = /z\nrestart_delay = 100ms\n"));
	assert_int_equal(mts_cfg_parse(out1, "printed", test_schema, &again,
	                     err, sizeof(err)),
	    0);
	f = open_memstream(&out2, &n2);
	mts_cfg_print(again, f);
	fclose(f);
	assert_string_equal(out1, out2);
	mts_cfg_free(cfg);
	mts_cfg_free(again);
	free(out1);
	free(out2);
}

static void
test_parse_units(void **state)
{
	int64_t v;

	assert_int_equal(mts_parse_duration("7d", &v), 0);
	assert_true(v == 7 * 86400000ll);
	assert_int_equal(mts_parse_duration("250ms", &v), 0);
	assert_int_equal(v, 250);
	assert_int_equal(mts_parse_duration("-1s", &v), -MTS_ERR_INVAL);
	assert_int_equal(mts_parse_size("4M", &v), 0);
	assert_int_equal(v, 4 << 20);
	assert_int_equal(mts_parse_size("99999999999999999999", &v),
	    -MTS_ERR_TOOBIG);
	assert_int_equal(mts_parse_size("9999999999G", &v), -MTS_ERR_TOOBIG);
	assert_int_equal(mts_parse_int("9223372036854775808", &v),
	    -MTS_ERR_TOOBIG);
	assert_int_equal(mts_parse_int("-9223372036854775808", &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(mts_parse_uint("9223372036854775807", &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(mts_parse_uint("9223372036854775808", &v),
	    -MTS_ERR_TOOBIG);
	assert_int_equal(mts_parse_uint("18446744073709551616", &v),
	    -MTS_ERR_TOOBIG);
	assert_int_equal(mts_parse_uint("-1", &v), -MTS_ERR_INVAL);
	assert_int_equal(mts_parse_uint("+1", &v), -MTS_ERR_INVAL);
	assert_int_equal(mts_parse_uint(" 1", &v), -MTS_ERR_INVAL);
	assert_int_equal(mts_parse_uint("", &v), -MTS_ERR_INVAL);
	assert_int_equal(mts_parse_uint("0", &v), 0);
	assert_int_equal(v, 0);
}

static void
test_acl(void **state)
{
	static const struct mts_cfg_schema schema[] = {
		{ "a", "users", MTS_CFG_LIST, NULL, NULL },
		{ NULL, NULL, 0, NULL, NULL },
	};
	struct mts_cfg *cfg;
	struct mts_acl acl;
	char err[256];

	assert_int_equal(mts_cfg_parse("[a]\nusers = 0, 4242 root\n", "t",
	                     schema, &cfg, err, sizeof(err)),
	    0);
	assert_int_equal(mts_acl_load(&acl, cfg, "a", "users", err,
	                     sizeof(err)),
	    0);
	assert_true(mts_acl_has(&acl, 0));
	assert_true(mts_acl_has(&acl, 4242));
	assert_false(mts_acl_has(&acl, 4243));
	mts_acl_free(&acl);
	mts_cfg_free(cfg);
	assert_int_equal(mts_cfg_parse("\n[a]\nusers = 7 nobody_mts_x\n",
	                     "f.conf", schema, &cfg, err, sizeof(err)),
	    0);
	assert_int_equal(mts_acl_load(&acl, cfg, "a", "users", err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_string_equal(err,
	    "f.conf:3: [a] users: unknown user 'nobody_mts_x'");
	assert_int_equal(acl.n, 0);
	mts_cfg_free(cfg);
}

static void
test_real_schema_defaults_parse(void **state)
{
	struct mts_cfg *cfg, *again;
	char err[256], *out = NULL;
	size_t n;
	FILE *f;

	const struct mts_cfg_schema *schema = mts_conf_schema();

	/* The printed defaults of the real schema must parse again, and every
	 * table the agents and init register is in it. */
	assert_int_equal(mts_cfg_parse("", "empty", schema, &cfg, err,
	                     sizeof(err)),
	    0);
	f = open_memstream(&out, &n);
	mts_cfg_print(cfg, f);
	fclose(f);
	assert_non_null(strstr(out, "[node]\nrundir = /run/mts\n"));
	assert_non_null(strstr(out, "[init]\nadmin_group = 0\n"));
	assert_non_null(strstr(out, "[statestore]\ntombstone_retention = "));
	assert_non_null(strstr(out, "[gossipd]\nlisten = "));
	assert_non_null(strstr(out, "[shim]\nruntime = auto\n"));
	assert_non_null(strstr(out, "[schedd]\ncpus = \n"));
	assert_non_null(strstr(out, "[netd]\ncluster_cidr = 10.210.0.0/16\n"));
	assert_non_null(strstr(out, "[reconciled]\ntick = 1s\n"));
	assert_ptr_equal(mts_conf_schema(), schema);
	if (mts_cfg_parse(out, "printed", schema, &again, err, sizeof(err)) !=
	    0)
		fail_msg("%s", err);
	mts_cfg_free(cfg);
	mts_cfg_free(again);
	free(out);
}

/* The owner is the highest weight whatever the order of the nodes; taking
 * away another node keeps it, taking the owner away moves it to the next
 * in weight order; 1,000 services spread over 5 nodes. */
static void
test_rendezvous(void **state)
{
	uint8_t nodes[5][MTS_NODE_ID_LEN], rev[5][MTS_NODE_ID_LEN];
	int per[5] = { 0 }, i, j;
	char name[32];
	long o;

	for (i = 0; i < 16; i++)
		nodes[0][i] = (uint8_t)i;
	/* the same weight as BLAKE2b-256("shop_web" || 00 01 .. 0f) */
	assert_true(mts_rendezvous_weight("shop_web", nodes[0]) ==
	    0xa10ecd1b3e4adfcfull);
	for (i = 0; i < 5; i++)
		for (j = 0; j < MTS_NODE_ID_LEN; j++)
			nodes[i][j] = (uint8_t)(i * 37 + j);
	for (i = 0; i < 5; i++)
		memcpy(rev[i], nodes[4 - i], MTS_NODE_ID_LEN);
	assert_int_equal(mts_rendezvous_owner("x", NULL, 0), -1);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "stack_svc%d", i);
		o = mts_rendezvous_owner(name, (const uint8_t(*)[16])nodes, 5);
		assert_int_equal(4 - o,
		    mts_rendezvous_owner(name, (const uint8_t(*)[16])rev, 5));
		per[o]++;
		/* without the owner: the next one; without another: the same */
		if (o != 4)
			assert_int_equal(mts_rendezvous_owner(name,
			                     (const uint8_t(*)[16])nodes, 4),
			    o);
	}
	for (i = 0; i < 5; i++)
		assert_true(per[i] > 120 && per[i] < 280);
	/* pick: the same owner from the weights; a tie to the lower id */
	for (i = 0; i < 100; i++) {
		uint64_t w[5];

		snprintf(name, sizeof(name), "stack_svc%d", i);
		for (j = 0; j < 5; j++)
			w[j] = mts_rendezvous_weight(name, rev[j]);
		assert_int_equal(mts_rendezvous_pick(w,
		                     (const uint8_t(*)[16])rev, 5),
		    mts_rendezvous_owner(name, (const uint8_t(*)[16])rev, 5));
	}
	{
		uint64_t w[3] = { 7, 9, 9 };

		assert_int_equal(mts_rendezvous_pick(w,
		                     (const uint8_t(*)[16])rev, 3),
		    2); /* rev[2] has the lower id of the two 9s */
		assert_int_equal(mts_rendezvous_pick(w, NULL, 0), -1);
	}
}

/* Task ids: what the shim names directories after and reconciled checks
 * before it assigns. */
static void
test_task_id(void **state)
{
	char longest[MTS_TASK_ID_LEN + 2];

	assert_true(mts_task_id_valid("web.1.0a1b2c3d"));
	assert_true(mts_task_id_valid("a"));
	assert_true(mts_task_id_valid("shop_db-2"));
	assert_false(mts_task_id_valid(NULL));
	assert_false(mts_task_id_valid(""));
	assert_false(mts_task_id_valid("."));
	assert_false(mts_task_id_valid(".."));
	assert_false(mts_task_id_valid("-a"));
	assert_false(mts_task_id_valid("Web"));
	assert_false(mts_task_id_valid("a/b"));
	assert_false(mts_task_id_valid("a b"));
	memset(longest, 'a', MTS_TASK_ID_LEN);
	longest[MTS_TASK_ID_LEN] = '\0';
	assert_true(mts_task_id_valid(longest));
	longest[MTS_TASK_ID_LEN] = 'a';
	longest[MTS_TASK_ID_LEN + 1] = '\0';
	assert_false(mts_task_id_valid(longest));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_roundtrip),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_blake2b),
		cmocka_unit_test(test_hlc),
		cmocka_unit_test(test_cfg_parse),
		cmocka_unit_test(test_cfg_errors),
		cmocka_unit_test(test_cfg_print_roundtrip),
		cmocka_unit_test(test_parse_units),
		cmocka_unit_test(test_acl),
		cmocka_unit_test(test_rendezvous),
		cmocka_unit_test(test_task_id),
		cmocka_unit_test(test_real_schema_defaults_parse),
	};

	mts_crypto_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
