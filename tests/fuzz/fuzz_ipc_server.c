/* fuzz_ipc_server.c: libFuzzer target for common/ipc_server.c — whatever bytes a local peer writes (greeting, frames, backtraces, bodies) go through the real server on a Unix socket. */
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc.h"
#include "sp_wire.h"
#include "statestore.pb-c.h"
#include "tests/unit/ipc_echo.h"

static void
h_hold(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	/* keeps the call past its connection's end, as group commit does */
	static struct mts_ipc_call *held;

	if (held != NULL)
		mts_ipc_reply_error(held, 5, "released");
	held = call;
}

static const struct mts_ipc_route routes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_GET, "get", MTS_IPC_ANY,
	    ipc_echo_get },
	{ MTS__STATESTORE__REQUEST__BODY_PUT, "put", MTS_IPC_ANY, h_hold },
};

static const struct mts_ipc_service svc = {
	.name = "fuzz",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = routes,
	.nroutes = 2,
	.maxmsg = 2048,
};

static struct mts_ipc_server *srv;
static char path[108];

/* libFuzzer exits through exit(): the socket file goes with the server. */
static void
close_server(void)
{
	mts_ipc_server_close(srv);
}

/* Drains until the server has nothing left to do. */
static void
settle(int fd)
{
	uint8_t sink[65536];
	int i;

	for (i = 0; i < 50; i++) {
		int n = mts_ipc_server_drain(srv, 512);

		while (fd >= 0 && read(fd, sink, sizeof(sink)) > 0)
			;
		if (n == 0 && i > 2)
			break;
	}
}

/* Input: byte 0 bit 0 set = send a valid REQ greeting first; the rest is
 * written as the peer's bytes, then the peer hangs up. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint8_t hello[SP_GREETING_LEN];
	char err[256];
	int fd;

	if (srv == NULL) {
		snprintf(path, sizeof(path), "/tmp/mts-fuzz-ipc-%d.sock",
		    (int)getpid());
		if ((srv = mts_ipc_server_open(path, &svc, NULL, err,
		         sizeof(err))) == NULL) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
		atexit(close_server);
	}
	if (size == 0)
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	strcpy(sun.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		abort();
	settle(fd); /* accept, greet */
	if (data[0] & 1) {
		sp_greeting(hello, SP_PROTO_REQ);
		(void)!write(fd, hello, sizeof(hello));
	}
	(void)!write(fd, data + 1, size - 1);
	settle(fd);
	close(fd);
	settle(-1);
	mts_ipc_server_check(srv);
	return 0;
}
