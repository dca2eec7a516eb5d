/* cfg.c: INI parsing with line numbers (libinih over a line reader), schema checks, getters, printer. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>

#include "cfg.h"
#include "fsutil.h"
#include "mtserr.h"
#include "xmalloc.h"

#define CFG_MAX_FILE (1 << 20)

struct cfg_parse {
	struct mts_cfg *cfg;
	const char *text; /* reader position */
	int line;         /* line the reader returned last */
	char *err;
	size_t errlen;
	int failed;
	const char *own; /* mts_cfg_load_agent: the agent's section */
};

int
mts_parse_int(const char *s, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (end == s || *end != '\0')
		return -MTS_ERR_INVAL;
	if (errno == ERANGE)
		return -MTS_ERR_TOOBIG;
	if (errno != 0)
		return -MTS_ERR_INVAL;
	*v = x;
	return 0;
}

int
mts_parse_uint(const char *s, int64_t *v)
{
	unsigned long long x;
	const char *p;
	char *end;

	for (p = s; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p))
			return -MTS_ERR_INVAL;
	if (p == s)
		return -MTS_ERR_INVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno == ERANGE || x > (unsigned long long)INT64_MAX)
		return -MTS_ERR_TOOBIG;
	if (errno != 0 || *end != '\0')
		return -MTS_ERR_INVAL;
	*v = (int64_t)x;
	return 0;
}

int
mts_parse_bool(const char *s, int *v)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*v = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*v = 0;
			return 0;
		}
	}
	return -MTS_ERR_INVAL;
}

/* A number followed by a unit from the table; the unit may be omitted only
 * when the table's first unit is "" (plain number). */
struct unit {
	const char *name;
	int64_t mult;
};

static int
parse_with_units(const char *s, const struct unit *u, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (end == s || x < 0 || (errno != 0 && errno != ERANGE))
		return -MTS_ERR_INVAL;
	for (; u->name != NULL; u++) {
		if (strcasecmp(end, u->name) == 0) {
			if (errno == ERANGE || x > INT64_MAX / u->mult)
				return -MTS_ERR_TOOBIG;
			*v = x * u->mult;
			return 0;
		}
	}
	return -MTS_ERR_INVAL;
}

