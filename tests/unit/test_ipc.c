/* test_ipc.c: the generic IPC server/client — dispatch, authorization, error replies, bad input, peers speaking broken SP, clients outliving servers, the asynchronous client on a loop (many calls, slow, restarting and silent servers, cancel and close), change feed, clients refusing a server that is not the socket directory's owner. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include "buf.h"
#include "ipc.h"
#include "ipc_echo.h"
#include "loop.h"
#include "mtserr.h"
#include "mtstime.h"
#include "statestore.pb-c.h"

#define CLASS_READ 1u
#define CLASS_WRITE 2u

static char tdir[64], sock_path[128], pub_path[128];
static volatile int stop_server;

static uint32_t
classify(void *ctx, uid_t uid, gid_t gid)
{
	return CLASS_READ; /* nobody may write in this test */
}

static void
h_put(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	fail_msg("put must be refused before its handler");
}

static const struct mts_ipc_route routes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_GET, "get", CLASS_READ, ipc_echo_get },
	{ MTS__STATESTORE__REQUEST__BODY_PUT, "put", CLASS_WRITE, h_put },
};

static const struct mts_ipc_service svc = {
	.name = "test",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = routes,
	.nroutes = 2,
	.classify = classify,
	.maxmsg = 1024,
};

static void *
server_main(void *arg)
{
	struct mts_ipc_server *srv = arg;
	struct pollfd pfd = { .fd = mts_ipc_server_fd(srv), .events = POLLIN };

	int turns = 0;

	/* Every server function runs on this one thread, check included. */
	while (!stop_server) {
		poll(&pfd, 1, 20);
		mts_ipc_server_drain(srv, 64);
		if (++turns % 5 == 0)
			assert_int_equal(mts_ipc_server_check(srv), 0);
	}
	return NULL;
}

static struct mts_ipc_server *srv;
static pthread_t thr;

static int
setup(void **state)
{
	char err[256];

	/* A directory of our own: clients trust its owner (ipc_path.c). */
	snprintf(tdir, sizeof(tdir), "/tmp/mts-ipc.XXXXXX");
	if (mkdtemp(tdir) == NULL)
		return -1;
	snprintf(sock_path, sizeof(sock_path), "%s/test.sock", tdir);
	snprintf(pub_path, sizeof(pub_path), "%s/test.pub", tdir);
	srv = mts_ipc_server_open(sock_path, &svc, NULL, err, sizeof(err));
	if (srv == NULL)
		fail_msg("%s", err);
	stop_server = 0;
	pthread_create(&thr, NULL, server_main, srv);
	return 0;
}

static int
teardown(void **state)
{
	stop_server = 1;
	pthread_join(thr, NULL);
	mts_ipc_server_close(srv);
	unlink(pub_path);
	rmdir(tdir);
	return 0;
}

static struct mts_ipc_client *
client(void)
{
	char err[256];
	struct mts_ipc_client *c =
	    mts_ipc_client_open(sock_path, 2000, err, sizeof(err));

	if (c == NULL)
		fail_msg("%s", err);
	return c;
}

static void
test_call_ok(void **state)
{
	struct mts_ipc_client *c = client();
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep;
	char err[256];

	get.key.data = (uint8_t *)"k1";
	get.key.len = 2;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	assert_int_equal(mts_ipc_client_call(c, &req.base,
	                     &mts__statestore__reply__descriptor,
	                     (ProtobufCMessage **)&rep, err, sizeof(err)),
	    0);
	assert_int_equal(rep->version, MTS_IPC_VERSION);
	assert_int_equal(rep->body_case, MTS__STATESTORE__REPLY__BODY_GET);
	assert_memory_equal(rep->get->record->value.data, "k1", 2);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	mts_ipc_client_close(c);
}

static void
test_denied(void **state)
{
	struct mts_ipc_client *c = client();
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	ProtobufCMessage *rep;
	char err[256];

	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	assert_int_equal(mts_ipc_client_call(c, &req.base,
	                     &mts__statestore__reply__descriptor, &rep, err,
	                     sizeof(err)),
	    -MTS_ERR_DENIED);
	assert_non_null(strstr(err, "not allowed to call put"));
	mts_ipc_client_close(c);
}

/* Sends raw bytes and returns the error code of the reply. */
static int
raw_error(struct mts_ipc_client *c, const void *buf, size_t len,
    const char *want)
{
	Mts__Statestore__Reply *rep;
	uint8_t *out;
	size_t outlen;
	const char *msg;
	int code;

	assert_int_equal(mts_ipc_client_call_raw(c, buf, len, &out, &outlen),
	    0);
	rep = mts__statestore__reply__unpack(NULL, outlen, out);
	free(out);
	assert_non_null(rep);
	code = mts_pb_reply_error(&rep->base, &msg);
	if (strstr(msg, want) == NULL)
		fail_msg("error '%s' lacks '%s'", msg, want);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return code;
}

static void
test_bad_input(void **state)
{
	struct mts_ipc_client *c = client();
	/* field 1 (version) = 1, then field 99 (unknown oneof) = empty */
	static const uint8_t unknown[] = { 0x08, 0x01, 0x9a, 0x06, 0x00 };
	static const uint8_t v2[] = { 0x08, 0x02, 0x82, 0x01, 0x00 };
	static const uint8_t garbage[] = { 0xff, 0xff, 0xff, 0xff, 0x0f };
	/* a get whose key length runs past the end: truncated */
	static const uint8_t truncated[] = { 0x08, 0x01, 0x82, 0x01, 0x05, 0x0a,
		0x09, 'a' };
	uint8_t big[2048] = { 0 };
	int i;
	uint8_t *out;
	size_t outlen;

	assert_int_equal(raw_error(c, unknown, sizeof(unknown),
	                     "unknown request type"),
	    MTS_ERR_UNIMPL);
	assert_int_equal(raw_error(c, v2, sizeof(v2), "version 2"),
	    MTS_ERR_VERSION);
	assert_int_equal(raw_error(c, garbage, sizeof(garbage), "malformed"),
	    MTS_ERR_INVAL);
	assert_int_equal(raw_error(c, truncated, sizeof(truncated),
	                     "malformed"),
	    MTS_ERR_INVAL);
	mts_ipc_client_close(c);
	/* Oversized: the server drops it and the connection (no reply). */
	c = mts_ipc_client_open(sock_path, 300, NULL, 0);
	assert_true(
	    mts_ipc_client_call_raw(c, big, sizeof(big), &out, &outlen) < 0);
	mts_ipc_client_close(c);
	/* Clients gone mid-handshake (this wedged nng 1.5.2's own listener) */
	for (i = 0; i < 5; i++) {
		c = mts_ipc_client_open(sock_path, 300, NULL, 0);
		mts_ipc_client_close(c);
	}
	/* and the server still serves */
	test_call_ok(state);
}

