/* privdrop.c: privilege drop in the conventional order, with ambient capabilities kept through exec (libcap). */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "mtserr.h"
#include "privdrop.h"

#define STEP_FAIL(what) \
	do { \
		snprintf(err, errlen, "%s: %s", what, strerror(errno)); \
		return -MTS_ERR_IO; \
	} while (0)

int
mts_cap_from_name(const char *name)
{
	char buf[64];
	cap_value_t v;
	size_t i;

	if (strncasecmp(name, "cap_", 4) == 0)
		name += 4;
	if (snprintf(buf, sizeof(buf), "cap_%s", name) >= (int)sizeof(buf))
		return -1;
	for (i = 0; buf[i]; i++)
		buf[i] = tolower((unsigned char)buf[i]);
	if (cap_from_name(buf, &v) < 0 || v < 0 || v > 63 ||
	    !CAP_IS_SUPPORTED(v))
		return -1;
	return (int)v;
}

static int
drop_bounding(uint64_t keep, char *err, size_t errlen)
{
	cap_value_t c;

	for (c = 0; c <= 63 && CAP_IS_SUPPORTED(c); c++)
		if (!(keep & (1ull << c)) && cap_drop_bound(c) < 0)
			STEP_FAIL("dropping the capability bounding set");
	return 0;
}

static int
set_ids(const struct mts_privdrop *d, char *err, size_t errlen)
{
	if (d->caps != 0 && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		STEP_FAIL("PR_SET_KEEPCAPS");
	if (setgroups(d->ngroups, d->groups) < 0)
		STEP_FAIL("setgroups");
	if (setresgid(d->gid, d->gid, d->gid) < 0)
		STEP_FAIL("setresgid");
	if (setresuid(d->uid, d->uid, d->uid) < 0)
		STEP_FAIL("setresuid");
	return 0;
}

/* The ids must stick: with CAP_SETUID/SETGID not granted, going back to
 * root must fail, and all three ids must be the new ones. */
static int
verify_ids(const struct mts_privdrop *d, char *err, size_t errlen)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	if (getresuid(&r, &e, &s) < 0 || getresgid(&rg, &eg, &sg) < 0)
		STEP_FAIL("getresuid");
	if (r != d->uid || e != d->uid || s != d->uid || rg != d->gid ||
	    eg != d->gid || sg != d->gid) {
		snprintf(err, errlen, "ids did not change as asked");
		return -MTS_ERR_IO;
	}
	if (d->uid != 0 && !(d->caps & (1ull << CAP_SETUID)) &&
	    (setuid(0) != -1 || seteuid(0) != -1)) {
		snprintf(err, errlen, "uid 0 could be regained");
		return -MTS_ERR_IO;
	}
	if (d->gid != 0 && !(d->caps & (1ull << CAP_SETGID)) && d->uid != 0 &&
	    (setgid(0) != -1 || setegid(0) != -1)) {
		snprintf(err, errlen, "gid 0 could be regained");
		return -MTS_ERR_IO;
	}
	return 0;
}

static int
set_caps(uint64_t keep, char *err, size_t errlen)
{
	cap_value_t list[64];
	int n = 0, i;
	cap_t c;

	for (i = 0; i < 64; i++)
		if (keep & (1ull << i))
			list[n++] = i;
	if ((c = cap_init()) == NULL)
		STEP_FAIL("cap_init");
	if (n > 0 &&
	    (cap_set_flag(c, CAP_PERMITTED, n, list, CAP_SET) < 0 ||
	        cap_set_flag(c, CAP_EFFECTIVE, n, list, CAP_SET) < 0 ||
	        cap_set_flag(c, CAP_INHERITABLE, n, list, CAP_SET) < 0)) {
		cap_free(c);
		STEP_FAIL("cap_set_flag");
	}
	if (cap_set_proc(c) < 0) {
		cap_free(c);
		STEP_FAIL("cap_set_proc");
	}
	cap_free(c);
	if (cap_reset_ambient() < 0 && errno != EINVAL)
		STEP_FAIL("clearing ambient capabilities");
	for (i = 0; i < n; i++)
		if (cap_set_ambient(list[i], CAP_SET) < 0)
			STEP_FAIL("raising an ambient capability");
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		STEP_FAIL("PR_SET_KEEPCAPS");
	return 0;
}

static int
set_limits(const struct mts_privdrop *d, char *err, size_t errlen)
{
	struct rlimit rl;

	if (d->nofile != 0) {
		rl.rlim_cur = rl.rlim_max = d->nofile;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			STEP_FAIL("RLIMIT_NOFILE");
	}
	if (!d->core) {
		rl.rlim_cur = rl.rlim_max = 0;
		if (setrlimit(RLIMIT_CORE, &rl) < 0)
			STEP_FAIL("RLIMIT_CORE");
	}
	return 0;
}

int
mts_privdrop(const struct mts_privdrop *d, char *err, size_t errlen)
{
	int r;

	if (d->chroot != NULL && (chroot(d->chroot) < 0 || chdir("/") < 0))
		STEP_FAIL("chroot");
	if ((r = drop_bounding(d->caps, err, errlen)) < 0 ||
	    (r = set_ids(d, err, errlen)) < 0 ||
	    (r = verify_ids(d, err, errlen)) < 0 ||
	    (r = set_caps(d->caps, err, errlen)) < 0 ||
	    (r = set_limits(d, err, errlen)) < 0)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		STEP_FAIL("no_new_privs");
	return 0;
}
