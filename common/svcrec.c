/* svcrec.c: the task-spec digest (BLAKE2b of the spec packed with the fields that change no task cleared, from a shallow copy), the rollback record, and a service's creation HLC. */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "svcrec.h"
#include "xmalloc.h"

void
mts_spec_digest(const Mts__Service__ServiceSpec *s,
    uint8_t out[MTS_SPEC_DIGEST_LEN])
{
	Mts__Service__ServiceSpec c = *s;
	uint8_t h[MTS_HASH_LEN], *buf;
	size_t len;

	c.replicas = 0;
	c.update = NULL;
	c.rollback = NULL;
	c.canary = NULL;
	c.n_depends = 0;
	c.depends = NULL;
	c.n_service_labels = 0;
	c.service_labels = NULL;
	len = mts__service__service_spec__get_packed_size(&c);
	buf = xmalloc(len ? len : 1);
	mts__service__service_spec__pack(&c, buf);
	mts_blake2b256(h, buf, len);
	memcpy(out, h, MTS_SPEC_DIGEST_LEN);
	free(buf);
}

int
mts_svc_rollback(const Mts__Service__ServiceRecord *cur,
    Mts__Service__ServiceRecord *out, Mts__Service__UpdateControl *ctl)
{
	if (cur->previous == NULL || cur->spec == NULL)
		return -1;
	*out = *cur;
	mts__service__update_control__init(ctl);
	if (cur->control) {
		ctl->resumes = cur->control->resumes;
		ctl->promoted = cur->control->promoted;
	}
	out->version = cur->version + 1;
	out->spec = cur->previous;
	out->previous = cur->spec;
	out->previous_version = cur->version;
	out->rollback = 1;
	out->control = ctl;
	return 0;
}

uint64_t
mts_svc_created(const Mts__Service__ServiceRecord *rec, uint64_t rec_hlc)
{
	return rec != NULL && rec->created_hlc != 0 ? rec->created_hlc
	                                            : rec_hlc;
}
