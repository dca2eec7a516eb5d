/* shimctl.h: what mtsctl's shim command files (task, image, logs, exec) share, and the relay through the local gossipd to another node's agent (its shim, or its schedd for node inspect). */
#ifndef MTSCTL_SHIMCTL_H
#define MTSCTL_SHIMCTL_H

#include <stdint.h>

#include "gossipd.pb-c.h"
#include "mtsctl.h"
#include "shim.pb-c.h"

/* Calls shim.sock and checks the reply's body; waits at least min_tmo ms
 * (the global -t when larger). */
int shimctl_call(struct mtsctl *, Mts__Shim__Request *, Mts__Shim__Reply **,
    Mts__Shim__Reply__BodyCase want, int min_tmo);

/* Where a task's shim is: this node's, or another node's reached through
 * the local gossipd's relay. */
struct shimctl_target {
	int remote;
	uint8_t node[16];
	char label[96]; /* "n2 (0123456789ab)" for messages */
};

/* Finds the node running task: node (a member's name or id) when given;
 * otherwise the local shim if it has the task, else the node whose
 * t/<node>/<task> record the local statestore holds. Prints why on
 * failure and returns the exit status; 0 on success. */
int shimctl_locate(struct mtsctl *, const char *task, const char *node,
    struct shimctl_target *);
/* Relays req (its version set here) to agent on t's node through the
 * local gossipd, bounded to a few seconds: 0 and *grep (the caller frees
 * it; its relay holds the agent's packed reply), or a negated enum
 * mts_err with the reason in err. */
int shimctl_relay(struct mtsctl *, const struct shimctl_target *t,
    const char *agent, ProtobufCMessage *req, Mts__Gossipd__Reply **grep,
    char *err, size_t errlen);
/* shimctl_call at the target (a remote call is bounded to a few seconds
 * whatever min_tmo says). */
int shimctl_call_at(struct mtsctl *, const struct shimctl_target *,
    Mts__Shim__Request *, Mts__Shim__Reply **, Mts__Shim__Reply__BodyCase want,
    int min_tmo);

#endif
