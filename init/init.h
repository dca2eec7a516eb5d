/* init.h: mts-init's private declarations shared by its main loop (init.c) and its admin socket (init_admin.c). */
#ifndef MTS_INIT_H
#define MTS_INIT_H

#include <sys/types.h>

#include "agent.h"
#include "init_conf.h"
#include "init_core.h"
#include "ipc.h"
#include "loop.h"

/* What the main loop knows of an agent beyond the core's state. */
struct init_rt {
	struct init_agent *conf;    /* into init.conf */
	pid_t pid;                  /* 0 when none */
	int notify_fd;              /* read end of MTS_NOTIFY_FD, or -1 */
	struct mts_watch *notify_w; /* the loop's, with notify_fd */
	char nbuf[128];             /* partial notify line */
	size_t nlen;
	int verify_failed; /* readiness check failed: permanent */
	int seccomp_on;    /* verified Seccomp: 2 */
	char sigsys[64];   /* syscall reported by the debug handler */
	char last_exit[96];
	char status[MTS_AGENT_STATUS_MAX + 1]; /* its STATUS line, or "" */
};

struct init {
	struct init_conf *conf;
	const char *config_path;
	struct mts_init_core core;
	struct init_rt *rt; /* parallel to core.s */
	struct mts_ipc_server *admin;
	struct mts_loop *loop;
	struct mts_timer deadline; /* the core's next deadline */
	mts_time_t started;
	char node_id[33]; /* hex, from the node's static key */
	int node_ready_logged;
	struct mts_init_fxlist fx;
};

/* Admin socket (init_admin.c). */
int init_admin_open(struct init *, char *err, size_t errlen);
/* Reload: builds the new config and applies it; fills the lists of names
 * (NULL-terminated, caller frees with mts_cfg_list_free) when non-NULL. */
int init_reload(struct init *, char ***restarted, char ***added,
    char ***removed, char *err, size_t errlen);
/* Feeds an event and carries out the effects. */
void init_event(struct init *, size_t i, enum mts_sup_event);
/* Index of the agent with that name (not removed), or -1. */
int init_find(const struct init *, const char *name);

#endif
