/* test_loop.c: unit tests of common/loop.c — watchers, the timer heap, signals, removal from inside handlers, the slow-turn count. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "loop.h"
#include "mtstime.h"

struct rec {
	int order[64];
	int n;
};

struct tctx {
	struct rec *rec;
	int id;
	struct mts_loop *loop;
	struct mts_timer *rearm; /* re-armed in the past from its own handler */
};

static void
on_timer(void *arg, mts_time_t now)
{
	struct tctx *c = arg;

	c->rec->order[c->rec->n++] = c->id;
	if (c->rearm)
		mts_timer_arm(c->loop, c->rearm, now - 5);
}

/* Timers fire in deadline order, ties in arming order; disarm and re-arm
 * move them; a timer re-armed into the past waits for the next turn. */
static void
test_timer_order(void **state)
{
	struct mts_loop *l = mts_loop_new();
	struct mts_timer t[6];
	struct tctx c[6];
	struct rec r = { .n = 0 };
	mts_time_t now = mts_now();
	mts_time_t when[6] = { 30, 10, 20, 10, 5, 40 };
	int i;

	for (i = 0; i < 6; i++) {
		c[i] = (struct tctx){ .rec = &r, .id = i, .loop = l };
		mts_timer_init(&t[i], "t", on_timer, &c[i]);
		mts_timer_arm(l, &t[i], now + when[i]);
	}
	mts_timer_disarm(l, &t[5]);
	mts_timer_arm(l, &t[4], now + 25); /* moved later */
	assert_int_equal(mts_loop_next_deadline(l), now + 10);
	while (r.n < 5)
		assert_true(mts_loop_run_once(l, 100) >= 0);
	assert_int_equal(r.order[0], 1);
	assert_int_equal(r.order[1], 3);
	assert_int_equal(r.order[2], 2);
	assert_int_equal(r.order[3], 4);
	assert_int_equal(r.order[4], 0);
	assert_false(t[5].armed);
	assert_int_equal(mts_loop_next_deadline(l), MTS_TIME_NEVER);

	/* self re-arming in the past: once per turn, not forever */
	r.n = 0;
	c[0].rearm = &t[0];
	mts_timer_arm(l, &t[0], now);
	assert_int_equal(mts_loop_run_once(l, 0), 1);
	assert_int_equal(mts_loop_run_once(l, 0), 1);
	assert_int_equal(r.n, 2);
	mts_timer_disarm(l, &t[0]);
	mts_loop_free(l);
}

static mts_time_t fired_when[1000];
static int nfired;

static void
on_heap_timer(void *arg, mts_time_t now)
{
	struct mts_timer *t = arg;

	fired_when[nfired++] = t->when;
}

/* Many timers armed at random, some disarmed, some re-armed: they fire in
 * deadline order, each once. */
static void
test_timer_heap_random(void **state)
{
	struct mts_loop *l = mts_loop_new();
	enum { N = 500 };
	static struct mts_timer t[N];
	mts_time_t base = mts_now() - 100000;
	unsigned seed = 42;
	int i, armed = 0;

	for (i = 0; i < N; i++) {
		mts_timer_init(&t[i], "t", on_heap_timer, &t[i]);
		mts_timer_arm(l, &t[i], base + rand_r(&seed) % 1000);
	}
	for (i = 0; i < N; i += 3)
		mts_timer_disarm(l, &t[i]);
	for (i = 1; i < N; i += 7)
		mts_timer_arm(l, &t[i], base + rand_r(&seed) % 1000);
	for (i = 0; i < N; i++)
		armed += t[i].armed;
	nfired = 0;
	assert_int_equal(mts_loop_run_once(l, 0), armed);
	assert_int_equal(nfired, armed);
	for (i = 1; i < nfired; i++)
		assert_true(fired_when[i - 1] <= fired_when[i]);
	assert_int_equal(mts_loop_next_deadline(l), MTS_TIME_NEVER);
	mts_loop_free(l);
}

struct wctx {
	struct mts_watch *self, *other;
	int fd;
	int calls;
	int free_other;
};

static void
on_read(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct wctx *w = arg;
	char b[16];

	w->calls++;
	(void)read(fd, b, sizeof(b));
	if (w->free_other) {
		mts_watch_free(w->other);
		w->free_other = 0;
	}
}

