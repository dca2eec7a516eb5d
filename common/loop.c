/* loop.c: the one event loop every agent runs on — epoll watchers, a timer heap, a built-in signalfd, once-a-second checks of attached objects and the slow-turn warning (IPC servers and feeds attach through loop_ipc.c, so the loop itself needs no IPC library). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include "log.h"
#include "loop.h"
#include "xmalloc.h"

#define MAX_EVENTS 64
#define CHECK_EVERY_MS 1000
#define MAX_SIG 65

struct mts_watch {
	struct mts_loop *loop;
	int fd;
	uint32_t events;
	const char *name;
	mts_watch_fn fn;
	void *arg;
	int added; /* in the epoll set (a paused watcher is not) */
	int dead;  /* freed at the end of the turn */
	struct mts_watch *prev, *next;
};

struct sig_handler {
	mts_signal_fn fn;
	void *arg;
};

struct turn_hook {
	mts_turn_fn fn;
	void *arg;
};

struct attached {
	void *obj;
	struct mts_watch *w; /* NULL without a descriptor */
	mts_check_fn check;
};

struct mts_loop {
	int epfd;
	int sigfd;
	sigset_t sigs;
	struct mts_watch *sigw;
	struct sig_handler sig[MAX_SIG];
	struct mts_watch *watches; /* every watcher, live or dead */
	struct mts_timer **heap;
	size_t ntimers, captimers;
	uint64_t seq;
	struct turn_hook *hooks;
	size_t nhooks;
	struct attached *att;
	size_t natt;
	mts_time_t next_check;
	mts_time_t now;
	int in_turn;
	int stop;
	int slow_ms;
	/* the slowest handler of the current turn */
	const char *slowest;
	int64_t slowest_ms;
	struct mts_loop_stats stats;
};

/* --- timers: a binary min-heap on (when, seq) ------------------------------ */

static int
timer_before(const struct mts_timer *a, const struct mts_timer *b)
{
	if (a->when != b->when)
		return a->when < b->when;
	return a->seq < b->seq;
}

static void
heap_set(struct mts_loop *l, size_t i, struct mts_timer *t)
{
	l->heap[i] = t;
	t->slot = i;
}

