/* test_acl.c: unit tests of common/acl.c's access tables — user lists, root and self, anyone, admin groups with their excluded users, unknown names, a missing table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "acl.h"
#include "cfg.h"
#include "mtserr.h"

static const struct mts_cfg_schema schema[] = {
	{ "a", "r", MTS_CFG_LIST, "0", NULL },
	{ "a", "w", MTS_CFG_LIST, "", NULL },
	{ "a", "group", MTS_CFG_STR, "0", NULL },
	{ NULL, NULL, 0, NULL, NULL },
};

static struct mts_cfg *
parse(const char *text)
{
	struct mts_cfg *cfg;
	char err[256];

	if (mts_cfg_parse(text, "t.conf", schema, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	return cfg;
}

/* The statestore's shape: classes are the union of the lists a uid is in. */
static void
test_users_union(void **state)
{
	static const struct mts_acl_rule rules[] = {
		{ MTS_CALLER_READ, MTS_ACL_USERS, "r" },
		{ MTS_CALLER_WRITE, MTS_ACL_USERS, "w" },
		{ 0, 0, NULL },
	};
	struct mts_cfg *cfg = parse("[a]\nr = 10, 11 root\nw = 11\n");
	struct mts_acl_table t;
	char err[256];

	assert_int_equal(mts_acl_table_load(&t, rules, cfg, "a", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(mts_acl_classify(&t, 10, 10), MTS_CALLER_READ);
	assert_int_equal(mts_acl_classify(&t, 11, 99),
	    MTS_CALLER_READ | MTS_CALLER_WRITE);
	assert_int_equal(mts_acl_classify(&t, 0, 0), MTS_CALLER_READ);
	assert_int_equal(mts_acl_classify(&t, 12, 12), 0);
	mts_acl_table_free(&t);
	mts_acl_table_free(&t); /* a freed table frees again */
	mts_cfg_free(cfg);
	/* Defaults apply: r = 0, w empty. */
	cfg = parse("[a]\n");
	assert_int_equal(mts_acl_table_load(&t, rules, cfg, "a", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(mts_acl_classify(&t, 0, 0), MTS_CALLER_READ);
	assert_int_equal(mts_acl_classify(&t, 11, 11), 0);
	mts_acl_table_free(&t);
	mts_cfg_free(cfg);
}

/* gossipd's shape: root and its own user everything, a list some, anyone
 * the rest. */
static void
test_self_and_anyone(void **state)
{
	static const struct mts_acl_rule rules[] = {
		{ MTS_CALLER_READ | MTS_CALLER_ADMIN, MTS_ACL_SELF, NULL },
		{ MTS_CALLER_READ | MTS_CALLER_RELAY, MTS_ACL_USERS, "w" },
		{ MTS_CALLER_READ, MTS_ACL_ANYONE, NULL },
		{ 0, 0, NULL },
	};
	struct mts_cfg *cfg = parse("[a]\nw = 4242\n");
	struct mts_acl_table t;
	char err[256];
	uid_t other = getuid() == 4243 ? 4244 : 4243;

	assert_int_equal(mts_acl_table_load(&t, rules, cfg, "a", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(mts_acl_classify(&t, 0, 0),
	    MTS_CALLER_READ | MTS_CALLER_ADMIN);
	assert_int_equal(mts_acl_classify(&t, getuid(), getgid()),
	    MTS_CALLER_READ | MTS_CALLER_ADMIN |
	        (getuid() == 4242 ? MTS_CALLER_RELAY : 0));
	assert_int_equal(mts_acl_classify(&t, 4242, 1),
	    MTS_CALLER_READ | MTS_CALLER_RELAY);
	assert_int_equal(mts_acl_classify(&t, other, other), MTS_CALLER_READ);
	mts_acl_table_free(&t);
	mts_cfg_free(cfg);
}

/* init's shape: root, and members of the admin group except the agents'
 * users. */
static void
test_group(void **state)
{
	static const struct mts_acl_rule rules[] = {
		{ MTS_CALLER_ADMIN, MTS_ACL_SELF, NULL },
		{ MTS_CALLER_ADMIN, MTS_ACL_GROUP, "group" },
		{ 0, 0, NULL },
	};
	struct mts_cfg *cfg = parse("[a]\ngroup = 4300\n");
	struct mts_acl_table t;
	char err[256];

	assert_int_equal(mts_acl_table_load(&t, rules, cfg, "a", err,
	                     sizeof(err)),
	    0);
	/* Primary group as the kernel reports it (uids without a passwd
	 * entry have no supplementary groups). */
	assert_int_equal(mts_acl_classify(&t, 64301, 4300), MTS_CALLER_ADMIN);
	assert_int_equal(mts_acl_classify(&t, 64302, 4301), 0);
	mts_acl_table_nogroup(&t, 64301);
	mts_acl_table_nogroup(&t, 64301);
	assert_int_equal(t.nogroup.n, 1);
	assert_int_equal(mts_acl_classify(&t, 64301, 4300), 0);
	/* An agent's user that is root stays root. */
	mts_acl_table_nogroup(&t, 0);
	assert_int_equal(mts_acl_classify(&t, 0, 0), MTS_CALLER_ADMIN);
	mts_acl_table_free(&t);
	mts_cfg_free(cfg);
	/* A group by name. */
	cfg = parse("[a]\ngroup = root\n");
	assert_int_equal(mts_acl_table_load(&t, rules, cfg, "a", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(mts_acl_classify(&t, 64303, 0), MTS_CALLER_ADMIN);
	mts_acl_table_free(&t);
	mts_cfg_free(cfg);
}

static void
test_unknown_names(void **state)
{
	static const struct mts_acl_rule rules[] = {
		{ MTS_CALLER_READ, MTS_ACL_USERS, "r" },
		{ MTS_CALLER_ADMIN, MTS_ACL_GROUP, "group" },
		{ 0, 0, NULL },
	};
	struct mts_cfg *cfg = parse("[a]\nr = 1 no_such_user_mts\n");
	struct mts_acl_table t;
	char err[256];

	assert_int_equal(mts_acl_table_load(&t, rules, cfg, "a", err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_string_equal(err,
	    "t.conf:2: [a] r: unknown user 'no_such_user_mts'");
	assert_null(t.users);
	mts_cfg_free(cfg);
	cfg = parse("[a]\n\ngroup = no_such_group_mts\n");
	assert_int_equal(mts_acl_table_load(&t, rules, cfg, "a", err,
	                     sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_string_equal(err,
	    "t.conf:3: [a] group: unknown group 'no_such_group_mts'");
	mts_cfg_free(cfg);
}

/* No table (not loaded, or not given to the server yet): nobody. */
static void
test_no_table(void **state)
{
	assert_int_equal(mts_acl_classify(NULL, 0, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_users_union),
		cmocka_unit_test(test_self_and_anyone),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_no_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
