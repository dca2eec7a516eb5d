/* ipc_client.c: the REQ side of local IPC — SP over ipc://, blocking on the caller's own thread or asynchronous on its loop, reconnecting and resending until the call's deadline, like nng's REQ socket. */
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
#include "loop.h"
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
	struct pollfd pfd = { .fd = c->fd, .events = events };
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
	struct iovec iov[2] = { { (void *)head, hlen },
		{ (void *)body, blen } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
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
			/* a greeting has no body (NULL): nothing to advance */
			if (n > 0)
				iov[1].iov_base =
				    (uint8_t *)iov[1].iov_base + n;
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
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
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
	/* Nothing goes to a server that is not the socket's owner. */
	if ((*code = mts_ipc_check_server(c->fd, c->path, err, errlen)) < 0) {
		disconnect(c);
		return A_FAIL;
	}
	*code = -MTS_ERR_TIMEOUT;
	sp_greeting(hello, SP_PROTO_REQ);
	if ((a = send_all(c, hello, sizeof(hello), NULL, 0, deadline, err,
	         errlen)) != A_OK ||
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
		backoff =
		    backoff * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : backoff * 2;
	}
}

struct mts_ipc_client *
mts_ipc_client_open(const char *path, int timeout_ms, char *err, size_t errlen)
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
mts_ipc_client_call_raw(struct mts_ipc_client *c, const void *buf, size_t len,
    uint8_t **out, size_t *outlen)
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

/* --- asynchronous calls on a loop ------------------------------------------- */

/*
 * The same wire and the same promises (connect and redial until a call's
 * deadline, resend what a broken connection lost, skip late replies), but
 * nothing blocks: calls are queued on one connection, each frame tagged with
 * its own request id, and their replies (in any order, as ipc_server.c may
 * answer them) are matched by id on the loop's thread. Each call has one
 * deadline, a timer of its own. A callback is always called exactly once,
 * from the loop (never from inside mts_ipc_async_call): with the reply, the
 * error the server sent, -MTS_ERR_TIMEOUT, or -MTS_ERR_CANCELED.
 */

struct mts_ipc_req {
	struct mts_ipc_async *c;
	struct mts_ipc_req *prev, *next;
	uint32_t id;
	uint8_t *frame; /* header + id + body, kept to resend after a redial */
	size_t flen;
	uint64_t gen;     /* connection the frame was queued on, 0 none */
	uint64_t end_pos; /* stream position just past the frame */
	int timeout_ms;
	const ProtobufCMessageDescriptor *desc; /* NULL: raw */
	mts_ipc_reply_fn fn;
	mts_ipc_raw_fn raw_fn;
	void *arg;
	struct mts_timer deadline;
};

struct mts_ipc_async {
	struct mts_loop *loop;
	int fd;
	uint64_t gen; /* connection number, bumped by each connect */
	int hello;    /* the server's greeting arrived */
	struct mts_watch *w;
	struct mts_buf out; /* bytes not yet written: out.data[outoff..) */
	size_t outoff;
	uint64_t queued_pos; /* bytes queued on this connection so far */
	uint64_t sent_pos;   /* bytes written on it so far */
	uint8_t *in;
	size_t inoff, inlen, incap;
	struct mts_ipc_req *head, *tail;
	size_t n;
	struct mts_timer redial;
	int backoff;
	int timeout_ms;
	uint32_t next_id;
	int depth;   /* callbacks running */
	int closing; /* freed when depth drops to 0 */
	char lasterr[160];
	char path[108];
};

static void async_disconnect(struct mts_ipc_async *, const char *why);
static void async_io(void *arg, int fd, uint32_t events, mts_time_t now);

static void
req_unlink(struct mts_ipc_req *r)
{
	struct mts_ipc_async *c = r->c;

	if (r->prev)
		r->prev->next = r->next;
	else
		c->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		c->tail = r->prev;
	c->n--;
	mts_timer_disarm(c->loop, &r->deadline);
}

/* Removes r and calls its callback once; then frees it. body is the raw
 * reply (rc 0) and err the reason otherwise. */
