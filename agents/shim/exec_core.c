/* exec_core.c: mts-shim's exec sessions as pure state — bounded queues, finish and abandon rules, early exits (no clock, no I/O: time comes in). */
#include <string.h>

#include "agents/shim/exec_core.h"

void
mts_exec_init(struct mts_exec *e, uint64_t id, int tty, int oneshot,
    mts_time_t idle, mts_time_t now)
{
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->tty = tty;
	e->oneshot = oneshot;
	e->out_max = oneshot ? MTS_EXEC_ONESHOT_MAX : MTS_EXEC_OUT_MAX;
	mts_buf_init(&e->out);
	mts_buf_init(&e->in);
	e->idle = idle;
	e->last_call = now;
	e->exit_code = -1;
}

void
mts_exec_free(struct mts_exec *e)
{
	if (e == NULL)
		return;
	mts_buf_free(&e->out);
	mts_buf_free(&e->in);
}

int
mts_exec_want_read(const struct mts_exec *e)
{
	return !e->eof && (e->oneshot || e->out.len < e->out_max);
}

size_t
mts_exec_room(const struct mts_exec *e)
{
	if (e->oneshot)
		return 65536;
	return e->out.len < e->out_max ? e->out_max - e->out.len : 0;
}

void
mts_exec_output(struct mts_exec *e, const void *p, size_t n)
{
	size_t room = e->out.len < e->out_max ? e->out_max - e->out.len : 0;

	if (n > room) {
		e->truncated = 1;
		n = room;
	}
	if (n > 0)
		mts_buf_put(&e->out, p, n);
}

size_t
mts_exec_stdin(struct mts_exec *e, const void *p, size_t n)
{
	size_t room =
	    e->in.len < MTS_EXEC_IN_MAX ? MTS_EXEC_IN_MAX - e->in.len : 0;

	if (e->close_in || e->exited)
		return n; /* nobody reads it any more: taken and dropped */
	if (n > room)
		n = room;
	if (n > 0)
		mts_buf_put(&e->in, p, n);
	return n;
}

void
mts_exec_stdin_written(struct mts_exec *e, size_t n)
{
	if (n >= e->in.len) {
		e->in.len = 0;
		return;
	}
	memmove(e->in.data, e->in.data + n, e->in.len - n);
	e->in.len -= n;
}

void
mts_exec_take(struct mts_exec *e, size_t max, struct mts_buf *dst)
{
	size_t n = e->out.len < max ? e->out.len : max;

	if (n == 0)
		return;
	mts_buf_put(dst, e->out.data, n);
	memmove(e->out.data, e->out.data + n, e->out.len - n);
	e->out.len -= n;
}

void
mts_exec_exit(struct mts_exec *e, int code, mts_time_t now)
{
	if (e->exited)
		return;
	e->exited = 1;
	e->exit_code = code;
	e->exited_at = now;
	e->in.len = 0; /* nobody will read it */
}

void
mts_exec_set_eof(struct mts_exec *e)
{
	e->eof = 1;
}

int
mts_exec_drain_over(const struct mts_exec *e, mts_time_t now)
{
	return e->exited && !e->eof && mts_exec_want_read(e) &&
	    now >= e->exited_at + MTS_EXEC_DRAIN_MS;
}

int
mts_exec_finished(const struct mts_exec *e)
{
	return e->exited && e->eof && e->out.len == 0;
}

int
mts_exec_abandoned(const struct mts_exec *e, mts_time_t now)
{
	return now >= e->last_call + e->idle;
}

mts_time_t
mts_exec_next(const struct mts_exec *e)
{
	mts_time_t t = e->last_call + e->idle;

	/* the drain deadline matters only while there is room to read */
	if (e->exited && !e->eof && mts_exec_want_read(e) &&
	    e->exited_at + MTS_EXEC_DRAIN_MS < t)
		t = e->exited_at + MTS_EXEC_DRAIN_MS;
	return t;
}

/* --- exits reaped early ----------------------------------------------- */

static void
exits_expire(struct mts_exits *x, mts_time_t now)
{
	size_t i;

	for (i = 0; i < x->n;) {
		if (now >= x->e[i].at + MTS_EXITS_TTL)
			x->e[i] = x->e[--x->n];
		else
			i++;
	}
}

void
mts_exits_put(struct mts_exits *x, pid_t pid, int status, mts_time_t now)
{
	size_t i, old = 0;

	exits_expire(x, now);
	if (x->n == MTS_EXITS_MAX) { /* the oldest makes room */
		for (i = 1; i < x->n; i++)
			if (x->e[i].at < x->e[old].at)
				old = i;
		x->e[old] = x->e[--x->n];
	}
	x->e[x->n].pid = pid;
	x->e[x->n].status = status;
	x->e[x->n].at = now;
	x->n++;
}

int
mts_exits_take(struct mts_exits *x, pid_t pid, int *status, mts_time_t now)
{
	size_t i;

	exits_expire(x, now);
	for (i = 0; i < x->n; i++)
		if (x->e[i].pid == pid) {
			*status = x->e[i].status;
			x->e[i] = x->e[--x->n];
			return 1;
		}
	return 0;
}
