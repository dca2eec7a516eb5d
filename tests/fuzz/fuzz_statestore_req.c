/* fuzz_statestore_req.c: libFuzzer target for what mts-statestore does with a request's bytes before its handlers: unpack, envelope checks, record validation and the verdict on an empty key. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agents/statestore/state_core.h"
#include "ipc.h"
#include "record.h"
#include "statestore.pb-c.h"

/* What h_merge does with each record from a peer: the wire checks of
 * merge_write (statestore_api.c), then the core's own. */
static int
valid_record(const Mts__KeyRecord *kr, struct mts_record *r)
{
	static const uint8_t node[MTS_NODE_ID_LEN];
	struct mts_hlc hlc = { 0 };
	struct mts_state_self self = { node, "00000000000000000000000000000000",
		&hlc, 1 };
	const Mts__Record *pb = kr->record;
	struct mts_write w = { .kind = MTS_WRITE_MERGE };
	struct mts_verdict v;

	if (pb == NULL || pb->origin.len != MTS_NODE_ID_LEN)
		return 0;
	w.key = kr->key.data;
	w.klen = kr->key.len;
	w.rec.hlc = pb->hlc;
	memcpy(w.rec.origin, pb->origin.data, MTS_NODE_ID_LEN);
	w.rec.tombstone = pb->tombstone;
	w.rec.value = pb->value.data;
	w.rec.vlen = pb->value.len;
	if (mts_state_check_write(&self, &w, &v) < 0)
		return 0;
	/* a valid record is applied to an empty key */
	if (mts_state_verdict(&self, NULL, NULL, &w, &v) != MTS_VERDICT_APPLY)
		__builtin_trap();
	*r = v.rec;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Mts__Statestore__Request *req;
	struct mts_record r, back;
	struct mts_buf b;
	size_t i;

	req = mts__statestore__request__unpack(NULL, size, data);
	if (req == NULL)
		return 0;
	(void)mts_pb_oneof_case(&req->base);
	if (req->body_case == MTS__STATESTORE__REQUEST__BODY_MERGE) {
		for (i = 0; i < req->merge->n_records; i++) {
			if (!valid_record(req->merge->records[i], &r))
				continue;
			/* an accepted record must survive its own encoding */
			mts_buf_init(&b);
			mts_record_encode(&r, &b);
			if (mts_record_decode(b.data, b.len, &back) != 0 ||
			    back.hlc != r.hlc || back.vlen != r.vlen)
				__builtin_trap();
			mts_buf_free(&b);
		}
	}
	protobuf_c_message_free_unpacked(&req->base, NULL);
	return 0;
}
