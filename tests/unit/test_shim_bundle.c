/* test_shim_bundle.c: the shim's bundle core — config.json contents (namespaces, capabilities, seccomp, limits), argv/env merging by Docker's rules, user resolution, and the whole task -> config.json translation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "agents/shim/bundle_core.h"
#include "agents/shim/image_core.h"
#include "mtserr.h"

static const char *const args[] = { "sh", "-c", "echo hi", NULL };
static const char *const env[] = { "PATH=/bin", NULL };

static json_t *
build(const struct mts_bundle_spec *s)
{
	char err[256];
	char *txt = mts_bundle_config(s, err, sizeof(err));
	json_t *j;

	if (txt == NULL)
		fail_msg("config: %s", err);
	j = json_loads(txt, 0, NULL);
	free(txt);
	assert_non_null(j);
	return j;
}

static struct mts_bundle_spec
base_spec(void)
{
	struct mts_bundle_spec s;

	memset(&s, 0, sizeof(s));
	s.args = args;
	s.env = env;
	s.uid = 1000;
	s.gid = 100;
	s.hostname = "task1";
	s.cgroups_path = "/mts/task1";
	s.seccomp = 1;
	return s;
}

static int
has_ns(json_t *j, const char *type, const char **path)
{
	json_t *a = json_object_get(json_object_get(j, "linux"), "namespaces"),
	       *e;
	size_t i;

	json_array_foreach(a, i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "type")),
		        type) == 0) {
			if (path)
				*path = json_string_value(
				    json_object_get(e, "path"));
			return 1;
		}
	}
	return 0;
}

static void
test_defaults(void **st)
{
	struct mts_bundle_spec s = base_spec();
	json_t *j = build(&s), *p = json_object_get(j, "process"), *caps, *e;
	const char *path = "x";
	uint64_t mask = 0;
	size_t i;
	static const struct {
		const char *name;
		int bit;
	} bits[] = { { "CAP_CHOWN", 0 }, { "CAP_DAC_OVERRIDE", 1 },
		{ "CAP_FOWNER", 3 }, { "CAP_FSETID", 4 }, { "CAP_KILL", 5 },
		{ "CAP_SETGID", 6 }, { "CAP_SETUID", 7 }, { "CAP_SETPCAP", 8 },
		{ "CAP_NET_BIND_SERVICE", 10 }, { "CAP_NET_RAW", 13 },
		{ "CAP_SYS_CHROOT", 18 }, { "CAP_MKNOD", 27 },
		{ "CAP_AUDIT_WRITE", 29 }, { "CAP_SETFCAP", 31 } };

	assert_true(has_ns(j, "pid", NULL));
	assert_true(has_ns(j, "ipc", NULL));
	assert_true(has_ns(j, "uts", NULL));
	assert_true(has_ns(j, "mount", NULL));
	assert_true(has_ns(j, "network", &path));
	assert_null(path);
	assert_false(has_ns(j, "user", NULL));
	assert_true(json_is_true(json_object_get(p, "noNewPrivileges")));
	assert_false(json_is_true(json_object_get(p, "terminal")));
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(p, "user"),
	                         "uid")),
	    1000);
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(p, "user"),
	                         "gid")),
	    100);
	assert_string_equal(json_string_value(json_object_get(p, "cwd")), "/");
	assert_string_equal(json_string_value(
	                        json_array_get(json_object_get(p, "args"), 2)),
	    "echo hi");
	caps = json_object_get(json_object_get(p, "capabilities"), "effective");
	json_array_foreach(caps, i, e)
	{
		size_t k;
		for (k = 0; k < sizeof(bits) / sizeof(bits[0]); k++)
			if (!strcmp(json_string_value(e), bits[k].name))
				mask |= 1ULL << bits[k].bit;
	}
	assert_int_equal(json_array_size(caps), 14);
	assert_int_equal(mask, MTS_DEFAULT_CAPS);
	assert_int_equal(json_array_size(
	                     json_object_get(json_object_get(p, "capabilities"),
	                         "ambient")),
	    0);
	assert_false(json_is_true(
	    json_object_get(json_object_get(j, "root"), "readonly")));
	assert_string_equal(json_string_value(json_object_get(j, "hostname")),
	    "task1");
	assert_string_equal(json_string_value(
	                        json_object_get(json_object_get(j, "linux"),
	                            "cgroupsPath")),
	    "/mts/task1");
	assert_null(json_object_get(json_object_get(json_object_get(j, "linux"),
	                                "resources"),
	    "memory"));
	json_decref(j);
}

static void
test_seccomp_profile(void **st)
{
	struct mts_bundle_spec s = base_spec();
	json_t *j = build(&s), *sc, *names, *e;
	int ptrace = 0, kexec = 0, read_ = 0;
	size_t i;

	sc = json_object_get(json_object_get(j, "linux"), "seccomp");
	assert_non_null(sc);
	assert_string_equal(json_string_value(
	                        json_object_get(sc, "defaultAction")),
	    "SCMP_ACT_ALLOW");
	names =
	    json_object_get(json_array_get(json_object_get(sc, "syscalls"), 0),
	        "names");
	json_array_foreach(names, i, e)
	{
		ptrace |= !strcmp(json_string_value(e), "ptrace");
		kexec |= !strcmp(json_string_value(e), "kexec_load");
		read_ |= !strcmp(json_string_value(e), "read");
	}
	assert_true(ptrace && kexec);
	assert_false(read_);
	json_decref(j);
	s.seccomp = 0;
	j = build(&s);
	assert_null(json_object_get(json_object_get(j, "linux"), "seccomp"));
	json_decref(j);
}

static void
test_options(void **st)
{
	static const char *const ro[] = { "rbind", "ro", NULL };
	struct mts_bundle_mount m[2] = { { .source = "/srv/data",
		                             .destination = "/data",
		                             .type = "bind",
		                             .options = ro },
		{ .destination = "/scratch", .type = "tmpfs" } };
	struct mts_bundle_spec s = base_spec();
	json_t *j, *r, *mounts, *last;
	const char *path;

	s.read_only = 1;
	s.netns = "/run/netns/t1";
	s.memory_limit = 64 << 20;
	s.cpu_millis = 500;
	s.pids_limit = 100;
	s.nofile = 4096;
	s.cwd = "/work";
	s.mounts = m;
	s.nmounts = 2;
	j = build(&s);
	assert_true(has_ns(j, "network", &path));
	assert_string_equal(path, "/run/netns/t1");
	assert_true(json_is_true(
	    json_object_get(json_object_get(j, "root"), "readonly")));
	r = json_object_get(json_object_get(j, "linux"), "resources");
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(r, "memory"),
	                         "limit")),
	    64 << 20);
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(r, "cpu"),
	                         "quota")),
	    50000);
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(r, "cpu"),
	                         "period")),
	    100000);
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(r, "pids"),
	                         "limit")),
	    100);
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(json_object_get(j,
	                                                        "process"),
	                                        "rlimits"),
	                         0),
	                     "hard")),
	    4096);
	mounts = json_object_get(j, "mounts");
	last = json_array_get(mounts, json_array_size(mounts) - 2);
	assert_string_equal(json_string_value(
	                        json_object_get(last, "destination")),
	    "/data");
	assert_string_equal(json_string_value(
	                        json_array_get(json_object_get(last, "options"),
	                            1)),
	    "ro");
	last = json_array_get(mounts, json_array_size(mounts) - 1);
	assert_string_equal(json_string_value(json_object_get(last, "type")),
	    "tmpfs");
	json_decref(j);
}

static void
test_refused(void **st)
{
	static const char *const none[] = { NULL };
	struct mts_bundle_spec s = base_spec();
	char err[128];

	s.args = none;
	assert_null(mts_bundle_config(&s, err, sizeof(err)));
	assert_non_null(strstr(err, "no command"));
	s = base_spec();
	s.cgroups_path = "mts/x";
	assert_null(mts_bundle_config(&s, err, sizeof(err)));
	assert_non_null(strstr(err, "cgroups"));
	/* 2^63 used to come out as -9223372036854775808 in config.json. */
	s = base_spec();
	s.nofile = 1ull << 63;
	assert_null(mts_bundle_config(&s, err, sizeof(err)));
	assert_string_equal(err,
	    "nofile 9223372036854775808: out of range "
	    "(at most 2147483647)");
	s.nofile = 2147483648ull;
	assert_null(mts_bundle_config(&s, err, sizeof(err)));
	s = base_spec();
	s.memory_limit = 1ull << 63;
	assert_null(mts_bundle_config(&s, err, sizeof(err)));
	assert_non_null(strstr(err,
	    "memory limit 9223372036854775808: out "
	    "of range"));
}

