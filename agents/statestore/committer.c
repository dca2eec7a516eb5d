/* committer.c: the statestore's commit thread — takes the open round the moment the previous one is synced, writes it, and queues it for the loop to answer. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "committer.h"
#include "log.h"
#include "mtstime.h"
#include "round.h"
#include "store.h"
#include "xmalloc.h"

/*
 * Rounds move open -> syncing -> done -> free, and only the thread moves
 * them from open to syncing to done; the loop moves them from done to
 * free. Everything below is guarded by mu. The open round is touched by the
 * loop only between committer_lock and committer_unlock, so the thread
 * never takes a round in the middle of a request (a merge adds several
 * records that must be answered together).
 *
 * Gathering: every fsync costs CPU (RocksDB, the kernel's journal) as well
 * as time, so on a busy node fewer, fuller rounds carry more writes. When a
 * round is done, the callers it answers will most likely write again (a
 * REQ client has one request in flight), and so will the callers already
 * waiting in the open round: the thread expects that many requests and
 * waits for them, but never longer than its last write took. One client
 * never waits (it is alone in every round); 16 clients end up sharing one
 * fsync instead of splitting into several small rounds; a caller that
 * stops writing costs one bounded wait, after which the expectation
 * shrinks to who actually came.
 */
#define GATHER_MIN_US 50
#define GATHER_MAX_US 2000

enum worker_state { W_IDLE, W_GATHER, W_WRITING };

struct committer {
	struct mts_store *st;
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct round *open;	 /* the loop adds writes here */
	struct round *syncing;	 /* being written, or NULL */
	struct round *done_head; /* written, waiting for the loop; FIFO */
	struct round *done_tail;
	struct round *free; /* empty rounds to reuse */
	int failed;	    /* a write failed: take nothing until resumed */
	int quit;
	int efd;
	enum worker_state state;
	size_t expect;	    /* requests the next round waits for */
	int64_t gather_us;  /* longest wait for them: the last write's time */
};

/* An empty round: a reused one or a new one. Called with mu held. */
static struct round *
fresh_round(struct committer *c)
{
	struct round *r = c->free;

	if (r != NULL) {
		c->free = r->next;
		r->next = NULL;
		return r;
	}
	r = xcalloc(1, sizeof(*r));
	round_init(r, c->st);
	return r;
}

/* Waits (mu held) until the open round has the requests expected of it or
 * gather_us has passed. */
static void
gather(struct committer *c)
{
	struct timespec until;
	int64_t ns;

	if (c->open->nreq >= c->expect || c->quit)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	ns = until.tv_nsec + c->gather_us * 1000;
	until.tv_sec += ns / 1000000000;
	until.tv_nsec = ns % 1000000000;
	c->state = W_GATHER;
	while (c->open->nreq < c->expect && !c->quit)
		if (pthread_cond_timedwait(&c->cv, &c->mu, &until) == ETIMEDOUT)
			break;
}

static void *
worker(void *arg)
{
	struct committer *c = arg;
	struct round *r;
	uint64_t one = 1;
	char err[sizeof(r->err)];
	int64_t t0;
	int rc;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		c->state = W_IDLE;
		while (!c->quit && (c->failed || c->open->n == 0))
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->failed || c->open->n == 0)
			break; /* quit, with nothing left to write */
		gather(c);
		c->state = W_WRITING;
		r = c->open;
		c->open = fresh_round(c);
		c->syncing = r;
		pthread_mutex_unlock(&c->mu);

		round_seal(r);
		err[0] = '\0';
		t0 = mts_now_us();
		rc = mts_store_commit(c->st, r->batch, err, sizeof(err));
		t0 = mts_now_us() - t0;

		pthread_mutex_lock(&c->mu);
		c->gather_us = t0 < GATHER_MIN_US   ? GATHER_MIN_US
			       : t0 > GATHER_MAX_US ? GATHER_MAX_US
						    : t0;
		/* who this round answers, and who is already waiting */
		c->expect = r->nreq + c->open->nreq;
		c->syncing = NULL;
		r->rc = rc;
		memcpy(r->err, err, sizeof(err));
		if (rc < 0)
			c->failed = 1;
		if (c->done_tail != NULL)
			c->done_tail->next = r;
		else
			c->done_head = r;
		c->done_tail = r;
		if (write(c->efd, &one, sizeof(one)) != sizeof(one))
			log_warn("committer eventfd");
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

struct committer *
committer_start(struct mts_store *st)
{
	struct committer *c = xcalloc(1, sizeof(*c));
	pthread_condattr_t ca;

	c->st = st;
	pthread_mutex_init(&c->mu, NULL);
	/* gather() waits against the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	c->open = fresh_round(c);
	c->gather_us = GATHER_MIN_US;
	if ((c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		fatal("eventfd");
	if (pthread_create(&c->thr, NULL, worker, c) != 0)
		fatalx("cannot start the commit thread");
	return c;
}

int
committer_fd(const struct committer *c)
{
	return c->efd;
}

struct round *
committer_lock(struct committer *c)
{
	pthread_mutex_lock(&c->mu);
	return c->open;
}

struct round *
committer_syncing(struct committer *c)
{
	return c->syncing;
}

void
committer_unlock(struct committer *c)
{
	/* Wakes the thread only when it waits for exactly this: no system
	 * call per request while it writes or gathers. */
	if (!c->failed &&
	    ((c->state == W_IDLE && c->open->n > 0) ||
		(c->state == W_GATHER && c->open->nreq >= c->expect)))
		pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

struct round *
committer_next_done(struct committer *c, int *rc, char *err, size_t errlen)
{
	struct round *r;
	uint64_t v;

	(void)!read(c->efd, &v, sizeof(v));
	pthread_mutex_lock(&c->mu);
	if ((r = c->done_head) != NULL) {
		c->done_head = r->next;
		if (c->done_head == NULL)
			c->done_tail = NULL;
		r->next = NULL;
	}
	pthread_mutex_unlock(&c->mu);
	if (r != NULL) {
		*rc = r->rc;
		snprintf(err, errlen, "%s", r->err);
	}
	return r;
}

void
committer_release(struct committer *c, struct round *r)
{
	round_reset(r);
	pthread_mutex_lock(&c->mu);
	r->next = c->free;
	c->free = r;
	pthread_mutex_unlock(&c->mu);
}

void
committer_resume(struct committer *c)
{
	pthread_mutex_lock(&c->mu);
	c->failed = 0;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

int
committer_idle(struct committer *c)
{
	int idle;

	pthread_mutex_lock(&c->mu);
	idle = c->open->n == 0 && c->syncing == NULL && c->done_head == NULL;
	pthread_mutex_unlock(&c->mu);
	return idle;
}

static void
free_list(struct round *r)
{
	struct round *next;

	for (; r != NULL; r = next) {
		next = r->next;
		round_free(r);
		free(r);
	}
}

void
committer_stop(struct committer *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	c->quit = 1;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thr, NULL);
	close(c->efd);
	free_list(c->open);
	free_list(c->done_head);
	free_list(c->free);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}
