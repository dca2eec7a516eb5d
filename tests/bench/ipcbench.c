/* ipcbench.c: the ceiling of local IPC — an echo that does no work, through mts's own REQ/REP (common/ipc_client.c, ipc_server.c) or through nng's REQ and raw REP sockets. */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc.h"
#include "mtstime.h"
#include "statestore.pb-c.h"
#include "tests/unit/ipc_echo.h"

struct client {
	const char *url;
	int64_t until;
	size_t size, n;
	int nng; /* nng REQ clients and nng's REP server, else mts's own */
	int failed;
};

/* The echo as an agent runs it: through the dispatch table, on one thread. */
static const struct mts_ipc_route echo_routes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_GET, "get", MTS_IPC_ANY,
	    ipc_echo_get },
};

static const struct mts_ipc_service echo_svc = {
	.name = "echo",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = echo_routes,
	.nroutes = 1,
};

static int
serve_mts(const char *path)
{
	struct mts_ipc_server *srv;
	struct pollfd pfd;
	char err[256];

	if ((srv = mts_ipc_server_open(path, &echo_svc, NULL, err,
	         sizeof(err))) == NULL) {
		fprintf(stderr, "ipcbench: %s\n", err);
		return 1;
	}
	pfd.fd = mts_ipc_server_fd(srv);
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, 1000) < 0)
			return 1;
		mts_ipc_server_drain(srv, 512);
	}
}

/* nng's raw REP socket as agents used it before ipc_server.c: one thread,
 * poll on the receive descriptor, drain and answer without blocking. */
static int
serve_nng(const char *url)
{
	nng_socket s;
	nng_msg *m;
	struct pollfd pfd;
	int fd;

	if (nng_rep0_open_raw(&s) != 0 || nng_listen(s, url, NULL, 0) != 0)
		return 1;
	nng_socket_set_int(s, NNG_OPT_SENDBUF, 1024);
	if (nng_socket_get_int(s, NNG_OPT_RECVFD, &fd) != 0)
		return 1;
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, 1000) < 0)
			return 1;
		while (nng_recvmsg(s, &m, NNG_FLAG_NONBLOCK) == 0)
			if (nng_sendmsg(s, m, NNG_FLAG_NONBLOCK) != 0)
				nng_msg_free(m);
	}
}

/* nng's REQ socket, as clients used it before ipc_client.c. */
static void
nng_client(struct client *c, const uint8_t *req, size_t len)
{
	nng_socket s;
	nng_msg *m;

	if (nng_req0_open(&s) != 0 || nng_dial(s, c->url, NULL, 0) != 0) {
		c->failed = 1;
		return;
	}
	while (mts_now_us() < c->until) {
		if (nng_msg_alloc(&m, len) != 0)
			break;
		memcpy(nng_msg_body(m), req, len);
		if (nng_sendmsg(s, m, 0) != 0 || nng_recvmsg(s, &m, 0) != 0) {
			c->failed = 1;
			break;
		}
		nng_msg_free(m);
		c->n++;
	}
	nng_close(s);
}

static void
mts_client(struct client *c, const uint8_t *req, size_t len)
{
	struct mts_ipc_client *ic;
	uint8_t *out;
	size_t outlen;
	char err[256];

	if ((ic = mts_ipc_client_open(c->url + strlen("ipc://"), 5000, err,
	         sizeof(err))) == NULL) {
		c->failed = 1;
		return;
	}
	while (mts_now_us() < c->until) {
		if (mts_ipc_client_call_raw(ic, req, len, &out, &outlen) < 0) {
			c->failed = 1;
			break;
		}
		free(out);
		c->n++;
	}
	mts_ipc_client_close(ic);
}

static void *
client_loop(void *arg)
{
	struct client *c = arg;
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	uint8_t *key = malloc(c->size), *buf;
	size_t len;

	/* The same bytes for every pairing: a packed get of a SIZE-byte key. */
	memset(key, 'x', c->size);
	get.key.data = key;
	get.key.len = c->size;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	mts_pb_set_version(&req.base);
	len = protobuf_c_message_get_packed_size(&req.base);
	buf = malloc(len);
	protobuf_c_message_pack(&req.base, buf);
	if (c->nng)
		nng_client(c, buf, len);
	else
		mts_client(c, buf, len);
	free(buf);
	free(key);
	return NULL;
}

/* ipcbench DIR SECONDS CLIENTS [SIZE [mts|nng]]: prints "requests/s". */
int
main(int argc, char **argv)
{
	char url[512];
	int nc, i, failed = 0;
	size_t total = 0;
	pid_t srv;
	int64_t t0;
	struct client *c;
	pthread_t *t;

	if (argc < 4) {
		fprintf(stderr,
		    "usage: ipcbench DIR SECONDS CLIENTS [SIZE [mts|nng]]\n");
		return 64;
	}
	snprintf(url, sizeof(url), "ipc://%s/echo.sock", argv[1]);
	nc = atoi(argv[3]);
	if ((srv = fork()) == 0)
		_exit(argc > 5 && strcmp(argv[5], "nng") == 0
		        ? serve_nng(url)
		        : serve_mts(url + strlen("ipc://")));
	usleep(200000);
	c = calloc(nc, sizeof(*c));
	t = calloc(nc, sizeof(*t));
	t0 = mts_now_us();
	for (i = 0; i < nc; i++) {
		c[i].url = url;
		c[i].until = t0 + (int64_t)(atof(argv[2]) * 1e6);
		c[i].size = argc > 4 ? (size_t)atoi(argv[4]) : 100;
		c[i].nng = argc > 5 && strcmp(argv[5], "nng") == 0;
		pthread_create(&t[i], NULL, client_loop, &c[i]);
	}
	for (i = 0; i < nc; i++) {
		pthread_join(t[i], NULL);
		total += c[i].n;
		failed |= c[i].failed;
	}
	printf("%.0f\n", total / ((mts_now_us() - t0) / 1e6));
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	free(c);
	free(t);
	return failed;
}
