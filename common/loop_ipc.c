/* loop_ipc.c: IPC servers and change feeds on the loop — drained when readable, their listeners checked once a second (apart from loop.c so that a program on the loop without IPC links no IPC library). */
#include "ipc.h"
#include "loop.h"

#define DRAIN_MAX 64 /* requests taken per readable turn */

static void
on_server(void *arg, int fd, uint32_t events, mts_time_t now)
{
	(void)mts_ipc_server_drain(arg, DRAIN_MAX);
}

static void
server_check(void *srv)
{
	(void)mts_ipc_server_check(srv);
}

static void
pub_check(void *p)
{
	(void)mts_pub_check(p);
}

int
mts_loop_add_server(struct mts_loop *l, struct mts_ipc_server *srv)
{
	return mts_loop_attach(l, srv, mts_ipc_server_fd(srv), "api", on_server,
	    server_check);
}

void
mts_loop_remove_server(struct mts_loop *l, struct mts_ipc_server *srv)
{
	mts_loop_detach(l, srv);
}

int
mts_loop_add_pub(struct mts_loop *l, struct mts_pub *p)
{
	return mts_loop_attach(l, p, -1, NULL, NULL, pub_check);
}

void
mts_loop_remove_pub(struct mts_loop *l, struct mts_pub *p)
{
	mts_loop_detach(l, p);
}
