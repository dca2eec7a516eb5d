/* xmalloc.h: allocation wrappers that treat out-of-memory as fatal. */
#ifndef MTS_XMALLOC_H
#define MTS_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
void *xmemdup(const void *, size_t);
char *xasprintf(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif
