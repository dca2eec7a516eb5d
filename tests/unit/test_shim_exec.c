/* test_shim_exec.c: the shim's exec sessions as pure state — output bound and back-pressure, one-shot truncation, stdin bound, finish, drain and abandon times, early exits remembered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agents/shim/exec_core.h"

static uint8_t big[MTS_EXEC_OUT_MAX + 4096];

static void
test_output_bound(void **state)
{
	struct mts_exec e;
	struct mts_buf b;

	mts_exec_init(&e, 7, 0, 0, 30000, 1000);
	assert_true(mts_exec_want_read(&e));
	assert_int_equal(mts_exec_room(&e), MTS_EXEC_OUT_MAX);
	mts_exec_output(&e, big, MTS_EXEC_OUT_MAX - 10);
	assert_int_equal(mts_exec_room(&e), 10);
	mts_exec_output(&e, big, 10);
	/* full: the loop stops reading the process (back-pressure) */
	assert_false(mts_exec_want_read(&e));
	assert_int_equal(mts_exec_room(&e), 0);
	assert_false(e.truncated);
	mts_buf_init(&b);
	mts_exec_take(&e, 1000, &b);
	assert_int_equal(b.len, 1000);
	assert_int_equal(e.out.len, MTS_EXEC_OUT_MAX - 1000);
	assert_true(mts_exec_want_read(&e));
	assert_int_equal(mts_exec_room(&e), 1000);
	mts_buf_free(&b);
	mts_exec_free(&e);
}

static void
test_take_keeps_order(void **state)
{
	struct mts_exec e;
	struct mts_buf b;

	mts_exec_init(&e, 7, 0, 0, 30000, 0);
	mts_exec_output(&e, "hello ", 6);
	mts_exec_output(&e, "world", 5);
	mts_buf_init(&b);
	mts_exec_take(&e, 4, &b);
	mts_exec_take(&e, 100, &b);
	assert_int_equal(b.len, 11);
	assert_memory_equal(b.data, "hello world", 11);
	assert_int_equal(e.out.len, 0);
	mts_exec_take(&e, 100, &b); /* nothing left: nothing added */
	assert_int_equal(b.len, 11);
	mts_buf_free(&b);
	mts_exec_free(&e);
}

static void
test_oneshot_truncates(void **state)
{
	struct mts_exec e;
	size_t i;

	mts_exec_init(&e, 1, 0, 1, 30000, 0);
	for (i = 0; i < MTS_EXEC_ONESHOT_MAX / sizeof(big) + 2; i++) {
		/* a one-shot never stops reading: it drops the excess */
		assert_true(mts_exec_want_read(&e));
		assert_true(mts_exec_room(&e) > 0);
		mts_exec_output(&e, big, sizeof(big));
	}
	assert_int_equal(e.out.len, MTS_EXEC_ONESHOT_MAX);
	assert_true(e.truncated);
	mts_exec_free(&e);
}

static void
test_stdin_bound(void **state)
{
	struct mts_exec e;

	mts_exec_init(&e, 1, 0, 0, 30000, 0);
	assert_int_equal(mts_exec_stdin(&e, big, 1000), 1000);
	assert_int_equal(mts_exec_stdin(&e, big, MTS_EXEC_IN_MAX),
	    MTS_EXEC_IN_MAX - 1000);
	assert_int_equal(mts_exec_stdin(&e, big, 10), 0);
	mts_exec_stdin_written(&e, 600);
	assert_int_equal(e.in.len, MTS_EXEC_IN_MAX - 600);
	assert_int_equal(mts_exec_stdin(&e, big, 1000), 600);
	mts_exec_stdin_written(&e, MTS_EXEC_IN_MAX * 2);
	assert_int_equal(e.in.len, 0);
	/* once the process ended, stdin is taken and dropped */
	mts_exec_exit(&e, 0, 5);
	assert_int_equal(mts_exec_stdin(&e, big, 100), 100);
	assert_int_equal(e.in.len, 0);
	mts_exec_free(&e);
}

static void
test_stdin_order(void **state)
{
	struct mts_exec e;

	mts_exec_init(&e, 1, 0, 0, 30000, 0);
	mts_exec_stdin(&e, "abcdef", 6);
	mts_exec_stdin_written(&e, 2);
	mts_exec_stdin(&e, "gh", 2);
	assert_int_equal(e.in.len, 6);
	assert_memory_equal(e.in.data, "cdefgh", 6);
	mts_exec_free(&e);
}