int
mts_parse_duration(const char *s, int64_t *ms)
{
	static const struct unit units[] = { { "ms", 1 }, { "s", 1000 },
		{ "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
		{ NULL, 0 } };

	return parse_with_units(s, units, ms);
}

int
mts_parse_size(const char *s, int64_t *bytes)
{
	static const struct unit units[] = { { "", 1 }, { "k", 1 << 10 },
		{ "m", 1 << 20 }, { "g", 1 << 30 }, { "kib", 1 << 10 },
		{ "mib", 1 << 20 }, { "gib", 1 << 30 }, { NULL, 0 } };

	return parse_with_units(s, units, bytes);
}

static int
schema_is_plain(const struct mts_cfg_schema *schema, const char *section)
{
	const struct mts_cfg_schema *s;

	for (s = schema; s->key != NULL; s++)
		if (s->type == MTS_CFG_PLAIN &&
		    strcmp(s->section, section) == 0)
			return 1;
	return 0;
}

static const struct mts_cfg_schema *
schema_find(const struct mts_cfg_schema *schema, const char *section,
    const char *key)
{
	const struct mts_cfg_schema *s, *wild = NULL;

	for (s = schema; s->key != NULL; s++) {
		if (s->type == MTS_CFG_PLAIN || strcmp(s->key, key) != 0)
			continue;
		if (strcmp(s->section, section) == 0)
			return s;
		if (strcmp(s->section, "*") == 0)
			wild = s;
	}
	if (wild != NULL && schema_is_plain(schema, section))
		return NULL;
	return wild;
}

/* Whether some schema entry names this section exactly. */
static int
schema_has_section(const struct mts_cfg_schema *schema, const char *section)
{
	const struct mts_cfg_schema *s;

	for (s = schema; s->key != NULL; s++)
		if (strcmp(s->section, section) == 0)
			return 1;
	return 0;
}

static int
check_type(enum mts_cfg_type t, const char *v)
{
	int64_t i;
	int b;

	switch (t) {
	case MTS_CFG_INT:
		return mts_parse_int(v, &i);
	case MTS_CFG_UINT:
		return mts_parse_uint(v, &i);
	case MTS_CFG_BOOL:
		return mts_parse_bool(v, &b);
	case MTS_CFG_DURATION:
		return mts_parse_duration(v, &i);
	case MTS_CFG_SIZE:
		return mts_parse_size(v, &i);
	case MTS_CFG_STR:
	case MTS_CFG_LIST:
		return 0;
	case MTS_CFG_PLAIN:
		break;
	}
	return -MTS_ERR_INVAL;
}

static const char *const type_names[] = {
	[MTS_CFG_STR] = "a string",
	[MTS_CFG_INT] = "an integer",
	[MTS_CFG_UINT] = "a non-negative integer",
	[MTS_CFG_BOOL] = "yes or no",
	[MTS_CFG_DURATION] = "a duration (e.g. 500ms, 2s, 7d)",
	[MTS_CFG_SIZE] = "a size (e.g. 4096, 64K, 4M)",
	[MTS_CFG_LIST] = "a list",
	[MTS_CFG_PLAIN] = "nothing",
};

/* What "out of range" means for each numeric type. */
static const char *const range_names[] = {
	[MTS_CFG_INT] = "-9223372036854775808 to 9223372036854775807",
	[MTS_CFG_UINT] = "0 to 9223372036854775807",
	[MTS_CFG_DURATION] = "at most 9223372036854775807ms",
	[MTS_CFG_SIZE] = "at most 9223372036854775807 bytes",
};

static void
add_section(struct mts_cfg *cfg, const char *section)
{
	size_t i;

	for (i = 0; i < cfg->nsections; i++)
		if (strcmp(cfg->sections[i], section) == 0)
			return;
	cfg->sections =
	    xreallocarray(cfg->sections, cfg->nsections + 1, sizeof(char *));
	cfg->sections[cfg->nsections++] = xstrdup(section);
}

static int
cfg_handler(void *user, const char *section, const char *key, const char *value)
{
	struct cfg_parse *p = user;
	struct mts_cfg *cfg = p->cfg;
	const struct mts_cfg_schema *s;
	struct mts_cfg_entry *e;
	size_t i;
	int rc;

	if (p->failed)
		return 0;
	if (p->own != NULL && *section != '\0' &&
	    strcmp(section, p->own) != 0 &&
	    !schema_has_section(cfg->schema, section))
		return 1;  /* another agent's section: init judges it */
	if (key == NULL) { /* INI_CALL_HANDLER_ON_NEW_SECTION builds only */
		add_section(cfg, section);
		return 1;
	}
	if (*section == '\0') {
		snprintf(p->err, p->errlen, "%s:%d: key '%s' outside a section",
		    cfg->file, p->line, key);
		goto fail;
	}
	add_section(cfg, section);
	s = schema_find(cfg->schema, section, key);
	if (s == NULL) {
		snprintf(p->err, p->errlen,
		    "%s:%d: unknown key '%s' in section [%s]", cfg->file,
		    p->line, key, section);
		goto fail;
	}
	if ((rc = check_type(s->type, value)) == -MTS_ERR_TOOBIG) {
		snprintf(p->err, p->errlen,
		    "%s:%d: [%s] %s = '%s': value out of range (%s)", cfg->file,
		    p->line, section, key, value, range_names[s->type]);
		goto fail;
	} else if (rc < 0) {
		snprintf(p->err, p->errlen,
		    "%s:%d: [%s] %s = '%s': expected %s", cfg->file, p->line,
		    section, key, value, type_names[s->type]);
		goto fail;
	}
	for (i = 0; i < cfg->n; i++) {
		e = &cfg->e[i];
		if (strcmp(e->section, section) == 0 &&
		    strcmp(e->key, key) == 0) {
			snprintf(p->err, p->errlen,
			    "%s:%d: [%s] %s set twice (first on line %d)",
			    cfg->file, p->line, section, key, e->line);
			goto fail;
		}
	}
	cfg->e = xreallocarray(cfg->e, cfg->n + 1, sizeof(*cfg->e));
	e = &cfg->e[cfg->n++];
	e->section = xstrdup(section);
	e->key = xstrdup(key);
	e->value = xstrdup(value);
	e->line = p->line;
	return 1;
fail:
	p->failed = 1;
	return 0;
}

/* libinih line reader: hands out one line at a time and counts them, which
 * is how errors get line numbers without a special libinih build. */
static char *
cfg_reader(char *str, int num, void *stream)
{
	struct cfg_parse *p = stream;
	const char *nl;
	size_t n;

	if (*p->text == '\0' || num < 2)
		return NULL;
	nl = strchr(p->text, '\n');
	n = nl ? (size_t)(nl - p->text) + 1 : strlen(p->text);
	if (n > (size_t)num - 1)
		n = num - 1;
	memcpy(str, p->text, n);
	str[n] = '\0';
	p->text += n;
	if (n > 0 && str[n - 1] == '\n')
		p->line++;
	else if (*p->text == '\0')
		p->line++;
	return str;
}

/* Sections that no schema entry knows and that carry no key are errors too
 * (a typo in a section name would otherwise pass silently). */
static int
check_sections(struct cfg_parse *p, const char *text)
{
	const char *s = text;
	int line = 1;

	for (; *s; line++) {
		const char *nl = strchr(s, '\n'),
		           *end = nl ? nl : s + strlen(s);
		const char *q = s;

		while (q < end && isspace((unsigned char)*q))
			q++;
		if (q < end && *q == '[') {
			const char *close = memchr(q, ']', end - q);

			if (close == NULL) {
				snprintf(p->err, p->errlen,
				    "%s:%d: section header without ']'",
				    p->cfg->file, line);
				return -MTS_ERR_INVAL;
			}
		}
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	return 0;
}

static int
cfg_parse(const char *text, const char *file,
    const struct mts_cfg_schema *schema, const char *own, struct mts_cfg **out,
    char *err, size_t errlen)
{
	struct cfg_parse p;
	struct mts_cfg *cfg;
	int r;

	cfg = xcalloc(1, sizeof(*cfg));
	cfg->file = xstrdup(file ? file : "<config>");
	cfg->schema = schema;
	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	p.text = text;
	p.err = err;
	p.errlen = errlen;
	p.own = own;
	if (errlen)
		err[0] = '\0';
	if (check_sections(&p, text) < 0)
		goto fail;
	r = ini_parse_stream(cfg_reader, &p, cfg_handler, &p);
	if (p.failed)
		goto fail;
	if (r != 0) {
		snprintf(err, errlen, "%s:%d: syntax error", cfg->file,
		    r > 0 ? r : p.line);
		goto fail;
	}
	*out = cfg;
	return 0;
fail:
	mts_cfg_free(cfg);
	return -MTS_ERR_INVAL;
}

int
mts_cfg_parse(const char *text, const char *file,
    const struct mts_cfg_schema *schema, struct mts_cfg **out, char *err,
    size_t errlen)
{
	return cfg_parse(text, file, schema, NULL, out, err, errlen);
}

static int
cfg_load(const char *path, const struct mts_cfg_schema *schema, const char *own,
    struct mts_cfg **out, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	ssize_t r;
	int fd, rc = -MTS_ERR_IO;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -MTS_ERR_IO;
	}
	text = xmalloc(CFG_MAX_FILE + 1);
	while ((r = read(fd, text + len, CFG_MAX_FILE + 1 - len)) > 0) {
		len += r;
		if (len > CFG_MAX_FILE) {
			snprintf(err, errlen, "%s: larger than %d bytes", path,
			    CFG_MAX_FILE);
			rc = -MTS_ERR_TOOBIG;
			goto out;
		}
	}
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	text[len] = '\0';
	if (memchr(text, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: contains a NUL byte", path);
		rc = -MTS_ERR_INVAL;
		goto out;
	}
	rc = cfg_parse(text, path, schema, own, out, err, errlen);
out:
	free(text);
	close(fd);
	return rc;
}

int
mts_cfg_load(const char *path, const struct mts_cfg_schema *schema,
    struct mts_cfg **out, char *err, size_t errlen)
{
	return cfg_load(path, schema, NULL, out, err, errlen);
}

int
mts_cfg_load_agent(const char *path, const struct mts_cfg_schema *schema,
    const char *own, struct mts_cfg **out, char *err, size_t errlen)
{
	return cfg_load(path, schema, own, out, err, errlen);
}

void
mts_cfg_free(struct mts_cfg *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg->n; i++) {
		free(cfg->e[i].section);
		free(cfg->e[i].key);
		free(cfg->e[i].value);
	}
	for (i = 0; i < cfg->nsections; i++)
		free(cfg->sections[i]);
	free(cfg->sections);
	free(cfg->e);
	free(cfg->file);
	free(cfg);
}

int
mts_cfg_has_section(const struct mts_cfg *cfg, const char *section)
{
	size_t i;

	for (i = 0; i < cfg->nsections; i++)
		if (strcmp(cfg->sections[i], section) == 0)
			return 1;
	return 0;
}

static const struct mts_cfg_entry *
cfg_find(const struct mts_cfg *cfg, const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < cfg->n; i++)
		if (strcmp(cfg->e[i].section, section) == 0 &&
		    strcmp(cfg->e[i].key, key) == 0)
			return &cfg->e[i];
	return NULL;
}