/* The largest limits pass through exactly. */
static void
test_limits_max(void **st)
{
	struct mts_bundle_spec s = base_spec();
	json_t *j;

	s.nofile = 2147483647;
	s.memory_limit = INT64_MAX;
	j = build(&s);
	assert_true(
	    json_integer_value(
	        json_object_get(json_array_get(json_object_get(json_object_get(j,
	                                                           "process"),
	                                           "rlimits"),
	                            0),
	            "hard")) == 2147483647);
	assert_true(
	    json_integer_value(
	        json_object_get(json_object_get(json_object_get(json_object_get(j,
	                                                            "linux"),
	                                            "resources"),
	                            "memory"),
	            "limit")) == INT64_MAX);
	json_decref(j);
}

static void
test_argv_rules(void **st)
{
	char *iep[] = { "/entry", "-x", NULL }, *icmd[] = { "default", NULL };
	char *ep[] = { "/mine" }, *cmd[] = { "a", "b" };
	const char **v;

	/* Image entrypoint + image cmd. */
	v = mts_task_argv(iep, icmd, NULL, 0, NULL, 0);
	assert_string_equal(v[0], "/entry");
	assert_string_equal(v[2], "default");
	assert_null(v[3]);
	free(v);
	/* A command replaces only the image's Cmd. */
	v = mts_task_argv(iep, icmd, NULL, 0, cmd, 2);
	assert_string_equal(v[1], "-x");
	assert_string_equal(v[2], "a");
	assert_null(v[4]);
	free(v);
	/* An entrypoint replaces the image's and drops its Cmd. */
	v = mts_task_argv(iep, icmd, ep, 1, NULL, 0);
	assert_string_equal(v[0], "/mine");
	assert_null(v[1]);
	free(v);
	v = mts_task_argv(NULL, NULL, NULL, 0, NULL, 0);
	assert_null(v);
}