/* --- peers speaking SP by hand --------------------------------------------- */

static const uint8_t hello_req[8] = { 0, 'S', 'P', 0, 0, 0x30, 0, 0 };

/* Reads exactly len bytes within 2 s; the count read (short on EOF). */
static size_t
read_full(int fd, uint8_t *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		if (poll(&pfd, 1, 2000) <= 0)
			fail_msg("no data from the server within 2 s");
		if ((n = read(fd, buf + got, len - got)) <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static void
write_full(int fd, const void *buf, size_t len)
{
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
}

/* Connects and checks the server's greeting: SP, protocol REP. */
static int
raw_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint8_t hello[8];
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strcpy(sun.sun_path, sock_path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(read_full(fd, hello, 8), 8);
	assert_memory_equal(hello, "\0SP\0\0\x31\0\0", 8);
	return fd;
}

/* The server must hang up on fd (after whatever it had queued). */
static void
expect_hangup(int fd, const char *what)
{
	uint8_t buf[256];

	if (read_full(fd, buf, sizeof(buf)) == sizeof(buf))
		fail_msg("%s: the server kept the connection", what);
	close(fd);
}

/* A get of key as a whole SP frame with request id rid. */
static size_t
get_frame(uint8_t *out, uint32_t rid, const char *key)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	size_t blen;

	get.key.data = (uint8_t *)key;
	get.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	mts_pb_set_version(&req.base);
	blen = protobuf_c_message_pack(&req.base, out + 13);
	out[0] = 1;
	mts_put_u64be(out + 1, 4 + blen);
	mts_put_u32be(out + 9, rid | 0x80000000u);
	return 13 + blen;
}

/* Reads one reply frame; checks its request id and the echoed key. */
static void
expect_get_reply(int fd, uint32_t rid, const char *key)
{
	uint8_t head[13], body[2048];
	Mts__Statestore__Reply *rep;
	uint64_t len;

	assert_int_equal(read_full(fd, head, 13), 13);
	assert_int_equal(head[0], 1);
	len = mts_get_u64be(head + 1);
	assert_true(len >= 4 && len - 4 <= sizeof(body));
	assert_int_equal(mts_get_u32be(head + 9), rid | 0x80000000u);
	assert_int_equal(read_full(fd, body, len - 4), len - 4);
	rep = mts__statestore__reply__unpack(NULL, len - 4, body);
	assert_non_null(rep);
	assert_int_equal(rep->body_case, MTS__STATESTORE__REPLY__BODY_GET);
	assert_int_equal(rep->get->record->value.len, strlen(key));
	assert_memory_equal(rep->get->record->value.data, key, strlen(key));
	protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static void
test_broken_peers(void **state)
{
	static const uint8_t sub_hello[8] = { 0, 'S', 'P', 0, 0, 0x21, 0, 0 };
	uint8_t f[4096], frame[512];
	size_t n, i;
	int fd, silent;

	/* Not SP at all */
	fd = raw_connect();
	write_full(fd, "GET / HTTP/1.0\r\n\r\n", 18);
	expect_hangup(fd, "HTTP request");
	/* SP, but a SUB socket */
	fd = raw_connect();
	write_full(fd, sub_hello, 8);
	expect_hangup(fd, "SUB handshake");
	/* A frame of unknown type */
	fd = raw_connect();
	write_full(fd, hello_req, 8);
	n = get_frame(f, 1, "k");
	f[0] = 2;
	write_full(fd, f, n);
	expect_hangup(fd, "frame type 2");
	/* A length over the service's 1024-byte limit, body never sent */
	fd = raw_connect();
	write_full(fd, hello_req, 8);
	memset(f, 0, 9);
	f[0] = 1;
	mts_put_u64be(f + 1, UINT64_MAX);
	write_full(fd, f, 9);
	expect_hangup(fd, "2^64-byte message");
	/* A message too short for a request id */
	fd = raw_connect();
	write_full(fd, hello_req, 8);
	memcpy(f, "\x01\0\0\0\0\0\0\0\x02\x80\x01", 11);
	write_full(fd, f, 11);
	expect_hangup(fd, "2-byte message");

	/* A peer that connects and says nothing holds no one up. */
	silent = raw_connect();
	/* A backtrace of more than 8 hops is dropped, the connection kept. */
	fd = raw_connect();
	write_full(fd, hello_req, 8);
	memset(f, 0, sizeof(f));
	f[0] = 1;
	mts_put_u64be(f + 1, 40);
	write_full(fd, f, 9 + 40);
	n = get_frame(f, 7, "after-hops");
	write_full(fd, f, n);
	expect_get_reply(fd, 7, "after-hops");
	/* One byte per write: partial headers and bodies. */
	n = get_frame(f, 8, "bytewise");
	for (i = 0; i < n; i++)
		write_full(fd, f + i, 1);
	expect_get_reply(fd, 8, "bytewise");
	/* Pipelined requests in one write, answered with their own ids. */
	n = get_frame(f, 9, "first");
	n += get_frame(f + n, 10, "second");
	write_full(fd, f, n);
	expect_get_reply(fd, 9, "first");
	expect_get_reply(fd, 10, "second");
	/* A truncated message, then a hang-up mid-frame. */
	n = get_frame(f, 11, "truncated");
	write_full(fd, f, n - 3);
	close(fd);

	/* A caller that reads nothing while 2 MB of replies pile up: the
	 * rest is queued and sent as the socket drains. */
	fd = raw_connect();
	write_full(fd, hello_req, 8);
	memset(frame, 'v', sizeof(frame));
	frame[sizeof(frame) - 1] = '\0';
	for (i = 0; i < 4000; i++) {
		n = get_frame(f, (uint32_t)i, (const char *)frame + 100);
		write_full(fd, f, n);
	}
	for (i = 0; i < 4000; i++)
		expect_get_reply(fd, (uint32_t)i, (const char *)frame + 100);
	close(fd);
	close(silent);
	/* and the server still serves nng clients */
	test_call_ok(state);
}

/* --- the client against servers that come, go and misbehave -------------- */

static char alt_path[128];

/* A second real server on alt_path, serving until stop_alt. */
static volatile int stop_alt;

static void *
alt_server(void *arg)
{
	int delay_ms = *(int *)arg;
	struct mts_ipc_server *s;
	struct pollfd pfd;
	char err[256];

	usleep((useconds_t)delay_ms * 1000);
	if ((s = mts_ipc_server_open(alt_path, &svc, NULL, err, sizeof(err))) ==
	    NULL)
		fail_msg("%s", err);
	pfd.fd = mts_ipc_server_fd(s);
	pfd.events = POLLIN;
	while (!stop_alt) {
		poll(&pfd, 1, 20);
		mts_ipc_server_drain(s, 64);
	}
	mts_ipc_server_close(s);
	return NULL;
}

static int
alt_get(struct mts_ipc_client *c, const char *key, char *err, size_t errlen)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep;
	int r;

	get.key.data = (uint8_t *)key;
	get.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	r = mts_ipc_client_call(c, &req.base,
	    &mts__statestore__reply__descriptor, (ProtobufCMessage **)&rep, err,
	    errlen);
	if (r == 0) {
		assert_memory_equal(rep->get->record->value.data, key,
		    strlen(key));
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	return r;
}

static void
test_client_lifecycle(void **state)
{
	struct mts_ipc_client *c;
	pthread_t t;
	char err[256];
	int64_t t0;
	int delay = 300, r;

	snprintf(alt_path, sizeof(alt_path), "%s/alt.sock", tdir);
	unlink(alt_path);
	/* No server at all: a timeout that names the socket, on time. */
	c = mts_ipc_client_open(alt_path, 300, err, sizeof(err));
	assert_non_null(c);
	t0 = mts_now_us();
	r = alt_get(c, "k", err, sizeof(err));
	assert_int_equal(r, -MTS_ERR_TIMEOUT);
	assert_non_null(strstr(err, "cannot reach"));
	assert_non_null(strstr(err, alt_path));
	assert_in_range(mts_now_us() - t0, 250000, 1000000);
	mts_ipc_client_close(c);

	/* A client opened before its server: the call waits for it. */
	c = mts_ipc_client_open(alt_path, 3000, err, sizeof(err));
	stop_alt = 0;
	pthread_create(&t, NULL, alt_server, &delay);
	assert_int_equal(alt_get(c, "early", err, sizeof(err)), 0);
	/* The server restarts between two calls: the client redials. */
	stop_alt = 1;
	pthread_join(t, NULL);
	stop_alt = 0;
	delay = 100;
	pthread_create(&t, NULL, alt_server, &delay);
	assert_int_equal(alt_get(c, "after-restart", err, sizeof(err)), 0);
	stop_alt = 1;
	pthread_join(t, NULL);
	mts_ipc_client_close(c);
}

/* A fake server on alt_path that runs one script per connection. */
enum fake_script { F_GREET_HTTP, F_STALE_THEN_RIGHT, F_HUGE_REPLY, F_SILENT };

static void *
fake_server(void *arg)
{
	enum fake_script script = *(enum fake_script *)arg;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint8_t buf[4096], hello[8] = { 0, 'S', 'P', 0, 0, 0x31, 0, 0 };
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), fd;
	uint32_t id;
	uint64_t len;

	strcpy(sun.sun_path, alt_path);
	unlink(alt_path);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	fd = accept(lfd, NULL, NULL);
	if (script == F_GREET_HTTP) {
		write_full(fd, "HTTP/1.0", 8);
	} else {
		write_full(fd, hello, 8);
		assert_int_equal(read_full(fd, buf, 8), 8);
		assert_int_equal(read_full(fd, buf, 13), 13);
		len = mts_get_u64be(buf + 1);
		id = mts_get_u32be(buf + 9);
		assert_int_equal(read_full(fd, buf + 13, len - 4), len - 4);
		if (script == F_STALE_THEN_RIGHT) {
			/* a late reply to some older call (other bytes),
			 * then ours: the request's bytes back */
			mts_put_u32be(buf + 9, id - 1);
			buf[13] ^= 0xff;
			write_full(fd, buf, 9 + len);
			mts_put_u32be(buf + 9, id);
			buf[13] ^= 0xff;
			write_full(fd, buf, 9 + len);
		} else if (script == F_HUGE_REPLY) {
			mts_put_u64be(buf + 1, 1ull << 40);
			write_full(fd, buf, 13);
		}
	}
	/* hold the connection until the client is done with it */
	read_full(fd, buf, 1);
	close(fd);
	close(lfd);
	unlink(alt_path);
	return NULL;
}

static int
fake_call(enum fake_script script, char *err, size_t errlen)
{
	struct mts_ipc_client *c;
	uint8_t *out = NULL, req[] = { 0x08, 0x01 };
	size_t outlen;
	pthread_t t;
	int r;

	pthread_create(&t, NULL, fake_server, &script);
	c = mts_ipc_client_open(alt_path, 500, err, errlen);
	r = mts_ipc_client_call_raw(c, req, sizeof(req), &out, &outlen);
	if (r == 0) {
		assert_int_equal(outlen, sizeof(req));
		assert_memory_equal(out, req, sizeof(req));
	}
	free(out);
	mts_ipc_client_close(c);
	pthread_join(t, NULL);
	return r;
}

static void
test_client_broken_servers(void **state)
{
	char err[256];

	/* (each fake is up before the client's first retry ends) */
	assert_int_equal(fake_call(F_GREET_HTTP, err, sizeof(err)),
	    -MTS_ERR_IO);
	assert_int_equal(fake_call(F_STALE_THEN_RIGHT, err, sizeof(err)), 0);
	assert_int_equal(fake_call(F_HUGE_REPLY, err, sizeof(err)),
	    -MTS_ERR_TOOBIG);
	assert_int_equal(fake_call(F_SILENT, err, sizeof(err)),
	    -MTS_ERR_TIMEOUT);
}

/* Out of descriptors: the server pauses accepting instead of spinning on a
 * listener that stays readable, and resumes at its next check. Runs in a
 * child, which lowers its own descriptor limit. Exit status: 0 or the
 * number of the step that failed. */
static int
fd_child(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct pollfd pfd = { .events = POLLIN };
	struct mts_ipc_server *s;
	struct rlimit rl;
	uint8_t hello[8];
	int cl[8], i, k;
	char err[256];

	snprintf(alt_path, sizeof(alt_path), "%s/fd.sock", tdir);
	if ((s = mts_ipc_server_open(alt_path, &svc, NULL, err, sizeof(err))) ==
	    NULL)
		return 1;
	pfd.fd = mts_ipc_server_fd(s);
	strcpy(sun.sun_path, alt_path);
	for (i = 0; i < 8; i++)
		cl[i] = socket(AF_UNIX, SOCK_STREAM, 0);
	/* room for exactly two more descriptors */
	k = dup(0);
	close(k);
	rl.rlim_cur = (rlim_t)k + 2;
	rl.rlim_max = RLIM_INFINITY;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 2;
	rl.rlim_cur = (rlim_t)k + 2;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 2;
	for (i = 0; i < 8; i++)
		if (connect(cl[i], (struct sockaddr *)&sun, sizeof(sun)) < 0)
			return 3;
	mts_ipc_server_drain(s, 64); /* accepts two, then runs out */
	if (read_full(cl[0], hello, 8) != 8 || read_full(cl[1], hello, 8) != 8)
		return 4;
	if (poll(&pfd, 1, 0) != 0) /* a paused listener wakes nobody */
		return 5;
	close(cl[0]);
	close(cl[1]);
	if (poll(&pfd, 1, 1000) != 1) /* the two hang-ups */
		return 6;
	mts_ipc_server_drain(s, 64);
	mts_ipc_server_check(s); /* listens again */
	mts_ipc_server_drain(s, 64);
	if (read_full(cl[2], hello, 8) != 8 || read_full(cl[3], hello, 8) != 8)
		return 7;
	if (poll(&pfd, 1, 0) != 0)
		return 8;
	mts_ipc_server_close(s);
	return 0;
}

static void
test_out_of_fds(void **state)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fd_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* The wire is nng's: an nng REQ socket calls mts's server, and mts's client
 * calls an nng REP socket (a swapped agent may use either). */
static void *
nng_rep_echo(void *arg)
{
	nng_socket *s = arg;
	nng_msg *m;

	if (nng_recvmsg(*s, &m, 0) == 0 && nng_sendmsg(*s, m, 0) != 0)
		nng_msg_free(m);
	return NULL;
}

static void
test_nng_interop(void **state)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep;
	struct mts_ipc_client *c;
	uint8_t *out, raw[] = { 0x08, 0x01, 0x7a };
	char url[160], err[256];
	nng_socket s;
	nng_msg *m;
	size_t outlen;
	pthread_t t;

	/* nng REQ -> mts server */
	snprintf(url, sizeof(url), "ipc://%s", sock_path);
	assert_int_equal(nng_req0_open(&s), 0);
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 2000);
	assert_int_equal(nng_dial(s, url, NULL, 0), 0);
	get.key.data = (uint8_t *)"from-nng";
	get.key.len = 8;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	mts_pb_set_version(&req.base);
	assert_int_equal(nng_msg_alloc(&m,
	                     protobuf_c_message_get_packed_size(&req.base)),
	    0);
	protobuf_c_message_pack(&req.base, nng_msg_body(m));
	assert_int_equal(nng_sendmsg(s, m, 0), 0);
	assert_int_equal(nng_recvmsg(s, &m, 0), 0);
	rep = mts__statestore__reply__unpack(NULL, nng_msg_len(m),
	    nng_msg_body(m));
	nng_msg_free(m);
	assert_non_null(rep);
	assert_memory_equal(rep->get->record->value.data, "from-nng", 8);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	nng_close(s);

	/* mts client -> nng REP */
	snprintf(alt_path, sizeof(alt_path), "%s/alt.sock", tdir);
	snprintf(url, sizeof(url), "ipc://%s", alt_path);
	assert_int_equal(nng_rep0_open(&s), 0);
	assert_int_equal(nng_listen(s, url, NULL, 0), 0);
	pthread_create(&t, NULL, nng_rep_echo, &s);
	c = mts_ipc_client_open(alt_path, 2000, err, sizeof(err));
	assert_int_equal(mts_ipc_client_call_raw(c, raw, sizeof(raw), &out,
	                     &outlen),
	    0);
	assert_int_equal(outlen, sizeof(raw));
	assert_memory_equal(out, raw, sizeof(raw));
	free(out);
	pthread_join(t, NULL);
	mts_ipc_client_close(c);
	nng_close(s);
	unlink(alt_path);
}

