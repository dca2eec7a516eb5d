/* nodectl.h: the `mtsctl node` commands of cmd_node.c that cmd_cluster.c's node table lists. */
#ifndef MTSCTL_NODECTL_H
#define MTSCTL_NODECTL_H

#include "mtsctl.h"

int cmd_node_inspect(struct mtsctl *, int argc, char **argv);
int cmd_node_label(struct mtsctl *, int argc, char **argv);

#endif