static void
test_env_merge(void **st)
{
	char *ienv[] = { "PATH=/bin", "A=1", NULL }, *tenv[] = { "A=2", "B=3" };
	const char **v = mts_task_env(ienv, tenv, 2);

	assert_string_equal(v[0], "PATH=/bin");
	assert_string_equal(v[1], "A=2");
	assert_string_equal(v[2], "B=3");
	assert_null(v[3]);
	free(v);
}

static void
test_users(void **st)
{
	static const char passwd[] = "root:x:0:0:root:/root:/bin/sh\n"
	                             "app:x:1001:1002::/home/app:/bin/sh\n"
	                             "broken:x:zz:1:\n";
	static const char group[] = "root:x:0:\nstaff:x:50:\n";
	uint32_t u, g;

	assert_int_equal(mts_user_resolve(NULL, passwd, group, &u, &g), 0);
	assert_int_equal(u, 0);
	assert_int_equal(mts_user_resolve("app", passwd, group, &u, &g), 0);
	assert_int_equal(u, 1001);
	assert_int_equal(g, 1002);
	assert_int_equal(mts_user_resolve("1001", passwd, group, &u, &g), 0);
	assert_int_equal(g, 1002); /* primary group from passwd */
	assert_int_equal(mts_user_resolve("4242", passwd, group, &u, &g), 0);
	assert_int_equal(u, 4242);
	assert_int_equal(g, 0);
	assert_int_equal(mts_user_resolve("app:staff", passwd, group, &u, &g),
	    0);
	assert_int_equal(g, 50);
	assert_int_equal(mts_user_resolve("7:8", NULL, NULL, &u, &g), 0);
	assert_int_equal(u, 7);
	assert_int_equal(g, 8);
	assert_int_equal(mts_user_resolve("ghost", passwd, group, &u, &g),
	    -MTS_ERR_NOTFOUND);
	assert_int_equal(mts_user_resolve("broken", passwd, group, &u, &g),
	    -MTS_ERR_NOTFOUND);
	assert_int_equal(mts_user_resolve("app:nogroup", passwd, group, &u, &g),
	    -MTS_ERR_NOTFOUND);
	assert_int_equal(mts_user_resolve("99999999999", NULL, NULL, &u, &g),
	    -MTS_ERR_NOTFOUND);
}

/* Every task gets a pids limit: its own, else the node's default; "max"
 * (the sentinel) and a node default of 0 mean none. */
