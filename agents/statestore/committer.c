/* committer.c: the statestore's fsync worker; the loop submits a batch and hears back on an eventfd. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "committer.h"
#include "log.h"
#include "store.h"
#include "xmalloc.h"

struct committer {
	struct mts_store *st;
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mts_store_batch *job; /* submitted, not yet written */
	int busy;                    /* a job is submitted or finished unread */
	int finished;
	int rc;
	char err[256];
	int efd;
	int quit;
};

static void *
worker(void *arg)
{
	struct committer *c = arg;
	struct mts_store_batch *job;
	uint64_t one = 1;
	char err[256];
	int rc;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->job == NULL && !c->quit)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->job == NULL)
			break;
		job = c->job;
		pthread_mutex_unlock(&c->mu);
		err[0] = '\0';
		rc = mts_store_commit(c->st, job, err, sizeof(err));
		pthread_mutex_lock(&c->mu);
		c->job = NULL;
		c->rc = rc;
		memcpy(c->err, err, sizeof(err));
		c->finished = 1;
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

	c->st = st;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
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

int
committer_busy(const struct committer *c)
{
	return c->busy;
}

void
committer_submit(struct committer *c, struct mts_store_batch *b)
{
	pthread_mutex_lock(&c->mu);
	if (c->busy)
		fatalx("committer: a batch is already in flight");
	c->job = b;
	c->busy = 1;
	c->finished = 0;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

int
committer_done(struct committer *c, int *rc, char *err, size_t errlen)
{
	uint64_t v;
	int done;

	(void)!read(c->efd, &v, sizeof(v));
	pthread_mutex_lock(&c->mu);
	done = c->busy && c->finished;
	if (done) {
		*rc = c->rc;
		snprintf(err, errlen, "%s", c->err);
		c->busy = 0;
		c->finished = 0;
	}
	pthread_mutex_unlock(&c->mu);
	return done;
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
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}
