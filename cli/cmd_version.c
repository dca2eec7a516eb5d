/* cmd_version.c: `mtsctl version` — the versions of mtsctl and of the node's mts-init. */
#include <stdio.h>

#include "admin.pb-c.h"
#include "agent.h"
#include "mtsctl.h"

static int
cmd_version(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "mtsctl", "mtsctl:" },
		{ "init", "mts-init:" }, { "node", "node:" },
		{ "pid", "init pid:" }, { "uptime", "init uptime:" },
		{ "config", "config:" }, { NULL, NULL } };
	Mts__Admin__Request req = MTS__ADMIN__REQUEST__INIT;
	Mts__Admin__VersionReq vr = MTS__ADMIN__VERSION_REQ__INIT;
	Mts__Admin__Reply *rep = NULL;
	char up[32];
	json_t *o;
	int rc;

	if (argc > 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__ADMIN__REQUEST__BODY_VERSION_REQ;
	req.version_req = &vr;
	rc = mtsctl_call(ctx, "init", &req.base, &mts__admin__reply__descriptor,
	    (ProtobufCMessage **)&rep);
	o = json_pack("{ss}", "mtsctl", MTS_VERSION);
	if (rc == 0 && rep->body_case == MTS__ADMIN__REPLY__BODY_VERSION_REP) {
		Mts__Admin__VersionRep *v = rep->version_rep;

		mtsctl_fmt_duration(up, sizeof(up), v->uptime_ms);
		json_object_set_new(o, "init", json_string(v->version));
		json_object_set_new(o, "node", json_string(v->node));
		json_object_set_new(o, "pid", json_integer(v->pid));
		json_object_set_new(o, "uptime", json_string(up));
		json_object_set_new(o, "uptime_ms", json_integer(v->uptime_ms));
		json_object_set_new(o, "config", json_string(v->config));
	}
	mtsctl_print_obj(ctx, o, cols);
	if (rep != NULL)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	return rc;
}

static const struct mtsctl_cmd cmds[] = {
	{ NULL, cmd_version, "", "print the versions of mtsctl and mts-init",
	    "DESCRIPTION\n"
	    "    Prints the version of mtsctl, then asks the node's mts-init\n"
	    "    (admin.sock) for its version, node name, pid, uptime and the\n"
	    "    configuration file it runs with. When mts-init cannot be\n"
	    "    reached, only mtsctl's version is printed, the reason goes to\n"
	    "    stderr and the exit status says what failed.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl version\n"
	    "    mtsctl -o json version\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_version = { "version",
	"versions of mtsctl and mts-init", cmds };
