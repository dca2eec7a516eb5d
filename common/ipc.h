/* ipc.h: local IPC — REP servers on the agent's loop with a dispatch table and peer-uid authorization (ipc_server.c), REQ clients with deadlines (ipc_client.c), nng PUB/SUB feeds. */
#ifndef MTS_IPC_H
#define MTS_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nng/nng.h>
#include <protobuf-c/protobuf-c.h>

#define MTS_IPC_VERSION 1
#define MTS_IPC_DEFAULT_MAXMSG (4u << 20)

/* Caller classes: a server maps a peer uid/gid to a bitmask of these
 * (MTS_CALLER_* in acl.h, through the agent's access table), and a route
 * lists the classes it accepts. */
#define MTS_IPC_ANY 0xffffffffu

struct mts_acl_rule;
struct mts_acl_table;

struct mts_ipc_call; /* a received request awaiting its reply */

typedef void (*mts_ipc_handler_fn)(void *ctx, const ProtobufCMessage *req,
    struct mts_ipc_call *call);

/* One row of a dispatch table: the oneof case of the request body. */
struct mts_ipc_route {
	uint32_t type;
	const char *name;
	uint32_t allow; /* classes allowed to call it */
	mts_ipc_handler_fn fn;
};

struct mts_ipc_service {
	const char *name; /* for log lines */
	const ProtobufCMessageDescriptor *request;
	const ProtobufCMessageDescriptor *reply;
	const struct mts_ipc_route *routes;
	size_t nroutes;
	/* Who may call: the agent's access table (acl.h). A server refuses
	 * every call until mts_ipc_server_set_acl gives it the table
	 * resolved from mts.conf. */
	const struct mts_acl_rule *acl;
	/* Or: maps the kernel-reported peer credentials to caller classes.
	 * With neither, every caller may call every route. */
	uint32_t (*classify)(void *ctx, uid_t uid, gid_t gid);
	size_t maxmsg; /* 0 = MTS_IPC_DEFAULT_MAXMSG */
};

struct mts_ipc_server;

/* Listens on ipc://path (mode 0660, stale file removed) and speaks SP REP
 * to nng REQ clients, entirely on the calling thread. ctx is passed to
 * every handler. Returns NULL with err filled on failure. Every function
 * of the server and its calls must run on that one thread; calls must be
 * answered or dropped before mts_ipc_server_close. */
struct mts_ipc_server *mts_ipc_server_open(const char *path,
    const struct mts_ipc_service *svc, void *ctx, char *err, size_t errlen);
void mts_ipc_server_close(struct mts_ipc_server *);
/* The resolved access table (loaded from the service's acl rules) that
 * classifies callers from now on; it must outlive the server or the next
 * call of this function. */
void mts_ipc_server_set_acl(struct mts_ipc_server *,
    const struct mts_acl_table *);
/* A file descriptor that polls readable when the server has work (a
 * request, a connection, room for a queued reply): call drain then. */
int mts_ipc_server_fd(struct mts_ipc_server *);
/* Closes connections that never completed the SP handshake within 5 s and
 * resumes accepting after running out of descriptors; call about once a
 * second. Returns 0. */
int mts_ipc_server_check(struct mts_ipc_server *);
/* Receives and dispatches every waiting request without blocking; returns
 * how many were handled. Handlers may reply at once or keep the call. */
int mts_ipc_server_drain(struct mts_ipc_server *, int max);

/* The caller's uid/gid as the kernel reported them. */
uid_t mts_ipc_call_uid(const struct mts_ipc_call *);
gid_t mts_ipc_call_gid(const struct mts_ipc_call *);
/* Sends the reply (packed from msg, whose `version` is set here) and frees
 * the call. msg stays owned by the caller. */
