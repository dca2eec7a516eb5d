/* nodectl.h: the `mtsctl node` commands of cmd_node.c that cmd_cluster.c's node table lists. */
#ifndef MTSCTL_NODECTL_H
#define MTSCTL_NODECTL_H

#include "mtsctl.h"

int cmd_node_inspect(struct mtsctl *, int argc, char **argv);
int cmd_node_label(struct mtsctl *, int argc, char **argv);
int cmd_node_drain(struct mtsctl *, int argc, char **argv);
int cmd_node_pause(struct mtsctl *, int argc, char **argv);
int cmd_node_activate(struct mtsctl *, int argc, char **argv);

/* A node's n/ record as node ls shows it. */
struct mtsctl_node_info {
	char id[33];
	const char *availability; /* static string */
};
int mtsctl_node_infos(struct mtsctl *, struct mtsctl_node_info **out,
    size_t *n);

#endif
