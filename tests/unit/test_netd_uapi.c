/* test_netd_uapi.c: unit tests of mts-netd's UAPI core (agents/netd/uapi_core.c) — the request queue (one in flight, a waiting kind absorbs repeats, one pushed while in flight goes again), answers complete only at their blank line however they are split, too long or with a NUL refused, errno read only from a well-formed last line, and the private key taken out of a kept answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/netd/uapi_core.h"
#include "mtserr.h"

static void
test_queue_order(void **state)
{
	struct netd_uapiq q;

	(void)state;
	netd_uapiq_init(&q);
	assert_int_equal(netd_uapiq_next(&q), -1);
	assert_int_equal(netd_uapiq_push(&q, NETD_UAPI_START), 1);
	assert_int_equal(netd_uapiq_push(&q, NETD_UAPI_STATS), 1);
	assert_int_equal(netd_uapiq_push(&q, NETD_UAPI_KINDS), -1);
	assert_int_equal(netd_uapiq_push(&q, -1), -1);
	/* first come, first sent; one at a time */
	assert_int_equal(netd_uapiq_next(&q), NETD_UAPI_START);
	assert_int_equal(netd_uapiq_next(&q), -1);
	assert_true(netd_uapiq_has(&q, NETD_UAPI_START));
	netd_uapiq_done(&q);
	assert_false(netd_uapiq_has(&q, NETD_UAPI_START));
	assert_int_equal(netd_uapiq_next(&q), NETD_UAPI_STATS);
	netd_uapiq_done(&q);
	assert_int_equal(netd_uapiq_next(&q), -1);
}

/* A burst of peer syncs is one request; one that comes while the sync
 * is in flight is sent again after it (the change may be newer than
 * what was sent), and only once. */
static void
test_queue_coalesce(void **state)
{
	struct netd_uapiq q;
	int i;

	(void)state;
	netd_uapiq_init(&q);
	for (i = 0; i < 50; i++)
		netd_uapiq_push(&q, NETD_UAPI_PEERS);
	assert_int_equal(q.n, 1);
	assert_int_equal(netd_uapiq_next(&q), NETD_UAPI_PEERS);
	assert_int_equal(q.n, 0);
	assert_int_equal(netd_uapiq_push(&q, NETD_UAPI_PEERS), 1);
	assert_int_equal(netd_uapiq_push(&q, NETD_UAPI_PEERS), 0);
	assert_int_equal(netd_uapiq_push(&q, NETD_UAPI_STATS), 1);
	assert_int_equal(netd_uapiq_push(&q, NETD_UAPI_PEERS), 0);
	assert_int_equal(q.n, 2);
	/* still the one in flight until it is done */
	assert_int_equal(netd_uapiq_next(&q), -1);
	netd_uapiq_done(&q);
	assert_int_equal(netd_uapiq_next(&q), NETD_UAPI_PEERS);
	netd_uapiq_done(&q);
	assert_int_equal(netd_uapiq_next(&q), NETD_UAPI_STATS);
	netd_uapiq_done(&q);
	assert_int_equal(netd_uapiq_next(&q), -1);
	/* every kind waits at once at most once */
	for (i = 0; i < 3 * NETD_UAPI_KINDS; i++)
		netd_uapiq_push(&q, i % NETD_UAPI_KINDS);
	assert_int_equal(q.n, NETD_UAPI_KINDS);
}

static const char get_answer[] =
    "private_key=e84b5a6d2717c1003a13b431570353dbaca9146cf150c5f8575680feba52027a\n"
    "listen_port=51820\n"
    "public_key=b85996fecc9c7f1fc6d2572a76eda11d59bcd20be8e543b15ce4bd85a8e75a33\n"
    "endpoint=10.0.0.2:51820\n"
    "rx_bytes=100\n"
    "tx_bytes=200\n"
    "allowed_ip=10.210.3.0/24\n"
    "errno=0\n"
    "\n";

/* However the answer arrives, it is complete exactly at its blank line,
 * and what follows it is not part of it. */
