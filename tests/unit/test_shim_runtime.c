/* test_shim_runtime.c: the shim's OCI runtime choice — every config value against every cgroup mode and every set of installed binaries, and cgroup mode detection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agents/shim/runtime_core.h"
#include "mtserr.h"

#define RUNC "/usr/sbin/runc"
#define CRUN "/usr/bin/crun"

enum { V1 = MTS_CGROUP_V1, HY = MTS_CGROUP_HYBRID, UN = MTS_CGROUP_UNIFIED };
enum { R = MTS_RUNTIME_RUNC, C = MTS_RUNTIME_CRUN, NONE = -1 };

struct rt_case {
	const char *want;
	int cgroup;
	int runc, crun, want_exists; /* what is installed */
	int rc;                      /* expected return */
	int kind;                    /* expected kind, NONE on error */
	const char *path;            /* expected path */
	const char *text;            /* expected in why (ok) or err */
};

static const struct rt_case cases[] = {
	/* auto, unified: crun when present, else runc */
	{ "auto", UN, 1, 1, 0, 0, C, CRUN, "crun on a unified cgroup v2 host" },
	{ "auto", UN, 1, 0, 0, 0, R, RUNC, "no crun in PATH" },
	{ "auto", UN, 0, 1, 0, 0, C, CRUN, "auto: crun" },
	{ "auto", UN, 0, 0, 0, -MTS_ERR_NOTFOUND, NONE, NULL,
	    "neither runc nor crun" },
	/* auto, hybrid: never crun, and the log line says why */
	{ "auto", HY, 1, 1, 0, 0, R, RUNC,
	    "runc, not crun: crun refuses to create containers on a hybrid" },
	{ "auto", HY, 1, 0, 0, 0, R, RUNC,
	    "runc on a hybrid cgroup v1+v2 host" },
	{ "auto", HY, 0, 1, 0, -MTS_ERR_NOTFOUND, NONE, NULL,
	    "crun cannot create containers on a hybrid" },
	{ "auto", HY, 0, 0, 0, -MTS_ERR_NOTFOUND, NONE, NULL, "neither" },
	/* auto, v1: runc first, crun only without runc */
	{ "auto", V1, 1, 1, 0, 0, R, RUNC,
	    "crun is used on unified cgroup v2 only" },
	{ "auto", V1, 1, 0, 0, 0, R, RUNC, "runc on a cgroup v1 host" },
	{ "auto", V1, 0, 1, 0, 0, C, CRUN, "no runc in PATH" },
	{ "auto", V1, 0, 0, 0, -MTS_ERR_NOTFOUND, NONE, NULL, "neither" },
	/* empty means auto */
	{ "", HY, 1, 1, 0, 0, R, RUNC, "auto: runc" },
	/* runc by name */
	{ "runc", UN, 1, 1, 0, 0, R, RUNC, "configured (runc)" },
	{ "runc", HY, 1, 1, 0, 0, R, RUNC, "configured (runc) on a hybrid" },
	{ "runc", V1, 1, 0, 0, 0, R, RUNC, "configured" },
	{ "runc", UN, 0, 1, 0, -MTS_ERR_NOTFOUND, NONE, NULL,
	    "runtime runc: not found in PATH" },
	/* crun by name: refused on hybrid only */
	{ "crun", UN, 1, 1, 0, 0, C, CRUN, "configured (crun)" },
	{ "crun", V1, 1, 1, 0, 0, C, CRUN, "configured (crun) on a cgroup v1" },
	{ "crun", HY, 1, 1, 0, -MTS_ERR_INVAL, NONE, NULL,
	    "crun cannot create containers on a hybrid cgroup v1+v2 host" },
	{ "crun", UN, 1, 0, 0, -MTS_ERR_NOTFOUND, NONE, NULL,
	    "runtime crun: not found in PATH" },
	/* a path: its file name says how it is driven */
	{ "/opt/rt/runc", HY, 0, 0, 1, 0, R, "/opt/rt/runc", "configured" },
	{ "/opt/rt/my-runtime", UN, 1, 1, 1, 0, R, "/opt/rt/my-runtime", "" },
	{ "/opt/rt/crun", UN, 1, 0, 1, 0, C, "/opt/rt/crun", "configured" },
	{ "/opt/rt/crun-1.8", V1, 1, 0, 1, 0, C, "/opt/rt/crun-1.8", "" },
	{ "/opt/rt/crun", HY, 1, 1, 1, -MTS_ERR_INVAL, NONE, NULL,
	    "hybrid cgroup v1+v2 host" },
	{ "/opt/rt/runc", UN, 1, 1, 0, -MTS_ERR_NOTFOUND, NONE, NULL,
	    "not an executable file" },
	{ "bin/runc", UN, 1, 1, 1, -MTS_ERR_INVAL, NONE, NULL,
	    "a path must be absolute" },
	/* anything else */
	{ "docker", UN, 1, 1, 0, -MTS_ERR_INVAL, NONE, NULL,
	    "expected auto, runc, crun or an absolute path" },
	{ "Auto", UN, 1, 1, 0, -MTS_ERR_INVAL, NONE, NULL, "expected auto" },
};

