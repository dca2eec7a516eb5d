/* commands.c: the list of mtsctl command groups — adding a group is a new cli/cmd_<group>.c plus one line here. */
#include <stddef.h>

#include "mtsctl.h"

extern const struct mtsctl_group mtsctl_group_version;
extern const struct mtsctl_group mtsctl_group_agent;
extern const struct mtsctl_group mtsctl_group_state;
extern const struct mtsctl_group mtsctl_group_config;
extern const struct mtsctl_group mtsctl_group_cluster;
extern const struct mtsctl_group mtsctl_group_node;
extern const struct mtsctl_group mtsctl_group_task;
extern const struct mtsctl_group mtsctl_group_image;
extern const struct mtsctl_group mtsctl_group_logs;
extern const struct mtsctl_group mtsctl_group_exec;
extern const struct mtsctl_group mtsctl_group_stack;
extern const struct mtsctl_group mtsctl_group_deploy;
extern const struct mtsctl_group mtsctl_group_plan;
extern const struct mtsctl_group mtsctl_group_service;
extern const struct mtsctl_group mtsctl_group_overlay;
extern const struct mtsctl_group mtsctl_group_network;
extern const struct mtsctl_group mtsctl_group_events;

const struct mtsctl_group *const mtsctl_groups[] = {
	&mtsctl_group_version,
	&mtsctl_group_agent,
	&mtsctl_group_state,
	&mtsctl_group_config,
	&mtsctl_group_cluster,
	&mtsctl_group_node,
	&mtsctl_group_task,
	&mtsctl_group_image,
	&mtsctl_group_logs,
	&mtsctl_group_exec,
	&mtsctl_group_deploy,
	&mtsctl_group_plan,
	&mtsctl_group_service,
	&mtsctl_group_stack,
	&mtsctl_group_overlay,
	&mtsctl_group_network,
	&mtsctl_group_events,
	NULL,
};

const struct mtsctl_group *const mtsctl_groups_own_t[] = {
	&mtsctl_group_exec,
	NULL,
};

const struct mtsctl_no_json mtsctl_no_json[] = {
	{ &mtsctl_group_exec, NULL,
	    "exec prints the command's own output and "
	    "exits with its code" },
	{ NULL, NULL, NULL },
};
