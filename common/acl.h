/* acl.h: who may call what — caller classes, each agent's access table of {classes, who} rules read from its mts.conf section, and user lists checked against the kernel-reported uid of a local caller. */
#ifndef MTS_ACL_H
#define MTS_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfg.h"

/*
 * Caller classes, one naming scheme for every agent. An agent's access
 * table maps a caller to a set of them; each route of its dispatch table
 * lists the ones it accepts.
 */
#define MTS_CALLER_READ (1u << 0)  /* look: get, scan, members, stats */
#define MTS_CALLER_WRITE (1u << 1) /* change local state: put, delete */
#define MTS_CALLER_MERGE (1u << 2) /* hand in replicated records (gossipd) */
#define MTS_CALLER_ADMIN (1u << 3) /* everything the agent offers people */
#define MTS_CALLER_RELAY (1u << 4) /* send calls to other nodes (gossipd) */
#define MTS_CALLER_REMOTE \
	(1u << 5) /* speaks for another node: the subset
				     * a relayed call may use */

/* Whom a rule matches. */
enum mts_acl_who {
	MTS_ACL_USERS,  /* the users (names or uids) listed in key */
	MTS_ACL_GROUP,  /* members of the group (name or gid) in key, by
			 * primary or supplementary group, except the
			 * table's nogroup uids */
	MTS_ACL_SELF,   /* root and the agent's own uid */
	MTS_ACL_ANYONE, /* any caller that can reach the socket */
};

/* One row of an agent's access table: callers it matches get classes.
 * A table ends with a row whose classes are 0. */
struct mts_acl_rule {
	uint32_t classes;
	enum mts_acl_who who;
	const char *key; /* USERS, GROUP: the key in the agent's section */
};

struct mts_acl {
	uid_t *uids;
	size_t n;
};

/* An access table resolved against a config: user names and group names
 * are looked up once, at load (before any chroot or privilege drop). */
struct mts_acl_table {
	const struct mts_acl_rule *rules;
	size_t n;
	struct mts_acl *users; /* per rule (MTS_ACL_USERS) */
	gid_t *gids;           /* per rule (MTS_ACL_GROUP) */
	uid_t self;
	struct mts_acl nogroup; /* uids no group rule matches */
};

/* Resolves every rule's key in [section] of cfg. An unknown user or group
 * is an error "FILE:LINE: [section] key: unknown user 'x'" in err; nothing
 * is kept then. The rules must outlive the table. 0 or -MTS_ERR_INVAL. */
int mts_acl_table_load(struct mts_acl_table *, const struct mts_acl_rule *,
    const struct mts_cfg *cfg, const char *section, char *err, size_t errlen);
/* Group rules never match uid (init: the agents' own users, who are in the
 * admin group only to reach the run directory). */
void mts_acl_table_nogroup(struct mts_acl_table *, uid_t uid);
/* The classes of a caller: the union over the rules that match it. */
uint32_t mts_acl_classify(const struct mts_acl_table *, uid_t uid, gid_t gid);
void mts_acl_table_free(struct mts_acl_table *);

/* Resolves [section] key (a list of user names or numeric uids) into acl.
 * Errors as for mts_acl_table_load. 0 or -MTS_ERR_INVAL. */
int mts_acl_load(struct mts_acl *acl, const struct mts_cfg *cfg,
    const char *section, const char *key, char *err, size_t errlen);
bool mts_acl_has(const struct mts_acl *acl, uid_t uid);
void mts_acl_free(struct mts_acl *acl);

#endif
