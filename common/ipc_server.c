/* ipc_server.c: the REP side of local IPC, run on the agent's own loop — SP over ipc:// as nng's REQ clients speak it, with no library thread between a request and its handler. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "acl.h"
#include "buf.h"
#include "ipc.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "sp_wire.h"
#include "types.pb-c.h"
#include "xmalloc.h"

/*
 * Why not nng's REP socket: in nng 1.5 a request crosses the poller thread
 * and two or three task threads before the agent sees it, and the reply
 * crosses as many on its way out. On a 2-core VM those hand-offs were three
 * quarters of the statestore's CPU (docs/statestore.md). Clients still use
 * nng's REQ socket; this file speaks the same wire, so any SP REQ client
 * (nng, mangos, a swapped agent) can call any mts agent.
 *
 * The wire is in sp_wire.h; a reply repeats its request's backtrace, then
 * carries its body.
 *
 * Everything here runs on the thread that calls mts_ipc_server_drain; a
 * call may be answered later (group commit holds calls across rounds), so
 * calls keep their connection's struct alive with a reference count. epoll
 * names a connection by slot and generation, never by pointer: an event
 * fetched for a connection that a handler closed meanwhile finds its slot
 * empty or reused and is skipped.
 */

#define SP_MAX_HOPS 8 /* nng's default NNG_OPT_MAXTTL */
#define MAX_CONNS 1024
#define HANDSHAKE_MS 5000 /* a peer must say hello within this */
#define READ_MIN 16384    /* free room asked of read() */
#define EVENTS 64
#define LISTENER UINT64_MAX /* epoll data of the listening socket */

struct out {
	struct out *next;
	size_t len, off;
	uint8_t data[];
};

struct conn {
	struct mts_ipc_server *srv; /* NULL once closed */
	uint32_t slot, gen;         /* srv->slot[slot], epoll's name for it */
	int fd;
	uid_t uid;
	gid_t gid;
	bool hello;       /* the peer's handshake arrived */
	bool closed;      /* fd gone; freed when refs drop to 0 */
	bool want_out;    /* EPOLLOUT registered */
	unsigned refs;    /* 1 while open, + calls not yet answered */
	mts_time_t since; /* accepted at */
	uint8_t *in;      /* received, not yet parsed: in[inoff..inlen) */
	size_t inoff, inlen, incap;
	struct out *out_head, *out_tail;
	size_t outbytes;
};

struct mts_ipc_server {
	const struct mts_ipc_service *svc;
	void *ctx;
	const struct mts_acl_table *acl; /* svc->acl resolved, or NULL */
	int lfd, epfd;
	bool accept_paused; /* out of descriptors: listener out of epoll */
	size_t maxmsg;
	size_t nconns;
	uint32_t gen;                 /* last generation handed out */
	struct conn *slot[MAX_CONNS]; /* open connections */
	char path[108];
};

/* A request in flight: the backtrace routes the reply back. */
struct mts_ipc_call {
	const struct mts_ipc_service *svc;
	struct conn *conn;
	uint8_t bt[4 * SP_MAX_HOPS];
	size_t btlen;
	uid_t uid;
	gid_t gid;
};

/* --- connections ----------------------------------------------------------- */

/* send(2) is sendto, which agents' seccomp allow-lists need not have;
 * sendmsg is what nng used, so every shipped policy allows it. No SIGPIPE
 * for a caller that hung up, never blocking. */
static ssize_t
send_some(int fd, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	return sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void
conn_unref(struct conn *c)
{
	if (--c->refs == 0)
		free(c);
}

static uint64_t
conn_tag(const struct conn *c)
{
	return (uint64_t)c->gen << 32 | c->slot;
}

/* Drops the connection: its fd and buffers now, the struct once no call
 * refers to it any more. Replies to its calls are discarded. */
static void
conn_close(struct conn *c)
{
	struct mts_ipc_server *srv = c->srv;
	struct out *o, *next;

	if (c->closed)
		return;
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	srv->slot[c->slot] = NULL;
	srv->nconns--;
	close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	for (o = c->out_head; o != NULL; o = next) {
		next = o->next;
		free(o);
	}
	c->out_head = c->out_tail = NULL;
	c->closed = true;
	c->srv = NULL;
	conn_unref(c); /* the open connection's own reference */
}

static void
conn_watch_out(struct conn *c, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0),
		.data.u64 = conn_tag(c) };

	if (c->want_out == on)
		return;
	c->want_out = on;
	epoll_ctl(c->srv->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes what is queued; 0, or -1 when the connection had to be closed. */
static int
conn_flush(struct conn *c)
{
	struct out *o;
	ssize_t n;

	while ((o = c->out_head) != NULL) {
		n = send_some(c->fd, o->data + o->off, o->len - o->off);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			log_debug("%s: reply to uid %u not sent: %s",
			    c->srv->svc->name, (unsigned)c->uid,
			    strerror(errno));
			conn_close(c);
			return -1;
		}
		o->off += (size_t)n;
		c->outbytes -= (size_t)n;
		if (o->off < o->len)
			break;
		c->out_head = o->next;
		if (c->out_head == NULL)
			c->out_tail = NULL;
		free(o);
	}
	conn_watch_out(c, c->out_head != NULL);
	return 0;
}

