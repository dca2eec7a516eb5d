/* fuzz_netd_api.c: libFuzzer target that drives the real mts-netd — its dispatch table and handlers over its own netd.sock on its loop, with the real attachments (namespaces, veths in mtsbr0, table inet mts) in a network and mount namespace of the fuzzer's own, and a stand-in wireguard-go UAPI socket that answers, errs, closes, babbles or stalls as the input says — with well-formed status/attach/detach requests built from the input (colliding task ids, bad and over-long names, too many networks, no /24 yet, a /24 that moves) and raw request bytes; it checks every reply against the attachments netd holds and the kernel, and that status answers within a second however the UAPI socket behaves. The attachments (a few task ids) carry over from one input to the next, as in a running netd. */
#define main netd_main
#include "fuzz_input.h"
#include "fuzz_harness.h"
#include "agents/netd/netd.c"
#undef main

#include <ctype.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "netd.pb-c.h"

#define MAX_REQS 16
#define REPLY_WAIT_MS 3000
#define STATUS_MAX_MS 1000 /* a status slower than this: the loop blocked */
#define SUBNET_A 7
#define SUBNET_B 8
#define UAPI_CONNS 4

static const char *tdir;
static struct netd fz;
static struct mts_agent fz_agent;
static struct mts_ipc_async *cli;

/* --- a stand-in wireguard-go: the UAPI socket ----------------------------- */

enum uapi_mode {
	UAPI_OK,
	UAPI_ERRNO,
	UAPI_BABBLE,
	UAPI_CLOSE,
	UAPI_STALL,
	UAPI_MODES
};

static struct {
	int lfd;
	struct mts_watch *lw;
	enum uapi_mode mode;
	struct {
		int fd;
		struct mts_watch *w;
		size_t len;
		char buf[512];
	} c[UAPI_CONNS];
} ua;

static const char uapi_get[] =
    "private_key=0000000000000000000000000000000000000000000000000000000000000001\n"
    "listen_port=51820\n"
    "public_key=1111111111111111111111111111111111111111111111111111111111111111\n"
    "last_handshake_time_sec=1700000000\n"
    "rx_bytes=5\n"
    "tx_bytes=6\n"
    "errno=0\n\n";

static void
ua_close(int i)
{
	mts_watch_free(ua.c[i].w);
	ua.c[i].w = NULL;
	if (ua.c[i].fd >= 0)
		close(ua.c[i].fd);
	ua.c[i].fd = -1;
	ua.c[i].len = 0;
}

static void
ua_answer(int i)
{
	static const char *const answers[UAPI_MODES] = {
		[UAPI_ERRNO] = "errno=1\n\n",
		[UAPI_BABBLE] = "listen_port=1\nrx_bytes=zz\n",
	};
	const char *a = ua.mode == UAPI_OK
	    ? (strncmp(ua.c[i].buf, "get=1", 5) == 0 ? uapi_get : "errno=0\n\n")
	    : answers[ua.mode];

	if (ua.mode == UAPI_STALL) {
		mts_watch_set(ua.c[i].w, 0); /* read, never answered */
		return;
	}
	if (a != NULL && write(ua.c[i].fd, a, strlen(a)) < 0)
		abort();
	ua_close(i);
}

static void
ua_on_conn(void *arg, int fd, uint32_t ev, mts_time_t now)
{
	int i = (int)(intptr_t)arg;
	ssize_t r;

	r = read(fd, ua.c[i].buf + ua.c[i].len,
	    sizeof(ua.c[i].buf) - 1 - ua.c[i].len);
	if (r <= 0) {
		ua_close(i);
		return;
	}
	ua.c[i].len += (size_t)r;
	ua.c[i].buf[ua.c[i].len] = '\0';
	if (strstr(ua.c[i].buf, "\n\n") != NULL ||
	    ua.c[i].len == sizeof(ua.c[i].buf) - 1)
		ua_answer(i);
}

static void
ua_on_accept(void *arg, int lfd, uint32_t ev, mts_time_t now)
{
	int fd, i;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0)
		return;
	for (i = 0; i < UAPI_CONNS && ua.c[i].fd >= 0; i++)
		;
	if (i == UAPI_CONNS) {
		ua_close(0); /* the oldest stalled one goes */
		i = 0;
	}
	ua.c[i].fd = fd;
	ua.c[i].w = mts_loop_watch(fz.loop, fd, MTS_LOOP_IN, "fuzz-uapi",
	    ua_on_conn, (void *)(intptr_t)i);
}

