/* init_schema.c: the keys of mts.conf's [init] section, mts-init's own (the "*" keys every agent section takes are common/confschema.c's). */
#include <stddef.h>

#include "cfg.h"

static const struct mts_cfg_schema keys[] = {
	{ "init", "", MTS_CFG_PLAIN, NULL, NULL },
	{ "init", "admin_group", MTS_CFG_STR, "0",
	    "group (name or gid) owning the run directory and admin.sock: "
	    "its members may use mtsctl; agents join it to reach sockets" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const struct mts_conf_table init_conf = { "init", keys };
MTS_CONF_TABLE(init_conf);
