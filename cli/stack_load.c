/* stack_load.c: Compose files read for mtsctl's stack commands as `docker stack deploy` reads them — the command line, default file names, .env beside the first file, env_file read with environment winning, warnings printed. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mtsctl.h"
#include "stack_load.h"
#include "xmalloc.h"

#define MAX_FILE_SIZE (4u << 20)

/* Reads a whole file of at most MAX_FILE_SIZE bytes; NULL with errno set
 * (EFBIG when too large). The caller frees it. */
static char *
read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf = NULL;

	if (f == NULL)
		return NULL;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		errno = errno ? errno : EINVAL;
		goto out;
	}
	if (st.st_size > MAX_FILE_SIZE) {
		errno = EFBIG;
		goto out;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	*len = fread(buf, 1, (size_t)st.st_size, f);
	buf[*len] = '\0';
	if (ferror(f)) {
		free(buf);
		buf = NULL;
		errno = EIO;
	}
out:
	fclose(f);
	return buf;
}

static const char *
shell_env(void *arg, const char *name)
{
	return getenv(name);
}

/* The first of Compose's default file names present in the directory. */
static const char *
default_file(void)
{
	static const char *const names[] = { "compose.yaml", "compose.yml",
		"docker-compose.yaml", "docker-compose.yml", NULL };
	struct stat st;
	size_t i;

	for (i = 0; names[i]; i++)
		if (stat(names[i], &st) == 0)
			return names[i];
	return NULL;
}

/* env_file entries come first; the service's own environment wins. */
static int
apply_env_files(struct mts_service *s, const char *dir)
{
	struct mts_kvlist merged = { NULL, 0 };
	char path[PATH_MAX], err[512];
	size_t i, len;
	char *text;

	if (s->env_file.n == 0)
		return 0;
	for (i = 0; i < s->env_file.n; i++) {
		const char *p = s->env_file.v[i];

		if ((size_t)snprintf(path, sizeof(path), "%s%s%s",
		        p[0] == '/' ? "" : dir, p[0] == '/' ? "" : "/",
		        p) >= sizeof(path)) {
			mtsctl_err("service \"%s\": env_file %s: path too long",
			    s->name, p);
			mts_kvlist_clear(&merged);
			return MTSCTL_EFAIL;
		}
		if ((text = read_text(path, &len)) == NULL) {
			mtsctl_err("service \"%s\": env_file %s: %s", s->name,
			    path, strerror(errno));
			mts_kvlist_clear(&merged);
			return MTSCTL_ENOTFOUND;
		}
		if (mts_compose_env_parse(path, text, &merged, err,
		        sizeof(err)) < 0) {
			mtsctl_err("%s", err);
			free(text);
			mts_kvlist_clear(&merged);
			return MTSCTL_EFAIL;
		}
		free(text);
	}
	for (i = 0; i < s->environment.n; i++)
		mts_kvlist_set(&merged, s->environment.v[i].key,
		    s->environment.v[i].value);
	mts_kvlist_clear(&s->environment);
	s->environment = merged;
	return 0;
}

int
mtsctl_stack_args(struct mtsctl *ctx, int argc, char **argv,
    struct stack_args *a)
{
	static const struct option base[] = {
		{ "compose-file", required_argument, NULL, 'c' },
		{ "file", required_argument, NULL, 'c' },
		{ "stack", required_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "detach", no_argument, NULL, 'd' },
		{ "prune", no_argument, NULL, 'p' },
		{ "wait", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct option lo[8];
	size_t i, n = 0;
	char *end;
	int c;

	/* each command takes the options its help names */
	for (i = 0; base[i].name; i++)
		if (strchr(a->opts, base[i].val))
			lo[n++] = base[i];
	lo[n] = base[i];
	a->nfiles = 0;
	while ((c = getopt_long(argc, argv, "c:f:qd", lo, NULL)) != -1) {
		if (c != '?' && c != 'f' && !strchr(a->opts, c))
			return mtsctl_usage(ctx);
		if (c == 'f')
			c = 'c'; /* docker compose's -f, docker stack's -c */
		if (c == 'c' && a->nfiles < MAX_FILES)
			a->files[a->nfiles++] = optarg;
		else if (c == 'c') {
			mtsctl_err("at most %d Compose files", MAX_FILES);
			return MTSCTL_EUSAGE;
		} else if (c == 's')
			a->stack = optarg;
		else if (c == 'q')
			a->quiet = 1;
		else if (c == 'd')
			a->detach = 1;
		else if (c == 'p')
			a->prune = 1;
		else if (c == 'T' &&
		    (a->timeout_s = strtol(optarg, &end, 10)) > 0 &&
		    *end == '\0')
			continue;
		else
			return mtsctl_usage(ctx);
	}
	if (optind != argc)
		return mtsctl_usage(ctx);
	if (a->nfiles == 0 &&
	    (a->files[a->nfiles++] = default_file()) == NULL) {
		mtsctl_err("no Compose file given (-c FILE) and none of "
		           "compose.yaml, compose.yml, docker-compose.yaml, "
		           "docker-compose.yml here");
		return MTSCTL_ENOTFOUND;
	}
	return 0;
}

/* Loads the stack the arguments name; *dir gets the project directory. */
static int
load_files(const struct stack_args *a, struct mts_stack **st, char *dir,
    size_t dirlen)
{
	struct mts_compose_file files[MAX_FILES];
	struct mts_compose_input in = { .files = files,
		.nfiles = a->nfiles,
		.stack = a->stack,
		.getenv = shell_env,
		.dotenv_name = ".env" };
	char path[PATH_MAX], err[1024], *dotenv = NULL, *copy;
	size_t i, len;
	int rc = MTSCTL_EFAIL;

	memset(files, 0, sizeof(files));
	for (i = 0; i < a->nfiles; i++) {
		files[i].name = a->files[i];
		if ((files[i].text = read_text(a->files[i], &files[i].len)) ==
		    NULL) {
			mtsctl_err("%s: %s", a->files[i], strerror(errno));
			rc = errno == ENOENT ? MTSCTL_ENOTFOUND : MTSCTL_EFAIL;
			goto out;
		}
	}
	if (realpath(a->files[0], path) == NULL)
		snprintf(path, sizeof(path), "%s", a->files[0]);
	copy = xstrdup(path);
	snprintf(dir, dirlen, "%s", dirname(copy));
	free(copy);
	copy = xstrdup(dir);
	in.dirname = xstrdup(basename(copy));
	free(copy);
	if ((size_t)snprintf(path, sizeof(path), "%s/.env", dir) < sizeof(path))
		in.dotenv = dotenv = read_text(path, &len);
	if (mts_compose_load(&in, st, err, sizeof(err)) < 0) {
		mtsctl_err("%s", err);
		goto out;
	}
	rc = 0;
out:
	for (i = 0; i < a->nfiles; i++)
		free((char *)files[i].text);
	free(dotenv);
	free((char *)in.dirname);
	return rc;
}

int
mtsctl_stack_load(const struct stack_args *a, struct mts_stack **st)
{
	char dir[PATH_MAX];
	size_t i;
	int rc;

	if ((rc = load_files(a, st, dir, sizeof(dir))) != 0)
		return rc;
	for (i = 0; i < (*st)->nservices && rc == 0; i++)
		rc = apply_env_files(&(*st)->services[i], dir);
	for (i = 0; i < (*st)->warnings.n; i++)
		fprintf(stderr, "mtsctl: warning: %s\n", (*st)->warnings.v[i]);
	if (rc != 0) {
		mts_stack_free(*st);
		*st = NULL;
	}
	return rc;
}
