/* ipc_client.c: the REQ side of local IPC — SP over ipc:// on the caller's own thread, reconnecting and resending until the call's deadline, like nng's REQ socket. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "buf.h"
#include "ipc.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "sp_wire.h"
#include "xmalloc.h"

/*
 * A call is one blocking exchange on the caller's thread: no library
 * threads, so a round trip costs two system calls on each side instead of
 * nng's hand-offs between its poller, task and caller threads (which made
 * up most of a client's CPU; docs/statestore.md). The wire is the one
 * ipc_server.c describes, so this client also talks to any nng REP server.
 *
 * What nng's REQ socket did and callers rely on is kept:
 * - opening never fails for a server that is not there yet: the first call
 *   connects, and retries (10 ms, doubling to 200 ms) until its deadline;
 * - a connection that breaks before the reply (the server restarted) is
 *   redialled and the request sent again, within the same deadline, so a
 *   request may reach the server twice (as with nng);
 * - replies to earlier calls that timed out are recognised by their
 *   request id and skipped.
 * One client serves one thread at a time.
 */

#define REPLY_MAX (256u << 20)
#define RETRY_MIN_MS 10
#define RETRY_MAX_MS 200

struct mts_ipc_client {
	int fd; /* -1 while not connected */
	int timeout_ms;
	uint32_t next_id;
	uint8_t *in; /* received, not yet taken: in[inoff..inlen) */
	size_t inoff, inlen, incap;
	char path[108];
};


/* Outcome of one attempt: done, or why it has to be tried again. */
enum attempt { A_OK, A_RETRY, A_FAIL };

static void
disconnect(struct mts_ipc_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->inoff = c->inlen = 0;
}

/* Waits for events on c->fd until deadline; 1 ready, 0 timed out. */
static int
wait_fd(struct mts_ipc_client *c, short events, mts_time_t deadline)
{
	struct pollfd pfd = {.fd = c->fd, .events = events};
	mts_time_t now;
	int r;

	for (;;) {
		now = mts_now();
		if (now >= deadline)
			return 0;
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return 0;
	}
}

/* Sends len bytes (in two pieces, no copy). A_RETRY if the connection broke. */
static enum attempt
send_all(struct mts_ipc_client *c, const uint8_t *head, size_t hlen,
    const uint8_t *body, size_t blen, mts_time_t deadline, char *err,
    size_t errlen)
{
	struct iovec iov[2] = {{(void *)head, hlen}, {(void *)body, blen}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t n;

	while (iov[0].iov_len + iov[1].iov_len > 0) {
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN) {
				snprintf(err, errlen, "%s: connection lost: %s",
				    c->path, strerror(errno));
				return A_RETRY;
			}
			if (!wait_fd(c, POLLOUT, deadline)) {
				snprintf(err, errlen,
				    "%s did not take the request within %d ms",
				    c->path, c->timeout_ms);
				/* part of a frame may be out: the stream
				 * cannot carry another request */
				disconnect(c);
				return A_FAIL;
			}
			continue;
		}
		/* Advance over what went out. */
		if ((size_t)n >= iov[0].iov_len) {
			n -= (ssize_t)iov[0].iov_len;
			iov[0].iov_len = 0;
			iov[1].iov_base = (uint8_t *)iov[1].iov_base + n;
			iov[1].iov_len -= (size_t)n;
		} else {
			iov[0].iov_base = (uint8_t *)iov[0].iov_base + n;
			iov[0].iov_len -= (size_t)n;
		}
	}
	return A_OK;
}

/* Makes want bytes available at c->in + c->inoff. */
static enum attempt
fill(struct mts_ipc_client *c, size_t want, mts_time_t deadline, char *err,
    size_t errlen)
{
	ssize_t n;

	if (c->inoff > 0 && c->inlen - c->inoff < want) {
		memmove(c->in, c->in + c->inoff, c->inlen - c->inoff);
		c->inlen -= c->inoff;
		c->inoff = 0;
	}
	if (want > c->incap) {
		c->incap = want < 4096 ? 4096 : want;
		c->in = xreallocarray(c->in, 1, c->incap);
	}
	while (c->inlen - c->inoff < want) {
		n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
		if (n > 0) {
			c->inlen += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			snprintf(err, errlen, "%s closed the connection",
			    c->path);
			return A_RETRY;
		}
		if (errno == EAGAIN && !wait_fd(c, POLLIN, deadline)) {
			snprintf(err, errlen, "no reply from %s within %d ms",
			    c->path, c->timeout_ms);
			return A_FAIL;
		}
	}
	return A_OK;
}

