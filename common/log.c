/* log.c: leveled logging to stderr (init collects it); warn/fatal append strerror(errno). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *log_procname = "mts";
static int log_level = MTS_LOG_INFO;

void
log_init(const char *name, int level)
{
	const char *env = getenv("MTS_DEBUG");

	log_procname = name;
	log_level = level;
	if (env != NULL && *env != '\0' && *env != '0')
		log_level = MTS_LOG_DEBUG;
}

void
log_setlevel(int level)
{
	log_level = level;
}

int
log_getlevel(void)
{
	return log_level;
}

const char *
log_name(void)
{
	return log_procname;
}

/* Formats one line into a buffer and writes it with a single write(2), so
 * lines of different processes sharing a log file do not interleave. */
static void
vlog(const char *tag, int with_errno, int saved_errno, const char *fmt,
    va_list ap)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	int n, m;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %s[%d]: %s",
	    tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
	    log_procname, (int)getpid(), tag);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n >= sizeof(line) - 2)
		n = sizeof(line) - 2;
	if (with_errno) {
		m = snprintf(line + n, sizeof(line) - n, ": %s",
		    strerror(saved_errno));
		if (m > 0)
			n += m;
		if ((size_t)n >= sizeof(line) - 2)
			n = sizeof(line) - 2;
	}
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, n);
}

#define LOGFN(fn, lvl, tag, witherr) \
	void fn(const char *fmt, ...) \
	{ \
		va_list ap; \
		int e = errno; \
		if (log_level < (lvl)) \
			return; \
		va_start(ap, fmt); \
		vlog(tag, witherr, e, fmt, ap); \
		va_end(ap); \
		errno = e; \
	}

LOGFN(log_warn, MTS_LOG_WARN, "warning: ", 1)
LOGFN(log_warnx, MTS_LOG_WARN, "warning: ", 0)
LOGFN(log_info, MTS_LOG_INFO, "", 0)
LOGFN(log_debug, MTS_LOG_DEBUG, "debug: ", 0)

void
fatal(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vlog("fatal: ", 1, e, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal: ", 0, 0, fmt, ap);
	va_end(ap);
	exit(1);
}
