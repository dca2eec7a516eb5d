/* cmd_cluster.c: `mtsctl cluster init|join|token|leave|stats` and `mtsctl node ls|rm` — cluster membership over gossipd.sock (node inspect, label, drain, pause, activate: cmd_node.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gossipd.pb-c.h"
#include "hash.h"
#include "mtsctl.h"
#include "nodectl.h"

static int
gd_call(struct mtsctl *ctx, Mts__Gossipd__Request *req,
    Mts__Gossipd__Reply **rep, Mts__Gossipd__Reply__BodyCase want)
{
	int rc = mtsctl_call(ctx, "gossipd", &req->base,
	    &mts__gossipd__reply__descriptor, (ProtobufCMessage **)rep);

	if (rc == 0 && (*rep)->body_case != want) {
		mtsctl_err("gossipd sent an unexpected reply");
		protobuf_c_message_free_unpacked(&(*rep)->base, NULL);
		*rep = NULL;
		return MTSCTL_EFAIL;
	}
	return rc;
}

/* Parses the only option these commands take, --advertise ADDR. */
static int
advertise_opt(struct mtsctl *ctx, int argc, char **argv, const char **adv)
{
	static const struct option lo[] = { { "advertise", required_argument,
		                                NULL, 'a' },
		{ NULL, 0, NULL, 0 } };
	int c;

	*adv = "";
	while ((c = getopt_long(argc, argv, "a:", lo, NULL)) != -1) {
		if (c != 'a')
			return -1;
		*adv = optarg;
	}
	return 0;
}

static int
cmd_init(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__InitReq ir = MTS__GOSSIPD__INIT_REQ__INIT;
	Mts__Gossipd__Reply *rep;
	const char *adv;
	int rc;

	if (advertise_opt(ctx, argc, argv, &adv) < 0 || optind != argc)
		return mtsctl_usage(ctx);
	ir.advertise = (char *)adv;
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_INIT;
	req.init = &ir;
	if ((rc = gd_call(ctx, &req, &rep, MTS__GOSSIPD__REPLY__BODY_INIT)))
		return rc;
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx,
		    json_pack("{ss so}", "token", rep->init->token,
		        "cluster_id",
		        mtsctl_json_hex(rep->init->cluster_id.data,
		            rep->init->cluster_id.len)),
		    NULL);
	else
		printf("%s\n", rep->init->token);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

