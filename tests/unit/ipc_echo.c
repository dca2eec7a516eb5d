/* ipc_echo.c: an IPC handler shared by test_ipc, ipcbench and fuzz_ipc_server — answers a statestore get with the key as the record's value. */
#include "ipc_echo.h"
#include "statestore.pb-c.h"

void
ipc_echo_get(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__GetRep get = MTS__STATESTORE__GET_REP__INIT;
	Mts__Record rec = MTS__RECORD__INIT;

	rec.value = req->get->key;
	get.found = 1;
	get.record = &rec;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_GET;
	rep.get = &get;
	mts_ipc_reply(call, &rep.base);
}
