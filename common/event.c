/* event.c: event lines — the type table, a JSON string escaper that cuts at a length without splitting an escape or a UTF-8 sequence, and the appending, rotating writer agents call. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "event.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "xmalloc.h"

const char *const mts_event_types[] = {
	"task.placed",
	"task.started",
	"task.healthy",
	"task.unhealthy",
	"task.stopped",
	"task.failed",
	"task.replaced",
	"task.updated", /* stopped by an update, rollback or rebalance */
	"node.alive",
	"node.suspect",
	"node.dead",
	"owner.changed",
	"update.started",
	"update.batch_done",
	"update.paused",
	"update.resumed",
	"update.canary_ready",
	"update.rolled_back",
	"update.completed",
	"service.waiting", /* depends_on holds it back */
	"port.conflict",   /* an older service holds its published port */
	NULL,
};

struct mts_event_log {
	int fd;
	char *path, *rotated;
	size_t size, max;
	char *self, *agent;
};

int
mts_event_known(const char *type)
{
	size_t i;

	for (i = 0; type && mts_event_types[i]; i++)
		if (strcmp(type, mts_event_types[i]) == 0)
			return 1;
	return 0;
}

/* The length of the UTF-8 sequence s starts (1 for a stray byte). */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n = *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc0 ? 2 : 1, i;

	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 1;
	return n;
}

/* Appends s as a JSON string (quotes included) to out at *pos, at most
 * max bytes of it; a stray byte that is not UTF-8 becomes U+FFFD. */
static void
put_str(char *out, size_t *pos, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0;

	out[(*pos)++] = '"';
	while (*p) {
		char e[8];
		size_t n = utf8_len(p), el;

		if (*p == '"' || *p == '\\')
			el = (size_t)snprintf(e, sizeof(e), "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			el = (size_t)snprintf(e, sizeof(e), "\\u%04x", *p);
		else if (n == 1 && *p >= 0x80)
			el = (size_t)snprintf(e, sizeof(e), "\\ufffd");
		else
			el = 0;
		if (used + (el ? el : n) > max)
			break;
		if (el)
			memcpy(out + *pos, e, el);
		else
			memcpy(out + *pos, p, n);
		*pos += el ? el : n;
		used += el ? el : n;
		p += n;
	}
	out[(*pos)++] = '"';
}

static void
put_field(char *out, size_t *pos, const char *key, const char *v, size_t max)
{
	if (v == NULL || *v == '\0')
		return;
	*pos += (size_t)snprintf(out + *pos, 16, ",\"%s\":", key);
	put_str(out, pos, v, max);
}

int
mts_event_format(char *buf, size_t len, uint64_t wall_ms, const char *self,
    const char *agent, const struct mts_event *ev)
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;
	size_t pos = 0;
	char when[32];

	/* the cuts below add up to less than MTS_EVENT_LINE_MAX: 52 bytes
	 * of time and ms, 61 of keys, 860 of values with quotes, 2 */
	if (!mts_event_known(ev->type) || len < MTS_EVENT_LINE_MAX)
		return -MTS_ERR_INVAL;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	pos = (size_t)snprintf(buf, len, "{\"time\":\"%s.%03uZ\",\"ms\":%llu",
	    when, (unsigned)(wall_ms % 1000), (unsigned long long)wall_ms);
	put_field(buf, &pos, "node", self, 64);
	put_field(buf, &pos, "agent", agent, 64);
	put_field(buf, &pos, "type", ev->type, 32);
	put_field(buf, &pos, "service", ev->service, 160);
	put_field(buf, &pos, "task", ev->task, 64);
	put_field(buf, &pos, "on", ev->node, 64);
	put_field(buf, &pos, "message", ev->message, 400);
	buf[pos++] = '}';
	buf[pos++] = '\n';
	buf[pos] = '\0';
	return (int)pos;
}

static int
open_file(struct mts_event_log *l)
{
	struct stat st;

	l->fd = open(l->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (l->fd < 0) {
		log_warn("event log %s", l->path);
		return -1;
	}
	l->size = fstat(l->fd, &st) == 0 ? (size_t)st.st_size : 0;
	return 0;
}

struct mts_event_log *
mts_event_log_open(const char *dir, size_t max_bytes, const char *self,
    const char *agent)
{
	struct mts_event_log *l = xcalloc(1, sizeof(*l));
	const char *node = getenv("MTS_NODE");

	l->path = xasprintf("%s/%s", dir, MTS_EVENT_FILE);
	l->rotated = xasprintf("%s/%s.1", dir, MTS_EVENT_FILE);
	l->max = max_bytes ? max_bytes : MTS_EVENT_ROTATE_BYTES;
	l->self = xstrdup(self ? self : node ? node : "");
	l->agent = xstrdup(agent ? agent : log_name() ? log_name() : "");
	if (open_file(l) != 0) {
		l->fd = -1;
		mts_event_log_close(l);
		return NULL;
	}
	return l;
}

void
mts_event_log_close(struct mts_event_log *l)
{
	if (l == NULL)
		return;
	if (l->fd >= 0)
		close(l->fd);
	free(l->path);
	free(l->rotated);
	free(l->self);
	free(l->agent);
	free(l);
}

/* Past the size limit: the file becomes events.jsonl.1 (replacing the
 * one before) and a new one starts. */
static void
rotate(struct mts_event_log *l)
{
	if (rename(l->path, l->rotated) != 0)
		log_warn("event log: rename %s", l->path);
	close(l->fd);
	if (open_file(l) != 0)
		l->fd = -1;
}

int
mts_event_emit(struct mts_event_log *l, const struct mts_event *ev)
{
	char line[MTS_EVENT_LINE_MAX + 8];
	int n = mts_event_format(line, sizeof(line), mts_wall_ms(),
	    l ? l->self : getenv("MTS_NODE"), l ? l->agent : log_name(), ev);

	if (n < 0)
		return n;
	log_info("event %.*s", n - 1, line);
	if (l == NULL || l->fd < 0)
		return 0;
	if (l->size + (size_t)n > l->max)
		rotate(l);
	if (l->fd < 0)
		return -MTS_ERR_IO;
	if (write(l->fd, line, (size_t)n) != n) {
		log_warn("event log %s", l->path);
		return -MTS_ERR_IO;
	}
	l->size += (size_t)n;
	return 0;
}