static int
cmd_join(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__JoinReq jr = MTS__GOSSIPD__JOIN_REQ__INIT;
	Mts__Gossipd__Reply *rep;
	char hex[2 * 16 + 1];
	const char *adv;
	int rc;

	if (advertise_opt(ctx, argc, argv, &adv) < 0 || argc - optind != 1)
		return mtsctl_usage(ctx);
	jr.token = argv[optind];
	jr.advertise = (char *)adv;
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_JOIN;
	req.join = &jr;
	if ((rc = gd_call(ctx, &req, &rep, MTS__GOSSIPD__REPLY__BODY_JOIN)))
		return rc;
	if (rep->join->cluster_id.len == 16) {
		mts_hex(hex, rep->join->cluster_id.data, 16);
		if (ctx->fmt == MTSCTL_FMT_JSON)
			mtsctl_print_obj(ctx,
			    json_pack("{ss sI}", "cluster_id", hex, "members",
			        (json_int_t)rep->join->members),
			    NULL);
		else
			printf("joined cluster %s (%u members)\n", hex,
			    rep->join->members);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

static int
cmd_token(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__TokenReq tr = MTS__GOSSIPD__TOKEN_REQ__INIT;
	Mts__Gossipd__Reply *rep;
	int rc;

	if (argc != 2 ||
	    (strcmp(argv[1], "show") != 0 && strcmp(argv[1], "rotate") != 0))
		return mtsctl_usage(ctx);
	tr.rotate = strcmp(argv[1], "rotate") == 0;
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_TOKEN;
	req.token = &tr;
	if ((rc = gd_call(ctx, &req, &rep, MTS__GOSSIPD__REPLY__BODY_TOKEN)))
		return rc;
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx,
		    json_pack("{ss sb}", "token", rep->token->token, "rotated",
		        tr.rotate),
		    NULL);
	else
		printf("%s\n", rep->token->token);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

static int
cmd_leave(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__LeaveReq lr = MTS__GOSSIPD__LEAVE_REQ__INIT;
	Mts__Gossipd__Reply *rep;
	int rc;

	if (argc != 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_LEAVE;
	req.leave = &lr;
	if ((rc = gd_call(ctx, &req, &rep, MTS__GOSSIPD__REPLY__BODY_LEAVE)))
		return rc;
	if (ctx->fmt == MTSCTL_FMT_JSON)
		mtsctl_print_obj(ctx, json_pack("{sb}", "left", 1), NULL);
	else
		printf("left the cluster\n");
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

static int
cmd_stats(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "rx_bytes", "rx bytes:" },
		{ "tx_bytes", "tx bytes:" },
		{ "ae_rounds", "anti-entropy rounds:" },
		{ "ae_done", "... completed:" },
		{ "ae_records", "anti-entropy records:" },
		{ "ae_bytes", "anti-entropy bytes:" },
		{ "push_sent", "pushes sent:" },
		{ "push_recv", "pushes received:" },
		{ "conns", "connections:" }, { NULL, NULL } };
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__StatsReq sr = MTS__GOSSIPD__STATS_REQ__INIT;
	Mts__Gossipd__Reply *rep;
	Mts__Gossipd__StatsRep *s;
	int rc;

	if (argc != 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_STATS;
	req.stats = &sr;
	if ((rc = gd_call(ctx, &req, &rep, MTS__GOSSIPD__REPLY__BODY_STATS)))
		return rc;
	s = rep->stats;
	mtsctl_print_obj(ctx,
	    json_pack("{sI sI sI sI sI sI sI sI sI}", "rx_bytes",
	        (json_int_t)s->rx_bytes, "tx_bytes", (json_int_t)s->tx_bytes,
	        "ae_rounds", (json_int_t)s->ae_rounds, "ae_done",
	        (json_int_t)s->ae_done, "ae_records", (json_int_t)s->ae_records,
	        "ae_bytes", (json_int_t)s->ae_bytes, "push_sent",
	        (json_int_t)s->push_sent, "push_recv", (json_int_t)s->push_recv,
	        "conns", (json_int_t)s->conns),
	    cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

static int
cmd_ls(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "id", "ID" },
		{ "name", "NAME" }, { "addr", "ADDRESS" }, { "state", "STATE" },
		{ "availability", "AVAILABILITY" },
		{ "incarnation", "INCARNATION" }, { "last_seen", "LAST SEEN" },
		{ NULL, NULL } };
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__MembersReq mr = MTS__GOSSIPD__MEMBERS_REQ__INIT;
	Mts__Gossipd__Reply *rep;
	struct mtsctl_node_info *infos = NULL;
	size_t i, k, ninfos = 0;
	const char *avail;
	json_t *rows;
	char ago[32], hex[2 * 16 + 1], id[2 * 16 + 3];
	int rc, have_infos;

	if (argc != 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_MEMBERS;
	req.members = &mr;
	if ((rc = gd_call(ctx, &req, &rep, MTS__GOSSIPD__REPLY__BODY_MEMBERS)))
		return rc;
	/* availability from the n/ records; "-" if the statestore is away */
	have_infos = mtsctl_node_infos(ctx, &infos, &ninfos) == 0;
	rows = json_array();
	for (i = 0; i < rep->members->n_nodes; i++) {
		const Mts__Gossipd__NodeInfo *n = rep->members->nodes[i];

		if (n->node.len != 16)
			continue;
		mts_hex(hex, n->node.data, 16);
		/* the table marks this node after its id; JSON has "self" */
		snprintf(id, sizeof(id), "%s%s", hex,
		    n->self && ctx->fmt == MTSCTL_FMT_TABLE ? " *" : "");
		if (n->self)
			snprintf(ago, sizeof(ago), "-");
		else
			mtsctl_fmt_duration(ago, sizeof(ago), n->last_seen_ms);
		/* a node whose schedd never wrote n/ takes new tasks */
		avail = have_infos ? "active" : "-";
		for (k = 0; k < ninfos; k++)
			if (strcmp(infos[k].id, hex) == 0)
				avail = infos[k].availability;
		json_array_append_new(rows,
		    json_pack("{ss ss ss ss ss sI ss sI sb}", "id", id, "name",
		        n->name, "addr", n->addr, "state", n->state,
		        "availability", avail, "incarnation",
		        (json_int_t)n->incarnation, "last_seen", ago,
		        "last_seen_ms", (json_int_t)n->last_seen_ms, "self",
		        n->self));
	}
	free(infos);
	mtsctl_print_rows(ctx, rows, cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

static int
cmd_rm(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__RemoveReq rr = MTS__GOSSIPD__REMOVE_REQ__INIT;
	Mts__Gossipd__Reply *rep;
	char hex[2 * 16 + 1];
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	rr.node = argv[1];
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_REMOVE;
	req.remove = &rr;
	if ((rc = gd_call(ctx, &req, &rep, MTS__GOSSIPD__REPLY__BODY_REMOVE)))
		return rc;
	if (rep->remove->node.len == 16) {
		mts_hex(hex, rep->remove->node.data, 16);
		if (ctx->fmt == MTSCTL_FMT_JSON)
			mtsctl_print_obj(ctx, json_pack("{ss}", "removed", hex),
			    NULL);
		else
			printf("removed node %s\n", hex);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return MTSCTL_OK;
}

static const struct mtsctl_cmd cluster_cmds[] = {
	{ "init", cmd_init, "[--advertise ADDR:PORT]",
	    "create a cluster and print its join token",
	    "DESCRIPTION\n"
	    "    Makes this node the first member of a new cluster: writes the\n"
	    "    cluster id, a fresh join secret and this node's member record,\n"
	    "    and prints the join token (MTS1-...) other nodes pass to\n"
	    "    `mtsctl cluster join`. The token holds the join secret: treat\n"
	    "    it as a password.\n"
	    "\nOPTIONS\n"
	    "    -a, --advertise ADDR:PORT  the address other nodes dial\n"
	    "                               (default: [gossipd] advertise)\n"
	    "\nEXAMPLES\n"
	    "    mtsctl cluster init --advertise 10.0.0.1:7373\n" },
	{ "join", cmd_join, "[--advertise ADDR:PORT] TOKEN",
	    "join a cluster with a token",
	    "DESCRIPTION\n"
	    "    Connects to the bootstrap node named in TOKEN with a\n"
	    "    Noise_XXpsk3 handshake keyed by the join secret; the bootstrap\n"
	    "    node admits this node by writing its member record, and the\n"
	    "    cluster state then arrives by anti-entropy.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl cluster join MTS1-AAAA...\n" },
	{ "token", cmd_token, "show|rotate", "print or replace the join token",
	    "DESCRIPTION\n"
	    "    show prints the current join token (with this node as the\n"
	    "    bootstrap address); rotate replaces the join secret, so older\n"
	    "    tokens stop working everywhere once the change replicates.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl cluster token rotate\n" },
	{ "leave", cmd_leave, "", "leave the cluster",
	    "DESCRIPTION\n"
	    "    Announces that this node leaves (SWIM state left), deletes its\n"
	    "    member record and stops talking to the other nodes. Joining\n"
	    "    again needs a fresh node identity and state directory.\n" },
	{ "stats", cmd_stats, "", "show gossipd traffic counters",
	    "DESCRIPTION\n"
	    "    Bytes received and sent to peers since gossipd started, and\n"
	    "    anti-entropy and delta-push counters.\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

static const struct mtsctl_cmd node_cmds[] = {
	{ "ls", cmd_ls, "", "list cluster members",
	    "DESCRIPTION\n"
	    "    Lists the members this node knows with their SWIM state\n"
	    "    (alive, suspect, dead, left), their availability (active,\n"
	    "    pause, drain: from their n/ records; - when this node's\n"
	    "    statestore cannot say), incarnation and how long ago\n"
	    "    they were last heard from. This node is marked with * (with\n"
	    "    -o json: \"self\": true; \"id\" is the bare id). On a node\n"
	    "    that was removed from the cluster (node rm elsewhere, or its\n"
	    "    own cluster leave) only this node is listed, in state removed.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl node ls\n"
	    "    mtsctl -o json node ls\n" },
	{ "rm", cmd_rm, "NODE", "remove a member from the cluster",
	    "DESCRIPTION\n"
	    "    Deletes NODE's member record (NODE: its id, a unique id prefix\n"
	    "    or its name). Once the deletion replicates every node refuses\n"
	    "    the removed node's handshakes.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl node rm 3f2a\n" },
	{ "inspect", cmd_node_inspect, "NODE",
	    "show a node's capacity, reservations, tasks and leases",
	    "DESCRIPTION\n"
	    "    Asks NODE's schedd (this node's directly, another's through\n"
	    "    the local gossipd's relay) for its slot ledger: capacity (the\n"
	    "    CPUs and memory it offers, less [schedd] reserve_*), what the\n"
	    "    committed tasks and live leases reserve, what is free, its\n"
	    "    availability (active, pause, drain), and each task and\n"
	    "    lease. NODE: its name, id or a unique id prefix. From this\n"
	    "    node's mts-netd (else NODE's n/ record): its overlay /24\n"
	    "    (Subnet) and this node's WireGuard peer of it (endpoint,\n"
	    "    latest handshake, bytes), - without an overlay.\n"
	    "    Live leases counts the prepared leases (they reserve); the\n"
	    "    LEASE rows are every lease the ledger remembers: prepared,\n"
	    "    and committed or ended ones for a while after, so that a\n"
	    "    resent commit or abort gets the same answer.\n"
	    "    With -o json: capacity, reserved, free and reserve as\n"
	    "    {cpu_millis, memory} (bytes), tasks and leases (the counts),\n"
	    "    draining, availability, task_list and lease_list, and when\n"
	    "    known subnet and wireguard.\n"
	    "\nEXIT STATUS\n"
	    "    0 shown, 1 NODE's schedd refused, 2 usage, 3 NODE (or its\n"
	    "    relay) unreachable, 4 permission denied, 5 NODE is not a\n"
	    "    member.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl node inspect n2\n"
	    "    mtsctl -o json node inspect 3f2a\n" },
	{ "label", cmd_node_label, "add|rm NODE KEY=VALUE",
	    "set or remove an operator label of a node",
	    "DESCRIPTION\n"
	    "    add writes the record nl/<node id>/KEY with VALUE (any node\n"
	    "    may, the last write wins); rm deletes it (KEY or KEY=VALUE).\n"
	    "    Placement constraints match them as node.labels.KEY. KEY:\n"
	    "    letters, digits, '.', '-', '_'.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl node label add n2 disk=ssd\n"
	    "    mtsctl node label rm n2 disk\n" },
	{ "drain", cmd_node_drain, "NODE",
	    "take no new tasks on a node and move its tasks away",
	    "DESCRIPTION\n"
	    "    Sets NODE's availability to drain: its schedd (this node's\n"
	    "    directly, another's through the local gossipd's relay)\n"
	    "    records it in n/<node> and refuses every new reservation\n"
	    "    (\"node is draining\"); placement leaves the node out and the\n"
	    "    owners move its tasks elsewhere (a service with update_config\n"
	    "    order start-first keeps the old task until its replacement\n"
	    "    runs), global ones included. It lasts, across restarts,\n"
	    "    until `node activate`. NODE: its name, id or a unique id\n"
	    "    prefix. Prints \"n2 (3f2a...): availability drain (was\n"
	    "    active)\"; -o json {node, availability, previous}. Draining\n"
	    "    a drained node changes nothing and succeeds.\n"
	    "\nEXIT STATUS\n"
	    "    0 set, 1 NODE's schedd refused, 2 usage, 3 NODE (or its\n"
	    "    relay) unreachable, 4 permission denied, 5 NODE is not a\n"
	    "    member.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl node drain n2\n"
	    "    mtsctl node ls        # AVAILABILITY drain\n" },
	{ "pause", cmd_node_pause, "NODE",
	    "take no new tasks on a node, keep its tasks",
	    "DESCRIPTION\n"
	    "    Sets NODE's availability to pause: no new task is placed on\n"
	    "    it (\"node is paused\"), the tasks it runs stay, global ones\n"
	    "    included. Output, JSON and NODE as for node drain.\n"
	    "\nEXIT STATUS\n"
	    "    As for node drain.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl node pause n2\n" },
	{ "activate", cmd_node_activate, "NODE",
	    "let a drained or paused node take new tasks again",
	    "DESCRIPTION\n"
	    "    Sets NODE's availability back to active. Tasks moved away\n"
	    "    by a drain do not come back by themselves (service rebalance\n"
	    "    moves a service's back). Output, JSON and NODE as for node\n"
	    "    drain.\n"
	    "\nEXIT STATUS\n"
	    "    As for node drain.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl node activate n2\n"
	    "    mtsctl service rebalance shop_web\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_cluster = { "cluster",
	"create, join and leave the cluster", cluster_cmds };
const struct mtsctl_group mtsctl_group_node = { "node",
	"list, inspect, label, drain and remove cluster members", node_cmds };