static void
heap_up(struct mts_loop *l, size_t i)
{
	struct mts_timer *t = l->heap[i];

	while (i > 0 && timer_before(t, l->heap[(i - 1) / 2])) {
		heap_set(l, i, l->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(l, i, t);
}

static void
heap_down(struct mts_loop *l, size_t i)
{
	struct mts_timer *t = l->heap[i];
	size_t c;

	while ((c = 2 * i + 1) < l->ntimers) {
		if (c + 1 < l->ntimers &&
		    timer_before(l->heap[c + 1], l->heap[c]))
			c++;
		if (!timer_before(l->heap[c], t))
			break;
		heap_set(l, i, l->heap[c]);
		i = c;
	}
	heap_set(l, i, t);
}

void
mts_timer_init(struct mts_timer *t, const char *name, mts_timer_fn fn,
    void *arg)
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->fn = fn;
	t->arg = arg;
}

void
mts_timer_disarm(struct mts_loop *l, struct mts_timer *t)
{
	struct mts_timer *moved;
	size_t i = t->slot;

	if (!t->armed)
		return;
	t->armed = 0;
	l->ntimers--;
	if (i == l->ntimers)
		return;
	moved = l->heap[l->ntimers];
	heap_set(l, i, moved);
	heap_up(l, i);
	heap_down(l, moved->slot);
}

void
mts_timer_arm(struct mts_loop *l, struct mts_timer *t, mts_time_t when)
{
	mts_timer_disarm(l, t);
	if (l->ntimers == l->captimers) {
		l->captimers = l->captimers ? 2 * l->captimers : 16;
		l->heap =
		    xreallocarray(l->heap, l->captimers, sizeof(*l->heap));
	}
	t->when = when;
	t->seq = l->seq++;
	t->armed = 1;
	heap_set(l, l->ntimers, t);
	l->ntimers++;
	heap_up(l, t->slot);
}

mts_time_t
mts_loop_next_deadline(const struct mts_loop *l)
{
	return l->ntimers ? l->heap[0]->when : MTS_TIME_NEVER;
}

/* --- watchers -------------------------------------------------------------- */

/* Puts w's descriptor in the epoll set with its events, or takes it out
 * when they are 0: epoll reports hang-ups and errors whatever the events,
 * so a paused descriptor whose peer closed would make every turn busy. */
static int
watch_ctl(struct mts_watch *w, uint32_t events)
{
	struct epoll_event ev;
	int op;

	if (events == 0 && !w->added)
		return 0;
	if (events == 0)
		op = EPOLL_CTL_DEL;
	else
		op = w->added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = w;
	if (epoll_ctl(w->loop->epfd, op, w->fd, &ev) < 0)
		return -errno;
	w->added = events != 0;
	return 0;
}

struct mts_watch *
mts_loop_watch(struct mts_loop *l, int fd, uint32_t events, const char *name,
    mts_watch_fn fn, void *arg)
{
	struct mts_watch *w = xcalloc(1, sizeof(*w));
	int rc;

	w->loop = l;
	w->fd = fd;
	w->events = events;
	w->name = name ? name : "watcher";
	w->fn = fn;
	w->arg = arg;
	if (fd < 0 || (rc = watch_ctl(w, events)) < 0) {
		errno = fd < 0 ? EBADF : -rc;
		log_warn("cannot watch %s (fd %d)", w->name, fd);
		free(w);
		return NULL;
	}
	w->next = l->watches;
	if (l->watches)
		l->watches->prev = w;
	l->watches = w;
	return w;
}

int
mts_watch_set(struct mts_watch *w, uint32_t events)
{
	int rc;

	if (w->dead)
		return -EBADF;
	if (events == w->events)
		return 0;
	if ((rc = watch_ctl(w, events)) < 0)
		return rc;
	w->events = events;
	return 0;
}

uint32_t
mts_watch_events(const struct mts_watch *w)
{
	return w->events;
}

static void
watch_unlink_free(struct mts_loop *l, struct mts_watch *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		l->watches = w->next;
	if (w->next)
		w->next->prev = w->prev;
	free(w);
}

void
mts_watch_free(struct mts_watch *w)
{
	struct mts_loop *l;

	if (w == NULL || w->dead)
		return;
	l = w->loop;
	/* the descriptor may already be closed: then the kernel dropped it */
	if (w->added)
		(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->added = 0;
	w->dead = 1;
	if (!l->in_turn)
		watch_unlink_free(l, w);
}

static void
reap_dead(struct mts_loop *l)
{
	struct mts_watch *w = l->watches, *next;

	for (; w != NULL; w = next) {
		next = w->next;
		if (w->dead)
			watch_unlink_free(l, w);
	}
}

/* --- signals --------------------------------------------------------------- */

static void
on_signalfd(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct mts_loop *l = arg;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo < MAX_SIG && l->sig[si.ssi_signo].fn != NULL)
			l->sig[si.ssi_signo].fn(l->sig[si.ssi_signo].arg, &si,
			    now);
	}
}

int
mts_loop_signal(struct mts_loop *l, int signo, mts_signal_fn fn, void *arg)
{
	int fd;

	if (signo <= 0 || signo >= MAX_SIG || signo == SIGKILL ||
	    signo == SIGSTOP)
		return -EINVAL;
	sigaddset(&l->sigs, signo);
	if (sigprocmask(SIG_BLOCK, &l->sigs, NULL) < 0 ||
	    (fd = signalfd(l->sigfd, &l->sigs, SFD_NONBLOCK | SFD_CLOEXEC)) <
	        0) {
		log_warn("cannot take signal %d through the loop", signo);
		return -errno;
	}
	l->sig[signo].fn = fn;
	l->sig[signo].arg = arg;
	if (l->sigfd < 0) {
		l->sigfd = fd;
		l->sigw = mts_loop_watch(l, fd, MTS_LOOP_IN, "signals",
		    on_signalfd, l);
		if (l->sigw == NULL)
			return -EIO;
	}
	return 0;
}