/* Sends a whole frame, queueing what the socket does not take now. */
static void
conn_send(struct conn *c, const uint8_t *frame, size_t len)
{
	struct out *o;
	ssize_t n = 0;

	if (c->closed)
		return;
	if (c->out_head == NULL) {
		n = send_some(c->fd, frame, len);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			log_debug("%s: reply to uid %u not sent: %s",
			    c->srv->svc->name, (unsigned)c->uid,
			    strerror(errno));
			conn_close(c);
			return;
		}
		if (n < 0)
			n = 0;
		if ((size_t)n == len)
			return;
	}
	/* A caller that stops reading cannot make the agent hold its
	 * replies without bound. */
	if (c->outbytes + len - (size_t)n > 4 * c->srv->maxmsg + (64u << 20)) {
		log_warnx("%s: uid %u does not read its replies; "
		          "closing its connection",
		    c->srv->svc->name, (unsigned)c->uid);
		conn_close(c);
		return;
	}
	o = xmalloc(sizeof(*o) + len - (size_t)n);
	memcpy(o->data, frame + n, len - (size_t)n);
	o->len = len - (size_t)n;
	o->off = 0;
	o->next = NULL;
	if (c->out_tail != NULL)
		c->out_tail->next = o;
	else
		c->out_head = o;
	c->out_tail = o;
	c->outbytes += o->len;
	conn_watch_out(c, true);
}

static void
accept_one(struct mts_ipc_server *srv, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	uint8_t hello[SP_GREETING_LEN];
	struct conn *c;
	uint32_t i;

	if (srv->nconns >= MAX_CONNS) {
		/* Room is made from peers that never said hello. */
		for (i = 0; i < MAX_CONNS; i++)
			if (!srv->slot[i]->hello)
				break;
		if (i == MAX_CONNS) {
			log_warnx("%s: %d connections already; refusing one",
			    srv->svc->name, MAX_CONNS);
			close(fd);
			return;
		}
		conn_close(srv->slot[i]);
	}
	for (i = 0; srv->slot[i] != NULL; i++)
		;
	c = xcalloc(1, sizeof(*c));
	c->srv = srv;
	c->slot = i;
	c->gen = ++srv->gen;
	c->fd = fd;
	c->refs = 1;
	c->since = mts_now();
	/* Unknown credentials map to uid/gid -1, which no ACL contains. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0) {
		c->uid = cred.uid;
		c->gid = cred.gid;
	} else {
		c->uid = (uid_t)-1;
		c->gid = (gid_t)-1;
	}
	ev.data.u64 = conn_tag(c);
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		log_warn("%s: epoll_ctl", srv->svc->name);
		close(fd);
		free(c);
		return;
	}
	srv->slot[i] = c;
	srv->nconns++;
	sp_greeting(hello, SP_PROTO_REP);
	conn_send(c, hello, sizeof(hello));
}

static void
accept_all(struct mts_ipc_server *srv)
{
	int fd, i;

	for (i = 0; i < EVENTS; i++) {
		fd =
		    accept4(srv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* The waiting peer stays in the backlog and the
			 * listener stays readable: without a pause the loop
			 * would spin here. mts_ipc_server_check resumes. */
			log_warnx("%s: out of file descriptors; not accepting "
			          "for a second",
			    srv->svc->name);
			epoll_ctl(srv->epfd, EPOLL_CTL_DEL, srv->lfd, NULL);
			srv->accept_paused = true;
			return;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("%s: accept", srv->svc->name);
			return;
		}
		accept_one(srv, fd);
	}
}