void mts_ipc_reply(struct mts_ipc_call *, ProtobufCMessage *msg);
/* Sends a Reply with only `error` set, and frees the call. */
void mts_ipc_reply_error(struct mts_ipc_call *, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Frees a call without replying (the client will time out). */
void mts_ipc_call_drop(struct mts_ipc_call *);

/* Client side: SP REQ to ipc://path on the caller's thread (ipc_client.c).
 * Opening does not connect: a call connects (retrying until its deadline
 * while the server is not up) and redials if the server restarted. One
 * thread at a time per client. */
struct mts_ipc_client;

struct mts_ipc_client *mts_ipc_client_open(const char *path, int timeout_ms,
    char *err, size_t errlen);
void mts_ipc_client_close(struct mts_ipc_client *);
/* Sends req (its `version` is set here) and waits for the reply until the
 * deadline. On 0, *reply is the unpacked Reply, which the caller frees with
 * protobuf_c_message_free_unpacked. A Reply carrying an error returns that
 * code negated, with its message in err, and no *reply. No reply in time
 * (server absent, gone or slow) is -MTS_ERR_TIMEOUT. */
int mts_ipc_client_call(struct mts_ipc_client *, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *reply_desc, ProtobufCMessage **reply,
    char *err, size_t errlen);

/*
 * Asynchronous client on the agent's loop (ipc_client.c): calls return at
 * once and their outcome comes to a callback, on the loop's thread, exactly
 * once and never from inside the call that started it. Many calls may be in
 * flight on one client (one connection, replies matched by request id, in
 * any order); each has one deadline. Like the blocking client it connects
 * when a call needs it, redials (10 ms doubling to 200 ms) while the server
 * is absent or after it went away, sends the calls in flight again on the
 * new connection, and skips replies to calls that gave up.
 */
struct mts_loop;
struct mts_ipc_async;
struct mts_ipc_req; /* a call in flight; invalid once its callback ran */

/* rc 0: reply is the unpacked Reply, owned by the client and freed when
 * the callback returns (copy what you keep). Otherwise reply is NULL and
 * rc is the server's error code negated (its message in err),
 * -MTS_ERR_TIMEOUT (no reply by the deadline: server absent, gone, slow),
 * -MTS_ERR_CANCELED (mts_ipc_req_cancel or mts_ipc_async_close),
 * -MTS_ERR_INVAL (undecodable reply), -MTS_ERR_IO or -MTS_ERR_TOOBIG (the
 * server broke the protocol). */
typedef void (*mts_ipc_reply_fn)(void *arg, int rc,
    const ProtobufCMessage *reply, const char *err);
/* The raw form: body/len is the reply body (valid during the callback). */
typedef void (*mts_ipc_raw_fn)(void *arg, int rc, const uint8_t *body,
    size_t len, const char *err);

/* Does not connect. timeout_ms is the default deadline of a call. NULL with
 * err filled if path cannot be a socket. */
struct mts_ipc_async *mts_ipc_async_open(struct mts_loop *, const char *path,
    int timeout_ms, char *err, size_t errlen);
/* Calls every callback in flight with -MTS_ERR_CANCELED, then frees the
 * client (later, if called from one of its callbacks). NULL is fine. */
void mts_ipc_async_close(struct mts_ipc_async *);
/* Packs req (its `version` is set here; req stays the caller's) and sends
 * it; timeout_ms <= 0 takes the client's default. NULL only while the
 * client is closing. */
struct mts_ipc_req *mts_ipc_async_call(struct mts_ipc_async *,
    ProtobufCMessage *req, const ProtobufCMessageDescriptor *reply_desc,
    int timeout_ms, mts_ipc_reply_fn fn, void *arg);
/* Sends len bytes as the request body (copied). */
struct mts_ipc_req *mts_ipc_async_call_raw(struct mts_ipc_async *,
    const void *buf, size_t len, int timeout_ms, mts_ipc_raw_fn fn, void *arg);
/* Ends a call now: its callback runs (inside this function) with
 * -MTS_ERR_CANCELED; a reply that comes later is skipped. NULL is fine. */
void mts_ipc_req_cancel(struct mts_ipc_req *);
/* Calls in flight. */
size_t mts_ipc_async_inflight(const struct mts_ipc_async *);
/* The loop the client runs on (for a caller's own timers). */
struct mts_loop *mts_ipc_async_loop(const struct mts_ipc_async *);

/* Raw helpers, for tests that must send malformed bytes. */
int mts_ipc_client_call_raw(struct mts_ipc_client *, const void *buf,
    size_t len, uint8_t **out, size_t *outlen);

/* Change feeds: PUB/SUB, message = topic || packed body || u32be topic length. */
struct mts_pub;

struct mts_pub *mts_pub_open(const char *path, char *err, size_t errlen);
void mts_pub_close(struct mts_pub *);
/* Same as mts_ipc_server_check, for the feed's listener. */
int mts_pub_check(struct mts_pub *);
int mts_pub_send(struct mts_pub *, const void *topic, size_t tlen,
    const ProtobufCMessage *body);
int mts_sub_open(const char *path, const void *prefix, size_t plen,
    nng_socket *s, char *err, size_t errlen);
/* Receives one message (flags: 0 or NNG_FLAG_NONBLOCK); on 0 *body is the
 * unpacked message (caller frees). -MTS_ERR_TIMEOUT when nothing came. */
int mts_sub_recv(nng_socket s, const ProtobufCMessageDescriptor *desc,
    ProtobufCMessage **body, int flags);

/* Fills fd with the socket's receive-ready descriptor. */
int mts_ipc_recv_fd(nng_socket s, int *fd);

/* Generic envelope access, by the field names of proto/types.proto. */
uint32_t mts_pb_oneof_case(const ProtobufCMessage *msg);
uint32_t mts_pb_version(const ProtobufCMessage *msg);
void mts_pb_set_version(ProtobufCMessage *msg);
/* A deep copy of msg (packed and unpacked again), which the caller frees
 * with protobuf_c_message_free_unpacked; out of memory is fatal. */
void *mts_pb_copy(const ProtobufCMessage *msg);
/* Points the Reply's `error` field at e (not copied). */
struct Mts__Error;
void mts_pb_set_error(ProtobufCMessage *reply, struct Mts__Error *e);
/* The Reply's error code (0 when absent) and message. */
int mts_pb_reply_error(const ProtobufCMessage *reply, const char **msg);

/* Joins dir and name into out; -MTS_ERR_TOOBIG if it does not fit. */
int mts_path_join(char *out, size_t outlen, const char *dir, const char *name);

/*
 * Where sockets live and who serves them (ipc_path.c, docs/agents.md):
 * every agent's sockets are in <rundir>/<agent>/, a directory owned by the
 * agent's user that only it can create entries in, in a run directory only
 * root can create entries in. Clients check, before sending anything, that
 * the server's peer uid is the owner of the socket's directory.
 */
/* <rundir>/<agent>: the agent's socket directory (init makes it). */
int mts_ipc_agent_dir(char *out, size_t outlen, const char *rundir,
    const char *agent);
/* <rundir>/<agent>/<file>; file NULL means the agent's request socket,
 * <agent>.sock (init's: admin.sock). -MTS_ERR_INVAL for an agent name
 * outside [a-z0-9_-] or a file name with a '/', -MTS_ERR_TOOBIG if it
 * does not fit. */
int mts_ipc_sock_path(char *out, size_t outlen, const char *rundir,
    const char *agent, const char *file);
/* The uid that must serve the socket at path: its directory's owner,
 * provided nobody else can write to that directory and nobody but root
 * (or the caller) to its parent. 0, or a negative mts_err with err set. */
int mts_ipc_expected_uid(const char *path, uid_t *uid, char *err,
    size_t errlen);
/* 0 if peer is that uid; else -MTS_ERR_IO with err saying who serves it. */
int mts_ipc_check_server_uid(const char *path, uid_t peer, char *err,
    size_t errlen);
/* The same for the connected socket fd (SO_PEERCRED). */
int mts_ipc_check_server(int fd, const char *path, char *err, size_t errlen);
/* Server side: creates the socket's directory (0750) when it is missing,
 * as an agent run without init must. */
int mts_ipc_sock_dir_prepare(const char *path, char *err, size_t errlen);

#endif
