/* log.h: leveled logging for every agent, each line prefixed by the agent's name. */
#ifndef MTS_LOG_H
#define MTS_LOG_H

#include <stdarg.h>

enum mts_log_level {
	MTS_LOG_WARN = 0,
	MTS_LOG_INFO = 1,
	MTS_LOG_DEBUG = 2,
};

/* Sets the name printed before every line and the most verbose level shown. */
void log_init(const char *name, int level);
void log_setlevel(int level);
int log_getlevel(void);
const char *log_name(void);

void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