static void
test_complete_split(void **state)
{
	size_t len = strlen(get_answer), cut;
	char buf[sizeof(get_answer) + 16];

	(void)state;
	for (cut = 0; cut < len; cut++)
		assert_int_equal(netd_uapi_complete(get_answer, cut, 4096), 0);
	assert_int_equal(netd_uapi_complete(get_answer, len, 4096),
	    (ssize_t)len);
	snprintf(buf, sizeof(buf), "%sjunk\n\n", get_answer);
	assert_int_equal(netd_uapi_complete(buf, strlen(buf), 4096),
	    (ssize_t)len);
	assert_int_equal(netd_uapi_complete("errno=0\n\n", 9, 4096), 9);
	assert_int_equal(netd_uapi_complete("\n", 1, 4096), 1);
	assert_int_equal(netd_uapi_complete("", 0, 4096), 0);
}

static void
test_complete_limits(void **state)
{
	char big[64];

	(void)state;
	memset(big, 'a', sizeof(big));
	big[10] = '\n';
	assert_int_equal(netd_uapi_complete(big, 32, 4096), 0);
	assert_int_equal(netd_uapi_complete(big, 32, 32), -MTS_ERR_TOOBIG);
	assert_int_equal(netd_uapi_complete(big, 64, 32), -MTS_ERR_TOOBIG);
	/* the end within the limit counts even if more came after */
	big[20] = '\n';
	big[21] = '\n';
	assert_int_equal(netd_uapi_complete(big, 64, 32), 22);
	assert_int_equal(netd_uapi_complete("errno=0\0\n\n", 10, 4096),
	    -MTS_ERR_INVAL);
}

struct errno_case {
	const char *rep;
	int want;
};

static const struct errno_case errnos[] = {
	{ "errno=0\n\n", 0 },
	{ "errno=22\n\n", 22 },
	{ "listen_port=1\nerrno=0\n\n", 0 },
	{ "listen_port=1\nerrno=1\n\n", 1 },
	{ "errno=0\nlisten_port=1\n\n", -1 }, /* not the last line */
	{ "errno=\n\n", -1 },
	{ "errno=-1\n\n", -1 },
	{ "errno=0x\n\n", -1 },
	{ "errno=99999999999999999999\n\n", -1 },
	{ "errno=0\n", -1 }, /* incomplete */
	{ "\n", -1 },
	{ "", -1 },
	{ "xerrno=0\n\n", -1 },
	{ get_answer, 0 },
};

static void
test_errno(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++) {
		if (netd_uapi_errno(errnos[i].rep) != errnos[i].want)
			fail_msg("case %zu ('%s'): %d, want %d", i,
			    errnos[i].rep, netd_uapi_errno(errnos[i].rep),
			    errnos[i].want);
	}
}

static void
test_redact(void **state)
{
	char buf[sizeof(get_answer)], *p;
	size_t len;

	(void)state;
	memcpy(buf, get_answer, sizeof(buf));
	netd_uapi_redact(buf);
	assert_null(strstr(buf, "private_key="));
	assert_null(strstr(buf, "e84b5a6d"));
	assert_non_null(strstr(buf, "public_key=b85996fe"));
	assert_int_equal(strncmp(buf, "listen_port=51820\n", 18), 0);
	assert_int_equal(netd_uapi_errno(buf), 0);
	/* the bytes left behind hold no part of the key */
	len = strlen(buf);
	for (p = buf + len; p < buf + sizeof(buf); p++)
		assert_int_equal(*p, 0);
	/* the last line, without a newline; and an answer with none */
	snprintf(buf, sizeof(buf), "a=1\nprivate_key=00");
	netd_uapi_redact(buf);
	assert_string_equal(buf, "a=1\n");
	snprintf(buf, sizeof(buf), "errno=0\n\n");
	netd_uapi_redact(buf);
	assert_string_equal(buf, "errno=0\n\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_order),
		cmocka_unit_test(test_queue_coalesce),
		cmocka_unit_test(test_complete_split),
		cmocka_unit_test(test_complete_limits),
		cmocka_unit_test(test_errno),
		cmocka_unit_test(test_redact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