/* A watcher freed by another handler of the same turn is not called. */
static void
test_watch_free_in_turn(void **state)
{
	struct mts_loop *l = mts_loop_new();
	int a[2], b[2];
	struct wctx wa = { 0 }, wb = { 0 };

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	wa.self = mts_loop_watch(l, a[0], MTS_LOOP_IN, "a", on_read, &wa);
	wb.self = mts_loop_watch(l, b[0], MTS_LOOP_IN, "b", on_read, &wb);
	wa.other = wb.self;
	wb.other = wa.self;
	wa.free_other = wb.free_other = 1;
	assert_int_equal(write(a[1], "x", 1), 1);
	assert_int_equal(write(b[1], "x", 1), 1);
	assert_int_equal(mts_loop_run_once(l, 100), 1);
	assert_int_equal(wa.calls + wb.calls, 1);
	/* pausing and resuming */
	if (wa.calls) {
		assert_int_equal(mts_watch_set(wa.self, 0), 0);
		assert_int_equal(write(a[1], "x", 1), 1);
		assert_int_equal(mts_loop_run_once(l, 20), 0);
		assert_int_equal(mts_watch_set(wa.self, MTS_LOOP_IN), 0);
		assert_int_equal(mts_loop_run_once(l, 100), 1);
		assert_int_equal(wa.calls, 2);
	}
	mts_loop_free(l);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* A paused watcher is not called even when its peer hung up (epoll reports
 * hang-ups whatever the events asked for: the loop would spin). */
static void
test_paused_hangup(void **state)
{
	struct mts_loop *l = mts_loop_new();
	struct wctx w = { 0 };
	int p[2];

	assert_int_equal(pipe(p), 0);
	w.self = mts_loop_watch(l, p[0], MTS_LOOP_IN, "p", on_read, &w);
	assert_non_null(w.self);
	assert_int_equal(mts_watch_set(w.self, 0), 0);
	close(p[1]);
	assert_int_equal(mts_loop_run_once(l, 20), 0);
	assert_int_equal(w.calls, 0);
	assert_int_equal(mts_watch_set(w.self, MTS_LOOP_IN), 0);
	assert_int_equal(mts_loop_run_once(l, 100), 1);
	assert_int_equal(w.calls, 1);
	mts_watch_free(w.self);
	/* registered paused from the start: the same */
	w.self = mts_loop_watch(l, p[0], 0, "p", on_read, &w);
	assert_non_null(w.self);
	assert_int_equal(mts_loop_run_once(l, 20), 0);
	mts_watch_free(w.self);
	mts_loop_free(l);
	close(p[0]);
}

struct actx {
	int ready, checks;
};

static void
on_att_ready(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct actx *a = arg;
	char b[16];

	a->ready++;
	(void)read(fd, b, sizeof(b));
}

static void
on_att_check(void *arg)
{
	((struct actx *)arg)->checks++;
}

/* An attached object's descriptor is watched and its check runs about
 * once a second (the loop wakes up for it); detached, neither. */
static void
test_attach(void **state)
{
	struct mts_loop *l = mts_loop_new();
	struct actx a = { 0 };
	mts_time_t t0;
	int p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(mts_loop_attach(l, &a, p[0], "att", on_att_ready,
	                     on_att_check),
	    0);
	assert_int_equal(mts_loop_run_once(l, 0), 0);
	assert_int_equal(a.checks, 1);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(mts_loop_run_once(l, 100), 1);
	assert_int_equal(a.ready, 1);
	assert_int_equal(a.checks, 1);
	t0 = mts_now();
	while (a.checks < 2)
		assert_true(mts_loop_run_once(l, -1) >= 0);
	assert_true(mts_now() - t0 >= 900 && mts_now() - t0 < 1500);
	mts_loop_detach(l, &a);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(mts_loop_run_once(l, 20), 0);
	assert_int_equal(a.ready, 1);
	assert_int_equal(mts_loop_next_deadline(l), MTS_TIME_NEVER);
	mts_loop_free(l);
	close(p[0]);
	close(p[1]);
}

static int got_sig;

static void
on_usr1(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	got_sig = (int)si->ssi_signo;
	mts_loop_stop(arg);
}

static void
on_slow(void *arg, mts_time_t now)
{
	usleep(60 * 1000);
}

/* Signals arrive through the loop; a slow turn is counted. */
static void
test_signal_and_slow(void **state)
{
	struct mts_loop *l = mts_loop_new();
	struct mts_loop_stats st;
	struct mts_timer t;

	assert_int_equal(mts_loop_signal(l, SIGUSR1, on_usr1, l), 0);
	assert_int_equal(mts_loop_stop_on_signals(l), 0);
	kill(getpid(), SIGUSR1);
	assert_int_equal(mts_loop_run(l), 0);
	assert_int_equal(got_sig, SIGUSR1);
	assert_true(mts_loop_stopped(l));

	mts_loop_set_slow_ms(l, 30);
	mts_timer_init(&t, "slow", on_slow, NULL);
	mts_timer_arm(l, &t, mts_now());
	assert_int_equal(mts_loop_run_once(l, 100), 1);
	mts_loop_get_stats(l, &st);
	assert_int_equal(st.slow_turns, 1);
	assert_true(st.max_turn_ms >= 60);
	mts_loop_free(l);
}

/* A timer embedded in the object its handler frees (a call whose deadline
 * ends it): the loop reads nothing of the timer after the handler, so
 * ASan (make check) sees no use after free; other timers still run. */
struct owned {
	struct mts_timer t;
	int *fired;
};

static void
free_owner(void *arg, mts_time_t now)
{
	struct owned *o = arg;

	(*o->fired)++;
	memset(o, 0xa5, sizeof(*o));
	free(o);
}

static void
test_timer_freed_by_handler(void **state)
{
	struct mts_loop *l = mts_loop_new();
	int fired = 0, i;

	for (i = 0; i < 3; i++) {
		struct owned *o = calloc(1, sizeof(*o));

		o->fired = &fired;
		mts_timer_init(&o->t, "owned", free_owner, o);
		mts_timer_arm(l, &o->t, mts_now() - 1);
	}
	assert_int_equal(mts_loop_run_once(l, 0), 3);
	assert_int_equal(fired, 3);
	assert_int_equal(mts_loop_next_deadline(l), MTS_TIME_NEVER);
	mts_loop_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timer_order),
		cmocka_unit_test(test_timer_heap_random),
		cmocka_unit_test(test_watch_free_in_turn),
		cmocka_unit_test(test_paused_hangup),
		cmocka_unit_test(test_attach),
		cmocka_unit_test(test_signal_and_slow),
		cmocka_unit_test(test_timer_freed_by_handler),
	};

	log_init("test_loop", MTS_LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
