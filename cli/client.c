/* client.c: mtsctl's calls to a node's sockets, turning every failure into a clear message and an exit status. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc.h"
#include "mtserr.h"
#include "mtsctl.h"

/* Checks that the socket exists and that we may open it, so that a missing
 * node and a missing permission get their own message instead of a
 * timeout. */
/* Whether the node runs (its mts-init's admin.sock is there) though the
 * agent's socket is missing: then the agent is what is down, not the
 * node. */
static int
init_runs(const struct mtsctl *ctx, const char *agent)
{
	char path[512];
	struct stat st;

	return strcmp(agent, "init") != 0 &&
	    mts_ipc_sock_path(path, sizeof(path), ctx->rundir, "init", NULL) ==
	    0 &&
	    stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int
precheck(const struct mtsctl *ctx, const char *agent, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0 || access(path, R_OK | W_OK) < 0) {
		if (errno == EACCES || errno == EPERM) {
			mtsctl_err("permission denied: uid %u may not use %s "
			           "(only root and members of the node's "
			           "admin group may)",
			    (unsigned)getuid(), path);
			return MTSCTL_EDENIED;
		}
		if (errno == ENOENT && init_runs(ctx, agent)) {
			mtsctl_err("mts-%s is not running on this node (no %s; "
			           "mtsctl agent ls shows the agents mts.conf "
			           "starts)",
			    agent, path);
			return MTSCTL_EUNREACH;
		}
		mtsctl_err("%s: %s (is mts-init running with run directory "
		           "%s? set it with -r or MTS_RUNDIR)",
		    path, strerror(errno), ctx->rundir);
		return MTSCTL_EUNREACH;
	}
	if (!S_ISSOCK(st.st_mode)) {
		mtsctl_err("%s: not a socket", path);
		return MTSCTL_EUNREACH;
	}
	return 0;
}

int
mtsctl_exit_for(int r)
{
	switch (-r) {
	case MTS_ERR_DENIED:
		return MTSCTL_EDENIED;
	case MTS_ERR_TIMEOUT:
		return MTSCTL_EUNREACH;
	case MTS_ERR_NOTFOUND:
		return MTSCTL_ENOTFOUND;
	default:
		return MTSCTL_EFAIL;
	}
}

int
mtsctl_try_call(struct mtsctl *ctx, const char *agent, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *reply_desc, ProtobufCMessage **reply,
    char *err, size_t errlen)
{
	struct mts_ipc_client *c;
	char path[512];
	struct stat st;
	int r;

	*reply = NULL;
	if ((r = mts_ipc_sock_path(path, sizeof(path), ctx->rundir, agent,
	         NULL)) < 0) {
		if (r == -MTS_ERR_TOOBIG)
			snprintf(err, errlen, "%s: socket path too long",
			    ctx->rundir);
		else
			snprintf(err, errlen, "\"%s\" is not an agent name",
			    agent);
		return r;
	}
	if (stat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s: no such socket", path);
		return -MTS_ERR_NOTFOUND;
	}
	if (access(path, R_OK | W_OK) < 0) {
		snprintf(err, errlen, "uid %u may not use %s",
		    (unsigned)getuid(), path);
		return -MTS_ERR_DENIED;
	}
	if ((c = mts_ipc_client_open(path, ctx->timeout_ms, err, errlen)) ==
	    NULL)
		return -MTS_ERR_IO;
	r = mts_ipc_client_call(c, req, reply_desc, reply, err, errlen);
	mts_ipc_client_close(c);
	return r;
}

int
mtsctl_call(struct mtsctl *ctx, const char *agent, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *reply_desc, ProtobufCMessage **reply)
{
	struct mts_ipc_client *c;
	char path[512], err[512];
	int r;

	*reply = NULL;
	if ((r = mts_ipc_sock_path(path, sizeof(path), ctx->rundir, agent,
	         NULL)) < 0) {
		if (r == -MTS_ERR_TOOBIG)
			mtsctl_err("%s: socket path too long", ctx->rundir);
		else
			mtsctl_err("\"%s\" is not an agent name", agent);
		return MTSCTL_EUSAGE;
	}
	if ((r = precheck(ctx, agent, path)) != 0)
		return r;
	c = mts_ipc_client_open(path, ctx->timeout_ms, err, sizeof(err));
	if (c == NULL) {
		mtsctl_err("%s", err);
		return MTSCTL_EUNREACH;
	}
	r = mts_ipc_client_call(c, req, reply_desc, reply, err, sizeof(err));
	mts_ipc_client_close(c);
	if (r == 0)
		return MTSCTL_OK;
	if (r == -MTS_ERR_DENIED)
		mtsctl_err("permission denied: %s", err);
	else
		mtsctl_err("%s", err);
	return mtsctl_exit_for(r);
}
