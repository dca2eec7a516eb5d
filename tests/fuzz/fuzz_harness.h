/* fuzz_harness.h: what the API fuzzers share — a scratch directory that goes at exit, stand-in services on the agent's own loop, and a call that runs that loop until its reply comes. */
#ifndef MTS_FUZZ_HARNESS_H
#define MTS_FUZZ_HARNESS_H

#include <protobuf-c/protobuf-c.h>

#include "ipc.h"
#include "loop.h"

/* Makes /tmp/mts-fuzz-TAG.XXXXXX and has it removed, with all it holds,
 * when the fuzzer exits (libFuzzer ends through exit()). Returns its
 * path (static storage); aborts when it cannot be made. */
const char *fz_scratch(const char *tag);

/* Serves svc (with ctx) on DIR/NAME.sock on loop and returns a client of
 * it on the same loop: a stand-in for an agent the fuzzed one calls. */
struct mts_ipc_async *fz_stand_in(struct mts_loop *loop, const char *dir,
    const char *name, const struct mts_ipc_service *svc, void *ctx);

/* Sends req through cli and runs loop until its reply came. Stores a copy
 * of the reply (rd's type, free with protobuf_c_message_free_unpacked) in
 * *rep, or NULL with an error answer. Returns 0, or the error's positive
 * MTS_ERR code. Aborts when no answer came within wait_ms: the agent
 * under test hung. */
int fz_call(struct mts_loop *loop, struct mts_ipc_async *cli,
    ProtobufCMessage *req, const ProtobufCMessageDescriptor *rd, int wait_ms,
    ProtobufCMessage **rep);

#endif