static void
test_pids_default(void **state)
{
	static const struct {
		uint32_t requested, node, want;
	} cases[] = {
		{ 0, 4096, 4096 },
		{ 50, 4096, 50 },
		{ MTS_PIDS_UNLIMITED, 4096, 0 },
		{ 0, 0, 0 },
		{ 7, 0, 7 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(mts_task_pids_limit(cases[i].requested,
		                     cases[i].node),
		    cases[i].want);
}

/* The task -> config.json translation (what write_bundle used to do with
 * the I/O mixed in): the image's config and files, the node's defaults. */
static char *img_env[] = { "PATH=/bin", "MODE=image", NULL };
static char *img_ep[] = { "/entry", NULL };
static char *img_cmd[] = { "serve", NULL };
static const char passwd[] = "root:x:0:0::/root:/bin/sh\n"
                             "app:x:1000:1001::/home/app:/bin/sh\n";
static const char group[] = "root:x:0:\nstaff:x:50:\n";

static struct mts_image_config
image(void)
{
	struct mts_image_config c;

	memset(&c, 0, sizeof(c));
	c.env = img_env;
	c.entrypoint = img_ep;
	c.cmd = img_cmd;
	c.cwd = "/srv";
	c.user = "app";
	return c;
}

static const struct mts_bundle_host host = { .cgroup_parent = "/mts",
	.default_pids = 4096,
	.nofile_max = 65536,
	.seccomp = 1,
	.passwd = passwd,
	.group = group };

static json_t *
for_task(const struct mts_task_spec *t, const struct mts_bundle_host *h)
{
	struct mts_image_config img = image();
	char err[256];
	char *txt = mts_bundle_for_task(t, &img, h, err, sizeof(err));
	json_t *j;

	if (txt == NULL)
		fail_msg("translation: %s", err);
	j = json_loads(txt, 0, NULL);
	free(txt);
	assert_non_null(j);
	return j;
}

static json_int_t
path_int(json_t *j, const char *a, const char *b, const char *c)
{
	return json_integer_value(
	    json_object_get(json_object_get(json_object_get(j, a), b), c));
}

static void
test_task_defaults(void **state)
{
	struct mts_task_spec t = { .id = "web1" };
	json_t *j = for_task(&t, &host), *p = json_object_get(j, "process");

	assert_string_equal(json_string_value(
	                        json_array_get(json_object_get(p, "args"), 0)),
	    "/entry");
	assert_string_equal(json_string_value(
	                        json_array_get(json_object_get(p, "args"), 1)),
	    "serve");
	assert_string_equal(json_string_value(json_object_get(p, "cwd")),
	    "/srv");
	assert_int_equal(path_int(j, "process", "user", "uid"), 1000);
	assert_int_equal(path_int(j, "process", "user", "gid"), 1001);
	assert_string_equal(json_string_value(json_object_get(j, "hostname")),
	    "web1");
	assert_string_equal(json_string_value(
	                        json_object_get(json_object_get(j, "linux"),
	                            "cgroupsPath")),
	    "/mts/web1");
	assert_int_equal(json_integer_value(json_object_get(
	                     json_object_get(json_object_get(json_object_get(j,
	                                                         "linux"),
	                                         "resources"),
	                         "pids"),
	                     "limit")),
	    4096);
	assert_int_equal(json_integer_value(
	                     json_object_get(json_array_get(json_object_get(p,
	                                                        "rlimits"),
	                                         0),
	                         "hard")),
	    65536);
	assert_non_null(
	    json_object_get(json_object_get(j, "linux"), "seccomp"));
	json_decref(j);
}

static void
test_task_overrides(void **state)
{
	static char *ep[] = { "/bin/sh", "-c" }, *cmd[] = { "exit 3" };
	static char *tenv[] = { "MODE=task", "DB=x" }, *ro[] = { "ro" };
	static const struct mts_task_mount m[] = { { .source = "/data",
	    .destination = "/data",
	    .options = ro,
	    .noptions = 1 } };
	struct mts_task_spec t = { .id = "t2",
		.entrypoint = ep,
		.nentrypoint = 2,
		.command = cmd,
		.ncommand = 1,
		.env = tenv,
		.nenv = 2,
		.cwd = "/tmp",
		.user = "0:staff",
		.hostname = "h",
		.mounts = m,
		.nmounts = 1,
		.pids_limit = 50,
		.nofile = 1024 };
	struct mts_bundle_host h = host;
	json_t *j, *p, *envs, *last;

	h.seccomp = 0;
	j = for_task(&t, &h);
	p = json_object_get(j, "process");
	assert_int_equal(json_array_size(json_object_get(p, "args")), 3);
	assert_string_equal(json_string_value(
	                        json_array_get(json_object_get(p, "args"), 2)),
	    "exit 3");
	envs = json_object_get(p, "env");
	assert_int_equal(json_array_size(envs), 3);
	assert_string_equal(json_string_value(json_array_get(envs, 1)),
	    "MODE=task");
	assert_int_equal(path_int(j, "process", "user", "uid"), 0);
	assert_int_equal(path_int(j, "process", "user", "gid"), 50);
	assert_string_equal(json_string_value(json_object_get(j, "hostname")),
	    "h");
	assert_int_equal(json_integer_value(json_object_get(
	                     json_object_get(json_object_get(json_object_get(j,
	                                                         "linux"),
	                                         "resources"),
	                         "pids"),
	                     "limit")),
	    50);
	assert_int_equal(json_integer_value(
	                     json_object_get(json_array_get(json_object_get(p,
	                                                        "rlimits"),
	                                         0),
	                         "hard")),
	    1024);
	last = json_array_get(json_object_get(j, "mounts"),
	    json_array_size(json_object_get(j, "mounts")) - 1);
	assert_string_equal(json_string_value(
	                        json_array_get(json_object_get(last, "options"),
	                            0)),
	    "ro");
	assert_string_equal(json_string_value(
	                        json_array_get(json_object_get(last, "options"),
	                            1)),
	    "rbind");
	assert_null(json_object_get(json_object_get(j, "linux"), "seccomp"));
	json_decref(j);
}

static void
test_task_refused(void **state)
{
	static const struct mts_task_mount rel[] = { { .destination =
		                                           "data" } };
	struct mts_image_config img = image();
	struct mts_task_spec t = { .id = "t3", .user = "nobody" };
	struct mts_bundle_host h = host;
	char err[256], *txt;

	assert_null(mts_bundle_for_task(&t, &img, &h, err, sizeof(err)));
	assert_string_equal(err, "user \"nobody\" not found in the image");
	h.passwd = NULL; /* no /etc/passwd: numeric users still work */
	t.user = "7";
	if ((txt = mts_bundle_for_task(&t, &img, &h, err, sizeof(err))) == NULL)
		fail_msg("numeric user without passwd: %s", err);
	free(txt);
	t.user = "app";
	assert_null(mts_bundle_for_task(&t, &img, &h, err, sizeof(err)));
	t.user = NULL;
	h = host;
	t.mounts = rel;
	t.nmounts = 1;
	assert_null(mts_bundle_for_task(&t, &img, &h, err, sizeof(err)));
	assert_string_equal(err, "mount 0: destination must be absolute");
}

/* A task's resolv.conf: nameservers and search domains, bad entries
 * refused with the reason. */
static void
test_resolv_conf(void **state)
{
	char *ns[] = { "10.210.7.1", "10.0.0.2" },
	     *search[] = { "shop.mts", "mts" };
	char *bad_ns[] = { "10.210.7.1\nsearch evil" }, *v6[] = { "fd00::1" };
	char *bad_search[] = { "a b" }, err[128], *t;

	t = mts_resolv_conf(ns, 1, search, 2, err, sizeof(err));
	assert_non_null(t);
	assert_string_equal(t, "nameserver 10.210.7.1\nsearch shop.mts mts\n");
	free(t);
	t = mts_resolv_conf(ns, 2, NULL, 0, err, sizeof(err));
	assert_string_equal(t, "nameserver 10.210.7.1\nnameserver 10.0.0.2\n");
	free(t);
	assert_null(mts_resolv_conf(bad_ns, 1, NULL, 0, err, sizeof(err)));
	assert_null(mts_resolv_conf(v6, 1, NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "dns: 'fd00::1' is not an IPv4 address");
	assert_null(mts_resolv_conf(ns, 1, bad_search, 1, err, sizeof(err)));
	assert_string_equal(err, "dns_search: 'a b' is not a domain");
	assert_null(mts_resolv_conf(ns, 0, search, 1, err, sizeof(err)));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolv_conf),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_seccomp_profile),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_limits_max),
		cmocka_unit_test(test_argv_rules),
		cmocka_unit_test(test_env_merge),
		cmocka_unit_test(test_users),
		cmocka_unit_test(test_pids_default),
		cmocka_unit_test(test_task_defaults),
		cmocka_unit_test(test_task_overrides),
		cmocka_unit_test(test_task_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
