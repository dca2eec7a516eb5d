/* xmalloc.c: allocation wrappers; an allocation failure ends the process with a log line. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		fatal("malloc %zu", n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		fatal("calloc %zu x %zu", nmemb, size);
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p = reallocarray(ptr, nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		fatal("reallocarray %zu x %zu", nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		fatal("strdup");
	return p;
}

/* Returns a malloc'ed copy of len bytes (plus a NUL, for convenience). */
void *
xmemdup(const void *src, size_t len)
{
	char *p = xmalloc(len + 1);

	if (len)
		memcpy(p, src, len);
	p[len] = '\0';
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		fatal("asprintf");
	return s;
}