/* --- requests ---------------------------------------------------------------- */

static const struct mts_ipc_route *
find_route(const struct mts_ipc_service *svc, uint32_t type)
{
	size_t i;

	for (i = 0; i < svc->nroutes; i++)
		if (svc->routes[i].type == type)
			return &svc->routes[i];
	return NULL;
}

/* The caller's classes: from the access table when the service has one (no
 * table set yet: none), else from its classify function. */
static uint32_t
caller_classes(const struct mts_ipc_server *srv, const struct mts_ipc_call *c)
{
	const struct mts_ipc_service *svc = srv->svc;

	if (svc->acl != NULL)
		return mts_acl_classify(srv->acl, c->uid, c->gid);
	if (svc->classify != NULL)
		return svc->classify(srv->ctx, c->uid, c->gid);
	return MTS_IPC_ANY;
}

/* Decodes, authorizes and dispatches one request body. The dispatcher owns
 * the unpacked message and frees it once the handler returns. */
static void
dispatch(struct mts_ipc_server *srv, struct mts_ipc_call *call,
    const uint8_t *body, size_t len)
{
	const struct mts_ipc_service *svc = srv->svc;
	const struct mts_ipc_route *route;
	ProtobufCMessage *req;
	uint32_t classes, type, version;

	req = protobuf_c_message_unpack(svc->request, NULL, len, body);
	if (req == NULL) {
		log_debug("%s: malformed request of %zu bytes from uid %u",
		    svc->name, len, (unsigned)call->uid);
		mts_ipc_reply_error(call, MTS_ERR_INVAL,
		    "malformed request (%zu bytes): not a %s message", len,
		    svc->request->name);
		return;
	}
	version = mts_pb_version(req);
	type = mts_pb_oneof_case(req);
	route = find_route(svc, type);
	if (version != MTS_IPC_VERSION) {
		mts_ipc_reply_error(call, MTS_ERR_VERSION,
		    "unsupported protocol version %u (this server speaks %u)",
		    version, MTS_IPC_VERSION);
	} else if (route == NULL) {
		mts_ipc_reply_error(call, MTS_ERR_UNIMPL,
		    "unknown request type %u for %s", type, svc->name);
	} else {
		classes = caller_classes(srv, call);
		if ((classes & route->allow) == 0) {
			log_info("%s: denied %s to uid %u gid %u", svc->name,
			    route->name, (unsigned)call->uid,
			    (unsigned)call->gid);
			mts_ipc_reply_error(call, MTS_ERR_DENIED,
			    "uid %u is not allowed to call %s on %s",
			    (unsigned)call->uid, route->name, svc->name);
		} else {
			route->fn(srv->ctx, req, call);
		}
	}
	protobuf_c_message_free_unpacked(req, NULL);
}

/* One SP message from c: split off the backtrace, dispatch the body.
 * Returns -1 when the peer broke the protocol (the caller closes). */
static int
take_message(struct conn *c, const uint8_t *msg, size_t len)
{
	struct mts_ipc_call *call;
	size_t bt = 0;

	for (;;) {
		if (len - bt < 4) {
			log_info("%s: message without a request id from uid "
			         "%u; closing its connection",
			    c->srv->svc->name, (unsigned)c->uid);
			return -1;
		}
		bt += 4;
		if (mts_get_u32be(msg + bt - 4) & SP_ID_END)
			break;
		if (bt / 4 >= SP_MAX_HOPS) {
			/* Not malformed, just too far travelled (nng drops
			 * these too, keeping the connection). */
			log_debug("%s: request over %d hops dropped",
			    c->srv->svc->name, SP_MAX_HOPS);
			return 0;
		}
	}
	call = xcalloc(1, sizeof(*call));
	call->svc = c->srv->svc;
	call->conn = c;
	c->refs++;
	memcpy(call->bt, msg, bt);
	call->btlen = bt;
	call->uid = c->uid;
	call->gid = c->gid;
	dispatch(c->srv, call, msg + bt, len - bt);
	return 0;
}

/* Parses what c has received: the handshake, then whole messages.
 * Returns the number of requests dispatched. */
