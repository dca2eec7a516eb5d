/* update_pb.h: the rolling update core's inputs and outputs to and from their replicated form — the s/ record, the t/ task records and the u/ update status (proto/service.proto UpdateStatus) — for the agent's glue; the core itself never sees protobuf. */
#ifndef MTS_UPDATE_PB_H
#define MTS_UPDATE_PB_H

#include "service.pb-c.h"
#include "shim.pb-c.h"
#include "svcrec.h"
#include "update_core.h"

#define MTS_UP_PREFIX "u/" /* u/<stack>_<service>: UpdateStatus */

/* The update's view of a service record. */
void mts_up_service_from_pb(const Mts__Service__ServiceRecord *,
    struct mts_up_service *out);
/* Whether the record's version is a rebalance (service rebalance), and
 * whether it moves task. */
int mts_up_rebalance_version(const Mts__Service__ServiceRecord *);
int mts_up_rebalance_moves(const Mts__Service__ServiceRecord *,
    const char *task);
/* The update's view of a task record; digest is the record's spec's
 * (mts_spec_digest). out->id points into t. */
void mts_up_task_from_pb(const Mts__Shim__TaskStatus *t,
    const uint8_t digest[MTS_SPEC_DIGEST_LEN], struct mts_up_task *out);
/* Decodes a u/ value; -1 (and *out a fresh UP_NONE status) when it does
 * not decode or names an unknown state. */
int mts_up_status_decode(const uint8_t *buf, size_t len,
    struct mts_up_status *out);
/* Encodes st as a u/ value written by owner (16 bytes), moving from
 * from_version; a malloc'ed buffer of *len bytes the caller frees. */
uint8_t *mts_up_status_encode(const struct mts_up_status *st,
    const uint8_t *owner, uint64_t from_version, size_t *len);

#endif
