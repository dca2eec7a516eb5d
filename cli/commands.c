/* commands.c: the list of mtsctl command groups — adding a group is a new cli/cmd_<group>.c plus one line here. */
#include <stddef.h>

#include "mtsctl.h"

extern const struct mtsctl_group mtsctl_group_version;
extern const struct mtsctl_group mtsctl_group_agent;
extern const struct mtsctl_group mtsctl_group_state;
extern const struct mtsctl_group mtsctl_group_config;
extern const struct mtsctl_group mtsctl_group_cluster;
extern const struct mtsctl_group mtsctl_group_node;

const struct mtsctl_group *const mtsctl_groups[] = {
	&mtsctl_group_version,
	&mtsctl_group_agent,
	&mtsctl_group_state,
	&mtsctl_group_config,
	&mtsctl_group_cluster,
	&mtsctl_group_node,
	NULL,
};