static void
test_pubsub(void **state)
{
	Mts__Statestore__Change ch = MTS__STATESTORE__CHANGE__INIT, *got;
	struct mts_pub *pub;
	nng_socket sub;
	char err[256];
	int i, r = -1;

	pub = mts_pub_open(pub_path, err, sizeof(err));
	assert_non_null(pub);
	assert_int_equal(mts_pub_check(pub), 0);
	usleep(100000);
	assert_int_equal(mts_pub_check(pub), 0);
	assert_int_equal(mts_sub_open(pub_path, "t/", 2, &sub, err,
	                     sizeof(err)),
	    0);
	nng_socket_set_ms(sub, NNG_OPT_RECVTIMEO, 100);
	for (i = 0; i < 50 && r != 0; i++) {
		/* the topic not subscribed to must never arrive */
		ch.key.data = (uint8_t *)"n/1";
		ch.key.len = 3;
		mts_pub_send(pub, "n/1", 3, &ch.base);
		ch.key.data = (uint8_t *)"t/1";
		mts_pub_send(pub, "t/1", 3, &ch.base);
		r = mts_sub_recv(sub, &mts__statestore__change__descriptor,
		    (ProtobufCMessage **)&got, 0);
	}
	assert_int_equal(r, 0);
	assert_memory_equal(got->key.data, "t/1", 3);
	protobuf_c_message_free_unpacked(&got->base, NULL);
	nng_close(sub);
	mts_pub_close(pub);
}