static int
parse(struct conn *c)
{
	struct mts_ipc_server *srv = c->srv;
	const char *name = srv->svc->name;
	uint8_t *p;
	uint64_t len;
	size_t have;
	int n = 0;

	while (!c->closed) {
		p = c->in + c->inoff;
		have = c->inlen - c->inoff;
		if (!c->hello) {
			if (have < SP_GREETING_LEN)
				break;
			if (!sp_greeting_is(p, SP_PROTO_REQ)) {
				log_info("%s: uid %u does not speak SP REQ "
				         "(handshake %02x%02x%02x%02x%02x%02x"
				         "%02x%02x); closing its connection",
				    name, (unsigned)c->uid, p[0], p[1], p[2],
				    p[3], p[4], p[5], p[6], p[7]);
				conn_close(c);
				break;
			}
			c->hello = true;
			c->inoff += SP_GREETING_LEN;
			continue;
		}
		if (have < SP_FRAME_HEAD)
			break;
		len = mts_get_u64be(p + 1);
		if (p[0] != SP_MSG) {
			log_info("%s: frame of unknown type %u from uid %u; "
			         "closing its connection",
			    name, p[0], (unsigned)c->uid);
			conn_close(c);
			break;
		}
		if (len > srv->maxmsg) {
			log_info("%s: message of %llu bytes from uid %u is over "
			         "the %zu-byte limit; closing its connection",
			    name, (unsigned long long)len, (unsigned)c->uid,
			    srv->maxmsg);
			conn_close(c);
			break;
		}
		if (have < SP_FRAME_HEAD + len)
			break;
		c->inoff += SP_FRAME_HEAD + len;
		if (take_message(c, p + SP_FRAME_HEAD, (size_t)len) < 0) {
			conn_close(c);
			break;
		}
		n++;
	}
	return n;
}

/* Reads what c has for us (one read: the loop stays fair between peers;
 * epoll reports the rest again) and handles it. The caller holds a
 * reference on c. */
static int
conn_readable(struct conn *c)
{
	size_t need, have;
	ssize_t r;
	int n;

	/* Keep unparsed bytes at the front, with room for a whole frame. */
	have = c->inlen - c->inoff;
	if (c->inoff > 0) {
		memmove(c->in, c->in + c->inoff, have);
		c->inoff = 0;
		c->inlen = have;
	}
	need = have + READ_MIN;
	if (c->hello && have >= SP_FRAME_HEAD) {
		uint64_t len = mts_get_u64be(c->in + 1);

		if (len <= c->srv->maxmsg && SP_FRAME_HEAD + len > need)
			need = SP_FRAME_HEAD + (size_t)len;
	}
	if (need > c->incap) {
		c->incap = need;
		c->in = xreallocarray(c->in, 1, c->incap);
	}
	r = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c); /* the caller hung up */
		return 0;
	}
	if (r < 0)
		return 0;
	c->inlen += (size_t)r;
	n = parse(c); /* the caller holds a reference: c outlives a close */
	/* An idle peer should not pin a large buffer. */
	if (!c->closed && c->inoff == c->inlen && c->incap > 4 * READ_MIN) {
		free(c->in);
		c->in = NULL;
		c->inoff = c->inlen = c->incap = 0;
	}
	return n;
}

/* --- the server ------------------------------------------------------------------ */

