/* fuzz_harness.h: what the API fuzzers share — a scratch directory that goes at exit, stand-in services on the agent's own loop, and calls (typed or raw bytes) that run that loop until their reply comes. */
#ifndef MTS_FUZZ_HARNESS_H
#define MTS_FUZZ_HARNESS_H

#include <protobuf-c/protobuf-c.h>

#include "agent.h"
#include "cfg.h"
#include "ipc.h"
#include "loop.h"

/* Makes /tmp/mts-fuzz-TAG.XXXXXX and has it removed, with all it holds,
 * when the fuzzer exits (libFuzzer ends through exit()). Returns its
 * path (static storage); aborts when it cannot be made. */
const char *fz_scratch(const char *tag);

/* The agent's start as its main() does it, in dir: mts.conf written with
 * conf (its text), logging at warnings, a's name, a fixed node id and
 * rundir dir set, and a->cfg loaded by schema. Aborts on a failure. */
void fz_agent_start(struct mts_agent *a, const char *name, const char *dir,
    const char *conf, const struct mts_cfg_schema *schema);

/* Serves svc (with ctx, behind acl unless NULL) on DIR/NAME.sock on loop
 * and returns a client of it on the same loop that waits wait_ms for a
 * reply; *srv, when given, gets the server. Aborts on a failure. */
struct mts_ipc_async *fz_serve(struct mts_loop *loop, const char *dir,
    const char *name, const struct mts_ipc_service *svc, void *ctx,
    const struct mts_acl_table *acl, int wait_ms, struct mts_ipc_server **srv);

/* fz_serve without an acl: a stand-in for an agent the fuzzed one
 * calls. */
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

/* Sends len bytes as a request body through cli and runs loop until the
 * answer came. Returns 0 (a reply, maybe one with only its error set),
 * or the client's positive MTS_ERR code; aborts when no answer came
 * within wait_ms. */
int fz_call_raw(struct mts_loop *loop, struct mts_ipc_async *cli,
    const void *buf, size_t len, int wait_ms);

#endif