static void
req_finish(struct mts_ipc_req *r, int rc, const uint8_t *body, size_t len,
    const char *err)
{
	struct mts_ipc_async *c = r->c;
	ProtobufCMessage *rep = NULL;
	const char *text = err;
	char msg[512]; /* the server's message outlives its reply */
	int code;

	req_unlink(r);
	c->depth++;
	if (r->desc == NULL) {
		r->raw_fn(r->arg, rc, rc == 0 ? body : NULL, rc == 0 ? len : 0,
		    rc == 0 ? "" : err);
		goto out;
	}
	if (rc == 0 &&
	    (rep = protobuf_c_message_unpack(r->desc, NULL, len, body)) ==
	        NULL) {
		rc = -MTS_ERR_INVAL;
		text = "malformed reply";
	}
	if (rc == 0 && (code = mts_pb_reply_error(rep, &text)) != 0) {
		rc = -code;
		snprintf(msg, sizeof(msg), "%s", text ? text : "");
		text = msg;
		protobuf_c_message_free_unpacked(rep, NULL);
		rep = NULL;
	}
	r->fn(r->arg, rc, rep, rc == 0 ? "" : text);
	if (rep)
		protobuf_c_message_free_unpacked(rep, NULL);
out:
	c->depth--;
	free(r->frame);
	free(r);
}

static void
async_free(struct mts_ipc_async *c)
{
	mts_timer_disarm(c->loop, &c->redial);
	async_disconnect(c, NULL);
	mts_buf_free(&c->out);
	free(c->in);
	free(c);
}

/* Fails every call in flight with rc (the server spoke garbage, the client
 * closes). */
static void
fail_all(struct mts_ipc_async *c, int rc, const char *err)
{
	while (c->head)
		req_finish(c->head, rc, NULL, 0, err);
}

static void
queue_frame(struct mts_ipc_async *c, struct mts_ipc_req *r)
{
	mts_buf_put(&c->out, r->frame, r->flen);
	c->queued_pos += r->flen;
	r->gen = c->gen;
	r->end_pos = c->queued_pos;
}

/* Writes what is queued; on a broken connection disconnects. */
static void
async_flush(struct mts_ipc_async *c)
{
	ssize_t n;

	while (c->fd >= 0 && c->outoff < c->out.len) {
		n = send(c->fd, c->out.data + c->outoff, c->out.len - c->outoff,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			snprintf(c->lasterr, sizeof(c->lasterr),
			    "%s: connection lost: %s", c->path,
			    strerror(errno));
			async_disconnect(c, c->lasterr);
			return;
		}
		c->outoff += (size_t)n;
		c->sent_pos += (uint64_t)n;
	}
	if (c->fd < 0)
		return;
	if (c->outoff == c->out.len) {
		mts_buf_reset(&c->out);
		c->outoff = 0;
	}
	(void)mts_watch_set(c->w,
	    MTS_LOOP_IN | (c->outoff < c->out.len ? MTS_LOOP_OUT : 0));
}

static void
arm_redial(struct mts_ipc_async *c)
{
	mts_time_t now = mts_loop_now(c->loop);

	if (c->redial.armed || c->head == NULL || c->closing)
		return;
	mts_timer_arm(c->loop, &c->redial, now + c->backoff);
	c->backoff =
	    c->backoff * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : c->backoff * 2;
}

/* Connects (a Unix connect completes at once or fails), sends the greeting
 * and every call in flight after it. */
static void
async_dial(struct mts_ipc_async *c)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint8_t hello[SP_GREETING_LEN];
	struct mts_ipc_req *r;
	int connected = 0, trusted = 0;

	if (c->fd >= 0 || c->head == NULL || c->closing)
		return;
	memcpy(sun.sun_path, c->path, strlen(c->path) + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* A server that is not the socket's owner is sent nothing: the
	 * calls fail at their deadline saying who serves it. */
	if (c->fd >= 0 &&
	    (connected = connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) ==
	            0) &&
	    (trusted = mts_ipc_check_server(c->fd, c->path, c->lasterr,
	                   sizeof(c->lasterr)) == 0) &&
	    (c->w = mts_loop_watch(c->loop, c->fd, MTS_LOOP_IN, "ipc client",
	         async_io, c)) != NULL) {
		c->gen++;
		c->hello = 0;
		c->queued_pos = c->sent_pos = 0;
		sp_greeting(hello, SP_PROTO_REQ);
		mts_buf_put(&c->out, hello, sizeof(hello));
		c->queued_pos += sizeof(hello);
		for (r = c->head; r; r = r->next)
			queue_frame(c, r);
		async_flush(c);
		return;
	}
	if (!connected || trusted)
		snprintf(c->lasterr, sizeof(c->lasterr), "cannot reach %s: %s",
		    c->path, strerror(errno));
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	arm_redial(c);
}

/* Drops the connection; the calls in flight stay queued and go out again
 * on the next connection (after a backoff). */
static void
async_disconnect(struct mts_ipc_async *c, const char *why)
{
	if (c->fd < 0)
		return;
	mts_watch_free(c->w);
	c->w = NULL;
	close(c->fd);
	c->fd = -1;
	mts_buf_reset(&c->out);
	c->outoff = 0;
	c->inoff = c->inlen = 0;
	if (why)
		arm_redial(c);
}

