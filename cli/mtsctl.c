/* mtsctl.c: mtsctl's entry point — global options, command lookup in the group tables, and --help. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "mtsctl.h"

static const char exit_help[] =
    "EXIT STATUS\n"
    "    0  success\n"
    "    1  the operation failed (the message says why)\n"
    "    2  usage error\n"
    "    3  the socket is missing or did not answer in time\n"
    "    4  permission denied\n"
    "    5  no such key, agent or file\n";

static const char global_help[] =
    "GLOBAL OPTIONS (anywhere before a \"--\")\n"
    "    -r, --rundir DIR      the node's run directory, where the sockets\n"
    "                          are (default: $MTS_RUNDIR, else /run/mts)\n"
    "    -o, --output FORMAT   table (default) or json\n"
    "    -t, --timeout MS      how long to wait for a reply (default 5000;\n"
    "                          for exec, before the word exec: after it\n"
    "                          -t and --timeout are exec's own)\n"
    "    -h, --help            help for mtsctl or for the command\n";

static const struct mtsctl_group *
find_group(const char *name)
{
	const struct mtsctl_group *const *g;

	for (g = mtsctl_groups; *g != NULL; g++)
		if (strcmp((*g)->name, name) == 0)
			return *g;
	return NULL;
}

static void
print_synopsis(FILE *f, const struct mtsctl_group *g,
    const struct mtsctl_cmd *c)
{
	fprintf(f, "mtsctl [-r RUNDIR] [-o table|json] [-t MS] %s%s%s%s%s\n",
	    g->name, c->name ? " " : "", c->name ? c->name : "",
	    c->synopsis && *c->synopsis ? " " : "",
	    c->synopsis ? c->synopsis : "");
}

static void
help_command(const struct mtsctl_group *g, const struct mtsctl_cmd *c)
{
	printf("NAME\n    mtsctl %s%s%s - %s\n\nSYNOPSIS\n    ", g->name,
	    c->name ? " " : "", c->name ? c->name : "", c->summary);
	print_synopsis(stdout, g, c);
	/* a manual with its own EXIT STATUS has no second, generic one */
	printf("\n%s\n%s%s%s", c->help, global_help,
	    strstr(c->help, "EXIT STATUS\n") ? "" : "\n",
	    strstr(c->help, "EXIT STATUS\n") ? "" : exit_help);
}

static void
help_group(FILE *f, const struct mtsctl_group *g)
{
	const struct mtsctl_cmd *c;

	fprintf(f, "NAME\n    mtsctl %s - %s\n\nCOMMANDS\n", g->name,
	    g->summary);
	for (c = g->cmds; c->fn != NULL; c++)
		fprintf(f, "    %-24s %s\n", c->name ? c->name : g->name,
		    c->summary);
	fprintf(f,
	    "\nRun \"mtsctl %s COMMAND --help\" for a command's manual.\n"
	    "\n%s\n%s",
	    g->name, global_help, exit_help);
}

static void
help_top(FILE *f)
{
	const struct mtsctl_group *const *g;
	const struct mtsctl_cmd *c;
	char words[64];

	fprintf(f,
	    "NAME\n    mtsctl - administer an mts node\n\n"
	    "SYNOPSIS\n    mtsctl [-r RUNDIR] [-o table|json] [-t MS] "
	    "COMMAND [ARGS]\n\nCOMMANDS\n");
	for (g = mtsctl_groups; *g != NULL; g++)
		for (c = (*g)->cmds; c->fn != NULL; c++) {
			snprintf(words, sizeof(words), "%s%s%s", (*g)->name,
			    c->name ? " " : "", c->name ? c->name : "");
			fprintf(f, "    %-24s %s\n", words, c->summary);
		}
	fprintf(f,
	    "\nRun \"mtsctl COMMAND --help\" for a command's manual.\n"
	    "\n%s\n%s",
	    global_help, exit_help);
}

int
mtsctl_usage(const struct mtsctl *ctx)
{
	const struct mtsctl_group *const *g;
	const struct mtsctl_cmd *c;

	for (g = mtsctl_groups; *g != NULL; g++)
		for (c = (*g)->cmds; c->fn != NULL; c++)
			if (c == ctx->cmd) {
				fprintf(stderr, "usage: ");
				print_synopsis(stderr, *g, c);
				fprintf(stderr, "(see mtsctl %s%s%s --help)\n",
				    (*g)->name, c->name ? " " : "",
				    c->name ? c->name : "");
			}
	return MTSCTL_EUSAGE;
}

int
mtsctl_dashdash_ended(char **argv, int optind_, const char *last)
{
	return optind_ >= 2 && strcmp(argv[optind_ - 1], "--") == 0 &&
	    last != argv[optind_ - 1];
}

