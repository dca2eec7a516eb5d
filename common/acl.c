/* acl.c: access tables and user lists from mts.conf, resolved to uids and gids once, at start (before any chroot or privilege drop). */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "mtserr.h"
#include "xmalloc.h"

static void
acl_add(struct mts_acl *acl, uid_t uid)
{
	acl->uids = xreallocarray(acl->uids, acl->n + 1, sizeof(uid_t));
	acl->uids[acl->n++] = uid;
}

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
			snprintf(err, errlen,
			    "%s:%d: [%s] %s: unknown user '%s'", cfg->file,
			    mts_cfg_line(cfg, section, key), section, key, *p);
			mts_acl_free(acl);
			rc = -MTS_ERR_INVAL;
			break;
		}
		acl_add(acl, (uid_t)uid);
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

/* [section] key names one group: a gid or a group name. */
static int
load_group(gid_t *gid, const struct mts_cfg *cfg, const char *section,
    const char *key, char *err, size_t errlen)
{
	const char *v = mts_cfg_str(cfg, section, key);
	struct group *gr;
	int64_t n;

	if (v != NULL && mts_parse_int(v, &n) == 0 && n >= 0 &&
	    n < (int64_t)(gid_t)-1) {
		*gid = (gid_t)n;
		return 0;
	}
	if (v != NULL && (gr = getgrnam(v)) != NULL) {
		*gid = gr->gr_gid;
		return 0;
	}
	snprintf(err, errlen, "%s:%d: [%s] %s: unknown group '%s'", cfg->file,
	    mts_cfg_line(cfg, section, key), section, key, v ? v : "");
	return -MTS_ERR_INVAL;
}

int
mts_acl_table_load(struct mts_acl_table *t, const struct mts_acl_rule *rules,
    const struct mts_cfg *cfg, const char *section, char *err, size_t errlen)
{
	const struct mts_acl_rule *r;
	size_t i;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	for (r = rules; r->classes != 0; r++)
		t->n++;
	t->rules = rules;
	t->self = getuid();
	t->users = xcalloc(t->n + 1, sizeof(*t->users));
	t->gids = xcalloc(t->n + 1, sizeof(*t->gids));
	for (i = 0; i < t->n && rc == 0; i++) {
		if (rules[i].who == MTS_ACL_USERS)
			rc = mts_acl_load(&t->users[i], cfg, section,
			    rules[i].key, err, errlen);
		else if (rules[i].who == MTS_ACL_GROUP)
			rc = load_group(&t->gids[i], cfg, section, rules[i].key,
			    err, errlen);
	}
	if (rc < 0)
		mts_acl_table_free(t);
	return rc;
}

void
mts_acl_table_nogroup(struct mts_acl_table *t, uid_t uid)
{
	if (!mts_acl_has(&t->nogroup, uid))
		acl_add(&t->nogroup, uid);
}

/* Whether uid (primary group gid, as the kernel reports it) is in group g.
 * Supplementary groups come from the group database, as login sets them. */
static bool
in_group(uid_t uid, gid_t gid, gid_t g)
{
	gid_t groups[256];
	int n = 256, k;
	struct passwd *pw;

	if (gid == g)
		return true;
	if ((pw = getpwuid(uid)) == NULL ||
	    getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
		return false;
	for (k = 0; k < n; k++)
		if (groups[k] == g)
			return true;
	return false;
}

static bool
rule_matches(const struct mts_acl_table *t, size_t i, uid_t uid, gid_t gid)
{
	switch (t->rules[i].who) {
	case MTS_ACL_USERS:
		return mts_acl_has(&t->users[i], uid);
	case MTS_ACL_GROUP:
		return !mts_acl_has(&t->nogroup, uid) &&
		    in_group(uid, gid, t->gids[i]);
	case MTS_ACL_SELF:
		return uid == 0 || uid == t->self;
	case MTS_ACL_ANYONE:
		return true;
	}
	return false;
}

uint32_t
mts_acl_classify(const struct mts_acl_table *t, uid_t uid, gid_t gid)
{
	uint32_t classes = 0;
	size_t i;

	if (t == NULL)
		return 0;
	for (i = 0; i < t->n; i++)
		if ((classes & t->rules[i].classes) != t->rules[i].classes &&
		    rule_matches(t, i, uid, gid))
			classes |= t->rules[i].classes;
	return classes;
}

void
mts_acl_table_free(struct mts_acl_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; t->users != NULL && i < t->n; i++)
		mts_acl_free(&t->users[i]);
	free(t->users);
	free(t->gids);
	mts_acl_free(&t->nogroup);
	memset(t, 0, sizeof(*t));
}