static void
stop_signal(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
	struct mts_loop *l = arg;

	log_info("signal %u: stopping", si->ssi_signo);
	l->stop = 1;
}

static void
ignore_signal(void *arg, const mts_siginfo_t *si, mts_time_t now)
{
}

int
mts_loop_stop_on_signals(struct mts_loop *l)
{
	if (mts_loop_signal(l, SIGTERM, stop_signal, l) < 0 ||
	    mts_loop_signal(l, SIGINT, stop_signal, l) < 0)
		return -1;
	if (l->sig[SIGHUP].fn == NULL &&
	    mts_loop_signal(l, SIGHUP, ignore_signal, l) < 0)
		return -1;
	return 0;
}

/* --- attached objects: a descriptor and a once-a-second check ------------- */

int
mts_loop_attach(struct mts_loop *l, void *obj, int fd, const char *name,
    mts_watch_fn on_ready, mts_check_fn check)
{
	struct mts_watch *w = NULL;

	if (fd >= 0 &&
	    (w = mts_loop_watch(l, fd, MTS_LOOP_IN, name, on_ready, obj)) ==
	        NULL)
		return -1;
	l->att = xreallocarray(l->att, l->natt + 1, sizeof(*l->att));
	l->att[l->natt++] = (struct attached){ obj, w, check };
	return 0;
}

void
mts_loop_detach(struct mts_loop *l, void *obj)
{
	size_t i;

	for (i = 0; i < l->natt; i++) {
		if (l->att[i].obj != obj)
			continue;
		mts_watch_free(l->att[i].w);
		l->att[i] = l->att[--l->natt];
		return;
	}
}

static void
run_checks(struct mts_loop *l, mts_time_t now)
{
	size_t i;

	if (now < l->next_check)
		return;
	for (i = 0; i < l->natt; i++)
		if (l->att[i].check != NULL)
			l->att[i].check(l->att[i].obj);
	l->next_check = now + CHECK_EVERY_MS;
}

/* --- the loop itself -------------------------------------------------------- */

