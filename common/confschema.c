/* confschema.c: mts.conf's schema — the keys every program shares ([node], the "*" keys of every agent section) and the registry of the tables agents contribute (cfg.h). */
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "xmalloc.h"

/* [node] holds node-wide settings. */
static const struct mts_cfg_schema node_keys[] = {
	{ "node", "", MTS_CFG_PLAIN, NULL, NULL },
	{ "node", "name", MTS_CFG_STR, NULL,
	    "node name shown to people (default: the hostname)" },
	{ "node", "rundir", MTS_CFG_STR, "/run/mts",
	    "directory of the node's sockets (MTS_RUNDIR)" },
	{ "node", "statedir", MTS_CFG_STR, "/var/lib/mts",
	    "directory of the node's persistent state" },
	{ "node", "debug", MTS_CFG_BOOL, "no",
	    "verbose logging in every agent" },
	{ "node", "key", MTS_CFG_STR, "",
	    "the node's static X25519 key (32 bytes, mode 0600), created by "
	    "mts-init when missing; default <statedir>/node.key; the node id "
	    "is derived from it" },
	{ NULL, NULL, 0, NULL, NULL },
};

/*
 * Every section other than [node] and [init] configures one agent (its name
 * is the section name): these are what init needs to run any agent. The
 * agent-specific keys come from the agent's own table.
 */
static const struct mts_cfg_schema agent_keys[] = {
	{ "*", "node_key", MTS_CFG_BOOL, "no",
	    "give the agent the node's static key (MTS_NODE_KEY_FD): gossipd" },
	{ "*", "executable", MTS_CFG_STR, NULL,
	    "the agent's program (absolute, or relative to mts.conf's directory)" },
	{ "*", "args", MTS_CFG_LIST, "",
	    "extra arguments, after the standard '-c CONFIG'" },
	{ "*", "enabled", MTS_CFG_BOOL, "yes", "no: the section is ignored" },
	{ "*", "user", MTS_CFG_STR, NULL, "user to run as (name or uid)" },
	{ "*", "group", MTS_CFG_STR, NULL,
	    "group to run as (name or gid; default: the user's group, or the "
	    "uid for a numeric user)" },
	{ "*", "groups", MTS_CFG_LIST, "", "supplementary groups" },
	{ "*", "capabilities", MTS_CFG_LIST, "",
	    "capabilities kept, ambient (e.g. net_admin), or 'all'" },
	{ "*", "seccomp", MTS_CFG_STR, "",
	    "seccomp policy file (empty: no filter)" },
	{ "*", "seccomp_debug", MTS_CFG_BOOL, "no",
	    "report a denied syscall by name instead of killing at once" },
	{ "*", "after", MTS_CFG_LIST, "",
	    "agents that must be ready before this one starts" },
	{ "*", "restart", MTS_CFG_STR, "always",
	    "always, on-failure or never" },
	{ "*", "restart_delay", MTS_CFG_DURATION, "100ms",
	    "first restart delay; doubles on each quick crash" },
	{ "*", "restart_max_delay", MTS_CFG_DURATION, "30s",
	    "cap of the restart delay" },
	{ "*", "restart_reset", MTS_CFG_DURATION, "10s",
	    "a run this long resets the restart delay" },
	{ "*", "ready_timeout", MTS_CFG_DURATION, "10s",
	    "time to report readiness before being killed" },
	{ "*", "stop_timeout", MTS_CFG_DURATION, "5s",
	    "grace period between SIGTERM and SIGKILL" },
	{ "*", "chroot", MTS_CFG_STR, "",
	    "directory to chroot into (empty: none)" },
	{ "*", "limit_nofile", MTS_CFG_UINT, "4096", "RLIMIT_NOFILE" },
	{ "*", "log", MTS_CFG_STR, "",
	    "file for the agent's stderr (empty: mts-init's stderr)" },
	{ NULL, NULL, 0, NULL, NULL },
};

/* The tables MTS_CONF_TABLE placed in the mts_conf section of this program
 * (none: both are NULL). */
extern const struct mts_conf_table *const __start_mts_conf[]
    __attribute__((weak));
extern const struct mts_conf_table *const __stop_mts_conf[]
    __attribute__((weak));

static int
table_cmp(const void *a, const void *b)
{
	const struct mts_conf_table *const *x = a, *const *y = b;

	return strcmp((*x)->section, (*y)->section);
}

static size_t
count(const struct mts_cfg_schema *k)
{
	size_t n = 0;

	while (k[n].key != NULL)
		n++;
	return n;
}

static void
append(struct mts_cfg_schema *out, size_t *n, const struct mts_cfg_schema *k)
{
	size_t m = count(k);

	memcpy(out + *n, k, m * sizeof(*k));
	*n += m;
}

const struct mts_cfg_schema *
mts_conf_schema(void)
{
	static struct mts_cfg_schema *schema;
	const struct mts_conf_table **t;
	size_t nt = 0, n = 0, total, i;

	if (schema != NULL)
		return schema;
	if (__start_mts_conf != NULL)
		nt = (size_t)(__stop_mts_conf - __start_mts_conf);
	t = xcalloc(nt + 1, sizeof(*t));
	total = count(node_keys) + count(agent_keys) + 1;
	for (i = 0; i < nt; i++) {
		t[i] = __start_mts_conf[i];
		total += count(t[i]->keys);
	}
	qsort(t, nt, sizeof(*t), table_cmp);
	schema = xcalloc(total, sizeof(*schema));
	append(schema, &n, node_keys);
	for (i = 0; i < nt; i++)
		append(schema, &n, t[i]->keys);
	append(schema, &n, agent_keys);
	free(t);
	return schema;
}
