/* runtime_core.c: the shim's OCI runtime choice (auto, runc, crun or a path) against the binaries present and the cgroup mode — pure. */
#include <stdio.h>
#include <string.h>

#include "mtserr.h"
#include "runtime_core.h"

enum mts_cgroup_mode
mts_cgroup_mode_of(int root_is_cgroup2, int unified_is_cgroup2)
{
	if (root_is_cgroup2)
		return MTS_CGROUP_UNIFIED;
	return unified_is_cgroup2 ? MTS_CGROUP_HYBRID : MTS_CGROUP_V1;
}

const char *
mts_cgroup_mode_name(enum mts_cgroup_mode m)
{
	switch (m) {
	case MTS_CGROUP_V1:
		return "cgroup v1";
	case MTS_CGROUP_HYBRID:
		return "hybrid cgroup v1+v2";
	case MTS_CGROUP_UNIFIED:
		return "unified cgroup v2";
	}
	return "unknown cgroup mode";
}

enum mts_runtime_kind
mts_runtime_kind_of(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "crun", 4) == 0 ? MTS_RUNTIME_CRUN
	                                     : MTS_RUNTIME_RUNC;
}

static int
pick(struct mts_runtime_choice *out, enum mts_runtime_kind kind,
    const char *path, const char *why)
{
	out->kind = kind;
	out->path = path;
	snprintf(out->why, sizeof(out->why), "%s", why);
	return 0;
}

static int
choose_auto(const struct mts_runtime_host *h, struct mts_runtime_choice *out,
    char *err, size_t errlen)
{
	const char *mode = mts_cgroup_mode_name(h->cgroup);
	char why[256];

	if (h->cgroup == MTS_CGROUP_UNIFIED && h->crun != NULL) {
		snprintf(why, sizeof(why), "auto: crun on a %s host", mode);
		return pick(out, MTS_RUNTIME_CRUN, h->crun, why);
	}
	if (h->runc != NULL) {
		if (h->crun != NULL && h->cgroup == MTS_CGROUP_HYBRID)
			snprintf(why, sizeof(why),
			    "auto: runc, not crun: crun "
			    "refuses to create containers on a %s host "
			    "(\"cgroups in hybrid mode not supported\")",
			    mode);
		else if (h->crun != NULL)
			snprintf(why, sizeof(why),
			    "auto: runc on a %s host "
			    "(crun is used on unified cgroup v2 only)",
			    mode);
		else
			snprintf(why, sizeof(why), "auto: runc on a %s host%s",
			    mode,
			    h->cgroup == MTS_CGROUP_UNIFIED
			        ? " (no crun in PATH)"
			        : "");
		return pick(out, MTS_RUNTIME_RUNC, h->runc, why);
	}
	if (h->crun != NULL && h->cgroup == MTS_CGROUP_V1) {
		snprintf(why, sizeof(why),
		    "auto: crun on a %s host (no runc "
		    "in PATH)",
		    mode);
		return pick(out, MTS_RUNTIME_CRUN, h->crun, why);
	}
	if (h->crun != NULL)
		snprintf(err, errlen,
		    "[shim] runtime auto: no runc in PATH, "
		    "and crun cannot create containers on a %s host",
		    mode);
	else
		snprintf(err, errlen,
		    "[shim] runtime auto: neither runc nor "
		    "crun in PATH");
	return -MTS_ERR_NOTFOUND;
}

int
mts_runtime_choose(const char *want, const struct mts_runtime_host *h,
    struct mts_runtime_choice *out, char *err, size_t errlen)
{
	const char *path;
	enum mts_runtime_kind kind;
	char why[256];

	memset(out, 0, sizeof(*out));
	if (want == NULL || *want == '\0' || strcmp(want, "auto") == 0)
		return choose_auto(h, out, err, errlen);
	if (strchr(want, '/') != NULL) {
		if (want[0] != '/') {
			snprintf(err, errlen,
			    "[shim] runtime %s: a path must "
			    "be absolute",
			    want);
			return -MTS_ERR_INVAL;
		}
		path = h->want_exists ? want : NULL;
		kind = mts_runtime_kind_of(want);
	} else if (strcmp(want, "runc") == 0) {
		path = h->runc;
		kind = MTS_RUNTIME_RUNC;
	} else if (strcmp(want, "crun") == 0) {
		path = h->crun;
		kind = MTS_RUNTIME_CRUN;
	} else {
		snprintf(err, errlen,
		    "[shim] runtime %s: expected auto, runc, "
		    "crun or an absolute path",
		    want);
		return -MTS_ERR_INVAL;
	}
	if (path == NULL) {
		snprintf(err, errlen, "[shim] runtime %s: %s", want,
		    strchr(want, '/') ? "not an executable file"
		                      : "not found in PATH");
		return -MTS_ERR_NOTFOUND;
	}
	if (kind == MTS_RUNTIME_CRUN && h->cgroup == MTS_CGROUP_HYBRID) {
		snprintf(err, errlen,
		    "[shim] runtime %s: crun cannot create "
		    "containers on a %s host (\"cgroups in hybrid mode not "
		    "supported\"); use runc or auto",
		    want, mts_cgroup_mode_name(h->cgroup));
		return -MTS_ERR_INVAL;
	}
	snprintf(why, sizeof(why), "configured (%s) on a %s host", want,
	    mts_cgroup_mode_name(h->cgroup));
	return pick(out, kind, path, why);
}
