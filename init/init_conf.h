/* init_conf.h: mts.conf turned into what mts-init runs — agents with resolved users, capabilities, compiled seccomp filters; every error with file and line. */
#ifndef MTS_INIT_CONF_H
#define MTS_INIT_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "acl.h"
#include "cfg.h"
#include "init_core.h"

struct init_agent {
	char *name;
	char *exec;  /* absolute path */
	char **args; /* extra arguments, NULL-terminated */
	char *user;  /* as written */
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary (admin group included) */
	size_t ngroups;
	uint64_t caps;
	char *caps_text; /* as written, normalized */
	char *seccomp;   /* policy path or NULL */
	int seccomp_debug;
	int filter_fd; /* sealed memfd with the BPF program, or -1 */
	char **after;  /* names, NULL-terminated */
	char *chroot;  /* or NULL */
	uint64_t nofile;
	char *log;    /* or NULL */
	int node_key; /* gets MTS_NODE_KEY_FD */
	struct mts_sup_params p;
	char *fingerprint; /* everything above: equal means unchanged */
};

struct init_conf {
	char *file;
	char *node;
	char *rundir;
	char *statedir;
	char *key; /* the node's static key file */
	gid_t admin_gid;
	struct mts_acl_table admin_acl; /* who may call admin.sock */
	int debug;
	struct init_agent *a;
	size_t n;
};

/* Who may call admin.sock: root, and the members of [init] admin_group
 * except the agents' users (they share the group only to reach the run
 * directory). */
extern const struct mts_acl_rule mts_init_admin_acl[];

/* Builds the whole configuration from the file at path; on failure err says
 * "FILE:LINE: what" and nothing is returned. */
int mts_init_conf_load(const char *path, struct init_conf **out, char *err,
    size_t errlen);
void mts_init_conf_free(struct init_conf *);

#endif
