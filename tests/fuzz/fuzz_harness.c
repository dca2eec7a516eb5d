/* fuzz_harness.c: the scratch directory, stand-in services and looped calls that the API fuzzers share (see fuzz_harness.h). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_harness.h"
#include "log.h"
#include "mtstime.h"

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

void
fz_agent_start(struct mts_agent *a, const char *name, const char *dir,
    const char *conf, const struct mts_cfg_schema *schema)
{
	char path[160], err[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/mts.conf", dir);
	if ((f = fopen(path, "w")) == NULL)
		abort();
	fputs(conf, f);
	fclose(f);
	log_init(name, MTS_LOG_WARN);
	a->name = name;
	a->node_id = "0123456789abcdef0123456789abcdef";
	a->rundir = dir;
	if (mts_cfg_load_agent(path, schema, name, &a->cfg, err, sizeof(err)) <
	    0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
}

struct mts_ipc_async *
fz_serve(struct mts_loop *loop, const char *dir, const char *name,
    const struct mts_ipc_service *svc, void *ctx,
    const struct mts_acl_table *acl, int wait_ms, struct mts_ipc_server **srv)
{
	struct mts_ipc_server *s;
	struct mts_ipc_async *c;
	char sock[160], err[512];

	snprintf(sock, sizeof(sock), "%s/%s.sock", dir, name);
	if ((s = mts_ipc_server_open(sock, svc, ctx, err, sizeof(err))) == NULL)
		abort();
	if (acl != NULL)
		mts_ipc_server_set_acl(s, acl);
	if (mts_loop_add_server(loop, s) < 0)
		abort();
	if ((c = mts_ipc_async_open(loop, sock, wait_ms, err, sizeof(err))) ==
	    NULL)
		abort();
	if (srv != NULL)
		*srv = s;
	return c;
}

struct mts_ipc_async *
fz_stand_in(struct mts_loop *loop, const char *dir, const char *name,
    const struct mts_ipc_service *svc, void *ctx)
{
	return fz_serve(loop, dir, name, svc, ctx, NULL, 1000, NULL);
}

struct pending {
	int done, rc;
	ProtobufCMessage *rep;
};

static void
on_reply(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct pending *p = arg;

	p->done = 1;
	p->rc = rc;
	if (m != NULL) /* keep a copy: m is valid only during the callback */
		p->rep = mts_pb_copy(m);
}

int
fz_call(struct mts_loop *loop, struct mts_ipc_async *cli, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *rd, int wait_ms, ProtobufCMessage **rep)
{
	struct pending p = { 0, 0, NULL };
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

static void
on_raw(void *arg, int rc, const uint8_t *body, size_t len, const char *err)
{
	struct pending *p = arg;

	p->done = 1;
	p->rc = rc;
}

int
fz_call_raw(struct mts_loop *loop, struct mts_ipc_async *cli, const void *buf,
    size_t len, int wait_ms)
{
	struct pending p = { 0, 0, NULL, NULL };
	mts_time_t end = mts_now() + wait_ms + 500;

	if (mts_ipc_async_call_raw(cli, buf, len, 0, on_raw, &p) == NULL)
		abort();
	while (!p.done && mts_now() < end)
		mts_loop_run_once(loop, 5);
	if (!p.done)
		abort(); /* the agent never answered */
	return p.rc < 0 ? -p.rc : 0;
}
