/* portclaim.c: the holder of each contested published port — claims sorted by (protocol, port, creation HLC, service name), the first of each port holds it. */
#include <stdlib.h>
#include <string.h>

#include "portclaim.h"
#include "xmalloc.h"

/* qsort has no context argument: the claims being sorted. */
struct order {
	const struct mts_port_claim *c;
	size_t i;
};

static int
claim_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	const struct mts_port_claim *p = &x->c[x->i], *q = &y->c[y->i];
	int s;

	if (p->udp != q->udp)
		return p->udp < q->udp ? -1 : 1;
	if (p->port != q->port)
		return p->port < q->port ? -1 : 1;
	if (p->created != q->created)
		return p->created < q->created ? -1 : 1;
	if ((s = strcmp(p->service, q->service)) != 0)
		return s;
	return x->i < y->i ? -1 : x->i > y->i; /* one service, twice */
}

void
mts_port_holders(const struct mts_port_claim *c, size_t n, size_t *holder)
{
	struct order *o;
	size_t i, first = 0;

	if (n == 0)
		return;
	o = xcalloc(n, sizeof(*o));
	for (i = 0; i < n; i++)
		o[i] = (struct order){ c, i };
	qsort(o, n, sizeof(*o), claim_cmp);
	for (i = 0; i < n; i++) {
		if (i > 0 &&
		    (c[o[i].i].udp != c[o[first].i].udp ||
		        c[o[i].i].port != c[o[first].i].port))
			first = i;
		holder[o[i].i] = o[first].i;
	}
	free(o);
}

int
mts_port_lost(const struct mts_port_claim *c, const size_t *holder, size_t i)
{
	return strcmp(c[holder[i]].service, c[i].service) != 0;
}