/* --- the asynchronous client on a loop --------------------------------------- */

/* A server on the test's own loop whose handler echoes, holds or drops
 * calls as the test says; the client runs on the same loop. */
enum amode { A_ECHO, A_HOLD, A_DROP, A_ERROR };

#define AHELD_MAX 512

struct aserver {
	enum amode mode;
	struct mts_ipc_call *held[AHELD_MAX];
	const ProtobufCMessage *heldreq[AHELD_MAX];
	char heldkey[AHELD_MAX][32];
	size_t nheld;
	size_t served;
};

static struct aserver asrv;
static char async_path[128];

static void
reply_key(struct mts_ipc_call *call, const char *key)
{
	Mts__Statestore__Reply rep = MTS__STATESTORE__REPLY__INIT;
	Mts__Statestore__GetRep get = MTS__STATESTORE__GET_REP__INIT;
	Mts__Record rec = MTS__RECORD__INIT;

	rec.value.data = (uint8_t *)key;
	rec.value.len = strlen(key);
	get.found = 1;
	get.record = &rec;
	rep.body_case = MTS__STATESTORE__REPLY__BODY_GET;
	rep.get = &get;
	mts_ipc_reply(call, &rep.base);
}

static void
a_handler(void *ctx, const ProtobufCMessage *m, struct mts_ipc_call *call)
{
	const Mts__Statestore__Request *req = (const void *)m;
	struct aserver *a = ctx;
	size_t n = req->get->key.len < 31 ? req->get->key.len : 31;

	a->served++;
	if (a->mode == A_ECHO) {
		ipc_echo_get(ctx, m, call);
	} else if (a->mode == A_ERROR) {
		mts_ipc_reply_error(call, MTS_ERR_CONFLICT,
		    "refused: %.*s changed meanwhile", (int)n,
		    (const char *)req->get->key.data);
	} else if (a->mode == A_DROP || a->nheld == AHELD_MAX) {
		mts_ipc_call_drop(call);
	} else {
		memcpy(a->heldkey[a->nheld], req->get->key.data, n);
		a->heldkey[a->nheld][n] = '\0';
		a->held[a->nheld++] = call;
	}
}

