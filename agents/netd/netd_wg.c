/* netd_wg.c: mts-netd's WireGuard interface mts0 on wireguard-go — started once per node in a mount namespace of its own (its UAPI socket lands in netd's run directory, not in the host's /run/wireguard), kept across netd restarts, waited for by a timer on the loop (never a sleep), configured through the UAPI socket (get=1 / set=1). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "buf.h"
#include "log.h"
#include "mtserr.h"
#include "mtstime.h"
#include "netd.h"
#include "xmalloc.h"

#define UAPI_TIMEOUT_S 2
#define UAPI_MAX (1u << 20)
#define START_WAIT_MS 5000
#define WAIT_STEP_MS 20

static int
uapi_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = UAPI_TIMEOUT_S };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One UAPI exchange: req, then the answer up to its blank line
 * (malloc'd, NUL-terminated; caller frees). NULL on failure (logged). The
 * socket is local and wireguard-go answers at once; a stuck one is cut
 * off after UAPI_TIMEOUT_S. */
static char *
uapi(const struct netd *n, const char *req)
{
	struct mts_buf b;
	char chunk[4096];
	ssize_t r;
	int fd;

	if ((fd = uapi_connect(n->wgsock)) < 0)
		return NULL;
	mts_buf_init(&b);
	if (write_all(fd, req, strlen(req)) < 0)
		goto fail;
	for (;;) {
		if ((r = read(fd, chunk, sizeof(chunk))) <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			goto fail;
		}
		mts_buf_put(&b, chunk, (size_t)r);
		if (b.len >= 2 && memcmp(b.data + b.len - 2, "\n\n", 2) == 0)
			break;
		if (b.len > UAPI_MAX)
			goto fail;
	}
	close(fd);
	mts_buf_put_u8(&b, 0);
	return (char *)b.data;
fail:
	log_warn("wireguard UAPI %s", n->wgsock);
	close(fd);
	mts_buf_free(&b);
	return NULL;
}

char *
netd_wg_get(struct netd *n)
{
	return uapi(n, "get=1\n\n");
}

int
netd_wg_set(struct netd *n, const char *lines)
{
	char *req = xasprintf("set=1\n%s\n", lines), *rep;
	int rc = -1;

	if ((rep = uapi(n, req)) != NULL) {
		if (strcmp(rep, "errno=0\n\n") == 0)
			rc = 0;
		else
			log_warnx("wireguard refused the configuration: %.*s",
			    (int)strcspn(rep, "\n"), rep);
	}
	free(rep);
	free(req);
	return rc;
}

/* --- wireguard-go ------------------------------------------------------------- */

/* The grandchild: /run of its own mount namespace is netd's wg directory
 * (wireguard-go puts its socket in /var/run/wireguard), CAP_SYS_ADMIN is
 * not passed on, then wireguard-go in the foreground. */
static void
wg_exec(const struct netd *n)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(n->wgdir, "/run", NULL, MS_BIND, NULL) < 0) {
		log_warn("wireguard-go's mount namespace");
		_exit(127);
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_ADMIN, 0, 0);
	closefrom(3);
	execl(n->cfg.wireguard_go, "wireguard-go", "-f", NETD_WG_IF,
	    (char *)NULL);
	log_warn("exec %s", n->cfg.wireguard_go);
	_exit(127);
}

/* Double fork: wireguard-go runs in a session of its own, so a netd
 * restart (init stops netd's process group) leaves mts0 and the tasks'
 * traffic alone; mts-init, the subreaper, reaps it in the end. */
static int
wg_spawn(const struct netd *n)
{
	pid_t p;
	int st;

	if ((p = fork()) < 0)
		return -1;
	if (p == 0) {
		setsid();
		if (fork() == 0)
			wg_exec(n);
		_exit(0);
	}
	if (waitpid(p, &st, 0) < 0)
		return -1;
	return 0;
}

/* Whether every line of want ("k=v\n"...) is a line of the UAPI answer
 * get. */
static int
line_pair_in(const char *get, const char *want)
{
	const char *p, *nl, *q;
	size_t len;

	for (p = want; *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			return 0;
		len = (size_t)(nl - p) + 1;
		for (q = get; q != NULL && strncmp(q, p, len) != 0;)
			q = (q = strchr(q, '\n')) != NULL ? q + 1 : NULL;
		if (q == NULL)
			return 0;
	}
	return 1;
}

