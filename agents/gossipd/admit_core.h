/* admit_core.h: which open connections make room for a newly accepted one — caps on unfinished handshakes (in all and per source address) and on connections in all, the oldest unfinished going first; pure. */
#ifndef MTS_ADMIT_CORE_H
#define MTS_ADMIT_CORE_H

#include <stddef.h>

#include "mtstime.h"

/* One open connection as the decision sees it. */
struct mts_admit_conn {
	const char *raddr; /* "ip:port"; the source address is the ip */
	mts_time_t since;  /* accepted or dialled */
	int unfinished;    /* accepted, handshake not finished */
};

struct mts_admit_caps {
	size_t links;               /* connections in all */
	size_t unfinished;          /* unfinished handshakes in all */
	size_t unfinished_per_addr; /* the same, from one address */
};

enum mts_admit_why {
	MTS_ADMIT_PER_ADDR,   /* its address had unfinished_per_addr */
	MTS_ADMIT_UNFINISHED, /* unfinished handshakes were at the cap */
	MTS_ADMIT_LINKS,      /* connections were at the cap */
};

#define MTS_ADMIT_MAX_VICTIMS 3

struct mts_admit_verdict {
	int admit; /* 0: every connection is a finished one; refuse it */
	size_t nvictims;
	size_t victim[MTS_ADMIT_MAX_VICTIMS]; /* indices into the conns */
	enum mts_admit_why why[MTS_ADMIT_MAX_VICTIMS];
};

/* Decides for a connection from raddr, given the n open ones: the
 * unfinished ones to close first (oldest first: one per cap that is
 * reached; of equally old ones the first in conns), and whether to admit
 * it. Finished connections are never chosen. */
void mts_admit(const struct mts_admit_conn *conns, size_t n, const char *raddr,
    const struct mts_admit_caps *caps, struct mts_admit_verdict *v);

#endif