struct mts_loop *
mts_loop_new(void)
{
	struct mts_loop *l = xcalloc(1, sizeof(*l));

	if ((l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		log_warn("epoll_create1");
		free(l);
		return NULL;
	}
	l->sigfd = -1;
	sigemptyset(&l->sigs);
	signal(SIGPIPE, SIG_IGN);
	l->slow_ms = MTS_LOOP_SLOW_MS_DEFAULT;
	return l;
}

void
mts_loop_free(struct mts_loop *l)
{
	if (l == NULL)
		return;
	while (l->watches)
		watch_unlink_free(l, l->watches);
	while (l->ntimers)
		mts_timer_disarm(l, l->heap[0]);
	if (l->sigfd >= 0)
		close(l->sigfd);
	close(l->epfd);
	free(l->heap);
	free(l->hooks);
	free(l->att);
	free(l);
}

int
mts_loop_on_turn(struct mts_loop *l, mts_turn_fn fn, void *arg)
{
	l->hooks = xreallocarray(l->hooks, l->nhooks + 1, sizeof(*l->hooks));
	l->hooks[l->nhooks++] = (struct turn_hook){ fn, arg };
	return 0;
}

void
mts_loop_set_slow_ms(struct mts_loop *l, int ms)
{
	l->slow_ms = ms;
}

void
mts_loop_stop(struct mts_loop *l)
{
	l->stop = 1;
}

int
mts_loop_stopped(const struct mts_loop *l)
{
	return l->stop;
}

mts_time_t
mts_loop_now(const struct mts_loop *l)
{
	return l->in_turn ? l->now : mts_now();
}

void
mts_loop_get_stats(const struct mts_loop *l, struct mts_loop_stats *st)
{
	*st = l->stats;
}

/* Notes how long the handler that started at t0 took; returns the new now. */
static mts_time_t
account(struct mts_loop *l, const char *name, mts_time_t t0)
{
	mts_time_t t1 = mts_now();

	if (t1 - t0 > l->slowest_ms) {
		l->slowest_ms = t1 - t0;
		l->slowest = name;
	}
	l->now = t1;
	return t1;
}

static int
wait_ms(struct mts_loop *l, int max_wait_ms, mts_time_t now)
{
	mts_time_t d = mts_loop_next_deadline(l);

	if (l->natt && l->next_check < d)
		d = l->next_check;
	d = d == MTS_TIME_NEVER ? -1 : (d > now ? d - now : 0);
	if (max_wait_ms >= 0 && (d < 0 || d > max_wait_ms))
		d = max_wait_ms;
	return d > 60000 ? 60000 : (int)d;
}

static int
run_timers(struct mts_loop *l)
{
	/* timers armed by this phase's handlers wait for the next turn, so a
	 * timer re-arming itself in the past cannot hold the loop */
	uint64_t limit = l->seq;
	int ran = 0;

	while (l->ntimers && l->heap[0]->when <= l->now &&
	    l->heap[0]->seq < limit) {
		struct mts_timer *t = l->heap[0];
		const char *name = t->name ? t->name : "timer";
		mts_time_t t0 = l->now;

		/* the handler may free the timer (a call's deadline that ends
		 * the call): nothing of t is read after it */
		mts_timer_disarm(l, t);
		t->fn(t->arg, t0);
		account(l, name, t0);
		ran++;
	}
	return ran;
}

static void
end_turn(struct mts_loop *l, mts_time_t start)
{
	int64_t took = mts_now() - start;

	l->stats.turns++;
	if (took > l->stats.max_turn_ms)
		l->stats.max_turn_ms = took;
	if (l->slow_ms > 0 && took > l->slow_ms) {
		l->stats.slow_turns++;
		log_warnx("loop turn took %lld ms (slowest: %s, %lld ms)",
		    (long long)took, l->slowest ? l->slowest : "?",
		    (long long)l->slowest_ms);
	}
	l->in_turn = 0;
	reap_dead(l);
}

int
mts_loop_run_once(struct mts_loop *l, int max_wait_ms)
{
	struct epoll_event evs[MAX_EVENTS];
	mts_time_t start;
	int n, i, ran = 0;
	size_t h;

	n = epoll_wait(l->epfd, evs, MAX_EVENTS,
	    wait_ms(l, max_wait_ms, mts_now()));
	if (n < 0) {
		if (errno != EINTR)
			return -errno;
		n = 0;
	}
	start = l->now = mts_now();
	l->in_turn = 1;
	l->slowest = NULL;
	l->slowest_ms = 0;
	for (i = 0; i < n; i++) {
		struct mts_watch *w = evs[i].data.ptr;
		mts_time_t t0 = l->now;

		if (w->dead)
			continue;
		w->fn(w->arg, w->fd, evs[i].events, t0);
		account(l, w->name, t0);
		ran++;
	}
	ran += run_timers(l);
	run_checks(l, l->now);
	for (h = 0; h < l->nhooks; h++) {
		mts_time_t t0 = l->now;

		l->hooks[h].fn(l->hooks[h].arg, t0);
		account(l, "turn hook", t0);
	}
	end_turn(l, start);
	return ran;
}

int
mts_loop_run(struct mts_loop *l)
{
	int rc;

	while (!l->stop) {
		if ((rc = mts_loop_run_once(l, -1)) < 0) {
			errno = -rc;
			log_warn("epoll_wait");
			return rc;
		}
	}
	return 0;
}
