/* cmd_config.c: `mtsctl config check|print FILE` — validate mts.conf exactly as mts-init would, without a running node. */
#include <stdio.h>

#include "cfg.h"
#include "mtsctl.h"

static int
load(struct mtsctl *ctx, int argc, char **argv, struct mts_cfg **cfg)
{
	char err[1024];

	if (argc != 2)
		return mtsctl_usage(ctx);
	if (mts_cfg_load(argv[1], mts_conf_schema, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return MTSCTL_EFAIL;
	}
	return 0;
}

static int
cmd_check(struct mtsctl *ctx, int argc, char **argv)
{
	struct mts_cfg *cfg;
	int rc = load(ctx, argc, argv, &cfg);

	if (rc != 0)
		return rc;
	printf("%s: ok\n", argv[1]);
	mts_cfg_free(cfg);
	return 0;
}

static int
cmd_print(struct mtsctl *ctx, int argc, char **argv)
{
	struct mts_cfg *cfg;
	int rc = load(ctx, argc, argv, &cfg);

	if (rc != 0)
		return rc;
	mts_cfg_print(cfg, stdout);
	mts_cfg_free(cfg);
	return 0;
}

static const struct mtsctl_cmd cmds[] = {
	{"check", cmd_check, "FILE", "check a config file as mts-init would",
	    "DESCRIPTION\n"
	    "    Parses FILE against the mts.conf schema and reports the first\n"
	    "    problem as FILE:LINE: what. Prints \"FILE: ok\" and exits 0\n"
	    "    when the file is valid.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl config check /etc/mts/mts.conf\n"},
	{"print", cmd_print, "FILE", "print the effective configuration",
	    "DESCRIPTION\n"
	    "    Prints every section of FILE with every key that applies to\n"
	    "    it and its effective value (defaults filled in). The output\n"
	    "    is itself a valid mts.conf.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl config print /etc/mts/mts.conf\n"},
	{NULL, NULL, NULL, NULL, NULL},
};

const struct mtsctl_group mtsctl_group_config = {
	"config", "check and print mts.conf", cmds};
