/* store_scan.h: mtsctl's paged scan of one key prefix of the local statestore (see store_scan.c). */
#ifndef MTSCTL_STORE_SCAN_H
#define MTSCTL_STORE_SCAN_H

#include <stddef.h>

#include "types.pb-c.h"

struct mtsctl;

/* Called for each live record, in key order; key is NUL-terminated (len
 * bytes). Returns 0 to go on, non-zero to end the scan there. */
typedef int (*mtsctl_record_fn)(void *arg, const char *key, size_t len,
    const Mts__Record *rec);

/* Hands every live (not tombstoned) record under prefix to fn, a page at
 * a time. With err NULL a failed call prints its reason and the exit
 * status is returned (mtsctl_call); with err the reason goes there and a
 * negated enum mts_err is returned (mtsctl_try_call). 0 on success. */
int mtsctl_scan_prefix(struct mtsctl *, const char *prefix, mtsctl_record_fn fn,
    void *arg, char *err, size_t errlen);

#endif