static void
on_redial(void *arg, mts_time_t now)
{
	async_dial(arg);
}

/* Takes one complete frame from c->in if there is one: 1 taken, 0 more
 * bytes needed, -1 the stream is broken (the client was disconnected). */
static int
take_frame(struct mts_ipc_async *c)
{
	const uint8_t *p = c->in + c->inoff;
	size_t have = c->inlen - c->inoff;
	uint64_t flen;
	uint32_t id;
	struct mts_ipc_req *r;
	uint64_t gen = c->gen;

	if (!c->hello) {
		if (have < SP_GREETING_LEN)
			return 0;
		if (!sp_greeting_is(p, SP_PROTO_REP)) {
			snprintf(c->lasterr, sizeof(c->lasterr),
			    "%s does not speak SP REP", c->path);
			async_disconnect(c, NULL);
			fail_all(c, -MTS_ERR_IO, c->lasterr);
			return -1;
		}
		c->hello = 1;
		c->backoff = RETRY_MIN_MS;
		c->inoff += SP_GREETING_LEN;
		return 1;
	}
	if (have < SP_FRAME_HEAD)
		return 0;
	flen = mts_get_u64be(p + 1);
	if (p[0] != SP_MSG || flen < 4 || flen > REPLY_MAX) {
		snprintf(c->lasterr, sizeof(c->lasterr),
		    "%s sent a broken frame (type %u, %llu bytes)", c->path,
		    p[0], (unsigned long long)flen);
		async_disconnect(c, NULL);
		fail_all(c, flen > REPLY_MAX ? -MTS_ERR_TOOBIG : -MTS_ERR_IO,
		    c->lasterr);
		return -1;
	}
	if (have < SP_FRAME_HEAD + flen)
		return 0;
	c->inoff += SP_FRAME_HEAD + (size_t)flen;
	id = mts_get_u32be(p + SP_FRAME_HEAD) & ~SP_ID_END;
	for (r = c->head; r; r = r->next)
		if (r->id == id)
			break;
	if (r == NULL)
		return 1; /* the late reply to a call that gave up */
	req_finish(r, 0, p + SP_FRAME_HEAD + 4, (size_t)flen - 4, NULL);
	/* the callback may have closed the client or broken the stream */
	return c->closing || c->gen != gen || c->fd < 0 ? -1 : 1;
}

/* Reads what is there and hands out complete replies. */
static void
async_read(struct mts_ipc_async *c)
{
	ssize_t n;
	int r;

	for (;;) {
		if (c->inoff > 0 && c->inoff == c->inlen)
			c->inoff = c->inlen = 0;
		if (c->incap - c->inlen < 4096) {
			if (c->inoff > 0) {
				memmove(c->in, c->in + c->inoff,
				    c->inlen - c->inoff);
				c->inlen -= c->inoff;
				c->inoff = 0;
			}
			if (c->incap - c->inlen < 4096) {
				c->incap = c->incap ? c->incap * 2 : 65536;
				c->in = xreallocarray(c->in, 1, c->incap);
			}
		}
		n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			snprintf(c->lasterr, sizeof(c->lasterr),
			    "%s closed the connection", c->path);
			async_disconnect(c, c->lasterr);
			return;
		}
		c->inlen += (size_t)n;
		while ((r = take_frame(c)) == 1)
			;
		if (r < 0)
			return;
	}
}

static void
async_io(void *arg, int fd, uint32_t events, mts_time_t now)
{
	struct mts_ipc_async *c = arg;

	c->depth++;
	if (events & (MTS_LOOP_IN | EPOLLHUP | EPOLLERR))
		async_read(c);
	if (c->fd >= 0 && !c->closing && (events & MTS_LOOP_OUT))
		async_flush(c);
	c->depth--;
	if (c->closing && c->depth == 0)
		async_free(c);
}

/* A call's deadline. */
static void
on_deadline(void *arg, mts_time_t now)
{
	struct mts_ipc_req *r = arg;
	struct mts_ipc_async *c = r->c;
	char err[400];
	/* part of its frame is still unwritten: the stream cannot carry
	 * another request, start a new connection for the others */
	int cut = r->gen != 0 && r->gen == c->gen && c->fd >= 0 &&
	    r->end_pos > c->sent_pos;

	c->depth++;
	snprintf(err, sizeof(err), "no reply from %s within %d ms%s%s", c->path,
	    r->timeout_ms, c->fd < 0 ? ": " : "", c->fd < 0 ? c->lasterr : "");
	req_finish(r, -MTS_ERR_TIMEOUT, NULL, 0, err);
	if (cut && !c->closing)
		async_disconnect(c, "a request could not be sent");
	c->depth--;
	if (c->closing && c->depth == 0)
		async_free(c);
}