static void
test_finish(void **state)
{
	struct mts_exec e;
	struct mts_buf b;

	mts_exec_init(&e, 1, 1, 0, 30000, 0);
	mts_exec_output(&e, "x", 1);
	mts_exec_exit(&e, 3, 100);
	assert_false(mts_exec_finished(&e)); /* output may still come */
	mts_exec_set_eof(&e);
	assert_false(mts_exec_finished(&e)); /* not all taken yet */
	mts_buf_init(&b);
	mts_exec_take(&e, 10, &b);
	assert_true(mts_exec_finished(&e));
	assert_int_equal(e.exit_code, 3);
	mts_exec_exit(&e, 9, 200); /* the first exit counts */
	assert_int_equal(e.exit_code, 3);
	mts_buf_free(&b);
	mts_exec_free(&e);
}

static void
test_drain_and_abandon(void **state)
{
	struct mts_exec e;

	mts_exec_init(&e, 1, 1, 0, 30000, 1000);
	assert_int_equal(mts_exec_next(&e), 31000);
	assert_false(mts_exec_abandoned(&e, 30999));
	assert_true(mts_exec_abandoned(&e, 31000));
	e.last_call = 5000; /* a call moves the idle deadline */
	assert_false(mts_exec_abandoned(&e, 31000));
	assert_false(mts_exec_drain_over(&e, 100000)); /* still running */
	mts_exec_exit(&e, 0, 6000);
	assert_int_equal(mts_exec_next(&e), 6000 + MTS_EXEC_DRAIN_MS);
	assert_false(mts_exec_drain_over(&e, 6000 + MTS_EXEC_DRAIN_MS - 1));
	assert_true(mts_exec_drain_over(&e, 6000 + MTS_EXEC_DRAIN_MS));
	mts_exec_set_eof(&e);
	assert_false(mts_exec_drain_over(&e, 7000));
	assert_int_equal(mts_exec_next(&e), 35000);
	mts_exec_free(&e);
}

/* Output still in flight when the process ends is never cut off by the
 * drain time while the buffer is full: it waits for the client. */
static void
test_drain_waits_for_room(void **state)
{
	struct mts_exec e;
	struct mts_buf b;

	mts_exec_init(&e, 1, 0, 0, 30000, 0);
	mts_exec_output(&e, big, MTS_EXEC_OUT_MAX);
	mts_exec_exit(&e, 0, 100);
	assert_false(mts_exec_drain_over(&e, 100000));
	assert_int_equal(mts_exec_next(&e), 30000); /* no busy wake-ups */
	mts_buf_init(&b);
	mts_exec_take(&e, 1, &b);
	assert_true(mts_exec_drain_over(&e, 100 + MTS_EXEC_DRAIN_MS));
	assert_int_equal(mts_exec_next(&e), 100 + MTS_EXEC_DRAIN_MS);
	mts_buf_free(&b);
	mts_exec_free(&e);
}

static void
test_exits(void **state)
{
	struct mts_exits x = { .n = 0 };
	int st = 0, i;

	mts_exits_put(&x, 100, 7, 0);
	mts_exits_put(&x, 101, 8, 10);
	assert_false(mts_exits_take(&x, 102, &st, 20));
	assert_true(mts_exits_take(&x, 101, &st, 20));
	assert_int_equal(st, 8);
	assert_false(mts_exits_take(&x, 101, &st, 20)); /* taken once */
	/* forgotten after the TTL */
	assert_false(mts_exits_take(&x, 100, &st, MTS_EXITS_TTL));
	assert_int_equal(x.n, 0);
	/* full: the oldest makes room */
	for (i = 0; i < MTS_EXITS_MAX + 1; i++)
		mts_exits_put(&x, 1000 + i, i, 100 + i);
	assert_int_equal(x.n, MTS_EXITS_MAX);
	assert_false(mts_exits_take(&x, 1000, &st, 200));
	assert_true(mts_exits_take(&x, 1001, &st, 200));
	assert_int_equal(st, 1);
	assert_true(mts_exits_take(&x, 1000 + MTS_EXITS_MAX, &st, 200));
	assert_int_equal(st, MTS_EXITS_MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_bound),
		cmocka_unit_test(test_take_keeps_order),
		cmocka_unit_test(test_oneshot_truncates),
		cmocka_unit_test(test_stdin_bound),
		cmocka_unit_test(test_stdin_order),
		cmocka_unit_test(test_finish),
		cmocka_unit_test(test_drain_and_abandon),
		cmocka_unit_test(test_drain_waits_for_room),
		cmocka_unit_test(test_exits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
