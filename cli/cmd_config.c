/* cmd_config.c: `mtsctl config check|print FILE` (check runs `mts-init -n`, so mts-init itself judges the file; no node needed) and `config reload`. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "admin.pb-c.h"
#include "cfg.h"
#include "mtsctl.h"
#include "xmalloc.h"

/* 0 if path can be read; else says why and returns the exit status (5 no
 * such file, 4 permission denied). */
static int
conf_readable(const char *path)
{
	if (access(path, R_OK) == 0 || (errno != ENOENT && errno != EACCES))
		return 0;
	mtsctl_err("%s: %s", path,
	    errno == ENOENT ? "no such file" : "permission denied");
	return errno == ENOENT ? MTSCTL_ENOTFOUND : MTSCTL_EDENIED;
}

/* Where mts-init is: next to this mtsctl (the build and `make install` put
 * them side by side), else the first on PATH. */
static void
init_path(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		snprintf(buf, len, "%s/mts-init", dirname(self));
		if (access(buf, X_OK) == 0)
			return;
	}
	snprintf(buf, len, "mts-init");
}

/* Reads all of fd from its start; the caller frees the text. */
static char *
read_all(int fd)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;

	(void)lseek(fd, 0, SEEK_SET);
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = xreallocarray(buf, cap + 1, 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0 || (n < 0 && errno == EINTR));
	buf[len] = '\0';
	return buf;
}

/* Runs `mts-init -n -c path` (as `sshd -t` checks sshd's file: the program
 * that will run the file judges it) with its output in *out and *err.
 * Returns its exit status, or -1 if it could not be run (err says why). */
