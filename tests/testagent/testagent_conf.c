/* testagent_conf.c: the keys of mts.conf's [testagent] section — who may call the test agent (an agent's keys live in its folder and register with MTS_CONF_TABLE; docs/agents.md). */
#include <stddef.h>

#include "cfg.h"

static const struct mts_cfg_schema keys[] = {
	{ "testagent", "acl", MTS_CFG_LIST, "0",
	    "users (names or uids) allowed to call the test agent's socket" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const struct mts_conf_table testagent_conf = { "testagent", keys };
MTS_CONF_TABLE(testagent_conf);
