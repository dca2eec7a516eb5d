/* agent.h: what every agent calls at start — standard arguments and environment, the seccomp filter from init, readiness, exit codes. */
#ifndef MTS_AGENT_H
#define MTS_AGENT_H

#include <stdint.h>

#include "cfg.h"

#define MTS_VERSION "0.1.0"
#define MTS_DEFAULT_CONFIG "/etc/mts/mts.conf"

/*
 * Exit codes: they tell mts-init what happened (docs/agents.md).
 * Any other code, or death by a signal, counts as a failure and is
 * restarted with backoff.
 */
enum mts_exit {
	MTS_EXIT_OK = 0,         /* asked to stop, stopped cleanly */
	MTS_EXIT_FAILURE = 1,    /* system failure: init restarts it */
	MTS_EXIT_USAGE = 64,     /* bad arguments or config: not restarted */
	MTS_EXIT_PERMANENT = 78, /* permanent failure: not restarted */
};

/*
 * The environment init gives an agent (and nothing else but PATH):
 *   MTS_AGENT           the agent's name (its section in mts.conf)
 *   MTS_NODE            the node's name, for people
 *   MTS_NODE_ID         the node id: 32 hex digits (DESIGN.md section 5)
 *   MTS_NODE_KEY_FD     fd of the node's static key (agents with node_key)
 *   MTS_RUNDIR          directory of the node's sockets
 *   MTS_STATEDIR        the agent's own state directory (mode 0700, its own)
 *   MTS_CONFIG          path of mts.conf (also given as -c)
 *   MTS_NOTIFY_FD       fd to write "READY\n" to once ready (kept open)
 *   MTS_SECCOMP_FD      fd holding the compiled filter (struct sock_filter[])
 *   MTS_SECCOMP_DEBUG   1: trap and report denied syscalls instead of killing
 *   MTS_DEBUG           1: debug logging
 */
struct mts_agent {
	const char *name;
	const char *node;    /* node name */
	const char *node_id; /* node id, 32 hex digits, or NULL */
	const char *config;  /* -c, else MTS_CONFIG, else MTS_DEFAULT_CONFIG */
	const char *rundir;
	const char *statedir;
	struct mts_cfg *cfg; /* mts.conf, parsed */
	int debug;           /* -d or MTS_DEBUG */
	int notify_fd;       /* -1 when not started by init */
	int seccomp_fd;      /* -1 when no filter is to be installed */
	int seccomp_debug;
	int argc; /* arguments left after the options */
	char **argv;
};

/* Called for each agent-specific option letter listed in `extra` (getopt
 * syntax); returns 0, or -1 for a usage error. */
typedef int (*mts_agent_opt_fn)(void *arg, int opt, const char *optarg);

/*
 * Parses the standard arguments (-c CONFIG, -n: print the effective config
 * and exit, -d: debug, -h) plus the `extra` ones, reads the environment,
 * loads and checks the config and starts logging under the agent's name.
 * Exits with MTS_EXIT_USAGE on a bad argument or config, and with 0 after
 * -n or -h. default_name is used when MTS_AGENT is not set.
 */
void mts_agent_init(struct mts_agent *, const char *default_name, int argc,
    char **argv, const char *extra, mts_agent_opt_fn fn, void *arg);

/* Only the environment part of mts_agent_init (MTS_AGENT, MTS_NODE,
 * MTS_RUNDIR, MTS_STATEDIR, the notify and seccomp fds), for agents that
 * parse their own arguments and config; fields not in the environment
 * are left NULL. Exits with MTS_EXIT_USAGE on a bad fd number. */
void mts_agent_env(struct mts_agent *, const char *default_name);

/*
 * Installs the seccomp filter init passed in MTS_SECCOMP_FD (all threads,
 * TSYNC). Call it after opening what the agent needs and before starting
 * nng. Without MTS_SECCOMP_FD it does nothing. 0 or -MTS_ERR_IO (logged).
 */
int mts_agent_sandbox(struct mts_agent *);

/* Tells init the agent is ready (privileges dropped, filter installed,
 * sockets listening). Harmless when not started by init. */
void mts_agent_ready(struct mts_agent *);
/* Tells init a one-line status that `mtsctl agent ls` shows next to the
 * agent (up to 100 bytes; newlines become spaces), e.g. why the agent runs
 * but does nothing. It lasts until the next call or a new process. */
#define MTS_AGENT_STATUS_MAX 100
void mts_agent_status(struct mts_agent *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reads the node's static key from MTS_NODE_KEY_FD (and closes it):
 * 0, -MTS_ERR_NOTFOUND when init gave none, -MTS_ERR_IO if unreadable. */
int mts_agent_node_key(uint8_t key[32]);

/* Frees what mts_agent_init allocated. */
void mts_agent_free(struct mts_agent *);

#endif
