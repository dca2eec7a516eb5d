/* acl.h: lists of users (names or uids) from mts.conf, checked against the kernel-reported uid of a local caller. */
#ifndef MTS_ACL_H
#define MTS_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cfg.h"

struct mts_acl {
	uid_t *uids;
	size_t n;
};

/* Resolves [section] key (a list of user names or numeric uids) into acl.
 * An unknown user name is an error "FILE:LINE: [section] key: unknown user
 * 'x'" in err; nothing is kept then. 0 or -MTS_ERR_INVAL. */
int mts_acl_load(struct mts_acl *acl, const struct mts_cfg *cfg,
    const char *section, const char *key, char *err, size_t errlen);
bool mts_acl_has(const struct mts_acl *acl, uid_t uid);
void mts_acl_free(struct mts_acl *acl);

#endif