static const struct mts_ipc_route aroutes[] = {
	{ MTS__STATESTORE__REQUEST__BODY_GET, "get", CLASS_READ, a_handler },
};

static const struct mts_ipc_service asvc = {
	.name = "async-test",
	.request = &mts__statestore__request__descriptor,
	.reply = &mts__statestore__reply__descriptor,
	.routes = aroutes,
	.nroutes = 1,
	.classify = classify,
};

static struct mts_ipc_server *
aserver_open(struct mts_loop *loop)
{
	struct mts_ipc_server *s;
	char err[256];

	snprintf(async_path, sizeof(async_path), "%s/async.sock", tdir);
	s = mts_ipc_server_open(async_path, &asvc, &asrv, err, sizeof(err));
	if (s == NULL)
		fail_msg("%s", err);
	assert_int_equal(mts_loop_add_server(loop, s), 0);
	return s;
}

static void
aserver_close(struct mts_loop *loop, struct mts_ipc_server *s)
{
	size_t i;

	for (i = 0; i < asrv.nheld; i++)
		mts_ipc_call_drop(asrv.held[i]);
	asrv.nheld = 0;
	mts_loop_remove_server(loop, s);
	mts_ipc_server_close(s);
}

/* What one call saw: its callback must run exactly once. */
struct aresult {
	int calls;
	int rc;
	char value[32];
	char err[256];
	mts_time_t at;
};

static void
a_done(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	const Mts__Statestore__Reply *rep = (const void *)m;
	struct aresult *r = arg;

	r->calls++;
	r->rc = rc;
	r->at = mts_now();
	snprintf(r->err, sizeof(r->err), "%s", err ? err : "");
	if (rc == 0) {
		assert_non_null(rep);
		assert_int_equal(rep->body_case,
		    MTS__STATESTORE__REPLY__BODY_GET);
		snprintf(r->value, sizeof(r->value), "%.*s",
		    (int)rep->get->record->value.len,
		    (const char *)rep->get->record->value.data);
	} else {
		assert_null(rep);
	}
}

static struct mts_ipc_req *
a_get(struct mts_ipc_async *c, const char *key, int tmo, struct aresult *r)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	struct mts_ipc_req *q;

	get.key.data = (uint8_t *)key;
	get.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	q = mts_ipc_async_call(c, &req.base,
	    &mts__statestore__reply__descriptor, tmo, a_done, r);
	assert_non_null(q);
	assert_int_equal(r->calls, 0); /* never from inside the call */
	return q;
}

/* Runs the loop until every result in r[0..n) is in, or ms passed. */
static void
a_run(struct mts_loop *loop, struct aresult *r, size_t n, int ms)
{
	mts_time_t end = mts_now() + ms;
	size_t i, done;

	while (mts_now() < end) {
		for (i = 0, done = 0; i < n; i++)
			done += r[i].calls > 0;
		if (done == n)
			return;
		assert_true(mts_loop_run_once(loop, 10) >= 0);
	}
}

static struct mts_ipc_async *
a_client(struct mts_loop *loop, int tmo)
{
	char err[256];
	struct mts_ipc_async *c;

	snprintf(async_path, sizeof(async_path), "%s/async.sock", tdir);
	c = mts_ipc_async_open(loop, async_path, tmo, err, sizeof(err));
	if (c == NULL)
		fail_msg("%s", err);
	return c;
}

/* An error reply: the callback gets the code and the server's message
 * (which once pointed into the reply freed before the callback ran). */
