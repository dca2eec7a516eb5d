/* ipc_echo.h: an IPC handler shared by test_ipc, ipcbench and fuzz_ipc_server — answers a statestore get with the key as the record's value. */
#ifndef MTS_TEST_IPC_ECHO_H
#define MTS_TEST_IPC_ECHO_H

#include "ipc.h"

void ipc_echo_get(void *ctx, const ProtobufCMessage *req,
    struct mts_ipc_call *call);

#endif