const char *
mts_cfg_str(const struct mts_cfg *cfg, const char *section, const char *key)
{
	const struct mts_cfg_entry *e = cfg_find(cfg, section, key);
	const struct mts_cfg_schema *s;

	if (e != NULL)
		return e->value;
	s = schema_find(cfg->schema, section, key);
	return s ? s->def : NULL;
}

int
mts_cfg_line(const struct mts_cfg *cfg, const char *section, const char *key)
{
	const struct mts_cfg_entry *e = cfg_find(cfg, section, key);

	return e ? e->line : 0;
}

/* Typed getters: the parse already checked the type, so failures here mean
 * a key missing from the schema, which is a programming error. */
static const char *
typed(const struct mts_cfg *cfg, const char *section, const char *key)
{
	const char *v = mts_cfg_str(cfg, section, key);

	if (v == NULL)
		return "0";
	return v;
}

int64_t
mts_cfg_int(const struct mts_cfg *cfg, const char *section, const char *key)
{
	const struct mts_cfg_schema *s = schema_find(cfg->schema, section, key);
	const char *v = typed(cfg, section, key);
	int64_t x = 0;

	if (s == NULL)
		return 0;
	switch (s->type) {
	case MTS_CFG_DURATION:
		(void)mts_parse_duration(v, &x);
		break;
	case MTS_CFG_SIZE:
		(void)mts_parse_size(v, &x);
		break;
	default:
		(void)mts_parse_int(v, &x);
		break;
	}
	return x;
}