static void
test_choose_table(void **st)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rt_case *c = &cases[i];
		struct mts_runtime_host h = {
			.cgroup = (enum mts_cgroup_mode)c->cgroup,
			.runc = c->runc ? RUNC : NULL,
			.crun = c->crun ? CRUN : NULL,
			.want_exists = c->want_exists
		};
		struct mts_runtime_choice ch;
		char err[256] = "";
		int rc = mts_runtime_choose(c->want, &h, &ch, err, sizeof(err));

		if (rc != c->rc)
			fail_msg("case %zu (%s, mode %d): rc %d, want %d (%s)",
			    i, c->want, c->cgroup, rc, c->rc, err);
		if (rc != 0) {
			if (strstr(err, c->text) == NULL)
				fail_msg("case %zu: error \"%s\" lacks \"%s\"",
				    i, err, c->text);
			continue;
		}
		if ((int)ch.kind != c->kind || strcmp(ch.path, c->path) != 0)
			fail_msg("case %zu (%s): got kind %d %s, want %d %s", i,
			    c->want, ch.kind, ch.path, c->kind, c->path);
		if (strstr(ch.why, c->text) == NULL)
			fail_msg("case %zu: why \"%s\" lacks \"%s\"", i, ch.why,
			    c->text);
	}
}

static void
test_cgroup_mode(void **st)
{
	assert_int_equal(mts_cgroup_mode_of(1, 0), MTS_CGROUP_UNIFIED);
	assert_int_equal(mts_cgroup_mode_of(1, 1), MTS_CGROUP_UNIFIED);
	assert_int_equal(mts_cgroup_mode_of(0, 1), MTS_CGROUP_HYBRID);
	assert_int_equal(mts_cgroup_mode_of(0, 0), MTS_CGROUP_V1);
	assert_string_equal(mts_cgroup_mode_name(MTS_CGROUP_HYBRID),
	    "hybrid cgroup v1+v2");
}

static void
test_kind_of(void **st)
{
	assert_int_equal(mts_runtime_kind_of("crun"), MTS_RUNTIME_CRUN);
	assert_int_equal(mts_runtime_kind_of("/usr/bin/crun"),
	    MTS_RUNTIME_CRUN);
	assert_int_equal(mts_runtime_kind_of("/usr/sbin/runc"),
	    MTS_RUNTIME_RUNC);
	assert_int_equal(mts_runtime_kind_of("/crun/bin/runc"),
	    MTS_RUNTIME_RUNC);
	assert_int_equal(mts_runtime_kind_of("/opt/youki"), MTS_RUNTIME_RUNC);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose_table),
		cmocka_unit_test(test_cgroup_mode),
		cmocka_unit_test(test_kind_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
