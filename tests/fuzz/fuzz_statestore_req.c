/* fuzz_statestore_req.c: libFuzzer target for what mts-statestore does with a request's bytes before its handlers: unpack, envelope checks, record validation. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agents/statestore/state_core.h"
#include "ipc.h"
#include "record.h"
#include "statestore.pb-c.h"

/* The same checks h_merge makes on each record from a peer. */
static int
valid_record(const Mts__KeyRecord *kr, struct mts_record *r)
{
	const Mts__Record *pb = kr->record;

	if (mts_state_check_key(kr->key.data, kr->key.len) < 0 || pb == NULL ||
	    pb->origin.len != MTS_NODE_ID_LEN || pb->hlc == 0 ||
	    (pb->tombstone && pb->value.len) ||
	    pb->value.len > MTS_RECORD_MAX_VALUE)
		return 0;
	r->hlc = pb->hlc;
	memcpy(r->origin, pb->origin.data, MTS_NODE_ID_LEN);
	r->tombstone = pb->tombstone;
	r->value = pb->value.data;
	r->vlen = pb->value.len;
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
