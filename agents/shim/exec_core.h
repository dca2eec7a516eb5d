/* exec_core.h: mts-shim's exec sessions as pure state — bounded output and stdin queues, when a session is finished or abandoned, and exits reaped before their session knew the pid. */
#ifndef MTS_EXEC_CORE_H
#define MTS_EXEC_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "mtstime.h"

#define MTS_EXEC_OUT_MAX (256u << 10)   /* output buffered per session */
#define MTS_EXEC_ONESHOT_MAX (1u << 20) /* output kept by a one-shot exec */
#define MTS_EXEC_IN_MAX (64u << 10)     /* stdin buffered per session */
#define MTS_EXEC_MAX 64                 /* sessions at once */
#define MTS_EXEC_WAIT_MAX 1000          /* longest ExecIo long-poll, ms */
/* After the process ended, output still in flight (a pty's buffers) is
 * read for this long unless EOF comes first (a background child may hold
 * the terminal open for ever). */
#define MTS_EXEC_DRAIN_MS 250

struct mts_exec {
	uint64_t id;
	int tty;
	int oneshot;        /* excess output is dropped, not back-pressured */
	struct mts_buf out; /* produced, not yet taken */
	size_t out_max;
	int truncated;     /* oneshot: output was dropped */
	struct mts_buf in; /* stdin not yet written */
	int close_in;      /* close stdin once `in` is written */
	int exited;        /* the process ended: exit_code is valid */
	int exit_code;
	mts_time_t exited_at;
	int eof;              /* no more output will come */
	mts_time_t last_call; /* the client's last request */
	mts_time_t idle;      /* abandoned after this long without a call */
};

void mts_exec_init(struct mts_exec *, uint64_t id, int tty, int oneshot,
    mts_time_t idle, mts_time_t now);
void mts_exec_free(struct mts_exec *);
/* Whether the loop should read the process's output now (back-pressure:
 * not while the buffer is full, unless oneshot). */
int mts_exec_want_read(const struct mts_exec *);
/* Bytes the next read may take (the free room; a oneshot always reads). */
size_t mts_exec_room(const struct mts_exec *);
/* Keeps output read from the process (a oneshot drops what is over its
 * bound and marks the session truncated). */
void mts_exec_output(struct mts_exec *, const void *p, size_t n);
/* Queues stdin; returns how many bytes were taken (0..n). */
size_t mts_exec_stdin(struct mts_exec *, const void *p, size_t n);
/* Removes n written bytes from the head of the stdin queue. */
void mts_exec_stdin_written(struct mts_exec *, size_t n);
/* Moves up to max bytes of output into dst (appended). */
void mts_exec_take(struct mts_exec *, size_t max, struct mts_buf *dst);
void mts_exec_exit(struct mts_exec *, int code, mts_time_t now);
/* The output source closed, or has nothing more after the drain time. */
void mts_exec_set_eof(struct mts_exec *);
int mts_exec_drain_over(const struct mts_exec *, mts_time_t now);
/* Exited, every output byte read and taken: the last reply carries the
 * exit code, then the session goes. */
int mts_exec_finished(const struct mts_exec *);
int mts_exec_abandoned(const struct mts_exec *, mts_time_t now);
/* The earliest time the loop must look at the session again. */
mts_time_t mts_exec_next(const struct mts_exec *);

/* Exit statuses of processes the loop reaped before any session claimed
 * their pid (a terminal exec's process is reparented to the shim and may
 * end before runc has written its pid file). */
#define MTS_EXITS_MAX 64
#define MTS_EXITS_TTL 30000

struct mts_exits {
	struct {
		pid_t pid;
		int status;
		mts_time_t at;
	} e[MTS_EXITS_MAX];
	size_t n;
};

void mts_exits_put(struct mts_exits *, pid_t pid, int status, mts_time_t now);
/* 1 and *status if pid's exit is remembered (and forgets it), else 0. */
int mts_exits_take(struct mts_exits *, pid_t pid, int *status, mts_time_t now);

#endif
