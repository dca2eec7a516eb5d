/* ipc.c: nng PUB/SUB change feeds and their self-healing listener, protobuf envelope helpers (REP side: ipc_server.c, REQ side: ipc_client.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/pubsub0/sub.h>
#include <nng/transport/ipc/ipc.h>

#include "buf.h"
#include "ipc.h"
#include "log.h"
#include "mtserr.h"
#include "types.pb-c.h"
#include "xmalloc.h"

/*
 * A listening ipc:// endpoint that can heal itself. Debian's nng 1.5.2 has a
 * bug (nng issue 1518, fixed upstream after 1.5.2): a client that disconnects
 * during the SP handshake makes the listener stop accepting for good, so one
 * client killed at the wrong moment would cut an agent off from every future
 * caller. The change feed's listener (the one nng listener left: request/reply
 * is ipc_server.c) therefore probes itself (listener_check) and is replaced
 * when the handshake goes unanswered.
 */
struct mts_ipc_listener {
	nng_socket sock;
	nng_listener l;
	uint16_t peer_proto; /* SP protocol number a client speaks */
	char path[256];
	atomic_uint attached; /* pipes that joined the socket so far */
	unsigned probe_mark;  /* attached when the probe was sent */
	int probe_fd;         /* the outstanding probe, or -1 */
};

struct mts_pub {
	nng_socket sock;
	nng_aio *aio;
	struct mts_ipc_listener lst;
};

int
mts_path_join(char *out, size_t outlen, const char *dir, const char *name)
{
	int n = snprintf(out, outlen, "%s/%s", dir, name);

	return (n < 0 || (size_t)n >= outlen) ? -MTS_ERR_TOOBIG : 0;
}

/* --- generic envelope access --------------------------------------------- */

uint32_t
mts_pb_oneof_case(const ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	unsigned i;

	for (i = 0; i < d->n_fields; i++)
		if (d->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			return *(const uint32_t *)((const char *)msg +
			    d->fields[i].quantifier_offset);
	return 0;
}

static void *
field_ptr(const ProtobufCMessage *msg, const char *name, ProtobufCType type)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(msg->descriptor,
	        name);

	if (f == NULL || f->type != type)
		return NULL;
	return (char *)msg + f->offset;
}

void
mts_pb_set_version(ProtobufCMessage *msg)
{
	uint32_t *v = field_ptr(msg, "version", PROTOBUF_C_TYPE_UINT32);

	if (v != NULL)
		*v = MTS_IPC_VERSION;
}

void *
mts_pb_copy(const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = xmalloc(len + 1);
	ProtobufCMessage *c;

	protobuf_c_message_pack(msg, buf);
	c = protobuf_c_message_unpack(msg->descriptor, NULL, len, buf);
	free(buf);
	if (c == NULL)
		fatalx("copy of a %s failed", msg->descriptor->name);
	return c;
}

uint32_t
mts_pb_version(const ProtobufCMessage *msg)
{
	uint32_t *v = field_ptr(msg, "version", PROTOBUF_C_TYPE_UINT32);

	return v ? *v : 0;
}

void
mts_pb_set_error(ProtobufCMessage *reply, Mts__Error *e)
{
	Mts__Error **slot = field_ptr(reply, "error", PROTOBUF_C_TYPE_MESSAGE);

	if (slot != NULL)
		*slot = e;
}

int
mts_pb_reply_error(const ProtobufCMessage *reply, const char **msg)
{
	Mts__Error **e = field_ptr(reply, "error", PROTOBUF_C_TYPE_MESSAGE);

	if (msg != NULL)
		*msg = "";
	if (e == NULL || *e == NULL)
		return 0;
	if (msg != NULL && (*e)->message != NULL)
		*msg = (*e)->message;
	return (*e)->code;
}

/*
 * nng_sendmsg() allocates, seeds and frees an aio on every call (a
 * getrandom() system call each time in nng 1.5.2); the change feed, sent
 * once per write, keeps one aio instead. timeout is
 * NNG_DURATION_ZERO for "do not block", NNG_DURATION_DEFAULT for the
 * socket's own send/receive timeout. Returns an nng error code; on a
 * failed send the message stays the caller's.
 */
static int
aio_sendmsg(nng_socket s, nng_aio *aio, nng_msg *m, nng_duration timeout)
{
	int r;

	nng_aio_set_timeout(aio, timeout);
	nng_aio_set_msg(aio, m);
	nng_send_aio(s, aio);
	nng_aio_wait(aio);
	if ((r = nng_aio_result(aio)) != 0)
		nng_aio_set_msg(aio, NULL);
	return r;
}

