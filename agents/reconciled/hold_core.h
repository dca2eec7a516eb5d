/* hold_core.h: whether a task this node ran before it went down may run again — a pure decision, taken once the view has converged (a first anti-entropy round with a peer, or a bounded wait; at once without peers), that starts it only while its record still assigns it here and no newer task holds its slot. */
#ifndef MTS_HOLD_CORE_H
#define MTS_HOLD_CORE_H

#include <stddef.h>

#include "mtstime.h"
#include "recon_core.h"

struct mts_rc_hold_clock {
	mts_time_t now;
	mts_time_t since; /* when this reconciled started */
	mts_time_t bound; /* [reconciled] return_hold: the longest wait */
	size_t npeers;    /* other members this node knows, alive or not */
	int synced; /* gossipd completed an anti-entropy round with a peer,
		       and the view was read after it */
};

/* Whether the view can be trusted with a held task: synced, or no peer
 * to sync with (a single node), or the bound passed. */
int mts_rc_hold_converged(const struct mts_rc_hold_clock *);

enum mts_rc_hold {
	RC_HOLD_WAIT,  /* not converged yet */
	RC_HOLD_START, /* still this node's: run it again */
	RC_HOLD_STOP,  /* superseded or stopped meanwhile: why says how */
};

/* The verdict on held, this node's record of a task whose container
 * ended while the node was down. svc: its service as the view has it
 * (NULL: the service is gone); tasks: every node's records in the view
 * (held among them or not). why (whylen bytes, caller's) is set for
 * RC_HOLD_STOP. */
enum mts_rc_hold mts_rc_hold_decide(const struct mts_rc_hold_clock *,
    const struct mts_rc_task *held, const struct mts_rc_service *svc,
    const struct mts_rc_task *tasks, size_t ntasks, char *why, size_t whylen);

#endif