static void
test_async_error(void **state)
{
	struct mts_loop *loop = mts_loop_new();
	struct mts_ipc_server *s = aserver_open(loop);
	struct mts_ipc_async *c = a_client(loop, 2000);
	struct aresult r[8];
	char key[32], want[64];
	size_t i;

	memset(r, 0, sizeof(r));
	asrv.mode = A_ERROR;
	for (i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "key-%zu", i);
		a_get(c, key, 0, &r[i]);
	}
	a_run(loop, r, 8, 3000);
	for (i = 0; i < 8; i++) {
		snprintf(want, sizeof(want),
		    "refused: key-%zu changed meanwhile", i);
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, -MTS_ERR_CONFLICT);
		assert_string_equal(r[i].err, want);
	}
	asrv.mode = A_ECHO;
	mts_ipc_async_close(c);
	aserver_close(loop, s);
	mts_loop_free(loop);
}

/* 300 calls in flight on one client, answered in reverse order: each
 * callback gets its own reply, once. */
static void
test_async_many(void **state)
{
	struct mts_loop *loop = mts_loop_new();
	struct mts_ipc_server *s;
	struct mts_ipc_async *c;
	static struct aresult r[300];
	char key[32];
	size_t i;

	memset(&asrv, 0, sizeof(asrv));
	memset(r, 0, sizeof(r));
	s = aserver_open(loop);
	c = a_client(loop, 5000);
	asrv.mode = A_HOLD;
	for (i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		(void)a_get(c, key, 0, &r[i]);
	}
	assert_int_equal(mts_ipc_async_inflight(c), 300);
	while (asrv.nheld < 300)
		assert_true(mts_loop_run_once(loop, 100) >= 0);
	for (i = asrv.nheld; i-- > 0;)
		reply_key(asrv.held[i], asrv.heldkey[i]);
	asrv.nheld = 0;
	a_run(loop, r, 300, 3000);
	for (i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, 0);
		assert_string_equal(r[i].value, key);
	}
	assert_int_equal(mts_ipc_async_inflight(c), 0);
	mts_ipc_async_close(c);
	aserver_close(loop, s);
	mts_loop_free(loop);
}

/* A slow server: a call with room waits for it; one without times out at
 * its own deadline, and its late reply is skipped by the next call. */
static void
test_async_slow_and_timeout(void **state)
{
	struct mts_loop *loop = mts_loop_new();
	struct mts_ipc_server *s;
	struct mts_ipc_async *c;
	struct aresult r[3];
	mts_time_t t0, end;

	memset(&asrv, 0, sizeof(asrv));
	memset(r, 0, sizeof(r));
	s = aserver_open(loop);
	c = a_client(loop, 5000);
	asrv.mode = A_HOLD;
	t0 = mts_now();
	(void)a_get(c, "slow", 2000, &r[0]);
	(void)a_get(c, "hurried", 150, &r[1]);
	end = t0 + 400; /* the server answers both after 400 ms */
	while (mts_now() < end)
		assert_true(mts_loop_run_once(loop, 10) >= 0);
	assert_int_equal(r[1].calls, 1);
	assert_int_equal(r[1].rc, -MTS_ERR_TIMEOUT);
	assert_true(r[1].at - t0 >= 150 && r[1].at - t0 < 350);
	assert_non_null(strstr(r[1].err, "within 150 ms"));
	assert_int_equal(r[0].calls, 0);
	assert_int_equal(asrv.nheld, 2);
	reply_key(asrv.held[1], asrv.heldkey[1]); /* late: skipped */
	reply_key(asrv.held[0], asrv.heldkey[0]);
	asrv.nheld = 0;
	a_run(loop, r, 1, 2000);
	assert_int_equal(r[0].calls, 1);
	assert_int_equal(r[0].rc, 0);
	assert_string_equal(r[0].value, "slow");
	asrv.mode = A_ECHO;
	(void)a_get(c, "next", 0, &r[2]);
	a_run(loop, &r[2], 1, 2000);
	assert_int_equal(r[2].rc, 0);
	assert_string_equal(r[2].value, "next");
	assert_int_equal(r[1].calls, 1);
	mts_ipc_async_close(c);
	aserver_close(loop, s);
	mts_loop_free(loop);
}

/* The server restarts while calls are in flight: they are sent again on
 * the new connection and answered within their deadline; a client opened
 * before any server waits for it the same way. */
static void
test_async_restart(void **state)
{
	struct mts_loop *loop = mts_loop_new();
	struct mts_ipc_server *s;
	struct mts_ipc_async *c;
	struct aresult r[5];
	mts_time_t end;
	size_t i;

	memset(&asrv, 0, sizeof(asrv));
	memset(r, 0, sizeof(r));
	c = a_client(loop, 3000);
	unlink(async_path);
	(void)a_get(c, "early", 0, &r[0]); /* no server yet */
	end = mts_now() + 100;
	while (mts_now() < end)
		assert_true(mts_loop_run_once(loop, 10) >= 0);
	assert_int_equal(r[0].calls, 0);
	s = aserver_open(loop);
	a_run(loop, r, 1, 2000);
	assert_int_equal(r[0].rc, 0);
	assert_string_equal(r[0].value, "early");
	asrv.mode = A_HOLD;
	for (i = 1; i < 5; i++)
		(void)a_get(c, i % 2 ? "odd" : "even", 0, &r[i]);
	while (asrv.nheld < 4)
		assert_true(mts_loop_run_once(loop, 100) >= 0);
	aserver_close(loop, s); /* drops the held calls */
	end = mts_now() + 150;
	while (mts_now() < end)
		assert_true(mts_loop_run_once(loop, 10) >= 0);
	for (i = 1; i < 5; i++)
		assert_int_equal(r[i].calls, 0);
	asrv.mode = A_ECHO;
	asrv.served = 0;
	s = aserver_open(loop);
	a_run(loop, r + 1, 4, 2500);
	for (i = 1; i < 5; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, 0);
		assert_string_equal(r[i].value, i % 2 ? "odd" : "even");
	}
	assert_int_equal(asrv.served, 4);
	mts_ipc_async_close(c);
	aserver_close(loop, s);
	mts_loop_free(loop);
}

/* No server at all, and a server that never answers: each call ends at its
 * own deadline with -MTS_ERR_TIMEOUT, once, saying why. */