/* --- listeners -------------------------------------------------------------- */

static int
listen_ipc(struct mts_ipc_listener *lst, nng_socket s, const char *path,
    uint16_t peer_proto, char *err, size_t errlen)
{
	char url[300];
	int r;

	lst->sock = s;
	lst->peer_proto = peer_proto;
	if (snprintf(lst->path, sizeof(lst->path), "%s", path) >=
	    (int)sizeof(lst->path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	snprintf(url, sizeof(url), "ipc://%s", path);
	if (mts_ipc_sock_dir_prepare(path, err, errlen) < 0)
		return -1;
	if (unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "%s: cannot remove stale socket: %s",
		    path, strerror(errno));
		return -1;
	}
	if ((r = nng_listener_create(&lst->l, s, url)) != 0 ||
	    (r = nng_listener_set_int(lst->l, NNG_OPT_IPC_PERMISSIONS, 0660)) !=
	        0 ||
	    (r = nng_listener_start(lst->l, 0)) != 0) {
		snprintf(err, errlen, "listen on %s: %s", url, nng_strerror(r));
		return -1;
	}
	return 0;
}

/* nng calls this (on its own thread) whenever a pipe joins the socket. */
static void
pipe_attached(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct mts_ipc_listener *lst = arg;

	atomic_fetch_add(&lst->attached, 1);
}

/* Starts listening, with the self-check armed. */
static int
listener_open(struct mts_ipc_listener *lst, nng_socket s, const char *path,
    uint16_t peer_proto, char *err, size_t errlen)
{
	lst->probe_fd = -1;
	atomic_init(&lst->attached, 0);
	nng_pipe_notify(s, NNG_PIPE_EV_ADD_POST, pipe_attached, lst);
	return listen_ipc(lst, s, path, peer_proto, err, errlen);
}

/* Opens a probe connection and sends the SP handshake; the listener is
 * healthy if some pipe joins the socket before the next check. */
static void
probe_start(struct mts_ipc_listener *lst)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint8_t hello[8] = { 0, 'S', 'P', 0, 0, 0, 0, 0 };
	size_t len = strlen(lst->path);
	int fd;

	if (len >= sizeof(sun.sun_path))
		return;
	memcpy(sun.sun_path, lst->path, len + 1);
	mts_put_u16be(hello + 4, lst->peer_proto);
	lst->probe_mark = atomic_load(&lst->attached);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    write(fd, hello, sizeof(hello)) != sizeof(hello)) {
		close(fd);
		return;
	}
	lst->probe_fd = fd;
}

static int
listener_check(struct mts_ipc_listener *lst)
{
	char err[256], path[sizeof(lst->path)];
	int wedged, rc = 0;

	if (lst->probe_fd >= 0) {
		wedged = atomic_load(&lst->attached) == lst->probe_mark;
		close(lst->probe_fd);
		lst->probe_fd = -1;
		if (wedged) {
			log_warnx("%s: listener stopped accepting; replacing it",
			    lst->path);
			nng_listener_close(lst->l);
			memcpy(path, lst->path, sizeof(path));
			if (listen_ipc(lst, lst->sock, path, lst->peer_proto,
			        err, sizeof(err)) < 0) {
				log_warnx("%s", err);
				return -MTS_ERR_IO;
			}
			rc = 1;
		}
	}
	probe_start(lst);
	return rc;
}

/* --- receive descriptors ------------------------------------------------ */

int
mts_ipc_recv_fd(nng_socket s, int *fd)
{
	return nng_socket_get_int(s, NNG_OPT_RECVFD, fd) == 0 ? 0 : -MTS_ERR_IO;
}

/* --- change feeds ---------------------------------------------------------- */

struct mts_pub *
mts_pub_open(const char *path, char *err, size_t errlen)
{
	struct mts_pub *pub = xcalloc(1, sizeof(*pub));
	int r;

	if ((r = nng_aio_alloc(&pub->aio, NULL, NULL)) != 0) {
		snprintf(err, errlen, "aio: %s", nng_strerror(r));
		free(pub);
		return NULL;
	}
	if ((r = nng_pub0_open(&pub->sock)) != 0) {
		snprintf(err, errlen, "pub socket: %s", nng_strerror(r));
		nng_aio_free(pub->aio);
		free(pub);
		return NULL;
	}
	if (listener_open(&pub->lst, pub->sock, path, 0x21 /* sub0 */, err,
	        errlen) < 0) {
		nng_close(pub->sock);
		nng_aio_free(pub->aio);
		free(pub);
		return NULL;
	}
	return pub;
}

