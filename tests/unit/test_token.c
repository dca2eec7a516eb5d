/* test_token.c: unit tests of join tokens — round trip, strict rejection of malformed text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agents/gossipd/token_core.h"
#include "mtserr.h"

static void
mk(struct mts_token *t)
{
	memset(t, 0, sizeof(*t));
	memset(t->cluster_id, 0xab, sizeof(t->cluster_id));
	memset(t->secret, 0x5c, sizeof(t->secret));
	t->secret[31] = 1;
	snprintf(t->addr, sizeof(t->addr), "127.0.0.1:17101");
}

static void
test_roundtrip(void **state)
{
	struct mts_token t, u;
	char buf[256], err[128];

	mk(&t);
	assert_int_equal(mts_token_encode(&t, buf, sizeof(buf)), 0);
	assert_memory_equal(buf, "MTS1-", 5);
	assert_int_equal(mts_token_decode(buf, &u, err, sizeof(err)), 0);
	assert_memory_equal(&t, &u, sizeof(t));
	/* lowercase is accepted as well */
	for (size_t i = 5; buf[i]; i++)
		if (buf[i] >= 'A' && buf[i] <= 'Z')
			buf[i] = (char)(buf[i] - 'A' + 'a');
	assert_int_equal(mts_token_decode(buf, &u, err, sizeof(err)), 0);
	assert_string_equal(u.addr, "127.0.0.1:17101");
	assert_int_equal(mts_token_encode(&t, buf, 20), -MTS_ERR_TOOBIG);
}

static void
test_rejects(void **state)
{
	struct mts_token t, u;
	char buf[256], err[128];
	size_t len;

	mk(&t);
	assert_int_equal(mts_token_encode(&t, buf, sizeof(buf)), 0);
	len = strlen(buf);
	assert_int_equal(mts_token_decode("MTS2-AAAA", &u, err, sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "MTS1-"));
	assert_int_equal(mts_token_decode("MTS1-AA", &u, err, sizeof(err)),
	    -MTS_ERR_INVAL);
	buf[10] = '1'; /* not base32 */
	assert_int_equal(mts_token_decode(buf, &u, err, sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "base32"));
	assert_int_equal(mts_token_encode(&t, buf, sizeof(buf)), 0);
	buf[len - 3] = '\0'; /* truncated */
	assert_int_equal(mts_token_decode(buf, &u, err, sizeof(err)),
	    -MTS_ERR_INVAL);
	snprintf(t.addr, sizeof(t.addr), "no-port");
	assert_int_equal(mts_token_encode(&t, buf, sizeof(buf)), 0);
	assert_int_equal(mts_token_decode(buf, &u, err, sizeof(err)),
	    -MTS_ERR_INVAL);
	assert_non_null(strstr(err, "port"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
