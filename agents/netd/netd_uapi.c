/* netd_uapi.c: mts-netd's client of wireguard-go's UAPI socket on the loop — one request at a time from the queue (uapi_core.c), a non-blocking connect, write and read driven by a watcher, the answer handed to its kind's handler once complete, and a deadline after which a silent wireguard-go's connection is closed and the request fails. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "log.h"
#include "mtserr.h"
#include "netd.h"

#define UAPI_TIMEOUT_MS 2000

/* What each kind sends (built when it is its turn: NULL when there is
 * nothing to say) and who takes the answer (rc 0 with the answer, or
 * -errno with NULL; the answer is zeroed and freed after). */
static const struct {
	const char *name;
	char *(*build)(struct netd *);
	void (*done)(struct netd *, int rc, char *rep);
} kinds[NETD_UAPI_KINDS] = {
	[NETD_UAPI_START] = { "get (mts0's start)", netd_wg_start_req,
	    netd_wg_start_done },
	[NETD_UAPI_SETUP] = { "set (key and port)", netd_wg_setup_req,
	    netd_wg_setup_done },
	[NETD_UAPI_PEERS] = { "set (peers)", netd_peers_req, netd_peers_done },
	[NETD_UAPI_STATS] = { "get (counters)", netd_wg_stats_req,
	    netd_wg_stats_done },
};

static void uapi_next(struct netd *);

void
netd_uapi_init(struct netd *n)
{
	netd_uapiq_init(&n->uq);
	n->ufd = -1;
	mts_buf_init(&n->uin);
	mts_timer_init(&n->utimer, "wireguard UAPI", netd_uapi_on_timeout, n);
}

/* A non-blocking stream socket connecting to path: 0 with *fd connected,
 * -EINPROGRESS with *fd on its way, or -errno (nobody listens: ENOENT,
 * ECONNREFUSED; a full backlog: EAGAIN). */
int
netd_uapi_connect(const char *path, int *fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int e;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((*fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	         0)) < 0)
		return -errno;
	if (connect(*fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return 0;
	if ((e = errno) == EINPROGRESS)
		return -EINPROGRESS;
	close(*fd);
	*fd = -1;
	return -e;
}

/* Ends the request in flight: the connection closed, the answer (or the
 * failure) to its kind, then the next one. */
static void
uapi_finish(struct netd *n, int rc)
{
	int kind = n->uq.inflight;
	struct mts_buf in = n->uin;
	char *rep = NULL;

	mts_timer_disarm(n->loop, &n->utimer);
	mts_watch_free(n->uw);
	n->uw = NULL;
	if (n->ufd >= 0)
		close(n->ufd);
	n->ufd = -1;
	if (n->uout != NULL) {
		sodium_memzero(n->uout, n->ulen);
		free(n->uout);
		n->uout = NULL;
	}
	/* the answer is the handler's to read, while the handler may send
	 * the next request already */
	mts_buf_init(&n->uin);
	if (rc == 0) {
		mts_buf_put_u8(&in, 0);
		rep = (char *)in.data;
	}
	netd_uapiq_done(&n->uq);
	if (kind >= 0)
		kinds[kind].done(n, rc, rep);
	if (in.data != NULL)
		sodium_memzero(in.data, in.cap);
	mts_buf_free(&in);
	uapi_next(n);
}

static int
uapi_write(struct netd *n)
{
	ssize_t w;

	while (n->uoff < n->ulen) {
		if ((w = write(n->ufd, n->uout + n->uoff, n->ulen - n->uoff)) <
		    0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		n->uoff += (size_t)w;
	}
	/* all sent: now the answer */
	if (mts_watch_set(n->uw, MTS_LOOP_IN) < 0)
		return -EIO;
	return 0;
}

/* Reads what there is: 1 once the answer is complete, 0 for more to come,
 * -errno. */
static int
uapi_read(struct netd *n)
{
	char chunk[4096];
	ssize_t r, end;

	for (;;) {
		if ((r = read(n->ufd, chunk, sizeof(chunk))) < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		if (r == 0)
			return -EPIPE; /* closed before the blank line */
		mts_buf_put(&n->uin, chunk, (size_t)r);
		sodium_memzero(chunk, (size_t)r);
		if ((end = netd_uapi_complete((char *)n->uin.data, n->uin.len,
		         NETD_UAPI_MAX)) < 0)
			return -EPROTO;
		if (end > 0) {
			n->uin.len = (size_t)end;
			return 1;
		}
	}
}

static void
uapi_on_io(void *arg, int fd, uint32_t ev, mts_time_t now)
{
	struct netd *n = arg;
	int rc;

	(void)fd;
	(void)ev;
	(void)now;
	if (n->uoff < n->ulen) {
		if ((rc = uapi_write(n)) == 0)
			return;
	} else if ((rc = uapi_read(n)) >= 0) {
		if (rc > 0)
			uapi_finish(n, 0);
		return;
	}
	log_warnx("wireguard UAPI %s: %s: %s", n->wgsock,
	    kinds[n->uq.inflight].name, strerror(-rc));
	uapi_finish(n, rc);
}

void
netd_uapi_on_timeout(void *arg, mts_time_t now)
{
	struct netd *n = arg;

	log_warnx("wireguard UAPI %s: no answer to %s within %d ms: "
	          "connection closed",
	    n->wgsock, kinds[n->uq.inflight].name, (int)(now - n->usent));
	uapi_finish(n, -ETIMEDOUT);
}

/* Sends the next request of the queue, if any and none is in flight; a
 * kind with nothing to say is done at once. */
static void
uapi_next(struct netd *n)
{
	int kind, rc;

	while ((kind = netd_uapiq_next(&n->uq)) >= 0) {
		if ((n->uout = kinds[kind].build(n)) == NULL) {
			netd_uapiq_done(&n->uq);
			continue;
		}
		n->ulen = strlen(n->uout);
		n->uoff = 0;
		rc = netd_uapi_connect(n->wgsock, &n->ufd);
		if (rc < 0 && rc != -EINPROGRESS) {
			/* nobody listens (wireguard-go starting or gone):
			 * the kind says what that means */
			uapi_finish(n, rc);
			return;
		}
		if ((n->uw = mts_loop_watch(n->loop, n->ufd, MTS_LOOP_OUT,
		         "wireguard UAPI", uapi_on_io, n)) == NULL) {
			uapi_finish(n, -EIO);
			return;
		}
		n->usent = mts_loop_now(n->loop);
		mts_timer_arm(n->loop, &n->utimer, n->usent + UAPI_TIMEOUT_MS);
		return;
	}
}

void
netd_uapi_push(struct netd *n, int kind)
{
	netd_uapiq_push(&n->uq, kind);
	uapi_next(n);
}

/* At exit: the request in flight is dropped (its handler is not called),
 * and so is what waits. */
void
netd_uapi_close(struct netd *n)
{
	if (n->uq.inflight >= 0) {
		n->uq.inflight = -1;
		n->uq.n = 0;
		uapi_finish(n, -ECANCELED);
	}
	mts_buf_free(&n->uin);
}
