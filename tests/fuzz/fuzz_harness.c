/* fuzz_harness.c: the scratch directory, stand-in services and looped calls that the API fuzzers share (see fuzz_harness.h). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_harness.h"
#include "mtstime.h"
#include "xmalloc.h"

static char scratch[64];

static int
rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)remove(p);
	return 0; /* keep going: remove what can be removed */
}

static void
rm_scratch(void)
{
	if (scratch[0] != '\0')
		(void)nftw(scratch, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *
fz_scratch(const char *tag)
{
	snprintf(scratch, sizeof(scratch), "/tmp/mts-fuzz-%s.XXXXXX", tag);
	if (mkdtemp(scratch) == NULL)
		abort();
	atexit(rm_scratch);
	return scratch;
}

struct mts_ipc_async *
fz_stand_in(struct mts_loop *loop, const char *dir, const char *name,
    const struct mts_ipc_service *svc, void *ctx)
{
	struct mts_ipc_server *s;
	struct mts_ipc_async *c;
	char sock[160], err[512];

	snprintf(sock, sizeof(sock), "%s/%s.sock", dir, name);
	if ((s = mts_ipc_server_open(sock, svc, ctx, err, sizeof(err))) ==
	        NULL ||
	    mts_loop_add_server(loop, s) < 0)
		abort();
	if ((c = mts_ipc_async_open(loop, sock, 1000, err, sizeof(err))) ==
	    NULL)
		abort();
	return c;
}

struct pending {
	int done, rc;
	const ProtobufCMessageDescriptor *rd;
	ProtobufCMessage *rep;
};

static void
on_reply(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct pending *p = arg;
	size_t len;
	uint8_t *buf;

	p->done = 1;
	p->rc = rc;
	if (m == NULL)
		return;
	/* keep a copy: m is valid only during the callback */
	len = protobuf_c_message_get_packed_size(m);
	buf = xmalloc(len + 1);
	protobuf_c_message_pack(m, buf);
	p->rep = protobuf_c_message_unpack(p->rd, NULL, len, buf);
	free(buf);
}

int
fz_call(struct mts_loop *loop, struct mts_ipc_async *cli, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *rd, int wait_ms, ProtobufCMessage **rep)
{
	struct pending p = { 0, 0, rd, NULL };
	mts_time_t end = mts_now() + wait_ms + 500;

	if (mts_ipc_async_call(cli, req, rd, 0, on_reply, &p) == NULL)
		abort();
	while (!p.done && mts_now() < end)
		mts_loop_run_once(loop, 5);
	if (!p.done)
		abort(); /* the agent never answered */
	*rep = p.rep;
	if (p.rc < 0)
		return -p.rc;
	if (p.rep == NULL)
		abort(); /* a success without a reply */
	return 0;
}