static void
ua_open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int i;

	for (i = 0; i < UAPI_CONNS; i++)
		ua.c[i].fd = -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if ((ua.lfd = socket(AF_UNIX,
	         SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(ua.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(ua.lfd, 64) < 0 ||
	    (ua.lw = mts_loop_watch(fz.loop, ua.lfd, MTS_LOOP_IN, "fuzz-uapi",
	         ua_on_accept, NULL)) == NULL)
		abort();
}

/* --- netd, as main() makes it, in namespaces of the fuzzer's own --------- */

/* Root gets a network and a mount namespace (the tasks' namespaces are
 * bind mounts); anyone else a user namespace too. */
static void
isolate(void)
{
	int flags = CLONE_NEWNET | CLONE_NEWNS;

	if (geteuid() != 0)
		flags |= CLONE_NEWUSER;
	if (unshare(flags) < 0) {
		perror(
		    "fuzz_netd_api: unshare (needs root or user namespaces)");
		abort();
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		abort();
}

static char fast[160]; /* a tmpfs: netd's files are fsync'ed */

/* At exit, before the scratch directory goes: the namespaces' mounts,
 * then the tmpfs they were on. */
static void
teardown(void)
{
	int found;

	while (fz.att.n > 0)
		netd_detach(&fz, fz.att.a[0].task, &found);
	umount2(fast, MNT_DETACH);
}

/* setup() and open_net() of netd.c without init, the node key, the
 * sandbox and wireguard-go; mts0 is not there, so peers never are. */
static void
start(void)
{
	char conf[128], path[160], err[512];
	FILE *f;

	isolate();
	tdir = fz_scratch("nd");
	snprintf(conf, sizeof(conf), "%s/mts.conf", tdir);
	if ((f = fopen(conf, "w")) == NULL)
		abort();
	fprintf(f, "[netd]\nacl = %u\nmtu = 1420\ndns_port = 0\n",
	    (unsigned)getuid());
	fclose(f);
	log_init("netd", MTS_LOG_WARN);
	memset(&fz, 0, sizeof(fz));
	fz.hostns = -1;
	fz.subnet = fz.applied = fz.claim_put = -1;
	netd_att_init(&fz.att);
	netd_uapi_init(&fz);
	fz_agent.name = "netd";
	fz_agent.node_id = "0123456789abcdef0123456789abcdef";
	fz_agent.rundir = tdir;
	fz.agent = &fz_agent;
	if (mts_crypto_init() < 0 ||
	    mts_cfg_load_agent(conf, mts_conf_schema(), "netd", &fz_agent.cfg,
	        err, sizeof(err)) < 0 ||
	    netd_conf_load(&fz.cfg, fz_agent.cfg) < 0 ||
	    mts_acl_table_load(&fz.cfg.acl, netd_service.acl, fz_agent.cfg,
	        NETD_SECTION, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	mts_unhex(fz.self_id, sizeof(fz.self_id), fz_agent.node_id, 32);
	mts_hex(fz.self, fz.self_id, sizeof(fz.self_id));
	randombytes_buf(fz.priv, sizeof(fz.priv));
	crypto_scalarmult_base(fz.pub, fz.priv);
	if ((fz.loop = mts_loop_new()) == NULL)
		abort();
	mts_timer_init(&fz.status_timer, "status", netd_status_on_timer, &fz);
	if ((fz.hostns = open("/proc/thread-self/ns/net",
	         O_RDONLY | O_CLOEXEC)) < 0 ||
	    (fz.nl = netd_nl_open()) == NULL)
		abort();
	fz.mtu = fz.cfg.mtu;
	snprintf(fast, sizeof(fast), "%s/fast", tdir);
	if (mkdir(fast, 0700) < 0 ||
	    mount("tmpfs", fast, "tmpfs", 0, "size=16m") < 0)
		abort();
	snprintf(fz.nsdir, sizeof(fz.nsdir), "%s/ns", fast);
	snprintf(fz.wgdir, sizeof(fz.wgdir), "%s/wg", fast);
	snprintf(fz.wgsock, sizeof(fz.wgsock), "%s/uapi.sock", fast);
	snprintf(fz.attfile, sizeof(fz.attfile), "%s/attachments", fast);
	if (mkdir(fz.nsdir, 0755) < 0 || netd_nft_open(&fz) < 0)
		abort();
	/* as after the first scan: a /24, and table inet mts follows */
	fz.scanned = 1;
	fz.subnet = SUBNET_A;
	if (netd_bridge_apply(&fz) < 0)
		abort();
	ua_open(fz.wgsock);
	snprintf(path, sizeof(path), "%s/netd.sock", tdir);
	if ((fz.srv = mts_ipc_server_open(path, &netd_service, &fz, err,
	         sizeof(err))) == NULL)
		abort();
	mts_ipc_server_set_acl(fz.srv, &fz.cfg.acl);
	if (mts_loop_add_server(fz.loop, fz.srv) < 0 ||
	    (cli = mts_ipc_async_open(fz.loop, path, REPLY_WAIT_MS, err,
	         sizeof(err))) == NULL)
		abort();
	atexit(teardown);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	start();
	return 0;
}

/* --- reading the program ------------------------------------------------- */

static char longstr[300];

static const char *const tasks[] = { "web.1", "db.1", "api_2-x", "a", "", ".",
	"..", "bad/x", "sp ace", "x\n" };
static const char *const nets[] = { "s_default", "s_front", "ext", "a.b", "-",
	"", "bad name", "x,y", "a\"b" };

/* A network: one of a few, or one of the longest (valid) or one byte
 * longer. */
static char *
longnet(unsigned c)
{
	if (c == 9 || c == 10)
		return longstr + sizeof(longstr) - 1 - (NETD_NET_MAX - 1) -
		    (c == 10);
	return (char *)nets[c % 9];
}

static const char *
take_task(struct in *in)
{
	unsigned c = take(in, 12);

	if (c == 10)
		return longstr;
	if (c == 11)
		return longstr + sizeof(longstr) - 1 - (NETD_TASK_MAX - 1);
	return tasks[c];
}

/* --- checks ---------------------------------------------------------------- */

static int
call(Mts__Netd__Request *req, Mts__Netd__Reply **rep)
{
	return fz_call(fz.loop, cli, &req->base, &mts__netd__reply__descriptor,
	    REPLY_WAIT_MS, (ProtobufCMessage **)rep);
}

static int
name_ok(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n >= max)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) &&
		    strchr("_.-", s[i]) == NULL)
			return 0;
	return 1;
}

static int
is_netns(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == NSFS_MAGIC;
}

/* An attachment as a reply shows it: in netd's table, its address of the
 * node's /24 at its host number, its namespace a namespace, its veth
 * there, its networks valid and sorted. */
static void
check_attachment(const Mts__Netd__Attachment *a)
{
	const struct netd_attach *m = netd_att_find(&fz.att, a->task);
	char want[32], ip[16], path[512], veth[16];
	size_t i;

	if (m == NULL)
		abort();
	netd_ip_str(ip, sizeof(ip),
	    netd_subnet_net(&fz.cfg.cidr, (uint32_t)fz.subnet) | m->host);
	snprintf(want, sizeof(want), "%s/24", ip);
	netd_attach_path(&fz, m->task, path, sizeof(path));
	netd_veth_name(m->host, veth, sizeof(veth));
	if (strcmp(a->address, want) != 0 || strcmp(a->netns, path) != 0 ||
	    strcmp(a->veth, veth) != 0 || !is_netns(path) ||
	    netd_nl_ifindex(fz.nl, veth, NULL) < 0 ||
	    a->n_networks > NETD_NETS_MAX)
		abort();
	for (i = 0; i < a->n_networks; i++)
		if (!name_ok(a->networks[i], NETD_NET_MAX) ||
		    (i > 0 && strcmp(a->networks[i - 1], a->networks[i]) >= 0))
			abort();
}

static void
do_status(struct in *in)
{
	Mts__Netd__Request req = MTS__NETD__REQUEST__INIT;
	Mts__Netd__StatusReq sr = MTS__NETD__STATUS_REQ__INIT;
	Mts__Netd__Reply *rep;
	mts_time_t t0 = mts_now();
	size_t i, j;

	req.body_case = MTS__NETD__REQUEST__BODY_STATUS;
	req.status = &sr;
	if (call(&req, &rep) != 0 ||
	    rep->body_case != MTS__NETD__REPLY__BODY_STATUS)
		abort();
	if (mts_now() - t0 > STATUS_MAX_MS) {
		fprintf(stderr, "status took %lld ms\n",
		    (long long)(mts_now() - t0));
		abort();
	}
	if (rep->status->n_attachments != fz.att.n ||
	    rep->status->n_peers != fz.have.n ||
	    (fz.subnet >= 0) != (rep->status->subnet[0] != '\0'))
		abort();
	for (i = 0; i < rep->status->n_attachments; i++) {
		if (fz.subnet >= 0)
			check_attachment(rep->status->attachments[i]);
		for (j = 0; j < i; j++)
			if (strcmp(rep->status->attachments[i]->task,
			        rep->status->attachments[j]->task) == 0)
				abort();
	}
	mts__netd__reply__free_unpacked(rep, NULL);
}

static void
do_attach(struct in *in)
{
	Mts__Netd__Request req = MTS__NETD__REQUEST__INIT;
	Mts__Netd__AttachReq ar = MTS__NETD__ATTACH_REQ__INIT;
	Mts__Netd__Reply *rep;
	char *v[NETD_NETS_MAX + 2], joined[NETD_NETS_TEXT];
	const struct netd_attach *before;
	unsigned host = 0, k = take(in, NETD_NETS_MAX + 2);
	int code, valid, nets_ok;
	size_t i;

	ar.task = (char *)take_task(in);
	for (i = 0; i < k; i++)
		v[i] = longnet(take(in, 12));
	ar.networks = v;
	ar.n_networks = k;
	req.body_case = MTS__NETD__REQUEST__BODY_ATTACH;
	req.attach = &ar;
	nets_ok = netd_nets_join(v, k, joined, sizeof(joined)) == 0;
	valid = name_ok(ar.task, NETD_TASK_MAX) && strcmp(ar.task, ".") != 0 &&
	    strcmp(ar.task, "..") != 0;
	if ((before = netd_att_find(&fz.att, ar.task)) != NULL)
		host = before->host;
	code = call(&req, &rep);
	/* the networks are checked first, then whether there is a /24 */
	if (!nets_ok || (fz.subnet >= 0 && !valid)) {
		if (code != MTS_ERR_INVAL)
			abort();
	} else if (fz.subnet < 0) {
		if (code != MTS_ERR_STATE)
			abort();
	} else if (code != 0) {
		fprintf(stderr, "attach %s: %d\n", ar.task, code);
		abort();
	} else {
		const struct netd_attach *m = netd_att_find(&fz.att, ar.task);

		if (rep->body_case != MTS__NETD__REPLY__BODY_ATTACH ||
		    rep->attach->attachment == NULL || m == NULL ||
		    (host != 0 && m->host != host) ||
		    (k > 0 && strcmp(m->nets, joined) != 0) ||
		    rep->attach->mtu != fz.mtu)
			abort();
		check_attachment(rep->attach->attachment);
	}
	if (rep)
		mts__netd__reply__free_unpacked(rep, NULL);
}

static void
do_detach(struct in *in)
{
	Mts__Netd__Request req = MTS__NETD__REQUEST__INIT;
	Mts__Netd__DetachReq dr = MTS__NETD__DETACH_REQ__INIT;
	Mts__Netd__Reply *rep;
	char path[512];
	int had, code;

	dr.task = (char *)take_task(in);
	req.body_case = MTS__NETD__REQUEST__BODY_DETACH;
	req.detach = &dr;
	had = netd_att_find(&fz.att, dr.task) != NULL;
	netd_attach_path(&fz, dr.task, path, sizeof(path));
	code = call(&req, &rep);
	if (code != 0 || rep->body_case != MTS__NETD__REPLY__BODY_DETACH ||
	    rep->detach->found != had ||
	    netd_att_find(&fz.att, dr.task) != NULL ||
	    (had && access(path, F_OK) == 0))
		abort();
	mts__netd__reply__free_unpacked(rep, NULL);
}

/* Bytes as the request body: an error or a reply, never silence. */
static void
do_raw(struct in *in)
{
	uint8_t buf[64];
	size_t len = take(in, sizeof(buf)), i;
	int code;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)take(in, 0);
	code = fz_call_raw(fz.loop, cli, buf, len, REPLY_WAIT_MS);
	if (code == MTS_ERR_TIMEOUT || code == MTS_ERR_IO)
		abort();
}

/* The node has no /24 yet (the claim not settled), or has it again, or
 * moves to another (rarely: every attachment is re-addressed). */
static void
do_subnet(struct in *in)
{
	unsigned c = take(in, 8);

	if (c == 0)
		fz.subnet = -1;
	else if (c == 7)
		fz.subnet = fz.applied == SUBNET_A ? SUBNET_B : SUBNET_A;
	else
		fz.subnet = fz.applied;
	if (netd_bridge_apply(&fz) < 0)
		abort();
	if (fz.subnet >= 0 && fz.applied != fz.subnet)
		abort();
}

static void
do_uapi(struct in *in)
{
	/* a stall is rare: every status then waits for it (50 ms) */
	unsigned m = take(in, 64);

	ua.mode = m < 4 ? (enum uapi_mode)m : m == 63 ? UAPI_STALL : UAPI_OK;
}

/* Detaching is rare: a new attachment after it is a new namespace and
 * veth, the dearest work there is (rtnl is shared with the host). */
static void (*const ops[])(struct in *) = {
	do_status,
	do_status,
	do_attach,
	do_attach,
	do_attach,
	do_detach,
	do_raw,
	do_raw,
	do_subnet,
	do_uapi,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	int i;

	memset(longstr, 'x', sizeof(longstr) - 1);
	for (i = 0; i < MAX_REQS && in.n > 0; i++)
		ops[take(&in, sizeof(ops) / sizeof(ops[0]))](&in);
	/* the next input starts with a /24 and a UAPI socket that answers;
	 * the attachments stay (at most the few valid task ids: a crash may
	 * need the inputs before it to reproduce) */
	ua.mode = UAPI_OK;
	fz.subnet = fz.applied;
	return 0;
}