/* mts0 configured once wireguard-go answers (get is its first answer):
 * the peers it has, the key, the port, the MTU and the route of the
 * cluster CIDR. */
static int
wg_setup(struct netd *n, char *get)
{
	char hex[2 * NETD_KEY_LEN + 1], *set;
	int rc;

	netd_uapi_peers(&n->have, get);
	mts_hex(hex, n->priv, sizeof(n->priv));
	set = xasprintf("private_key=%s\nlisten_port=%u\n", hex,
	    n->cfg.listen_port);
	sodium_memzero(hex, sizeof(hex));
	/* a kept wireguard-go that has them already is left alone: setting
	 * the key again expires every session and the port rebinds the
	 * socket, so a netd restart would stall the tasks' traffic until
	 * the next handshake (up to 5 s when the first one is lost) */
	rc = line_pair_in(get, set) ? 0 : netd_wg_set(n, set);
	sodium_memzero(set, strlen(set));
	free(set);
	sodium_memzero(get, strlen(get));
	free(get);
	if (rc < 0)
		return -1;
	if ((rc = netd_nl_set(n->nl, NETD_WG_IF, 1, NULL, n->mtu)) < 0 ||
	    (rc = netd_nl_route(n->nl, n->cfg.cidr.base, n->cfg.cidr.plen, 0,
	         NETD_WG_IF)) < 0) {
		errno = -rc;
		log_warn("%s up, mtu %u, route %s", NETD_WG_IF, n->mtu,
		    n->cfg.cidr_text);
		return -1;
	}
	if (netd_sysctl_write("/proc/sys/net/ipv4/conf/" NETD_WG_IF
	                      "/forwarding",
	        "1") < 0)
		log_warn("enabling forwarding on %s", NETD_WG_IF);
	n->wg_ready = 1;
	return 0;
}

static void
wg_fail(struct netd *n, const char *why)
{
	log_warnx("%s: stopping", why);
	n->failed = 1;
	mts_loop_stop(n->loop);
}

/* The loop's timer while a new wireguard-go starts: every WAIT_STEP_MS it
 * tries the UAPI socket (a connect that fails at once while nobody
 * listens), at most START_WAIT_MS; nothing sleeps. */
void
netd_wg_on_wait(void *arg, mts_time_t now)
{
	struct netd *n = arg;
	char *get;
	int fd;

	if ((fd = uapi_connect(n->wgsock)) < 0) {
		if (now - n->wg_since >= START_WAIT_MS) {
			log_warnx("wireguard-go did not open %s within %d ms",
			    n->wgsock, START_WAIT_MS);
			wg_fail(n, "no WireGuard");
			return;
		}
		mts_timer_arm(n->loop, &n->wg_timer, now + WAIT_STEP_MS);
		return;
	}
	close(fd);
	if ((get = uapi(n, "get=1\n\n")) == NULL || wg_setup(n, get) < 0) {
		wg_fail(n, "configuring mts0");
		return;
	}
	log_info("wireguard-go started for mts0 (%lld ms)",
	    (long long)(now - n->wg_since));
	if (n->scanned)
		netd_peers_update(n);
}

/* Brings mts0 up: a wireguard-go already serving the socket (netd
 * restarted) is kept with its peers and configured at once; otherwise one
 * is started here (before the sandbox: it forks) and netd_wg_wait, on the
 * loop, configures it when it answers. */
int
netd_wg_start(struct netd *n)
{
	char *get;

	if (mkdir(n->wgdir, 0700) < 0 && errno != EEXIST) {
		log_warn("mkdir %s", n->wgdir);
		return -1;
	}
	if ((get = uapi(n, "get=1\n\n")) != NULL) {
		log_info("wireguard-go already runs mts0: kept");
		return wg_setup(n, get);
	}
	if (access("/dev/net/tun", R_OK | W_OK) < 0) {
		log_warn("wireguard-go runs as netd's user, which cannot "
		         "open /dev/net/tun (udev makes it mode 0666)");
		return -1;
	}
	if (wg_spawn(n) < 0) {
		log_warn("starting wireguard-go");
		return -1;
	}
	n->wg_spawned = 1;
	return 0;
}

void
netd_wg_wait(struct netd *n)
{
	if (n->wg_spawned && !n->wg_ready) {
		n->wg_since = mts_now();
		mts_timer_arm(n->loop, &n->wg_timer, n->wg_since);
	}
}