static void
test_async_no_answer(void **state)
{
	struct mts_loop *loop = mts_loop_new();
	struct mts_ipc_server *s;
	struct mts_ipc_async *c;
	struct aresult r[2];
	mts_time_t t0;

	memset(&asrv, 0, sizeof(asrv));
	memset(r, 0, sizeof(r));
	c = a_client(loop, 200);
	unlink(async_path);
	t0 = mts_now();
	(void)a_get(c, "nobody", 0, &r[0]);
	a_run(loop, r, 1, 2000);
	assert_int_equal(r[0].calls, 1);
	assert_int_equal(r[0].rc, -MTS_ERR_TIMEOUT);
	assert_true(r[0].at - t0 >= 200 && r[0].at - t0 < 600);
	assert_non_null(strstr(r[0].err, "cannot reach"));
	s = aserver_open(loop);
	asrv.mode = A_DROP;
	t0 = mts_now();
	(void)a_get(c, "silence", 300, &r[1]);
	a_run(loop, r + 1, 1, 2000);
	assert_int_equal(r[1].calls, 1);
	assert_int_equal(r[1].rc, -MTS_ERR_TIMEOUT);
	assert_true(r[1].at - t0 >= 300 && r[1].at - t0 < 700);
	assert_int_equal(asrv.served, 1);
	/* nothing else comes */
	t0 = mts_now() + 100;
	while (mts_now() < t0)
		assert_true(mts_loop_run_once(loop, 10) >= 0);
	assert_int_equal(r[0].calls + r[1].calls, 2);
	mts_ipc_async_close(c);
	aserver_close(loop, s);
	mts_loop_free(loop);
}

/* Cancel and close with calls in flight: each callback runs once, with
 * -MTS_ERR_CANCELED; replies that come later are skipped; nothing leaks
 * (make check runs this under LeakSanitizer). */
struct closer {
	struct mts_ipc_async *c;
	int calls;
};

static void
close_from_callback(void *arg, int rc, const ProtobufCMessage *m,
    const char *err)
{
	struct closer *cl = arg;

	cl->calls++;
	assert_int_equal(rc, 0);
	mts_ipc_async_close(cl->c); /* from inside its own callback */
}

static void
test_async_cancel_close(void **state)
{
	struct mts_loop *loop = mts_loop_new();
	struct mts_ipc_server *s;
	struct mts_ipc_async *c;
	struct mts_ipc_req *q[10];
	struct aresult r[10];
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
	struct closer cl = { 0 };
	struct aresult more[2];
	size_t i;

	memset(&asrv, 0, sizeof(asrv));
	memset(r, 0, sizeof(r));
	memset(more, 0, sizeof(more));
	s = aserver_open(loop);
	c = a_client(loop, 5000);
	asrv.mode = A_HOLD;
	for (i = 0; i < 10; i++)
		q[i] = a_get(c, "x", 0, &r[i]);
	while (asrv.nheld < 10)
		assert_true(mts_loop_run_once(loop, 100) >= 0);
	for (i = 0; i < 3; i++) {
		mts_ipc_req_cancel(q[i]);
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, -MTS_ERR_CANCELED);
	}
	assert_int_equal(mts_ipc_async_inflight(c), 7);
	reply_key(asrv.held[0], "late"); /* to a canceled call: skipped */
	asrv.held[0] = asrv.held[--asrv.nheld];
	for (i = 0; i < 20; i++)
		assert_true(mts_loop_run_once(loop, 5) >= 0);
	assert_int_equal(r[0].calls, 1);
	mts_ipc_async_close(c);
	for (i = 0; i < 10; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, -MTS_ERR_CANCELED);
	}
	/* a client closed from its own callback, with another call left */
	asrv.mode = A_ECHO;
	c = cl.c = a_client(loop, 5000);
	get.key.data = (uint8_t *)"y";
	get.key.len = 1;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &get;
	assert_non_null(mts_ipc_async_call(c, &req.base,
	    &mts__statestore__reply__descriptor, 0, close_from_callback, &cl));
	(void)a_get(c, "z", 0, &more[0]);
	a_run(loop, more, 1, 2000);
	assert_int_equal(cl.calls, 1);
	assert_int_equal(more[0].calls, 1);
	assert_true(more[0].rc == 0 || more[0].rc == -MTS_ERR_CANCELED);
	for (i = 0; i < 10; i++)
		assert_true(mts_loop_run_once(loop, 5) >= 0);
	aserver_close(loop, s);
	mts_loop_free(loop);
}

/* --- who may serve a socket ------------------------------------------------ */

static void
test_sock_path(void **state)
{
	char p[64];

	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/run/mts",
	                     "statestore", NULL),
	    0);
	assert_string_equal(p, "/run/mts/statestore/statestore.sock");
	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/run/mts", "init",
	                     NULL),
	    0);
	assert_string_equal(p, "/run/mts/init/admin.sock");
	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/r", "gossipd",
	                     "gossipd.pub"),
	    0);
	assert_string_equal(p, "/r/gossipd/gossipd.pub");
	/* names from the network must not leave the run directory */
	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/r", "..", NULL),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/r", "a/b", NULL),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/r", "", NULL),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/r", "Shim", NULL),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/r", "x", "../y"),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_ipc_sock_path(p, sizeof(p), "/r", "x", ".."),
	    -MTS_ERR_INVAL);
	assert_int_equal(mts_ipc_sock_path(p, 12, "/run/mts", "statestore",
	                     NULL),
	    -MTS_ERR_TOOBIG);
}

/* mkdir tdir/name with mode; returns the path (static). */
static const char *
subdir(const char *name, mode_t mode)
{
	static char d[128];

	snprintf(d, sizeof(d), "%s/%s", tdir, name);
	assert_true(mkdir(d, 0700) == 0);
	assert_true(chmod(d, mode) == 0);
	return d;
}

