/* ipc_path.c: where an agent's sockets live (<rundir>/<agent>/) and who must be serving them — the check every client makes before it sends a byte (docs/agents.md section 6). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc.h"
#include "mtserr.h"

/*
 * The trust rule: a socket's directory belongs to the one user allowed to
 * serve it, and nobody else can create entries in it; that directory's
 * parent (the run directory) belongs to root and nobody else can create
 * entries in it, so nobody but root can have made or swapped the socket's
 * directory. A client therefore expects the server's uid (SO_PEERCRED) to
 * be the directory's owner, and refuses to talk otherwise. Nobody has to
 * know which user an agent runs as: init's chown says it.
 *
 * Outside a node (tests, a developer's own run directory) the caller's own
 * uid may stand in for root, and a sticky parent (/tmp) is enough when the
 * socket's directory is the caller's or root's: then nobody else can have
 * made it either.
 */

#define INIT_AGENT "init"
#define INIT_SOCK "admin.sock"

/* Agent names are mts.conf section names, [a-z0-9_-] (docs/gossip.md),
 * so a name from the network cannot leave the run directory. */
static int
agent_name_ok(const char *s)
{
	size_t n = 0;

	for (; s[n] != '\0'; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') ||
		        (s[n] >= '0' && s[n] <= '9') || s[n] == '_' ||
		        s[n] == '-'))
			return 0;
	return n > 0 && n <= 64;
}

int
mts_ipc_agent_dir(char *out, size_t outlen, const char *rundir,
    const char *agent)
{
	int n;

	if (!agent_name_ok(agent))
		return -MTS_ERR_INVAL;
	n = snprintf(out, outlen, "%s/%s", rundir, agent);
	return n < 0 || (size_t)n >= outlen ? -MTS_ERR_TOOBIG : 0;
}

int
mts_ipc_sock_path(char *out, size_t outlen, const char *rundir,
    const char *agent, const char *file)
{
	size_t l;
	int r, n;

	if (file != NULL &&
	    (strchr(file, '/') != NULL || file[0] == '.' || file[0] == '\0'))
		return -MTS_ERR_INVAL;
	if ((r = mts_ipc_agent_dir(out, outlen, rundir, agent)) < 0)
		return r;
	l = strlen(out);
	if (file == NULL && strcmp(agent, INIT_AGENT) == 0)
		n = snprintf(out + l, outlen - l, "/%s", INIT_SOCK);
	else if (file == NULL)
		n = snprintf(out + l, outlen - l, "/%s.sock", agent);
	else
		n = snprintf(out + l, outlen - l, "/%s", file);
	return n < 0 || (size_t)n >= outlen - l ? -MTS_ERR_TOOBIG : 0;
}

/* Cuts path at its last '/': dir gets what is before ("/" for a file in
 * the root). -MTS_ERR_TOOBIG if it does not fit. */
static int
dir_of(const char *path, char *dir, size_t dirlen)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (slash == NULL)
		return snprintf(dir, dirlen, ".") < (int)dirlen
		    ? 0
		    : -MTS_ERR_TOOBIG;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= dirlen)
		return -MTS_ERR_TOOBIG;
	memcpy(dir, path, n);
	dir[n] = '\0';
	return 0;
}

static int
mine(uid_t u)
{
	return u == 0 || u == geteuid();
}

int
mts_ipc_expected_uid(const char *path, uid_t *uid, char *err, size_t errlen)
{
	char dir[512], parent[512];
	struct stat d, p;

	if (dir_of(path, dir, sizeof(dir)) < 0 ||
	    dir_of(dir, parent, sizeof(parent)) < 0) {
		snprintf(err, errlen, "%s: path too long", path);
		return -MTS_ERR_TOOBIG;
	}
	if (lstat(dir, &d) < 0 || stat(parent, &p) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -MTS_ERR_IO;
	}
	if (!S_ISDIR(d.st_mode) || (d.st_mode & 022) != 0) {
		snprintf(err, errlen,
		    "%s is not a directory only its owner can write to: "
		    "cannot tell who should serve %s",
		    dir, path);
		return -MTS_ERR_IO;
	}
	if (!mine(p.st_uid) ||
	    ((p.st_mode & 022) != 0 &&
	        !((p.st_mode & S_ISVTX) && mine(d.st_uid)))) {
		snprintf(err, errlen,
		    "%s (owner uid %u, mode %04o) lets others than root create "
		    "entries: cannot tell who should serve %s",
		    parent, (unsigned)p.st_uid, (unsigned)(p.st_mode & 07777),
		    path);
		return -MTS_ERR_IO;
	}
	*uid = d.st_uid;
	return 0;
}

int
mts_ipc_check_server_uid(const char *path, uid_t peer, char *err, size_t errlen)
{
	const char *name = strrchr(path, '/');
	uid_t want;
	int r;

	if ((r = mts_ipc_expected_uid(path, &want, err, errlen)) < 0)
		return r;
	if (peer != want) {
		snprintf(err, errlen,
		    "%s is served by uid %u, expected %u: refusing to talk to "
		    "an impostor",
		    name ? name + 1 : path, (unsigned)peer, (unsigned)want);
		return -MTS_ERR_IO;
	}
	return 0;
}

int
mts_ipc_check_server(int fd, const char *path, char *err, size_t errlen)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		snprintf(err, errlen, "%s: peer credentials: %s", path,
		    strerror(errno));
		return -MTS_ERR_IO;
	}
	return mts_ipc_check_server_uid(path, cr.uid, err, errlen);
}

int
mts_ipc_sock_dir_prepare(const char *path, char *err, size_t errlen)
{
	char dir[512];
	struct stat st;

	if (dir_of(path, dir, sizeof(dir)) < 0) {
		snprintf(err, errlen, "%s: path too long", path);
		return -MTS_ERR_TOOBIG;
	}
	if (lstat(dir, &st) == 0)
		return 0;
	/* Without init (tests, by hand) the agent makes its own. */
	if (errno != ENOENT || mkdir(dir, 0750) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -MTS_ERR_IO;
	}
	return 0;
}
