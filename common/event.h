/* event.h: the cluster's event log as a node sees it — one JSON line per event (task placed/started/stopped/failed/replaced, node alive/suspect/dead, owner changed, update started/batch done/paused/rolled back/...), appended by each agent to $MTS_RUNDIR/<agent>/events.jsonl and written to its log as "event {...}"; `mtsctl events` reads them (docs/operations.md, "Events"). */
#ifndef MTS_EVENT_H
#define MTS_EVENT_H

#include <stddef.h>
#include <stdint.h>

#define MTS_EVENT_FILE "events.jsonl" /* rotated to events.jsonl.1 */
#define MTS_EVENT_LINE_MAX 1024       /* one event, with its newline */
#define MTS_EVENT_ROTATE_BYTES (1024 * 1024)

/* One event. Strings are copied (escaped, and cut where too long: type
 * 32, agent and node names 64, service 160, task 64, message 400 bytes
 * of JSON text). NULL or "" fields are left out of the line. */
struct mts_event {
	const char *type;    /* one of mts_event_types */
	const char *service; /* <stack>_<service> */
	const char *task;
	const char *node;    /* the node concerned (id or name) */
	const char *message; /* for people */
};

/* The event types, NULL-terminated: the only ones a line may carry. */
extern const char *const mts_event_types[];
int mts_event_known(const char *type);

/* Formats ev, which happened at wall_ms (Unix ms), seen by agent on node
 * self, as one JSON line ending in "\n" in buf (len bytes, at least
 * MTS_EVENT_LINE_MAX): {"time":"2026-12-01T12:30:05.123Z","ms":...,
 * "node":...,"agent":...,"type":...,"service":...,"task":...,"on":...,
 * "message":...}. Returns the line's length, or -MTS_ERR_INVAL for a type
 * not in the table (or a buffer too small). */
int mts_event_format(char *buf, size_t len, uint64_t wall_ms, const char *self,
    const char *agent, const struct mts_event *ev);

/* An agent's event file. */
struct mts_event_log;

/* Opens dir/events.jsonl for appending (mode 0640), rotating it to
 * events.jsonl.1 once it would grow past max_bytes (0: the default).
 * self and agent name the lines (NULL: $MTS_NODE and log_name()). NULL
 * (logged) when the file cannot be opened: events then only go to the
 * log. */
struct mts_event_log *mts_event_log_open(const char *dir, size_t max_bytes,
    const char *self, const char *agent);
void mts_event_log_close(struct mts_event_log *);

/* Stamps ev with the wall clock, appends it to l (when not NULL) with one
 * write, and logs it at info level as "event {json}". 0, or a negative
 * enum mts_err (an unknown type: nothing written). */
int mts_event_emit(struct mts_event_log *l, const struct mts_event *ev);

#endif
