/* cmd_network.c: `mtsctl network ls|inspect` — the cluster's networks as the replicated state has them: the networks the services' records list (Compose's <stack>_<name>, or an external network's own name), the tasks on each with their node and address (t/ records, written from netd's attachments), the cluster CIDR and the nodes' /24s they use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtsctl.h"
#include "netd_status.h"
#include "service.pb-c.h"
#include "shim.pb-c.h"
#include "svc_spec.h"
#include "xmalloc.h"

/* What the state says, by network name: {"name", "scope", "services":
 * [...], "tasks": [{task, service, node, node_name, address, state}],
 * "subnets": [the /24s of its tasks' addresses]}. */
struct netview {
	json_t *nets; /* name -> object */
	struct members m;
};

static json_t *
net_get(struct netview *v, const char *name)
{
	json_t *o = json_object_get(v->nets, name);

	if (o == NULL) {
		o = json_pack("{s:s s:s s:[] s:[] s:[]}", "name", name, "scope",
		    "", "services", "tasks", "subnets");
		json_object_set_new(v->nets, name, o);
	}
	return o;
}

/* Adds s to the array unless it holds it. */
static void
set_add(json_t *arr, const char *s)
{
	size_t i;
	json_t *x;

	json_array_foreach(arr, i,
	    x) if (strcmp(json_string_value(x), s) == 0) return;
	json_array_append_new(arr, json_string(s));
}

/* A network named <stack>_<key> by a service of that stack is the stack's;
 * any other name a service lists is external (shared across stacks). */
static void
add_service(struct netview *v, const Mts__Service__ServiceSpec *sp)
{
	size_t i, sl = sp->stack ? strlen(sp->stack) : 0;

	for (i = 0; i < sp->n_networks; i++) {
		const char *name = sp->networks[i]->name;
		json_t *o;
		char scope[160];

		if (name == NULL || *name == '\0')
			continue;
		o = net_get(v, name);
		set_add(json_object_get(o, "services"), sp->name);
		if (sl > 0 && strncmp(name, sp->stack, sl) == 0 &&
		    name[sl] == '_')
			snprintf(scope, sizeof(scope), "stack %s", sp->stack);
		else
			snprintf(scope, sizeof(scope), "external");
		if (*json_string_value(json_object_get(o, "scope")) == '\0' ||
		    strcmp(scope, "external") == 0)
			json_object_set_new(o, "scope", json_string(scope));
	}
}

static void
add_task(void *arg, const char *node, const Mts__Shim__TaskStatus *t)
{
	struct netview *v = arg;
	char subnet[32];
	size_t i;

	for (i = 0; i < t->n_networks; i++) {
		json_t *o = net_get(v, t->networks[i]);

		json_array_append_new(json_object_get(o, "tasks"),
		    json_pack("{s:s s:s s:s s:s s:s s:s}", "task", t->id,
		        "service",
		        t->spec && t->spec->service ? t->spec->service : "",
		        "node", node, "node_name",
		        mtsctl_member_name(&v->m, node), "address", t->address,
		        "state", t->state));
		if (t->address[0] != '\0' && strrchr(t->address, '.') != NULL) {
			snprintf(subnet, sizeof(subnet), "%.*s.0/24",
			    (int)(strrchr(t->address, '.') - t->address),
			    t->address);
			set_add(json_object_get(o, "subnets"), subnet);
		}
	}
}

/* The networks of every service record and task record. An exit status. */
static int
netview_load(struct mtsctl *ctx, struct netview *v)
{
	struct svc_rec *svcs;
	size_t i, n;
	int rc;

	v->nets = json_object();
	mtsctl_members_load(ctx, &v->m);
	if ((rc = mtsctl_svc_list(ctx, &svcs, &n)) != 0)
		return rc;
	for (i = 0; i < n; i++)
		if (svcs[i].rec->spec != NULL)
			add_service(v, svcs[i].rec->spec);
	mtsctl_svc_list_free(svcs, n);
	return mtsctl_task_scan(ctx, add_task, v);
}

static void
netview_free(struct netview *v)
{
	json_decref(v->nets);
	mtsctl_members_free(&v->m);
}

/* The cluster CIDR as the node's netd has it ("" without a netd). */
static char *
cluster_cidr(struct mtsctl *ctx)
{
	Mts__Netd__Reply *rep;
	char err[256], *cidr;

	if (mtsctl_netd_status(ctx, &rep, err, sizeof(err)) != 0)
		return xstrdup("");
	cidr = xstrdup(rep->status->cluster_cidr);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return cidr;
}

