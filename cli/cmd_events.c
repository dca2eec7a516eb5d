/* cmd_events.c: `mtsctl events [-f] [--since DUR]` — the events this node's agents saw, read from their event files $MTS_RUNDIR/<agent>/events.jsonl (and the rotated .1), in time order, then followed as they are appended. */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compose/compose.h"
#include "event.h"
#include "mtsctl.h"
#include "mtstime.h"
#include "xmalloc.h"

#define FOLLOW_POLL_MS 200
#define READ_CHUNK 65536
#define EV_COLS 7

/* One agent's event file, read up to off (its inode ino). */
struct evfile {
	char *path, *rotated;
	ino_t ino;
	off_t off;
};

struct evset {
	struct evfile *f;
	size_t n;
	uint64_t since_ms; /* events before it are left out */
	json_t *out;       /* collecting (the first read), else NULL */
	struct mtsctl *ctx;
	unsigned bad;       /* lines that were not events */
	int w[EV_COLS - 1]; /* the table's widths (the last column is free) */
};

static const char *const ev_fields[EV_COLS] = { "time", "agent", "type",
	"service", "task", "on", "message" };
static const char *const ev_heads[EV_COLS] = { "TIME", "AGENT", "TYPE",
	"SERVICE", "TASK", "ON", "MESSAGE" };

/* The table's row of e: "-" for a field it does not have. */
static void
ev_values(json_t *e, const char *v[EV_COLS])
{
	size_t i;

	for (i = 0; i < EV_COLS; i++) {
		v[i] = json_string_value(json_object_get(e, ev_fields[i]));
		v[i] = v[i] && *v[i] ? v[i] : "-";
	}
}

static void
print_cols(const struct evset *s, const char *const v[EV_COLS])
{
	size_t i;

	for (i = 0; i < EV_COLS - 1; i++)
		printf("%-*s  ", s->w[i], v[i]);
	printf("%s\n", v[EV_COLS - 1]);
}

/* Widens the columns to the events of all (the first read), so the table
 * lines up; events that come later with -f keep these widths. */
static void
size_cols(struct evset *s, json_t *all)
{
	const char *v[EV_COLS];
	size_t i, j, len;

	for (j = 0; j < EV_COLS - 1; j++)
		s->w[j] = (int)strlen(ev_heads[j]);
	s->w[0] = 24; /* 2026-12-01T15:56:59.621Z */
	for (i = 0; i < json_array_size(all); i++) {
		ev_values(json_array_get(all, i), v);
		for (j = 0; j < EV_COLS - 1; j++)
			if ((len = strlen(v[j])) > (size_t)s->w[j] && len < 80)
				s->w[j] = (int)len;
	}
}

static void
print_event(const struct evset *s, json_t *e)
{
	struct mtsctl *ctx = s->ctx;
	const char *v[EV_COLS];

	if (ctx->fmt == MTSCTL_FMT_JSON) {
		char *line = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);

		printf("%s\n", line);
		free(line);
		return;
	}
	ev_values(e, v);
	print_cols(s, v);
}

/* One line of a file: kept for sorting, printed, or skipped. */
static void
take_line(struct evset *s, const char *line, size_t len)
{
	json_error_t err;
	json_t *e = json_loadb(line, len, 0, &err);
	json_t *ms = e ? json_object_get(e, "ms") : NULL;

	if (e == NULL || !json_is_integer(ms) ||
	    !mts_event_known(json_string_value(json_object_get(e, "type")))) {
		s->bad++;
		json_decref(e);
		return;
	}
	if ((uint64_t)json_integer_value(ms) < s->since_ms)
		json_decref(e);
	else if (s->out)
		json_array_append_new(s->out, e);
	else {
		print_event(s, e);
		json_decref(e);
	}
}

/* Reads path's complete lines from *off on; *off ends after the last. */
static void
read_from(struct evset *s, const char *path, off_t *off)
{
	char *buf = xmalloc(READ_CHUNK + 1);
	size_t have = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || lseek(fd, *off, SEEK_SET) < 0)
		goto out;
	while ((n = read(fd, buf + have, READ_CHUNK - have)) > 0) {
		size_t start = 0, i, end = have + (size_t)n;

		for (i = have; i < end; i++)
			if (buf[i] == '\n') {
				take_line(s, buf + start, i - start);
				start = i + 1;
			}
		*off += (off_t)start;
		have = end - start;
		if (have == READ_CHUNK) { /* a line over the chunk: skip it */
			*off += (off_t)have;
			have = 0;
			s->bad++;
		}
		memmove(buf, buf + start, have);
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* Reads what was appended to f since; a file that was rotated is read to
 * its end under its new name (.1) first. */
static void
read_new(struct evset *s, struct evfile *f)
{
	struct stat st, rt;

	if (stat(f->path, &st) != 0)
		return;
	if (f->ino != 0 && st.st_ino != f->ino) {
		if (stat(f->rotated, &rt) == 0 && rt.st_ino == f->ino)
			read_from(s, f->rotated, &f->off);
		f->off = 0;
	} else if (st.st_size < f->off)
		f->off = 0; /* truncated */
	f->ino = st.st_ino;
	read_from(s, f->path, &f->off);
}

static int
known(const struct evset *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->f[i].path, path) == 0)
			return 1;
	return 0;
}

/* Adds the event file of every agent directory of the run directory
 * not yet in s; with first, reads the rotated files whole. */
