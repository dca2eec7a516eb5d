/* ipcbench.c: the ceiling of local IPC as DESIGN.md section 4 builds it — nng REQ clients against a raw REP server that polls NNG_OPT_RECVFD — with an echo that does no work. */
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

#include "mtstime.h"

struct client {
	const char *url;
	int64_t until;
	size_t size, n;
	int failed;
};

/* The server side as common/ipc.c runs it: one thread, poll on the
 * receive descriptor, drain without blocking, answer without blocking. */
static int
serve(const char *url)
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

static void *
client_loop(void *arg)
{
	struct client *c = arg;
	nng_socket s;
	nng_msg *m;

	if (nng_req0_open(&s) != 0 || nng_dial(s, c->url, NULL, 0) != 0) {
		c->failed = 1;
		return NULL;
	}
	while (mts_now_us() < c->until) {
		if (nng_msg_alloc(&m, c->size) != 0)
			break;
		memset(nng_msg_body(m), 'x', c->size);
		if (nng_sendmsg(s, m, 0) != 0 || nng_recvmsg(s, &m, 0) != 0) {
			c->failed = 1;
			break;
		}
		nng_msg_free(m);
		c->n++;
	}
	nng_close(s);
	return NULL;
}

/* ipcbench DIR SECONDS CLIENTS [SIZE]: prints "requests/s". */
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
		fprintf(stderr, "usage: ipcbench DIR SECONDS CLIENTS [SIZE]\n");
		return 64;
	}
	snprintf(url, sizeof(url), "ipc://%s/echo.sock", argv[1]);
	nc = atoi(argv[3]);
	if ((srv = fork()) == 0)
		_exit(serve(url));
	usleep(200000);
	c = calloc(nc, sizeof(*c));
	t = calloc(nc, sizeof(*t));
	t0 = mts_now_us();
	for (i = 0; i < nc; i++) {
		c[i].url = url;
		c[i].until = t0 + (int64_t)(atof(argv[2]) * 1e6);
		c[i].size = argc > 4 ? (size_t)atoi(argv[4]) : 100;
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