static int
listen_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: path too long for a socket", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (mts_ipc_sock_dir_prepare(path, err, errlen) < 0)
		return -1;
	if (unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "%s: cannot remove stale socket: %s",
		    path, strerror(errno));
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* Mode before listen: nobody outside the group can connect even
	 * for a moment. */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    chmod(path, 0660) < 0 || listen(fd, SOMAXCONN) < 0) {
		snprintf(err, errlen, "listen on %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

struct mts_ipc_server *
mts_ipc_server_open(const char *path, const struct mts_ipc_service *svc,
    void *ctx, char *err, size_t errlen)
{
	struct mts_ipc_server *srv = xcalloc(1, sizeof(*srv));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = LISTENER };

	srv->svc = svc;
	srv->ctx = ctx;
	srv->maxmsg = svc->maxmsg ? svc->maxmsg : MTS_IPC_DEFAULT_MAXMSG;
	srv->epfd = -1;
	snprintf(srv->path, sizeof(srv->path), "%s", path);
	if ((srv->lfd = listen_unix(path, err, errlen)) < 0)
		goto fail;
	if ((srv->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev) < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		goto fail;
	}
	return srv;
fail:
	if (srv->lfd >= 0) {
		close(srv->lfd);
		unlink(path);
	}
	if (srv->epfd >= 0)
		close(srv->epfd);
	free(srv);
	return NULL;
}

void
mts_ipc_server_set_acl(struct mts_ipc_server *srv,
    const struct mts_acl_table *acl)
{
	srv->acl = acl;
}

void
mts_ipc_server_close(struct mts_ipc_server *srv)
{
	uint32_t i;

	if (srv == NULL)
		return;
	for (i = 0; i < MAX_CONNS; i++)
		if (srv->slot[i] != NULL)
			conn_close(srv->slot[i]);
	close(srv->lfd);
	close(srv->epfd);
	unlink(srv->path);
	free(srv);
}

int
mts_ipc_server_fd(struct mts_ipc_server *srv)
{
	return srv->epfd;
}

/* Peers that connected but never said hello within HANDSHAKE_MS are let
 * go, and a listener paused for want of descriptors listens again. (The
 * listener is ours, so there is no wedged accept to heal: nng 1.5.2's
 * listener needed a probe for that, see ipc.c.) */
int
mts_ipc_server_check(struct mts_ipc_server *srv)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = LISTENER };
	mts_time_t now = mts_now();
	struct conn *c;
	uint32_t i;

	if (srv->accept_paused &&
	    epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev) == 0)
		srv->accept_paused = false;
	for (i = 0; i < MAX_CONNS; i++) {
		if ((c = srv->slot[i]) != NULL && !c->hello &&
		    now - c->since > HANDSHAKE_MS) {
			log_info("%s: uid %u connected but never said hello; "
			         "closing its connection",
			    srv->svc->name, (unsigned)c->uid);
			conn_close(c);
		}
	}
	return 0;
}

int
mts_ipc_server_drain(struct mts_ipc_server *srv, int max)
{
	struct epoll_event ev[EVENTS];
	int i, n, done = 0;

	while (done < max) {
		n = epoll_wait(srv->epfd, ev, EVENTS, 0);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;
			struct conn *c;

			if (tag == LISTENER) {
				accept_all(srv);
				continue;
			}
			/* An earlier event of this batch may have closed
			 * the connection (and a new one taken its slot). */
			c = srv->slot[(uint32_t)tag];
			if (c == NULL || c->gen != (uint32_t)(tag >> 32))
				continue;
			c->refs++;
			if ((ev[i].events & EPOLLOUT) && conn_flush(c) < 0) {
				conn_unref(c);
				continue;
			}
			if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				done += conn_readable(c);
			conn_unref(c);
		}
		if (n < EVENTS)
			break;
	}
	return done;
}

/* --- calls ------------------------------------------------------------------------ */

uid_t
mts_ipc_call_uid(const struct mts_ipc_call *c)
{
	return c->uid;
}

gid_t
mts_ipc_call_gid(const struct mts_ipc_call *c)
{
	return c->gid;
}

void
mts_ipc_call_drop(struct mts_ipc_call *call)
{
	conn_unref(call->conn);
	free(call);
}

void
mts_ipc_reply(struct mts_ipc_call *call, ProtobufCMessage *msg)
{
	size_t blen, len;
	uint8_t *frame;

	if (call->conn->closed) { /* the caller went away */
		mts_ipc_call_drop(call);
		return;
	}
	mts_pb_set_version(msg);
	blen = protobuf_c_message_get_packed_size(msg);
	len = SP_FRAME_HEAD + call->btlen + blen;
	frame = xmalloc(len);
	frame[0] = SP_MSG;
	mts_put_u64be(frame + 1, call->btlen + blen);
	memcpy(frame + SP_FRAME_HEAD, call->bt, call->btlen);
	protobuf_c_message_pack(msg, frame + SP_FRAME_HEAD + call->btlen);
	conn_send(call->conn, frame, len);
	free(frame);
	mts_ipc_call_drop(call);
}

void
mts_ipc_reply_error(struct mts_ipc_call *call, int code, const char *fmt, ...)
{
	const ProtobufCMessageDescriptor *d = call->svc->reply;
	ProtobufCMessage *reply = xcalloc(1, d->sizeof_message);
	Mts__Error e = MTS__ERROR__INIT;
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	protobuf_c_message_init(d, reply);
	e.code = code < 0 ? -code : code;
	e.message = text;
	mts_pb_set_error(reply, &e);
	mts_ipc_reply(call, reply);
	free(reply);
}
