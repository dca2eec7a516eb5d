/* privdrop.h: the one privilege-drop routine (CONVENTIONS.md 14): chroot, groups, gid, uid, verification, capabilities, rlimits, no_new_privs. */
#ifndef MTS_PRIVDROP_H
#define MTS_PRIVDROP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mts_privdrop {
	const char *chroot; /* NULL: none */
	uid_t uid;
	gid_t gid;
	const gid_t *groups; /* supplementary groups */
	size_t ngroups;
	uint64_t caps;   /* bit n = capability n: kept permitted,
				 effective, inheritable and ambient */
	uint64_t nofile; /* RLIMIT_NOFILE, 0 = unchanged */
	int core;        /* 0: RLIMIT_CORE = 0 */
};

/*
 * Drops to the described identity, in this order: chroot (and chdir "/"),
 * the bounding set, setgroups, setresgid, setresuid, a check that the old
 * ids cannot be regained, the capabilities (raised as ambient so they
 * survive exec), rlimits, no_new_privs. The caller has opened what it needs
 * before; the seccomp filter and nng threads come after (mts-init runs this
 * between fork and exec; the agent installs its filter: common/agent.h).
 * Returns 0 or -MTS_ERR_IO with err saying which step failed.
 */
int mts_privdrop(const struct mts_privdrop *, char *err, size_t errlen);

/* Parses a capability name ("net_admin", "CAP_NET_ADMIN"); -1 if unknown. */
int mts_cap_from_name(const char *name);

#endif
