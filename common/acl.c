/* acl.c: user lists from mts.conf resolved to uids once, at start (before any chroot or privilege drop). */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl.h"
#include "mtserr.h"
#include "xmalloc.h"

int
mts_acl_load(struct mts_acl *acl, const struct mts_cfg *cfg,
    const char *section, const char *key, char *err, size_t errlen)
{
	char **list = mts_cfg_list(cfg, section, key), **p;
	struct passwd *pw;
	int64_t uid;
	int rc = 0;

	acl->uids = NULL;
	acl->n = 0;
	for (p = list; *p != NULL; p++) {
		if (mts_parse_int(*p, &uid) == 0 && uid >= 0) {
			/* a numeric uid needs no passwd entry */
		} else if ((pw = getpwnam(*p)) != NULL) {
			uid = pw->pw_uid;
		} else {
			snprintf(err, errlen, "%s:%d: [%s] %s: unknown user '%s'",
			    cfg->file, mts_cfg_line(cfg, section, key), section,
			    key, *p);
			mts_acl_free(acl);
			rc = -MTS_ERR_INVAL;
			break;
		}
		acl->uids = xreallocarray(acl->uids, acl->n + 1, sizeof(uid_t));
		acl->uids[acl->n++] = (uid_t)uid;
	}
	mts_cfg_list_free(list);
	return rc;
}

bool
mts_acl_has(const struct mts_acl *acl, uid_t uid)
{
	size_t i;

	for (i = 0; i < acl->n; i++)
		if (acl->uids[i] == uid)
			return true;
	return false;
}

void
mts_acl_free(struct mts_acl *acl)
{
	if (acl == NULL)
		return;
	free(acl->uids);
	acl->uids = NULL;
	acl->n = 0;
}
