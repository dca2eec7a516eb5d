/* netd_status.h: the Status call to this node's mts-netd that mtsctl's overlay, network, service and node views share (see netd_status.c). */
#ifndef MTSCTL_NETD_STATUS_H
#define MTSCTL_NETD_STATUS_H

#include <stddef.h>

#include "netd.pb-c.h"

struct mtsctl;

/* This node's netd status: 0 and *rep, whose status is set (the caller
 * frees it with protobuf_c_message_free_unpacked). Otherwise *rep is
 * NULL and, with err NULL, the reason is printed and the exit status
 * returned (mtsctl_call; a reply with no status is MTSCTL_EFAIL), or
 * with err the reason goes there and a negated enum mts_err is returned
 * (mtsctl_try_call: a node without netd is -MTS_ERR_NOTFOUND). */
int mtsctl_netd_status(struct mtsctl *, Mts__Netd__Reply **rep, char *err,
    size_t errlen);

#endif