/* Connects and exchanges greetings. A_RETRY while the server is not
 * there (or not ready); A_FAIL if it speaks something else. */
static enum attempt
dial(struct mts_ipc_client *c, mts_time_t deadline, char *err, size_t errlen,
    int *code)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	uint8_t hello[SP_GREETING_LEN];
	enum attempt a;
	const uint8_t *p;

	memcpy(sun.sun_path, c->path, strlen(c->path) + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		*code = -MTS_ERR_IO;
		return A_FAIL;
	}
	/* A Unix stream connect completes at once or fails (a full backlog
	 * says EAGAIN: try again later). */
	if (connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		snprintf(err, errlen, "cannot reach %s: %s", c->path,
		    strerror(errno));
		disconnect(c);
		return A_RETRY;
	}
	sp_greeting(hello, SP_PROTO_REQ);
	if ((a = send_all(c, hello, sizeof(hello), NULL, 0,
		 deadline, err, errlen)) != A_OK ||
	    (a = fill(c, SP_GREETING_LEN, deadline, err, errlen)) != A_OK) {
		disconnect(c);
		return a;
	}
	p = c->in + c->inoff;
	if (!sp_greeting_is(p, SP_PROTO_REP)) {
		snprintf(err, errlen,
		    "%s does not speak SP REP (greeting %02x%02x%02x%02x%02x"
		    "%02x%02x%02x)",
		    c->path, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
		disconnect(c);
		*code = -MTS_ERR_IO;
		return A_FAIL;
	}
	c->inoff += SP_GREETING_LEN;
	return A_OK;
}

/* Reads frames until the reply to id; body and len point into c->in. */
static enum attempt
recv_reply(struct mts_ipc_client *c, uint32_t id, const uint8_t **body,
    size_t *len, mts_time_t deadline, char *err, size_t errlen, int *code)
{
	enum attempt a;
	uint64_t flen;
	const uint8_t *p;

	for (;;) {
		if ((a = fill(c, SP_FRAME_HEAD, deadline, err, errlen)) != A_OK)
			return a;
		p = c->in + c->inoff;
		flen = mts_get_u64be(p + 1);
		if (p[0] != SP_MSG || flen < 4) {
			snprintf(err, errlen,
			    "%s sent a broken frame (type %u, %llu bytes)",
			    c->path, p[0], (unsigned long long)flen);
			*code = -MTS_ERR_IO;
			disconnect(c);
			return A_FAIL;
		}
		if (flen > REPLY_MAX) {
			snprintf(err, errlen,
			    "reply of %llu bytes from %s is over the %u-byte "
			    "limit",
			    (unsigned long long)flen, c->path, REPLY_MAX);
			*code = -MTS_ERR_TOOBIG;
			disconnect(c);
			return A_FAIL;
		}
		if ((a = fill(c, SP_FRAME_HEAD + (size_t)flen, deadline, err,
			 errlen)) != A_OK)
			return a;
		p = c->in + c->inoff;
		c->inoff += SP_FRAME_HEAD + (size_t)flen;
		if (mts_get_u32be(p + SP_FRAME_HEAD) == (id | SP_ID_END)) {
			*body = p + SP_FRAME_HEAD + 4;
			*len = (size_t)flen - 4;
			return A_OK;
		}
		/* the late reply to a call that gave up: skip it */
	}
}

/*
 * One request/reply within the client's timeout. On 0, body and len hold the
 * reply body, valid until the next call. Errors: -MTS_ERR_TIMEOUT when no
 * reply came in time (server absent, gone, or slow), -MTS_ERR_TOOBIG,
 * -MTS_ERR_IO; err says what happened.
 */
