/* cmd_config.c: `mtsctl config check|print FILE` (validate mts.conf exactly as mts-init would, no node needed) and `config reload`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "admin.pb-c.h"
#include "cfg.h"
#include "init/init_conf.h"
#include "mtsctl.h"

/* 0 if path can be read; else says why and returns the exit status (5 no
 * such file, 4 permission denied). */
static int
conf_readable(const char *path)
{
	if (access(path, R_OK) == 0 || (errno != ENOENT && errno != EACCES))
		return 0;
	mtsctl_err("%s: %s", path, errno == ENOENT ? "no such file" :
	    "permission denied");
	return errno == ENOENT ? MTSCTL_ENOTFOUND : MTSCTL_EDENIED;
}

static int
cmd_check(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = {{"name", "AGENT"},
	    {"executable", "EXECUTABLE"}, {"uid", "UID"}, {"gid", "GID"},
	    {"capabilities", "CAPS"}, {"seccomp", "SECCOMP"},
	    {"after", "AFTER"}, {NULL, NULL}};
	struct init_conf *c;
	char err[1024];
	json_t *rows, *after;
	size_t i, j;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = conf_readable(argv[1])) != 0)
		return rc;
	if (mts_init_conf_load(argv[1], &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return MTSCTL_EFAIL;
	}
	rows = json_array();
	for (i = 0; i < c->n; i++) {
		after = json_array();
		for (j = 0; c->a[i].after[j]; j++)
			json_array_append_new(after,
			    json_string(c->a[i].after[j]));
		json_array_append_new(rows, json_pack("{ss ss sI sI ss ss so}",
		    "name", c->a[i].name, "executable", c->a[i].exec, "uid",
		    (json_int_t)c->a[i].uid, "gid", (json_int_t)c->a[i].gid,
		    "capabilities", *c->a[i].caps_text ? c->a[i].caps_text
						       : "-",
		    "seccomp", c->a[i].seccomp ? c->a[i].seccomp : "-",
		    "after", after));
	}
	if (ctx->fmt == MTSCTL_FMT_TABLE)
		printf("%s: ok, %zu agents\n", argv[1], c->n);
	mtsctl_print_rows(ctx, rows, cols);
	mts_init_conf_free(c);
	return 0;
}

/* The effective configuration as JSON: {"section": {"key": "value"}} in
 * the printed file's order, values as the printed file writes them. The
 * printed text is parsed again (it parses by contract), so both forms say
 * the same. Returns NULL if it does not parse. */
static json_t *
cfg_json(const struct mts_cfg *cfg)
{
	struct mts_cfg *again = NULL;
	json_t *o = NULL, *sec;
	char *text = NULL, err[256];
	size_t len = 0, i;
	FILE *f;

	if ((f = open_memstream(&text, &len)) == NULL)
		return NULL;
	mts_cfg_print(cfg, f);
	fclose(f);
	if (mts_cfg_parse(text, cfg->file, cfg->schema, &again, err,
		sizeof(err)) < 0)
		goto out;
	o = json_object();
	for (i = 0; i < again->nsections; i++)
		json_object_set_new(o, again->sections[i], json_object());
	for (i = 0; i < again->n; i++) {
		if ((sec = json_object_get(o, again->e[i].section)) == NULL) {
			sec = json_object();
			json_object_set_new(o, again->e[i].section, sec);
		}
		json_object_set_new(sec, again->e[i].key,
		    json_string(again->e[i].value));
	}
out:
	mts_cfg_free(again);
	free(text);
	return o;
}

static int
cmd_print(struct mtsctl *ctx, int argc, char **argv)
{
	struct mts_cfg *cfg;
	char err[1024];
	json_t *o;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = conf_readable(argv[1])) != 0)
		return rc;
	if (mts_cfg_load(argv[1], mts_conf_schema(), &cfg, err,
	    sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return MTSCTL_EFAIL;
	}
	if (ctx->fmt == MTSCTL_FMT_TABLE)
		mts_cfg_print(cfg, stdout);
	else if ((o = cfg_json(cfg)) != NULL)
		mtsctl_print_obj(ctx, o, NULL);
	else {
		mtsctl_err("%s: the effective configuration does not parse "
		    "again (a bug)", argv[1]);
		rc = MTSCTL_EFAIL;
	}
	mts_cfg_free(cfg);
	return rc;
}

