/* netd_wg.c: mts-netd's WireGuard interface mts0 on wireguard-go — started once per node in a mount namespace of its own (its UAPI socket lands in netd's run directory, not in the host's /run/wireguard), kept across netd restarts, waited for by a timer on the loop (never a sleep), configured through the UAPI socket (get=1 / set=1) by requests on the loop (netd_uapi.c) — the loop never waits for wireguard-go. */
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

#define START_WAIT_MS 5000
#define WAIT_STEP_MS 20

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

/* The key and the port, as set=1 lines (malloc'd; the caller zeroes and
 * frees them). */
static char *
key_port_lines(const struct netd *n)
{
	char hex[2 * NETD_KEY_LEN + 1], *set;

	mts_hex(hex, n->priv, sizeof(n->priv));
	set = xasprintf("private_key=%s\nlisten_port=%u\n", hex,
	    n->cfg.listen_port);
	sodium_memzero(hex, sizeof(hex));
	return set;
}

static void
wg_fail(struct netd *n, const char *why)
{
	log_warnx("%s: stopping", why);
	n->failed = 1;
	mts_loop_stop(n->loop);
}

/* The last step: mts0 up with its MTU and the cluster CIDR's route, and
 * only then ready for peers. */
static void
wg_link(struct netd *n)
{
	int rc;

	if ((rc = netd_nl_set(n->nl, NETD_WG_IF, 1, NULL, n->mtu)) < 0 ||
	    (rc = netd_nl_route(n->nl, n->cfg.cidr.base, n->cfg.cidr.plen, 0,
	         NETD_WG_IF)) < 0) {
		errno = -rc;
		log_warn("%s up, mtu %u, route %s", NETD_WG_IF, n->mtu,
		    n->cfg.cidr_text);
		wg_fail(n, "configuring mts0");
		return;
	}
	if (netd_sysctl_write("/proc/sys/net/ipv4/conf/" NETD_WG_IF
	                      "/forwarding",
	        "1") < 0)
		log_warn("enabling forwarding on %s", NETD_WG_IF);
	n->wg_ready = 1;
	if (n->wg_spawned)
		log_info("wireguard-go started for mts0 (%lld ms)",
		    (long long)(mts_loop_now(n->loop) - n->wg_since));
	else
		log_info("wireguard-go already runs mts0: kept");
	if (n->scanned)
		netd_peers_update(n);
}

char *
netd_wg_start_req(struct netd *n)
{
	return n->wg_ready ? NULL : xstrdup("get=1\n\n");
}

/* wireguard-go's first answer: the peers it has; the key and the port set
 * unless it has them already — a kept wireguard-go is left alone: setting
 * the key again expires every session and the port rebinds the socket,
 * so a netd restart would stall the tasks' traffic until the next
 * handshake (up to 5 s when the first one is lost). Nobody listening yet
 * (or no answer in time) asks again, for up to START_WAIT_MS. */
void
netd_wg_start_done(struct netd *n, int rc, char *rep)
{
	mts_time_t now = mts_loop_now(n->loop);
	char *set;
	int have;

	if (rc < 0 || netd_uapi_errno(rep) != 0) {
		if (now - n->wg_since >= START_WAIT_MS) {
			log_warnx("wireguard-go did not answer on %s within "
			          "%d ms (%s)",
			    n->wgsock, START_WAIT_MS,
			    rc < 0 ? strerror(-rc) : "an error answer");
			wg_fail(n, "no WireGuard");
			return;
		}
		mts_timer_arm(n->loop, &n->wg_timer, now + WAIT_STEP_MS);
		return;
	}
	netd_uapi_peers(&n->have, rep);
	set = key_port_lines(n);
	have = line_pair_in(rep, set);
	sodium_memzero(set, strlen(set));
	free(set);
	if (have)
		wg_link(n);
	else
		netd_uapi_push(n, NETD_UAPI_SETUP);
}

char *
netd_wg_setup_req(struct netd *n)
{
	char *lines = key_port_lines(n), *req;

	req = xasprintf("set=1\n%s\n", lines);
	sodium_memzero(lines, strlen(lines));
	free(lines);
	return req;
}

void
netd_wg_setup_done(struct netd *n, int rc, char *rep)
{
	if (rc < 0) {
		wg_fail(n, "configuring mts0");
		return;
	}
	if (netd_uapi_errno(rep) != 0) {
		log_warnx("wireguard refused the key and port: %.*s",
		    (int)strcspn(rep, "\n"), rep);
		wg_fail(n, "configuring mts0");
		return;
	}
	wg_link(n);
}

char *
netd_wg_stats_req(struct netd *n)
{
	return xstrdup("get=1\n\n");
}

/* The counters for status, kept without the key; the status calls that
 * waited for them are answered either way. */
void
netd_wg_stats_done(struct netd *n, int rc, char *rep)
{
	if (rc == 0 && netd_uapi_errno(rep) == 0) {
		netd_uapi_redact(rep);
		free(n->wg_stats);
		n->wg_stats = xstrdup(rep);
		n->wg_stats_at = mts_loop_now(n->loop);
	}
	netd_status_flush(n);
}

/* The loop's timer while mts0 is being configured: asks wireguard-go
 * (a connect fails at once while nobody listens); the answer's handler
 * re-arms it. Nothing sleeps. */
void
netd_wg_on_wait(void *arg, mts_time_t now)
{
	struct netd *n = arg;

	(void)now;
	netd_uapi_push(n, NETD_UAPI_START);
}

/* Brings mts0 up: a wireguard-go already serving the socket (netd
 * restarted) is kept with its peers; otherwise one is started here
 * (before the sandbox: it forks). Either way netd_wg_wait, on the loop,
 * configures it when it answers. */
int
netd_wg_start(struct netd *n)
{
	int fd, rc;

	if (mkdir(n->wgdir, 0700) < 0 && errno != EEXIST) {
		log_warn("mkdir %s", n->wgdir);
		return -1;
	}
	/* someone listens (a connect to a Unix socket completes in the
	 * backlog, without waiting for the accept) */
	if ((rc = netd_uapi_connect(n->wgsock, &fd)) == 0 ||
	    rc == -EINPROGRESS || rc == -EAGAIN) {
		if (fd >= 0)
			close(fd);
		return 0;
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
	if (!n->wg_ready) {
		n->wg_since = mts_now();
		mts_timer_arm(n->loop, &n->wg_timer, n->wg_since);
	}
}