static int
run_init_check(const char *path, char **out, char **err)
{
	char init[PATH_MAX + 16];
	int ofd, efd, status = -1;
	FILE *o = tmpfile(), *e = tmpfile();
	pid_t pid;

	*out = *err = NULL;
	if (o == NULL || e == NULL)
		goto out;
	ofd = fileno(o);
	efd = fileno(e);
	init_path(init, sizeof(init));
	if ((pid = fork()) == 0) {
		if (dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(127);
		execlp(init, init, "-n", "-c", path, (char *)NULL);
		dprintf(2, "cannot run %s: %s\n", init, strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		status = -1;
	*out = read_all(ofd);
	*err = read_all(efd);
out:
	if (o != NULL)
		fclose(o);
	if (e != NULL)
		fclose(e);
	if (status == -1)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* mts-init's complaint, as mtsctl reports it: its lines without the
 * "mts-init: " prefix and without the closing "nothing started". */
static void
relay_refusal(const char *text)
{
	const char *p = text, *nl;
	size_t n;

	for (; *p != '\0'; p = nl ? nl + 1 : p + n) {
		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		if (n >= 10 && strncmp(p, "mts-init: ", 10) == 0)
			p += 10, n -= 10;
		if (n == 0 || strncmp(p, "configuration refused", 21) == 0)
			continue;
		fprintf(stderr, "%.*s\n", (int)n, p);
	}
}

/* One row per agent mts-init would start, from its effective config. */
static json_t *
agent_rows(const struct mts_cfg *cfg)
{
	json_t *rows = json_array(), *after;
	const char *s, *v;
	char **l;
	size_t i, j;

	for (i = 0; i < cfg->nsections; i++) {
		s = cfg->sections[i];
		if (strcmp(s, "node") == 0 || strcmp(s, "init") == 0 ||
		    !mts_cfg_bool(cfg, s, "enabled"))
			continue;
		after = json_array();
		l = mts_cfg_list(cfg, s, "after");
		for (j = 0; l[j] != NULL; j++)
			json_array_append_new(after, json_string(l[j]));
		mts_cfg_list_free(l);
		v = mts_cfg_str(cfg, s, "capabilities");
		json_array_append_new(rows,
		    json_pack("{ss ss ss ss ss ss so}", "name", s, "executable",
		        mts_cfg_str(cfg, s, "executable"), "user",
		        mts_cfg_str(cfg, s, "user"), "group",
		        mts_cfg_str(cfg, s, "group") ?: "-", "capabilities",
		        v && *v ? v : "-", "seccomp",
		        *mts_cfg_str(cfg, s, "seccomp")
		            ? mts_cfg_str(cfg, s, "seccomp")
		            : "-",
		        "after", after));
	}
	return rows;
}

static int
cmd_check(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "name", "AGENT" },
		{ "executable", "EXECUTABLE" }, { "user", "USER" },
		{ "group", "GROUP" }, { "capabilities", "CAPS" },
		{ "seccomp", "SECCOMP" }, { "after", "AFTER" },
		{ NULL, NULL } };
	struct mts_cfg *cfg = NULL;
	char *out = NULL, *err = NULL, msg[1024];
	json_t *rows;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	if ((rc = conf_readable(argv[1])) != 0)
		return rc;
	rc = run_init_check(argv[1], &out, &err);
	if (rc != 0) {
		if (rc < 0)
			mtsctl_err("cannot run mts-init: %s", strerror(errno));
		else
			relay_refusal(err);
		rc = MTSCTL_EFAIL;
		goto done;
	}
	if (mts_cfg_parse(out, argv[1], mts_conf_schema(), &cfg, msg,
	        sizeof(msg)) < 0) {
		mtsctl_err("mts-init's effective configuration does not parse "
		           "here (another version?): %s",
		    msg);
		rc = MTSCTL_EFAIL;
		goto done;
	}
	rows = agent_rows(cfg);
	if (ctx->fmt == MTSCTL_FMT_TABLE)
		printf("%s: ok, %zu agents\n", argv[1], json_array_size(rows));
	mtsctl_print_rows(ctx, rows, cols);
done:
	mts_cfg_free(cfg);
	free(out);
	free(err);
	return rc;
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
	if (mts_cfg_load(argv[1], mts_conf_schema(), &cfg, err, sizeof(err)) <
	    0) {
		fprintf(stderr, "%s\n", err);
		return MTSCTL_EFAIL;
	}
	if (ctx->fmt == MTSCTL_FMT_TABLE)
		mts_cfg_print(cfg, stdout);
	else if ((o = cfg_json(cfg)) != NULL)
		mtsctl_print_obj(ctx, o, NULL);
	else {
		mtsctl_err("%s: the effective configuration does not parse "
		           "again (a bug)",
		    argv[1]);
		rc = MTSCTL_EFAIL;
	}
	mts_cfg_free(cfg);
	return rc;
}

static int
cmd_reload(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "restarted", "restarted:" },
		{ "added", "added:" }, { "removed", "removed:" },
		{ NULL, NULL } };
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
	rc = mtsctl_call(ctx, "init", &req.base, &mts__admin__reply__descriptor,
	    (ProtobufCMessage **)&rep);
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
	o = json_pack("{so so so}", "restarted", l[0], "added", l[1], "removed",
	    l[2]);
	mtsctl_print_obj(ctx, o, cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static const struct mtsctl_cmd cmds[] = {
	{ "check", cmd_check, "FILE", "check a config file as mts-init would",
	    "DESCRIPTION\n"
	    "    Runs `mts-init -n -c FILE` (the mts-init next to mtsctl, else\n"
	    "    the one on PATH), so FILE is judged by the program that will\n"
	    "    run it: the schema (unknown keys, wrong types, values out of\n"
	    "    range), each agent's executable, user, groups, capabilities,\n"
	    "    dependencies (unknown names, cycles) and seccomp policy\n"
	    "    (unknown syscalls, bad conditions; the policy is compiled).\n"
	    "    The first problem is reported as FILE:LINE: what, with exit\n"
	    "    status 1. A valid file prints \"FILE: ok\" and the agents it\n"
	    "    would start (user and group as written).\n"
	    "    Users and groups are looked up on this machine, so check on\n"
	    "    the node that will run the file.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl config check /etc/mts/mts.conf\n"
	    "    mtsctl -o json config check mts.conf\n" },
	{ "print", cmd_print, "FILE", "print the effective configuration",
	    "DESCRIPTION\n"
	    "    Prints every section of FILE with every key that applies to\n"
	    "    it and its effective value (defaults filled in). The output\n"
	    "    is itself a valid mts.conf. With -o json: one object per\n"
	    "    section, {\"section\": {\"key\": \"value\"}}, values as the\n"
	    "    printed file writes them.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl config print /etc/mts/mts.conf\n"
	    "    mtsctl -o json config print mts.conf\n" },
	{ "reload", cmd_reload, "", "make mts-init reload mts.conf",
	    "DESCRIPTION\n"
	    "    Asks mts-init to read its configuration file again, as\n"
	    "    SIGHUP does. The new file is checked completely first; if\n"
	    "    anything is wrong nothing changes and the problem is printed\n"
	    "    as FILE:LINE: what (exit 1). Otherwise agents whose settings\n"
	    "    changed are restarted, new ones started, removed ones\n"
	    "    stopped, and their names are printed.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl config check /etc/mts/mts.conf && mtsctl config reload\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_config = { "config",
	"check, print and reload mts.conf", cmds };
