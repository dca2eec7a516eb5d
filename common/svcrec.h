/* svcrec.h: service-record rules mtsctl and reconciled share — the digest of what a service's tasks run (its spec without the fields that change no task), the record a rollback writes, and when a service was created. */
#ifndef MTS_SVCREC_H
#define MTS_SVCREC_H

#include <stddef.h>
#include <stdint.h>

#include "service.pb-c.h"

#define MTS_SPEC_DIGEST_LEN 16

/* Writes the digest of s into out. Two specs that differ only in
 * replicas, update_config, rollback_config, the canary, depends_on or the
 * service labels have the same digest (a scale replaces no task); any
 * other difference changes it. */
void mts_spec_digest(const Mts__Service__ServiceSpec *s,
    uint8_t out[MTS_SPEC_DIGEST_LEN]);

/* Fills out as the record that rolls cur back: version + 1, the spec
 * `previous` was, cur's spec kept as previous, rollback set, the control
 * unpaused. Shallow: out points into cur (pack it before freeing cur).
 * -1 when cur has no previous spec. */
int mts_svc_rollback(const Mts__Service__ServiceRecord *cur,
    Mts__Service__ServiceRecord *out, Mts__Service__UpdateControl *ctl);

/* When the service was created: the HLC of its first record, which
 * every later version carries (a first record carries 0 and is stamped
 * by its own HLC, rec_hlc: the HLC its s/ record is stored with). The
 * same on every node that holds the same record. */
uint64_t mts_svc_created(const Mts__Service__ServiceRecord *rec,
    uint64_t rec_hlc);

#endif
