/* netd_status.c: the Status call to this node's mts-netd — its /24, the cluster CIDR, WireGuard peers, attachments and service endpoints — for every mtsctl view that shows them. */
#include <stdio.h>

#include "mtserr.h"
#include "mtsctl.h"
#include "netd_status.h"

int
mtsctl_netd_status(struct mtsctl *ctx, Mts__Netd__Reply **rep, char *err,
    size_t errlen)
{
	Mts__Netd__Request req = MTS__NETD__REQUEST__INIT;
	Mts__Netd__StatusReq sr = MTS__NETD__STATUS_REQ__INIT;
	ProtobufCMessage *m = NULL;
	int rc;

	*rep = NULL;
	req.body_case = MTS__NETD__REQUEST__BODY_STATUS;
	req.status = &sr;
	if (err == NULL)
		rc = mtsctl_call(ctx, "netd", &req.base,
		    &mts__netd__reply__descriptor, &m);
	else
		rc = mtsctl_try_call(ctx, "netd", &req.base,
		    &mts__netd__reply__descriptor, &m, err, errlen);
	if (rc != 0)
		return rc;
	if (((Mts__Netd__Reply *)m)->status == NULL) {
		protobuf_c_message_free_unpacked(m, NULL);
		if (err == NULL)
			return MTSCTL_EFAIL;
		snprintf(err, errlen, "netd's reply has no status");
		return -MTS_ERR_INVAL;
	}
	*rep = (Mts__Netd__Reply *)m;
	return 0;
}
