/* store_scan.c: a paged scan of one key prefix of the local statestore, handing each live record to a callback — the one loop behind mtsctl's listings of services, tasks, placements and nodes. */
#include <stdio.h>
#include <string.h>

#include "mtsctl.h"
#include "statestore.pb-c.h"
#include "store_scan.h"

#define SCAN_PAGE 1000
#define KEY_MAX 512 /* longer keys than any mts writes end the scan */

int
mtsctl_scan_prefix(struct mtsctl *ctx, const char *prefix, mtsctl_record_fn fn,
    void *arg, char *err, size_t errlen)
{
	char after[KEY_MAX];
	int more = 1, rc = 0, stop = 0;

	snprintf(after, sizeof(after), "%s", prefix);
	while (more && !stop) {
		Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
		Mts__Statestore__ScanReq s = MTS__STATESTORE__SCAN_REQ__INIT;
		Mts__Statestore__Reply *rep = NULL;
		const Mts__Statestore__ScanRep *sr;
		size_t i;

		s.prefix.data = (uint8_t *)prefix;
		s.prefix.len = strlen(prefix);
		s.start_after.data = (uint8_t *)after;
		s.start_after.len = strlen(after);
		s.limit = SCAN_PAGE;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
		req.scan = &s;
		rc = err != NULL ? mtsctl_try_call(ctx, "statestore", &req.base,
		                       &mts__statestore__reply__descriptor,
		                       (ProtobufCMessage **)&rep, err, errlen)
		                 : mtsctl_call(ctx, "statestore", &req.base,
		                       &mts__statestore__reply__descriptor,
		                       (ProtobufCMessage **)&rep);
		if (rc != 0)
			return rc;
		sr = rep->scan;
		/* an empty page that claims more would loop for ever */
		more = sr != NULL && sr->more && sr->n_items > 0;
		for (i = 0; sr != NULL && i < sr->n_items && !stop; i++) {
			const Mts__KeyRecord *kr = sr->items[i];

			if (kr->key.len >= sizeof(after)) {
				more = 0;
				break;
			}
			memcpy(after, kr->key.data, kr->key.len);
			after[kr->key.len] = '\0';
			if (kr->record == NULL || kr->record->tombstone)
				continue;
			stop = fn(arg, after, kr->key.len, kr->record);
		}
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	return 0;
}
