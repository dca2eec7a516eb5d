/* admit_core.c: the admission decision of admit_core.h — count, pick the oldest unfinished connection per cap reached, admit or refuse. */
#include <string.h>

#include "agents/gossipd/admit_core.h"

/* Whether two "ip:port" strings share the ip. */
static int
same_addr(const char *a, const char *b)
{
	size_t la = strcspn(a, ":"), lb = strcspn(b, ":");

	return la == lb && memcmp(a, b, la) == 0;
}

static int
chosen(const struct mts_admit_verdict *v, size_t i)
{
	size_t k;

	for (k = 0; k < v->nvictims; k++)
		if (v->victim[k] == i)
			return 1;
	return 0;
}

/* Counts the connections not chosen yet (all, or the unfinished ones from
 * raddr's address when raddr is not NULL, or every unfinished one when
 * unfinished is set) and finds the oldest unfinished one among them. */
static size_t
count(const struct mts_admit_conn *c, size_t n, const char *raddr,
    int unfinished, const struct mts_admit_verdict *v, size_t *oldest)
{
	size_t i, k = 0;

	*oldest = n;
	for (i = 0; i < n; i++) {
		if (chosen(v, i) || (unfinished && !c[i].unfinished) ||
		    (raddr && !same_addr(c[i].raddr, raddr)))
			continue;
		k++;
		if (c[i].unfinished &&
		    (*oldest == n || c[i].since < c[*oldest].since))
			*oldest = i;
	}
	return k;
}

static void
choose(struct mts_admit_verdict *v, size_t i, enum mts_admit_why why)
{
	v->victim[v->nvictims] = i;
	v->why[v->nvictims++] = why;
}

void
mts_admit(const struct mts_admit_conn *c, size_t n, const char *raddr,
    const struct mts_admit_caps *caps, struct mts_admit_verdict *v)
{
	size_t old;

	memset(v, 0, sizeof(*v));
	v->admit = 1;
	if (count(c, n, raddr, 1, v, &old) >= caps->unfinished_per_addr &&
	    old < n)
		choose(v, old, MTS_ADMIT_PER_ADDR);
	if (count(c, n, NULL, 1, v, &old) >= caps->unfinished && old < n)
		choose(v, old, MTS_ADMIT_UNFINISHED);
	if (count(c, n, NULL, 0, v, &old) < caps->links)
		return;
	if (old < n)
		choose(v, old, MTS_ADMIT_LINKS);
	else
		v->admit = 0;
}