void
mts_pub_close(struct mts_pub *pub)
{
	if (pub == NULL)
		return;
	nng_close(pub->sock);
	nng_aio_free(pub->aio);
	if (pub->lst.probe_fd >= 0)
		close(pub->lst.probe_fd);
	unlink(pub->lst.path);
	free(pub);
}

int
mts_pub_check(struct mts_pub *pub)
{
	return listener_check(&pub->lst);
}

int
mts_pub_send(struct mts_pub *pub, const void *topic, size_t tlen,
    const ProtobufCMessage *body)
{
	nng_socket s = pub->sock;
	size_t blen = protobuf_c_message_get_packed_size(body);
	nng_msg *m;
	uint8_t *p;

	if (tlen > UINT32_MAX || nng_msg_alloc(&m, tlen + blen + 4) != 0)
		return -MTS_ERR_IO;
	p = nng_msg_body(m);
	memcpy(p, topic, tlen);
	protobuf_c_message_pack(body, p + tlen);
	mts_put_u32be(p + tlen + blen, (uint32_t)tlen);
	if (aio_sendmsg(s, pub->aio, m, NNG_DURATION_ZERO) != 0) {
		nng_msg_free(m);
		return -MTS_ERR_IO;
	}
	return 0;
}

/* nng calls this (on its own thread) before a subscriber's pipe joins:
 * a feed served by anyone but the owner of its directory is hung up on
 * before it can deliver anything (ipc_path.c). */
static void
sub_check_peer(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	static atomic_int warned;
	nng_sockaddr sa;
	uint64_t uid;
	char err[512];

	if (nng_pipe_get_addr(p, NNG_OPT_REMADDR, &sa) != 0 ||
	    sa.s_family != NNG_AF_IPC ||
	    nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &uid) != 0) {
		nng_pipe_close(p);
		return;
	}
	if (mts_ipc_check_server_uid(sa.s_ipc.sa_path, (uid_t)uid, err,
	        sizeof(err)) < 0) {
		if (atomic_exchange(&warned, 1) == 0)
			log_warnx("%s", err);
		else
			log_debug("%s", err);
		nng_pipe_close(p);
	}
}

int
mts_sub_open(const char *path, const void *prefix, size_t plen, nng_socket *s,
    char *err, size_t errlen)
{
	char url[300];
	int r;

	snprintf(url, sizeof(url), "ipc://%s", path);
	if ((r = nng_sub0_open(s)) != 0) {
		snprintf(err, errlen, "sub socket: %s", nng_strerror(r));
		return -MTS_ERR_IO;
	}
	nng_socket_set_ms(*s, NNG_OPT_RECONNMINT, 10);
	nng_socket_set_ms(*s, NNG_OPT_RECONNMAXT, 200);
	nng_socket_set_size(*s, NNG_OPT_RECVMAXSZ, 64u << 20);
	nng_socket_set_int(*s, NNG_OPT_RECVBUF, 1024);
	nng_pipe_notify(*s, NNG_PIPE_EV_ADD_PRE, sub_check_peer, NULL);
	if ((r = nng_socket_set(*s, NNG_OPT_SUB_SUBSCRIBE, prefix, plen)) !=
	        0 ||
	    (r = nng_dial(*s, url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
		snprintf(err, errlen, "subscribe %s: %s", url, nng_strerror(r));
		nng_close(*s);
		return -MTS_ERR_IO;
	}
	return 0;
}

int
mts_sub_recv(nng_socket s, const ProtobufCMessageDescriptor *desc,
    ProtobufCMessage **body, int flags)
{
	nng_msg *m;
	uint8_t *p;
	size_t len;
	uint32_t tlen;
	int r;

	*body = NULL;
	if ((r = nng_recvmsg(s, &m, flags)) != 0)
		return (r == NNG_EAGAIN || r == NNG_ETIMEDOUT)
		    ? -MTS_ERR_TIMEOUT
		    : -MTS_ERR_IO;
	p = nng_msg_body(m);
	len = nng_msg_len(m);
	if (len < 4 || (tlen = mts_get_u32be(p + len - 4)) > len - 4) {
		nng_msg_free(m);
		return -MTS_ERR_INVAL;
	}
	*body = protobuf_c_message_unpack(desc, NULL, len - 4 - tlen, p + tlen);
	nng_msg_free(m);
	return *body ? 0 : -MTS_ERR_INVAL;
}
