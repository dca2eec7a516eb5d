/* test_nodeinfo.c: the n/<node> record's struct form — encode and decode round trips, availability names, agent versions, keys, and what a decoder refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mtserr.h"
#include "node.pb-c.h"
#include "nodeinfo.h"

static void
test_round_trip(void **state)
{
	struct mts_nodeinfo a, b;
	uint8_t *buf;
	size_t len;

	memset(&a, 0, sizeof(a));
	strcpy(a.hostname, "n1");
	strcpy(a.os, "linux");
	strcpy(a.arch, "x86_64");
	a.cpu_millis = 1500;
	a.memory = 1ull << 33;
	a.availability = MTS_AVAIL_DRAIN;
	strcpy(a.overlay_subnet, "10.1.2.0/24");
	assert_int_equal(mts_nodeinfo_set_version(&a, "schedd", "0.1.0"), 1);
	assert_int_equal(mts_nodeinfo_set_version(&a, "netd", "0.1.0"), 1);
	assert_int_equal(mts_nodeinfo_set_version(&a, "schedd", "0.1.0"), 0);
	assert_int_equal(mts_nodeinfo_set_version(&a, "schedd", "0.2.0"), 1);
	a.updated_at_ms = 1700000000000ull;
	a.availability_at_ms = 1700000000001ull;
	buf = mts_nodeinfo_encode(&a, &len);
	assert_int_equal(mts_nodeinfo_decode(buf, len, &b), 0);
	free(buf);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_string_equal(mts_nodeinfo_version(&b, "schedd"), "0.2.0");
	assert_string_equal(mts_nodeinfo_version(&b, "netd"), "0.1.0");
	assert_null(mts_nodeinfo_version(&b, "shim"));
	assert_int_equal(b.nversions, 2);
}

static void
test_availability(void **state)
{
	enum mts_availability a;
	static const char *const bad[] = { "drained", "Active", "paused", "x" };
	size_t i;

	for (i = 0; i < MTS_AVAIL_N; i++) {
		assert_int_equal(mts_availability_parse(mts_availability_str((
		                                            enum mts_availability)
		                                                i),
		                     &a),
		    0);
		assert_int_equal(a, i);
	}
	assert_int_equal(mts_availability_parse("", &a), 0);
	assert_int_equal(a, MTS_AVAIL_ACTIVE);
	assert_int_equal(mts_availability_parse(NULL, &a), 0);
	assert_int_equal(a, MTS_AVAIL_ACTIVE);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mts_availability_parse(bad[i], &a),
		    -MTS_ERR_INVAL);
}

/* An empty record (no n/ yet, or a node of an older version) reads as
 * active; garbage and an unknown availability are refused. */
static void
test_decode_refuses(void **state)
{
	Mts__Node__NodeInfo m = MTS__NODE__NODE_INFO__INIT;
	struct mts_nodeinfo ni;
	uint8_t buf[256] = { 0 };
	size_t len;
	static const uint8_t junk[] = { 0xff, 0xff, 0xff };

	assert_int_equal(mts_nodeinfo_decode(buf, 0, &ni), 0);
	assert_int_equal(ni.availability, MTS_AVAIL_ACTIVE);
	assert_int_equal(mts_nodeinfo_decode(junk, sizeof(junk), &ni),
	    -MTS_ERR_INVAL);
	m.availability = "maintenance";
	m.hostname = "n9";
	len = mts__node__node_info__pack(&m, buf);
	assert_int_equal(mts_nodeinfo_decode(buf, len, &ni), -MTS_ERR_INVAL);
}

/* Long strings are cut to the struct's buffers; more versions than it
 * holds keep the first ones. */
static void
test_limits(void **state)
{
	Mts__Node__NodeInfo m = MTS__NODE__NODE_INFO__INIT;
	Mts__Node__AgentVersion v[MTS_NODEINFO_MAX_VERSIONS + 4];
	Mts__Node__AgentVersion *vp[MTS_NODEINFO_MAX_VERSIONS + 4];
	struct mts_nodeinfo ni;
	char longname[1000];
	uint8_t *buf;
	size_t i, len;

	memset(longname, 'h', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	for (i = 0; i < MTS_NODEINFO_MAX_VERSIONS + 4; i++) {
		mts__node__agent_version__init(&v[i]);
		v[i].agent = "a";
		v[i].version = longname;
		vp[i] = &v[i];
	}
	m.hostname = longname;
	m.versions = vp;
	m.n_versions = MTS_NODEINFO_MAX_VERSIONS + 4;
	len = mts__node__node_info__get_packed_size(&m);
	buf = malloc(len);
	mts__node__node_info__pack(&m, buf);
	assert_int_equal(mts_nodeinfo_decode(buf, len, &ni), 0);
	free(buf);
	assert_int_equal(strlen(ni.hostname), sizeof(ni.hostname) - 1);
	assert_int_equal(ni.nversions, MTS_NODEINFO_MAX_VERSIONS);
	assert_int_equal(strlen(ni.versions[0].version),
	    sizeof(ni.versions[0].version) - 1);
	/* a full list takes no new agent */
	assert_int_equal(mts_nodeinfo_set_version(&ni, "new", "1"), 0);
}

static void
test_keys(void **state)
{
	char key[MTS_NODEINFO_KEY_LEN + 1], hex[MTS_NODE_HEX_LEN + 1];
	const char *id = "0123456789abcdef0123456789abcdef";

	mts_nodeinfo_key(key, sizeof(key), id);
	assert_string_equal(key, "n/0123456789abcdef0123456789abcdef");
	assert_int_equal(mts_nodeinfo_key_node((const uint8_t *)key,
	                     strlen(key), hex),
	    0);
	assert_string_equal(hex, id);
	assert_int_equal(mts_nodeinfo_key_node((const uint8_t *)"n/0123", 6,
	                     hex),
	    -1);
	assert_int_equal(mts_nodeinfo_key_node(
	                     (const uint8_t
	                             *)"nl/0123456789abcdef0123456789abcde",
	                     35, hex),
	    -1);
	assert_int_equal(mts_nodeinfo_key_node(
	                     (const uint8_t
	                             *)"n/0123456789abcdef0123456789abcdeg",
	                     34, hex),
	    -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_availability),
		cmocka_unit_test(test_decode_refuses),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