static void
scan(struct evset *s, const char *rundir, int first)
{
	DIR *d = opendir(rundir);
	struct dirent *de;

	while (d && (de = readdir(d)) != NULL) {
		struct evfile f = { 0 };
		off_t zero = 0;

		if (de->d_name[0] == '.')
			continue;
		f.path = xasprintf("%s/%s/" MTS_EVENT_FILE, rundir, de->d_name);
		f.rotated = xasprintf("%s.1", f.path);
		if (known(s, f.path) || access(f.path, F_OK) != 0) {
			free(f.path);
			free(f.rotated);
			continue;
		}
		if (first)
			read_from(s, f.rotated, &zero);
		s->f = xreallocarray(s->f, s->n + 1, sizeof(*s->f));
		s->f[s->n++] = f;
		read_new(s, &s->f[s->n - 1]);
	}
	if (d)
		closedir(d);
}

struct sorted {
	json_int_t ms;
	size_t idx; /* ties keep the order they were read in */
	json_t *e;
};

static int
by_time(const void *a, const void *b)
{
	const struct sorted *x = a, *y = b;

	if (x->ms != y->ms)
		return x->ms < y->ms ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Prints the collected events sorted by time. */
static void
print_sorted(const struct evset *s, json_t *all)
{
	size_t n = json_array_size(all), i;
	struct sorted *v = xcalloc(n + 1, sizeof(*v));

	for (i = 0; i < n; i++) {
		v[i].e = json_array_get(all, i);
		v[i].ms = json_integer_value(json_object_get(v[i].e, "ms"));
		v[i].idx = i;
	}
	qsort(v, n, sizeof(*v), by_time);
	for (i = 0; i < n; i++)
		print_event(s, v[i].e);
	free(v);
}

static int
parse(struct mtsctl *ctx, int argc, char **argv, int *follow, uint64_t *since)
{
	static const struct option lo[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t ms;
	int c;

	*follow = 0;
	*since = 0;
	while ((c = getopt_long(argc, argv, "f", lo, NULL)) != -1) {
		if (c == 'f')
			*follow = 1;
		else if (c == 's' && mts_compose_duration(optarg, &ms) == 0 &&
		    ms >= 0) {
			uint64_t now = mts_wall_ms();

			*since = (uint64_t)ms < now ? now - (uint64_t)ms : 0;
		} else {
			if (c == 's')
				mtsctl_err("--since %s: expected a duration "
				           "(30s, 10m, 1h30m)",
				    optarg);
			return mtsctl_usage(ctx);
		}
	}
	return optind == argc ? 0 : mtsctl_usage(ctx);
}

static int
cmd_events(struct mtsctl *ctx, int argc, char **argv)
{
	struct evset s = { .ctx = ctx };
	size_t i;
	int follow, rc;

	if ((rc = parse(ctx, argc, argv, &follow, &s.since_ms)) != 0)
		return rc;
	if (access(ctx->rundir, R_OK | X_OK) != 0) {
		mtsctl_err("%s: %s (is mts-init running with run directory "
		           "%s? set it with -r or MTS_RUNDIR)",
		    ctx->rundir, strerror(errno), ctx->rundir);
		return MTSCTL_EUNREACH;
	}
	s.out = json_array();
	scan(&s, ctx->rundir, 1);
	size_cols(&s, s.out);
	if (ctx->fmt != MTSCTL_FMT_JSON)
		print_cols(&s, ev_heads);
	print_sorted(&s, s.out);
	json_decref(s.out);
	s.out = NULL;
	if (s.bad)
		mtsctl_err("warning: %u lines of the event files were not "
		           "events (skipped)",
		    s.bad);
	while (follow) {
		fflush(stdout);
		usleep(FOLLOW_POLL_MS * 1000);
		for (i = 0; i < s.n; i++)
			read_new(&s, &s.f[i]);
		scan(&s, ctx->rundir, 0);
	}
	for (i = 0; i < s.n; i++) {
		free(s.f[i].path);
		free(s.f[i].rotated);
	}
	free(s.f);
	return 0;
}

static const struct mtsctl_cmd events_cmds[] = {
	{ NULL, cmd_events, "[-f|--follow] [--since DUR]",
	    "what happened in the cluster, as this node saw it",
	    "DESCRIPTION\n"
	    "    Prints the events this node's agents recorded, oldest first:\n"
	    "    task placed, started, stopped, failed, replaced; node alive,\n"
	    "    suspect, dead; owner changed; update started, batch done,\n"
	    "    paused, resumed, canary ready, rolled back, completed; a\n"
	    "    service waiting for its dependencies; a published port\n"
	    "    that a service created earlier holds (netd). Each agent appends\n"
	    "    them to $MTS_RUNDIR/<agent>/events.jsonl (rotated at 1 MiB\n"
	    "    to events.jsonl.1) and writes each to its log as\n"
	    "    `event {...}`, so `grep ' event '` finds them there too.\n"
	    "    Events are this node's view: another node may have seen a\n"
	    "    task fail that this one only sees replaced.\n"
	    "    Exits 3 when the run directory cannot be read.\n"
	    "\n"
	    "    -o json prints one JSON object per line: time (UTC), ms\n"
	    "    (Unix ms), node, agent, type, and service, task, on (the node\n"
	    "    concerned), message where they apply.\n"
	    "\nOPTIONS\n"
	    "    -f, --follow    keep printing events as they happen\n"
	    "    --since DUR     only events of the last DUR (30s, 10m, 1h30m;\n"
	    "                    default: every event the files hold)\n"
	    "\nEXAMPLES\n"
	    "    mtsctl events --since 10m\n"
	    "    mtsctl -o json events -f | grep '\"update\\.'\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_events = { "events",
	"the cluster's events as this node saw them", events_cmds };