static int
cmd_reload(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = {{"restarted", "restarted:"},
	    {"added", "added:"}, {"removed", "removed:"}, {NULL, NULL}};
	Mts__Admin__Request req = MTS__ADMIN__REQUEST__INIT;
	Mts__Admin__ReloadReq rr = MTS__ADMIN__RELOAD_REQ__INIT;
	Mts__Admin__Reply *rep = NULL;
	json_t *o, *l[3];
	size_t i;
	int rc;

	if (argc != 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__ADMIN__REQUEST__BODY_RELOAD;
	req.reload = &rr;
	rc = mtsctl_call(ctx, "init", &req.base,
	    &mts__admin__reply__descriptor, (ProtobufCMessage **)&rep);
	if (rc != 0)
		return rc;
	if (rep->body_case != MTS__ADMIN__REPLY__BODY_RELOAD) {
		mtsctl_err("mts-init sent an unexpected reply");
		protobuf_c_message_free_unpacked(&rep->base, NULL);
		return MTSCTL_EFAIL;
	}
	for (i = 0; i < 3; i++)
		l[i] = json_array();
	for (i = 0; i < rep->reload->n_restarted; i++)
		json_array_append_new(l[0],
		    json_string(rep->reload->restarted[i]));
	for (i = 0; i < rep->reload->n_added; i++)
		json_array_append_new(l[1], json_string(rep->reload->added[i]));
	for (i = 0; i < rep->reload->n_removed; i++)
		json_array_append_new(l[2],
		    json_string(rep->reload->removed[i]));
	o = json_pack("{so so so}", "restarted", l[0], "added", l[1],
	    "removed", l[2]);
	mtsctl_print_obj(ctx, o, cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static const struct mtsctl_cmd cmds[] = {
	{"check", cmd_check, "FILE", "check a config file as mts-init would",
	    "DESCRIPTION\n"
	    "    Checks FILE with the code mts-init itself uses: the schema\n"
	    "    (unknown keys, wrong types), each agent's executable, user,\n"
	    "    groups, capabilities, dependencies (unknown names, cycles)\n"
	    "    and seccomp policy (unknown syscalls, bad conditions; the\n"
	    "    policy is compiled). The first problem is reported as\n"
	    "    FILE:LINE: what, with exit status 1. A valid file prints\n"
	    "    \"FILE: ok\" and the agents it would start.\n"
	    "    Users and groups are looked up on this machine, so check on\n"
	    "    the node that will run the file.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl config check /etc/mts/mts.conf\n"
	    "    mtsctl -o json config check mts.conf\n"},
	{"print", cmd_print, "FILE", "print the effective configuration",
	    "DESCRIPTION\n"
	    "    Prints every section of FILE with every key that applies to\n"
	    "    it and its effective value (defaults filled in). The output\n"
	    "    is itself a valid mts.conf. With -o json: one object per\n"
	    "    section, {\"section\": {\"key\": \"value\"}}, values as the\n"
	    "    printed file writes them.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl config print /etc/mts/mts.conf\n"
	    "    mtsctl -o json config print mts.conf\n"},
	{"reload", cmd_reload, "", "make mts-init reload mts.conf",
	    "DESCRIPTION\n"
	    "    Asks mts-init to read its configuration file again, as\n"
	    "    SIGHUP does. The new file is checked completely first; if\n"
	    "    anything is wrong nothing changes and the problem is printed\n"
	    "    as FILE:LINE: what (exit 1). Otherwise agents whose settings\n"
	    "    changed are restarted, new ones started, removed ones\n"
	    "    stopped, and their names are printed.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl config check /etc/mts/mts.conf && mtsctl config reload\n"},
	{NULL, NULL, NULL, NULL, NULL},
};

const struct mtsctl_group mtsctl_group_config = {
	"config", "check, print and reload mts.conf", cmds};