static void
test_trust_rule(void **state)
{
	char p[160], err[512];
	uid_t u = 12345;

	/* our own directory in a sticky /tmp: ours */
	assert_int_equal(mts_ipc_expected_uid(sock_path, &u, err, sizeof(err)),
	    0);
	assert_int_equal(u, geteuid());
	/* a socket directory others can write to says nothing */
	snprintf(p, sizeof(p), "%s/x.sock", subdir("open", 0770));
	assert_int_equal(mts_ipc_expected_uid(p, &u, err, sizeof(err)),
	    -MTS_ERR_IO);
	assert_non_null(strstr(err, "only its owner can write"));
	/* nor one whose parent others can write to (they could swap it) */
	subdir("par", 0777);
	subdir("par/d", 0700);
	snprintf(p, sizeof(p), "%s/par/d/x.sock", tdir);
	assert_int_equal(mts_ipc_expected_uid(p, &u, err, sizeof(err)),
	    -MTS_ERR_IO);
	assert_non_null(strstr(err, "lets others than root create entries"));
	/* a missing directory is no answer either */
	snprintf(p, sizeof(p), "%s/none/x.sock", tdir);
	assert_int_equal(mts_ipc_expected_uid(p, &u, err, sizeof(err)),
	    -MTS_ERR_IO);
	snprintf(p, sizeof(p), "%s/open", tdir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/par/d", tdir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/par", tdir);
	rmdir(p);
}

/*
 * An impostor: a socket in a directory that belongs to someone else than
 * the process serving it (here: root serving in uid 65534's directory, as
 * a socket planted there would be). The client must hang up before it
 * sends a single byte, and say who serves it.
 */
static void
test_impostor_refused(void **state)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct mts_ipc_client *c;
	uint8_t *out, buf[64];
	char dir[80], err[512];
	size_t outlen;
	ssize_t n;
	int lfd, fd;

	if (geteuid() != 0)
		skip();
	snprintf(dir, sizeof(dir), "%s", subdir("agent", 0750));
	assert_true(chown(dir, 65534, 65534) == 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/agent.sock", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(lfd >= 0);
	assert_true(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	assert_true(listen(lfd, 64) == 0);

	c = mts_ipc_client_open(sun.sun_path, 2000, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(mts_ipc_client_call_raw(c, "x", 1, &out, &outlen),
	    -MTS_ERR_IO);
	mts_ipc_client_close(c);
	/* it connected, and sent nothing before hanging up */
	fd = accept(lfd, NULL, NULL);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	assert_int_equal(n, 0);
	close(fd);
	/* the error names both uids */
	c = mts_ipc_client_open(sun.sun_path, 2000, err, sizeof(err));
	Mts__Statestore__Request rq = MTS__STATESTORE__REQUEST__INIT;
	ProtobufCMessage *rep;
	assert_int_equal(mts_ipc_client_call(c, &rq.base,
	                     &mts__statestore__reply__descriptor, &rep, err,
	                     sizeof(err)),
	    -MTS_ERR_IO);
	assert_string_equal(err,
	    "agent.sock is served by uid 0, expected "
	    "65534: refusing to talk to an impostor");
	mts_ipc_client_close(c);
	/* the asynchronous client the same: its call fails at its deadline,
	 * saying why */
	struct mts_loop *loop = mts_loop_new();
	struct mts_ipc_async *ac;
	struct aresult ar;

	memset(&ar, 0, sizeof(ar));
	ac = mts_ipc_async_open(loop, sun.sun_path, 300, err, sizeof(err));
	assert_non_null(ac);
	(void)a_get(ac, "k", 0, &ar);
	a_run(loop, &ar, 1, 2000);
	assert_int_equal(ar.rc, -MTS_ERR_TIMEOUT);
	assert_non_null(strstr(ar.err,
	    "agent.sock is served by uid 0, "
	    "expected 65534: refusing"));
	mts_ipc_async_close(ac);
	mts_loop_free(loop);
	while ((fd = accept(lfd, NULL, NULL)) >= 0) {
		assert_int_equal(read(fd, buf, sizeof(buf)), 0);
		close(fd);
	}
	close(lfd);
	unlink(sun.sun_path);
	rmdir(dir);
}

/* The same for a change feed: a subscriber hangs up on a publisher that
 * is not its directory's owner, and gets nothing from it. */
static void
test_feed_impostor_refused(void **state)
{
	Mts__Statestore__Change ch = MTS__STATESTORE__CHANGE__INIT, *got;
	char dir[128], path[160], err[256];
	struct mts_pub *pub;
	nng_socket sub;
	int i, r = -1, owner;

	if (geteuid() != 0)
		skip();
	snprintf(dir, sizeof(dir), "%s", subdir("feed", 0750));
	snprintf(path, sizeof(path), "%s/feed.pub", dir);
	ch.key.data = (uint8_t *)"t/1";
	ch.key.len = 3;
	/* served by root: refused while the directory is 65534's, taken
	 * once it is root's */
	for (owner = 65534; owner >= 0; owner -= 65534) {
		assert_true(chown(dir, (uid_t)owner, 0) == 0);
		pub = mts_pub_open(path, err, sizeof(err));
		assert_non_null(pub);
		assert_int_equal(mts_sub_open(path, "t/", 2, &sub, err,
		                     sizeof(err)),
		    0);
		nng_socket_set_ms(sub, NNG_OPT_RECVTIMEO, 50);
		for (i = 0, r = -1; i < 20 && r != 0; i++) {
			mts_pub_send(pub, "t/1", 3, &ch.base);
			r = mts_sub_recv(sub,
			    &mts__statestore__change__descriptor,
			    (ProtobufCMessage **)&got, 0);
		}
		if (owner != 0)
			assert_int_equal(r, -MTS_ERR_TIMEOUT);
		else
			assert_int_equal(r, 0);
		if (r == 0)
			protobuf_c_message_free_unpacked(&got->base, NULL);
		nng_close(sub);
		mts_pub_close(pub);
	}
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_ok),
		cmocka_unit_test(test_denied),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_broken_peers),
		cmocka_unit_test(test_client_lifecycle),
		cmocka_unit_test(test_client_broken_servers),
		cmocka_unit_test(test_nng_interop),
		cmocka_unit_test(test_out_of_fds),
		cmocka_unit_test(test_pubsub),
		cmocka_unit_test(test_async_many),
		cmocka_unit_test(test_async_error),
		cmocka_unit_test(test_async_slow_and_timeout),
		cmocka_unit_test(test_async_restart),
		cmocka_unit_test(test_async_no_answer),
		cmocka_unit_test(test_async_cancel_close),
		cmocka_unit_test(test_sock_path),
		cmocka_unit_test(test_trust_rule),
		cmocka_unit_test(test_impostor_refused),
		cmocka_unit_test(test_feed_impostor_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
