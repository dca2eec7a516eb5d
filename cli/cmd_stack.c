/* cmd_stack.c: `mtsctl stack config` — loads Compose files as `docker stack deploy` reads them (merged in order, interpolated from the environment and .env, env_file read) and prints the stack mts would deploy, with one warning line per key mts does not run. */
#include <stdio.h>
#include <string.h>

#include "mtsctl.h"
#include "stack_load.h"
#include "svc_spec.h"

static int
cmd_config(struct mtsctl *ctx, int argc, char **argv)
{
	struct stack_args a = { .opts = "csq" };
	struct mts_stack *st = NULL;
	int rc;

	if ((rc = mtsctl_stack_args(ctx, argc, argv, &a)) != 0 ||
	    (rc = mtsctl_stack_load(&a, &st)) != 0)
		return rc;
	if (!a.quiet) {
		if (ctx->fmt == MTSCTL_FMT_JSON) {
			json_t *j = mts_stack_json(st);

			json_dumpf(j, stdout,
			    JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			putchar('\n');
			json_decref(j);
		} else
			mts_stack_print(st, stdout);
	}
	mts_stack_free(st);
	return rc;
}

static const struct mtsctl_cmd cmds[] = {
	{ "config", cmd_config, "[-c|-f FILE]... [--stack NAME] [-q]",
	    "check Compose files and print the stack mts would deploy",
	    "DESCRIPTION\n"
	    "    Reads the Compose files as `docker stack deploy -c` does and\n"
	    "    prints the stack in mts's canonical form: every service with\n"
	    "    every default written out, the files merged, variables\n"
	    "    interpolated, env_file entries read. Nothing is sent to the\n"
	    "    cluster. Each key mts does not run gives one warning line on\n"
	    "    stderr naming the file, line, column, service and key; a\n"
	    "    broken file gives FILE:LINE:COLUMN: and what is wrong, and\n"
	    "    exit status 1. docs/compose.md lists every key.\n"
	    "\n"
	    "    Variables come from the environment, then from the .env file\n"
	    "    beside the first file (${VAR}, ${VAR:-default},\n"
	    "    ${VAR-default}, ${VAR:?message}, ${VAR?message}, $$ for a\n"
	    "    dollar). The stack's name is --stack, else the files' top-\n"
	    "    level name:, else the first file's directory name.\n"
	    "\nOPTIONS\n"
	    "    -c, -f, --compose-file, --file FILE\n"
	    "                             a Compose file; repeat it to merge\n"
	    "                             several, later files overriding\n"
	    "                             (default: compose.yaml, compose.yml,\n"
	    "                             docker-compose.yaml or\n"
	    "                             docker-compose.yml here)\n"
	    "    --stack NAME             the stack's name\n"
	    "    -q, --quiet              check only: print warnings and errors\n"
	    "\nEXAMPLES\n"
	    "    mtsctl stack config -c stack.yml\n"
	    "    mtsctl stack config -c base.yml -c prod.yml --stack shop\n"
	    "    TAG=1.25 mtsctl -o json stack config -c stack.yml\n" },
	{ "ls", mtsctl_cmd_stack_ls, "",
	    "list stacks and their number of services",
	    "DESCRIPTION\n"
	    "    Lists the stacks that have services in the replicated state.\n" },
	{ "services", mtsctl_cmd_stack_services, "STACK",
	    "list a stack's services",
	    "DESCRIPTION\n"
	    "    As `mtsctl service ls`, for the services of STACK. A STACK\n"
	    "    with no service record is an error (exit 5), as in stack rm.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl stack services shop\n" },
	{ "ps", mtsctl_cmd_stack_ps, "STACK", "list a stack's tasks",
	    "DESCRIPTION\n"
	    "    As `mtsctl service ps`, for every service of STACK. A STACK\n"
	    "    with no service record is an error (exit 5), as in stack rm.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl stack ps shop\n" },
	{ "rm", mtsctl_cmd_stack_rm, "STACK", "remove a stack's services",
	    "DESCRIPTION\n"
	    "    Deletes every service record of STACK; every node's\n"
	    "    reconciled then stops their tasks.\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_stack = { "stack", "Compose stacks",
	cmds };