static int
exchange(struct mts_ipc_client *c, const uint8_t *req, size_t reqlen,
    const uint8_t **body, size_t *len, char *err, size_t errlen)
{
	mts_time_t deadline = mts_now() + c->timeout_ms, now;
	uint32_t id = c->next_id++ & 0x7fffffffu;
	int backoff = RETRY_MIN_MS, code = -MTS_ERR_TIMEOUT;
	uint8_t head[SP_FRAME_HEAD + 4];
	enum attempt a;

	head[0] = SP_MSG;
	mts_put_u64be(head + 1, 4 + (uint64_t)reqlen);
	mts_put_u32be(head + SP_FRAME_HEAD, id | SP_ID_END);
	for (;;) {
		a = c->fd >= 0 ? A_OK : dial(c, deadline, err, errlen, &code);
		if (a == A_OK)
			a = send_all(c, head, sizeof(head), req, reqlen,
			    deadline, err, errlen);
		if (a == A_OK)
			a = recv_reply(c, id, body, len, deadline, err, errlen,
			    &code);
		if (a == A_OK)
			return 0;
		if (a == A_FAIL)
			return code;
		/* A_RETRY: the server is not (or no longer) there. */
		disconnect(c);
		now = mts_now();
		if (now >= deadline) {
			size_t l = strlen(err);

			snprintf(err + l, errlen - l, " (tried for %d ms)",
			    c->timeout_ms);
			return -MTS_ERR_TIMEOUT;
		}
		/* the last try comes right at the deadline */
		usleep((useconds_t)(now + backoff < deadline ? backoff
							      : deadline - now) *
		    1000);
		backoff = backoff * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : backoff * 2;
	}
}

struct mts_ipc_client *
mts_ipc_client_open(const char *path, int timeout_ms, char *err,
    size_t errlen)
{
	struct mts_ipc_client *c;

	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "%s: path too long for a socket", path);
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->fd = -1;
	c->timeout_ms = timeout_ms;
	/* Request ids only tell this client's calls apart; a new client
	 * starts elsewhere so a reused connection never matches. */
	c->next_id = (uint32_t)(mts_now_us() ^ ((uint64_t)getpid() << 16));
	snprintf(c->path, sizeof(c->path), "%s", path);
	return c;
}

void
mts_ipc_client_close(struct mts_ipc_client *c)
{
	if (c == NULL)
		return;
	disconnect(c);
	free(c->in);
	free(c);
}

int
mts_ipc_client_call_raw(struct mts_ipc_client *c, const void *buf,
    size_t len, uint8_t **out, size_t *outlen)
{
	const uint8_t *body;
	char err[256];
	int r;

	if ((r = exchange(c, buf, len, &body, outlen, err, sizeof(err))) < 0)
		return r;
	*out = xmemdup(body, *outlen);
	return 0;
}

int
mts_ipc_client_call(struct mts_ipc_client *c, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *reply_desc, ProtobufCMessage **reply,
    char *err, size_t errlen)
{
	uint8_t small[4096], *buf = small;
	ProtobufCMessage *rep;
	const uint8_t *body;
	const char *text;
	size_t len;
	int r, code;

	*reply = NULL;
	mts_pb_set_version(req);
	len = protobuf_c_message_get_packed_size(req);
	if (len > sizeof(small))
		buf = xmalloc(len);
	protobuf_c_message_pack(req, buf);
	r = exchange(c, buf, len, &body, &len, err, errlen);
	if (buf != small)
		free(buf);
	if (r < 0)
		return r;
	rep = protobuf_c_message_unpack(reply_desc, NULL, len, body);
	if (rep == NULL) {
		snprintf(err, errlen, "malformed reply from %s", c->path);
		return -MTS_ERR_INVAL;
	}
	code = mts_pb_reply_error(rep, &text);
	if (code != 0) {
		snprintf(err, errlen, "%s", text);
		protobuf_c_message_free_unpacked(rep, NULL);
		return -code;
	}
	*reply = rep;
	return 0;
}
