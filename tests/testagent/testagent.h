/* testagent.h: private to the test agent — its state, shared by its main (testagent.c) and its API handlers (testagent_api.c). */
#ifndef TA_H
#define TA_H

#include "acl.h"
#include "ipc.h"
#include "loop.h"
#include "testagent_core.h"

#define TA_SECTION "testagent" /* its keys in mts.conf */

struct ta {
	struct ta_core core;
	struct mts_loop *loop;
	struct mts_ipc_server *srv;
	struct mts_acl_table acl;
	const char *sock;      /* -s: socket name in the run directory */
	struct ta_fault fault; /* -x: misbehaviour after ready */
	int delay_ms;          /* -w: wait before misbehaving */
	int get_ms;            /* -g: every get answers after this long */
	int open;              /* -o: any uid may call (a relay target) */
	struct mts_timer fault_timer;
};

/* testagent_api.c: statestore.proto on the agent's socket. */
extern const struct mts_ipc_service ta_service;
/* -o: the access table that lets anyone call. */
extern const struct mts_acl_rule ta_acl_open[];

#endif