static int
cmd_ls(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "name", "NAME" },
		{ "scope", "SCOPE" }, { "nservices", "SERVICES" },
		{ "ntasks", "TASKS" }, { "subnets_text", "NODE SUBNETS" },
		{ NULL, NULL } };
	struct netview v;
	json_t *rows = json_array(), *o, *x;
	const char *name;
	size_t i;
	int rc;

	if (argc > 1) {
		json_decref(rows);
		return mtsctl_usage(ctx);
	}
	if ((rc = netview_load(ctx, &v)) != 0) {
		json_decref(rows);
		netview_free(&v);
		return rc;
	}
	json_object_foreach(v.nets, name, o)
	{
		json_t *row = json_pack("{s:s s:O s:I s:I s:O}", "name", name,
		    "scope", json_object_get(o, "scope"), "nservices",
		    (json_int_t)json_array_size(json_object_get(o, "services")),
		    "ntasks",
		    (json_int_t)json_array_size(json_object_get(o, "tasks")),
		    "subnets", json_object_get(o, "subnets"));
		char text[512] = "-";
		size_t len = 0;

		json_array_foreach(json_object_get(o, "subnets"), i, x) len +=
		    (size_t)snprintf(text + len,
		        len < sizeof(text) ? sizeof(text) - len : 0, "%s%s",
		        i ? "," : "", json_string_value(x));
		json_object_set_new(row, "subnets_text", json_string(text));
		json_array_append_new(rows, row);
	}
	netview_free(&v);
	mtsctl_print_rows(ctx, rows, cols);
	return 0;
}

static int
cmd_inspect(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "name", "name:" },
		{ "scope", "scope:" }, { "subnet", "subnet:" },
		{ "subnets_text", "node subnets:" },
		{ "services_text", "services:" }, { NULL, NULL } };
	static const struct mtsctl_col tcols[] = { { "task", "TASK" },
		{ "service", "SERVICE" }, { "node_name", "NODE" },
		{ "address", "ADDRESS" }, { "state", "STATE" },
		{ NULL, NULL } };
	struct netview v;
	json_t *o, *x;
	char *cidr, text[2][1024];
	size_t i, len[2] = { 0, 0 };
	int rc, k;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = netview_load(ctx, &v)) != 0) {
		netview_free(&v);
		return rc;
	}
	if ((o = json_object_get(v.nets, argv[1])) == NULL) {
		mtsctl_err("no network '%s' (mtsctl network ls)", argv[1]);
		netview_free(&v);
		return MTSCTL_ENOTFOUND;
	}
	o = json_deep_copy(o);
	netview_free(&v);
	cidr = cluster_cidr(ctx);
	json_object_set_new(o, "subnet", json_string(cidr[0] ? cidr : "-"));
	free(cidr);
	for (k = 0; k < 2; k++) {
		text[k][0] = '\0';
		json_array_foreach(json_object_get(o,
		                       k ? "services" : "subnets"),
		    i, x) len[k] += (size_t)snprintf(text[k] + len[k],
		    len[k] < sizeof(text[k]) ? sizeof(text[k]) - len[k] : 0,
		    "%s%s", i ? ", " : "", json_string_value(x));
	}
	json_object_set_new(o, "subnets_text",
	    json_string(text[0][0] ? text[0] : "-"));
	json_object_set_new(o, "services_text",
	    json_string(text[1][0] ? text[1] : "-"));
	if (ctx->fmt == MTSCTL_FMT_JSON) {
		json_object_del(o, "subnets_text");
		json_object_del(o, "services_text");
		mtsctl_print_obj(ctx, o, cols);
		return 0;
	}
	x = json_incref(json_object_get(o, "tasks"));
	mtsctl_print_obj(ctx, o, cols);
	printf("\n");
	mtsctl_print_rows(ctx, x, tcols);
	return 0;
}

static const struct mtsctl_cmd cmds[] = {
	{ "ls", cmd_ls, "", "the networks of the cluster's services",
	    "DESCRIPTION\n"
	    "    Lists every network a service record names (a Compose file's\n"
	    "    <stack>_default and <stack>_<name>, or an external network's\n"
	    "    own name) with its scope (the stack it belongs to, or\n"
	    "    external: shared by whichever stacks list it), how many\n"
	    "    services and tasks are on it, and the nodes' /24s its tasks'\n"
	    "    addresses are in. Two tasks may talk only when they share a\n"
	    "    network (docs/network.md). Read from this node's replica. A\n"
	    "    task counts once mts-netd attached it to the network (its t/\n"
	    "    record lists it): a node without netd runs tasks on none, so\n"
	    "    TASKS may be 0 while the services run.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl network ls\n"
	    "    mtsctl -o json network ls\n" },
	{ "inspect", cmd_inspect, "NAME",
	    "a network's subnet, tasks, addresses",
	    "DESCRIPTION\n"
	    "    Shows network NAME: its scope, the cluster CIDR its addresses\n"
	    "    come from (subnet, as this node's netd has it) and the nodes'\n"
	    "    /24s its tasks are in, its services, and one row per task on\n"
	    "    it: service, node, address and state (the task's t/ record;\n"
	    "    the address is the one netd attached it with). Exits 5 for a\n"
	    "    network no service lists.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl network inspect shop_default\n"
	    "    mtsctl -o json network inspect shared\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_network = { "network",
	"the cluster's networks: scope, subnets, tasks and addresses", cmds };
