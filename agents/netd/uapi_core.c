/* uapi_core.c: the queue of mts-netd's UAPI requests and the checks of wireguard-go's answers — pure, no socket (netd_uapi.c does the I/O). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mtserr.h"
#include "uapi_core.h"

void
netd_uapiq_init(struct netd_uapiq *q)
{
	memset(q, 0, sizeof(*q));
	q->inflight = -1;
}

static int
waiting(const struct netd_uapiq *q, int kind)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		if (q->wait[i] == kind)
			return 1;
	return 0;
}

int
netd_uapiq_push(struct netd_uapiq *q, int kind)
{
	if (kind < 0 || kind >= NETD_UAPI_KINDS)
		return -1;
	if (waiting(q, kind))
		return 0;
	q->wait[q->n++] = kind;
	return 1;
}

int
netd_uapiq_next(struct netd_uapiq *q)
{
	if (q->inflight >= 0 || q->n == 0)
		return -1;
	q->inflight = q->wait[0];
	memmove(q->wait, q->wait + 1, --q->n * sizeof(q->wait[0]));
	return q->inflight;
}

void
netd_uapiq_done(struct netd_uapiq *q)
{
	q->inflight = -1;
}

int
netd_uapiq_has(const struct netd_uapiq *q, int kind)
{
	return q->inflight == kind || waiting(q, kind);
}

ssize_t
netd_uapi_complete(const char *buf, size_t len, size_t max)
{
	size_t i;

	for (i = 0; i < len && i < max; i++) {
		if (buf[i] == '\0')
			return -MTS_ERR_INVAL;
		/* an answer is lines of key=value, the last errno=N, then an
		 * empty line; one that starts empty is complete (and has no
		 * errno) */
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] == '\n'))
			return (ssize_t)i + 1;
	}
	return len >= max ? -MTS_ERR_TOOBIG : 0;
}

int
netd_uapi_errno(const char *rep)
{
	size_t len = strlen(rep);
	const char *last, *v;
	char *end;
	long e;

	if (len < 2 || rep[len - 1] != '\n' || rep[len - 2] != '\n')
		return -1;
	/* the start of the last line before the blank one */
	for (last = rep + len - 2; last > rep && last[-1] != '\n'; last--)
		;
	if (strncmp(last, "errno=", 6) != 0)
		return -1;
	v = last + 6;
	if (*v < '0' || *v > '9')
		return -1;
	e = strtol(v, &end, 10);
	if (end != rep + len - 2 || e > INT_MAX)
		return -1;
	return (int)e;
}

void
netd_uapi_redact(char *get)
{
	char *p = get, *nl;
	size_t cut, rest;

	while (p != NULL && *p != '\0') {
		nl = strchr(p, '\n');
		if (strncmp(p, "private_key=", 12) == 0) {
			cut = nl ? (size_t)(nl - p) + 1 : strlen(p);
			rest = strlen(p + cut);
			memmove(p, p + cut, rest + 1);
			memset(p + rest + 1, 0, cut);
			continue;
		}
		p = nl ? nl + 1 : NULL;
	}
}