/* Takes a global option's value: "-oX", "-o X", "--output=X", "--output X". */
static int
take_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
    const char **val)
{
	const char *a = argv[*i];
	size_t ll = strlen(lng);

	if (strncmp(a, shrt, 2) == 0 && a[2] != '\0') {
		*val = a + 2;
		return 1;
	}
	if (strncmp(a, lng, ll) == 0 && a[ll] == '=') {
		*val = a + ll + 1;
		return 1;
	}
	if (strcmp(a, shrt) != 0 && strcmp(a, lng) != 0)
		return 0;
	if (*i + 1 >= argc) {
		mtsctl_err("option %s needs a value", a);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

/* Applies one global option at argv[*i]; 1 taken, 0 not global, -1 bad. */
static int
global_opt(struct mtsctl *ctx, int argc, char **argv, int *i, int *help)
{
	const char *v;
	char *end;
	long ms;
	int r;

	if (strcmp(argv[*i], "-h") == 0 || strcmp(argv[*i], "--help") == 0) {
		*help = 1;
		return 1;
	}
	if ((r = take_value(argc, argv, i, "-r", "--rundir", &v)) != 0) {
		ctx->rundir = v;
		return r;
	}
	if ((r = take_value(argc, argv, i, "-t", "--timeout", &v)) != 0) {
		if (r < 0)
			return r;
		errno = 0;
		ms = strtol(v, &end, 10);
		if (*end != '\0' || end == v || errno != 0 || ms <= 0 ||
		    ms > INT_MAX) {
			mtsctl_err("-t %s: expected a number of ms from 1 to %d",
			    v, INT_MAX);
			return -1;
		}
		ctx->timeout_ms = (int)ms;
		return 1;
	}
	if ((r = take_value(argc, argv, i, "-o", "--output", &v)) != 0) {
		if (r < 0)
			return r;
		if (strcmp(v, "json") == 0)
			ctx->fmt = MTSCTL_FMT_JSON;
		else if (strcmp(v, "table") == 0)
			ctx->fmt = MTSCTL_FMT_TABLE;
		else {
			mtsctl_err("-o %s: expected table or json", v);
			return -1;
		}
		return 1;
	}
	return 0;
}

static int
owns_t(const struct mtsctl_group *g)
{
	const struct mtsctl_group *const *p;

	for (p = mtsctl_groups_own_t; g != NULL && *p != NULL; p++)
		if (*p == g)
			return 1;
	return 0;
}

/* Removes global options from argv (in place) up to "--"; returns the new
 * argc or -1 on a bad option. */
static int
strip_globals(struct mtsctl *ctx, int argc, char **argv, int *help)
{
	const struct mtsctl_group *g = NULL;
	int i, n = 0, r, rest = 0;

	for (i = 0; i < argc; i++) {
		if (!rest && strcmp(argv[i], "--") == 0)
			rest = 1; /* kept: handlers' getopt stops there too */
		/* After a group that owns -t (exec), -t... and --timeout are its
		 * own options. */
		if (rest ||
		    (owns_t(g) &&
		        (strncmp(argv[i], "-t", 2) == 0 ||
		            strncmp(argv[i], "--timeout", 9) == 0)))
			r = 0;
		else
			r = global_opt(ctx, argc, argv, &i, help);
		if (r < 0)
			return -1;
		if (r == 0) {
			if (n == 0)
				g = find_group(argv[i]);
			argv[n++] = argv[i];
		}
	}
	argv[n] = NULL;
	return n;
}

static const struct mtsctl_cmd *
find_cmd(const struct mtsctl_group *g, const char *name)
{
	const struct mtsctl_cmd *c;

	for (c = g->cmds; c->fn != NULL; c++)
		if (c->name == NULL || (name && strcmp(c->name, name) == 0))
			return c;
	return NULL;
}

/* Why command c of group g has no JSON form, or NULL if it has one. */
static const char *
no_json(const struct mtsctl_group *g, const struct mtsctl_cmd *c)
{
	const struct mtsctl_no_json *n;

	for (n = mtsctl_no_json; n->group != NULL; n++)
		if (n->group == g &&
		    ((n->cmd == NULL && c->name == NULL) ||
		        (n->cmd != NULL && c->name != NULL &&
		            strcmp(n->cmd, c->name) == 0)))
			return n->why;
	return NULL;
}

int
main(int argc, char **argv)
{
	struct mtsctl ctx = { .fmt = MTSCTL_FMT_TABLE, .timeout_ms = 5000 };
	const struct mtsctl_group *g;
	const struct mtsctl_cmd *c;
	const char *why;
	int help = 0, n;

	ctx.rundir = getenv("MTS_RUNDIR");
	if (ctx.rundir == NULL || *ctx.rundir == '\0')
		ctx.rundir = "/run/mts";
	n = strip_globals(&ctx, argc - 1, argv + 1, &help);
	if (n < 0)
		return MTSCTL_EUSAGE;
	argv++;
	if (n == 0 || strcmp(argv[0], "help") == 0) {
		help_top(n == 0 && !help ? stderr : stdout);
		return n == 0 && !help ? MTSCTL_EUSAGE : MTSCTL_OK;
	}
	if (strcmp(argv[0], "--version") == 0) {
		printf("mtsctl %s\n", MTS_VERSION);
		return MTSCTL_OK;
	}
	if ((g = find_group(argv[0])) == NULL) {
		mtsctl_err("unknown command '%s' (see mtsctl --help)", argv[0]);
		return MTSCTL_EUSAGE;
	}
	c = find_cmd(g, n > 1 ? argv[1] : NULL);
	if (c == NULL) {
		if (help) {
			help_group(stdout, g);
			return MTSCTL_OK;
		}
		if (n > 1)
			mtsctl_err("unknown command '%s %s'", g->name, argv[1]);
		help_group(stderr, g);
		return MTSCTL_EUSAGE;
	}
	if (help) {
		help_command(g, c);
		return MTSCTL_OK;
	}
	ctx.cmd = c;
	if (ctx.fmt == MTSCTL_FMT_JSON && (why = no_json(g, c)) != NULL) {
		mtsctl_err("%s%s%s: no -o json: %s", g->name,
		    c->name ? " " : "", c->name ? c->name : "", why);
		return MTSCTL_EUSAGE;
	}
	if (c->name != NULL) {
		argv++;
		n--;
	}
	return c->fn(&ctx, n, argv);
}