int
mts_cfg_bool(const struct mts_cfg *cfg, const char *section, const char *key)
{
	int b = 0;

	(void)mts_parse_bool(typed(cfg, section, key), &b);
	return b;
}

char **
mts_cfg_list(const struct mts_cfg *cfg, const char *section, const char *key)
{
	const char *v = mts_cfg_str(cfg, section, key);
	char **list = xcalloc(1, sizeof(char *)), *copy, *tok, *save;
	size_t n = 0;

	if (v == NULL)
		return list;
	copy = xstrdup(v);
	for (tok = strtok_r(copy, ", \t", &save); tok != NULL;
	     tok = strtok_r(NULL, ", \t", &save)) {
		list = xreallocarray(list, n + 2, sizeof(char *));
		list[n++] = xstrdup(tok);
		list[n] = NULL;
	}
	free(copy);
	return list;
}

void
mts_cfg_list_free(char **list)
{
	mts_strv_free(list);
}

void
mts_cfg_print_section(const struct mts_cfg *cfg, const char *section, FILE *out)
{
	const struct mts_cfg_schema *s;

	fprintf(out, "[%s]\n", section);
	for (s = cfg->schema; s->key != NULL; s++) {
		const char *v;

		/* A key is printed where it applies: its own section, or any
		 * section a "*" entry reaches (unless overridden there). */
		if (s->type == MTS_CFG_PLAIN ||
		    schema_find(cfg->schema, section, s->key) != s)
			continue;
		v = mts_cfg_str(cfg, section, s->key);
		if (v != NULL)
			fprintf(out, "%s = %s\n", s->key, v);
	}
	fputc('\n', out);
}

void
mts_cfg_print(const struct mts_cfg *cfg, FILE *out)
{
	const struct mts_cfg_schema *s, *t;
	size_t i;

	/* Schema sections first, in schema order, then the others seen. */
	for (s = cfg->schema; s->key != NULL; s++) {
		if (strcmp(s->section, "*") == 0)
			continue;
		for (t = cfg->schema; t != s; t++)
			if (strcmp(t->section, s->section) == 0)
				break;
		if (t == s)
			mts_cfg_print_section(cfg, s->section, out);
	}
	for (i = 0; i < cfg->nsections; i++)
		if (!schema_has_section(cfg->schema, cfg->sections[i]))
			mts_cfg_print_section(cfg, cfg->sections[i], out);
}
