/* cmd_overlay.c: `mtsctl overlay status|attach|detach` — the node's mts-netd: its /24, WireGuard peers (endpoint, latest handshake, bytes) and task attachments, and attaching a task by hand. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "hash.h"
#include "mtsctl.h"
#include "netd.pb-c.h"
#include "netd_status.h"

static int
call(struct mtsctl *ctx, Mts__Netd__Request *req, Mts__Netd__Reply **rep)
{
	*rep = NULL;
	return mtsctl_call(ctx, "netd", &req->base,
	    &mts__netd__reply__descriptor, (ProtobufCMessage **)rep);
}

static json_t *
peer_row(const Mts__Netd__Peer *p)
{
	char hs[32] = "never";

	if (p->latest_handshake_ms > 0) {
		mtsctl_fmt_duration(hs, sizeof(hs), p->latest_handshake_ms);
		strncat(hs, " ago", sizeof(hs) - strlen(hs) - 1);
	}
	return json_pack("{s:o s:s s:s s:s s:s s:I s:I s:I}", "node",
	    mtsctl_json_hex(p->node.data, p->node.len), "name", p->name,
	    "endpoint", p->endpoint, "allowed_ips", p->allowed_ips, "handshake",
	    hs, "latest_handshake_ms", (json_int_t)p->latest_handshake_ms,
	    "rx_bytes", (json_int_t)p->rx_bytes, "tx_bytes",
	    (json_int_t)p->tx_bytes);
}

static json_t *
att_row(const Mts__Netd__Attachment *a)
{
	json_t *nets = json_array();
	char text[1024] = "";
	size_t i, len = 0;

	for (i = 0; i < a->n_networks; i++) {
		json_array_append_new(nets, json_string(a->networks[i]));
		len += (size_t)snprintf(text + len,
		    len < sizeof(text) ? sizeof(text) - len : 0, "%s%s",
		    i ? "," : "", a->networks[i]);
	}
	return json_pack("{s:s s:s s:s s:s s:o s:s}", "task", a->task,
	    "address", a->address, "veth", a->veth, "netns", a->netns,
	    "networks", nets, "networks_text", a->n_networks ? text : "-");
}

static int
cmd_status(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "subnet", "subnet:" },
		{ "cluster_cidr", "cluster cidr:" }, { "backend", "backend:" },
		{ "listen_port", "listen port:" }, { "mtu", "mtu:" },
		{ "public_key", "public key:" }, { NULL, NULL } };
	static const struct mtsctl_col pcols[] = { { "name", "PEER" },
		{ "endpoint", "ENDPOINT" }, { "allowed_ips", "ALLOWED IPS" },
		{ "handshake", "HANDSHAKE" }, { "rx_bytes", "RX" },
		{ "tx_bytes", "TX" }, { NULL, NULL } };
	static const struct mtsctl_col acols[] = { { "task", "TASK" },
		{ "address", "ADDRESS" }, { "veth", "VETH" },
		{ "networks_text", "NETWORKS" }, { "netns", "NETNS" },
		{ NULL, NULL } };
	Mts__Netd__Reply *rep;
	json_t *o, *peers, *atts;
	size_t i;
	int rc;

	if (argc > 1)
		return mtsctl_usage(ctx);
	if ((rc = mtsctl_netd_status(ctx, &rep, NULL, 0)) != 0)
		return rc;
	peers = json_array();
	atts = json_array();
	for (i = 0; i < rep->status->n_peers; i++)
		json_array_append_new(peers, peer_row(rep->status->peers[i]));
	for (i = 0; i < rep->status->n_attachments; i++)
		json_array_append_new(atts,
		    att_row(rep->status->attachments[i]));
	o = json_pack("{s:s s:s s:s s:i s:i s:o}", "subnet",
	    rep->status->subnet, "cluster_cidr", rep->status->cluster_cidr,
	    "backend", rep->status->backend, "listen_port",
	    (int)rep->status->listen_port, "mtu", (int)rep->status->mtu,
	    "public_key",
	    mtsctl_json_hex(rep->status->public_key.data,
	        rep->status->public_key.len));
	if (ctx->fmt == MTSCTL_FMT_JSON) {
		json_object_set_new(o, "peers", peers);
		json_object_set_new(o, "attachments", atts);
		mtsctl_print_obj(ctx, o, cols);
	} else {
		mtsctl_print_obj(ctx, o, cols);
		printf("\n");
		mtsctl_print_rows(ctx, peers, pcols);
		if (json_array_size(atts) > 0) {
			printf("\n");
			mtsctl_print_rows(ctx, atts, acols);
		} else {
			json_decref(atts);
		}
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_attach(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "task", "task:" },
		{ "address", "address:" }, { "gateway", "gateway:" },
		{ "mtu", "mtu:" }, { "veth", "veth:" },
		{ "networks_text", "networks:" }, { "netns", "netns:" },
		{ NULL, NULL } };
	static const struct option lo[] = { { "network", required_argument,
		                                NULL, 'n' },
		{ NULL, 0, NULL, 0 } };
	Mts__Netd__Request req = MTS__NETD__REQUEST__INIT;
	Mts__Netd__AttachReq ar = MTS__NETD__ATTACH_REQ__INIT;
	Mts__Netd__Reply *rep;
	char *nets[16];
	json_t *o;
	int c, rc;

	while ((c = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		if (c != 'n' || ar.n_networks == sizeof(nets) / sizeof(nets[0]))
			return mtsctl_usage(ctx);
		nets[ar.n_networks++] = optarg;
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	ar.task = argv[optind];
	ar.networks = nets;
	req.body_case = MTS__NETD__REQUEST__BODY_ATTACH;
	req.attach = &ar;
	if ((rc = call(ctx, &req, &rep)) != 0)
		return rc;
	if (rep->attach == NULL || rep->attach->attachment == NULL) {
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		return MTSCTL_EFAIL;
	}
	o = att_row(rep->attach->attachment);
	json_object_set_new(o, "gateway", json_string(rep->attach->gateway));
	json_object_set_new(o, "mtu", json_integer(rep->attach->mtu));
	mtsctl_print_obj(ctx, o, cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_detach(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "task", "task:" },
		{ "found", "found:" }, { NULL, NULL } };
	Mts__Netd__Request req = MTS__NETD__REQUEST__INIT;
	Mts__Netd__DetachReq dr = MTS__NETD__DETACH_REQ__INIT;
	Mts__Netd__Reply *rep;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	dr.task = argv[1];
	req.body_case = MTS__NETD__REQUEST__BODY_DETACH;
	req.detach = &dr;
	if ((rc = call(ctx, &req, &rep)) != 0)
		return rc;
	mtsctl_print_obj(ctx,
	    json_pack("{s:s s:b}", "task", argv[1], "found",
	        rep->detach != NULL && rep->detach->found),
	    cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static const struct mtsctl_cmd cmds[] = {
	{ "status", cmd_status, "",
	    "the node's /24, WireGuard peers and task attachments",
	    "DESCRIPTION\n"
	    "    Asks the node's mts-netd for its overlay: the /24 it claims in\n"
	    "    the cluster CIDR, the WireGuard interface mts0 (backend, port,\n"
	    "    MTU, public key: the node's static key), one line per peer\n"
	    "    (the node, its endpoint, the /24 routed to it, the latest\n"
	    "    handshake and the bytes received and sent) and the tasks\n"
	    "    attached on this node (address, host-side veth, namespace).\n"
	    "\nEXAMPLES\n"
	    "    mtsctl overlay status\n"
	    "    mtsctl -o json overlay status\n" },
	{ "attach", cmd_attach, "[--network NAME]... TASK",
	    "give a task a network namespace and an address",
	    "DESCRIPTION\n"
	    "    Makes (or returns, when it exists) the attachment of TASK: a\n"
	    "    network namespace bind-mounted under the run directory, a veth\n"
	    "    pair whose eth0 end is in it and whose other end is in the\n"
	    "    bridge mtsbr0, the next free address of the node's /24 and a\n"
	    "    default route through the bridge. reconciled does this before\n"
	    "    it starts a task; by hand it is for tests and debugging.\n"
	    "    Needs [netd] acl (root by default).\n"
	    "\nOPTIONS\n"
	    "    --network NAME  the task is on network NAME (repeatable, at\n"
	    "                    most 16): tasks reach it only when they share\n"
	    "                    one of its networks (nftables on this node).\n"
	    "                    Without any, it is on no network: it reaches,\n"
	    "                    and is reached by, only attachments on none.\n"
	    "                    Asked again, the networks given replace the\n"
	    "                    task's; without --network it keeps its own.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl overlay attach web.1\n"
	    "    mtsctl overlay attach --network shop_default shop_web.1\n"
	    "    ip netns exec ... or nsenter --net=$(mtsctl -o json overlay "
	    "attach web.1 | jq -r .netns)\n" },
	{ "detach", cmd_detach, "TASK", "remove a task's attachment",
	    "DESCRIPTION\n"
	    "    Deletes TASK's veth pair, unmounts and removes its namespace\n"
	    "    and frees its address. Detaching an unknown task succeeds\n"
	    "    (found: false).\n"
	    "\nEXAMPLES\n"
	    "    mtsctl overlay detach web.1\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_overlay = { "overlay",
	"the overlay network of this node (mts-netd)", cmds };
