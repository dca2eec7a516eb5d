/* shim_watch.c: mts-shim's tasks on the loop — each monitor's status socket and pidfd watched, each task's timer armed at its core's next deadline (shim.c owns the loop itself). */
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "shim.h"

static void
on_task_status(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct shim_task *t = arg;

	shim_task_monitor_status(t->shim, t);
}

static void
on_task_exit(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct shim_task *t = arg;

	shim_task_monitor_exit(t->shim, t);
}

static void
on_task_timer(void *arg, mts_time_t now)
{
	struct shim_task *t = arg;

	shim_task_tick(t->shim, t, now);
}

void
shim_task_loop_init(struct shim *s, struct shim_task *t)
{
	t->shim = s;
	mts_timer_init(&t->timer, "task", on_task_timer, t);
}

static void
watch_fd(struct shim *s, int fd, struct mts_watch **w, const char *name,
    mts_watch_fn fn, void *arg)
{
	if (fd >= 0 && *w == NULL &&
	    (*w = mts_loop_watch(s->loop, fd, MTS_LOOP_IN, name, fn, arg)) ==
	        NULL)
		fatalx("cannot watch a %s descriptor", name);
}

void
shim_task_watch(struct shim_task *t)
{
	struct shim *s = t->shim;
	mts_time_t next = mts_task_next(&t->core);

	watch_fd(s, t->status_fd, &t->status_w, "monitor status",
	    on_task_status, t);
	watch_fd(s, t->pidfd, &t->pid_w, "monitor exit", on_task_exit, t);
	if (next == MTS_TIME_NEVER)
		mts_timer_disarm(s->loop, &t->timer);
	else
		mts_timer_arm(s->loop, &t->timer, next);
}

void
shim_task_unwatch(struct shim_task *t)
{
	mts_watch_free(t->status_w);
	mts_watch_free(t->pid_w);
	t->status_w = t->pid_w = NULL;
	if (t->shim != NULL)
		mts_timer_disarm(t->shim->loop, &t->timer);
}

void
shim_close_watched(int *fd, struct mts_watch **w)
{
	mts_watch_free(*w);
	*w = NULL;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}