struct mts_ipc_async *
mts_ipc_async_open(struct mts_loop *loop, const char *path, int timeout_ms,
    char *err, size_t errlen)
{
	struct mts_ipc_async *c;

	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "%s: path too long for a socket", path);
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->loop = loop;
	c->fd = -1;
	c->timeout_ms = timeout_ms;
	c->backoff = RETRY_MIN_MS;
	c->next_id = (uint32_t)(mts_now_us() ^ ((uint64_t)getpid() << 16));
	mts_buf_init(&c->out);
	mts_timer_init(&c->redial, "ipc redial", on_redial, c);
	snprintf(c->path, sizeof(c->path), "%s", path);
	return c;
}

void
mts_ipc_async_close(struct mts_ipc_async *c)
{
	if (c == NULL || c->closing)
		return;
	c->closing = 1;
	c->depth++;
	fail_all(c, -MTS_ERR_CANCELED, "the client was closed");
	c->depth--;
	if (c->depth == 0)
		async_free(c);
}

size_t
mts_ipc_async_inflight(const struct mts_ipc_async *c)
{
	return c->n;
}

struct mts_loop *
mts_ipc_async_loop(const struct mts_ipc_async *c)
{
	return c->loop;
}

static struct mts_ipc_req *
req_new(struct mts_ipc_async *c, const void *body, size_t len, int timeout_ms,
    void *arg)
{
	struct mts_ipc_req *r = xcalloc(1, sizeof(*r));
	mts_time_t now = mts_loop_now(c->loop);

	r->c = c;
	r->id = c->next_id++ & 0x7fffffffu;
	r->timeout_ms = timeout_ms > 0 ? timeout_ms : c->timeout_ms;
	r->arg = arg;
	r->flen = SP_FRAME_HEAD + 4 + len;
	r->frame = xmalloc(r->flen);
	r->frame[0] = SP_MSG;
	mts_put_u64be(r->frame + 1, 4 + (uint64_t)len);
	mts_put_u32be(r->frame + SP_FRAME_HEAD, r->id | SP_ID_END);
	if (len > 0)
		memcpy(r->frame + SP_FRAME_HEAD + 4, body, len);
	mts_timer_init(&r->deadline, "ipc call deadline", on_deadline, r);
	mts_timer_arm(c->loop, &r->deadline, now + r->timeout_ms);
	r->prev = c->tail;
	if (c->tail)
		c->tail->next = r;
	else
		c->head = r;
	c->tail = r;
	c->n++;
	return r;
}

/* Sends r on the open connection, or dials for it. */
static void
req_start(struct mts_ipc_async *c, struct mts_ipc_req *r)
{
	if (c->fd >= 0) {
		queue_frame(c, r);
		async_flush(c);
	} else if (!c->redial.armed) {
		async_dial(c);
	}
}

struct mts_ipc_req *
mts_ipc_async_call_raw(struct mts_ipc_async *c, const void *buf, size_t len,
    int timeout_ms, mts_ipc_raw_fn fn, void *arg)
{
	struct mts_ipc_req *r;

	if (c->closing)
		return NULL;
	r = req_new(c, buf, len, timeout_ms, arg);
	r->raw_fn = fn;
	req_start(c, r);
	return r;
}

struct mts_ipc_req *
mts_ipc_async_call(struct mts_ipc_async *c, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *reply_desc, int timeout_ms,
    mts_ipc_reply_fn fn, void *arg)
{
	uint8_t small[4096], *buf = small;
	struct mts_ipc_req *r;
	size_t len;

	if (c->closing)
		return NULL;
	mts_pb_set_version(req);
	len = protobuf_c_message_get_packed_size(req);
	if (len > sizeof(small))
		buf = xmalloc(len);
	protobuf_c_message_pack(req, buf);
	r = req_new(c, buf, len, timeout_ms, arg);
	if (buf != small)
		free(buf);
	r->desc = reply_desc;
	r->fn = fn;
	req_start(c, r);
	return r;
}

void
mts_ipc_req_cancel(struct mts_ipc_req *r)
{
	struct mts_ipc_async *c;
	int cut;

	if (r == NULL)
		return;
	c = r->c;
	cut = r->gen != 0 && r->gen == c->gen && c->fd >= 0 &&
	    r->end_pos > c->sent_pos;
	c->depth++;
	req_finish(r, -MTS_ERR_CANCELED, NULL, 0, "the call was canceled");
	if (cut && !c->closing)
		async_disconnect(c, "a request could not be sent");
	c->depth--;
	if (c->closing && c->depth == 0)
		async_free(c);
}
