/* interp.c: Compose variable interpolation (${VAR}, ${VAR:-d}, ${VAR-d}, ${VAR:?e}, ${VAR?e}, ${VAR:+r}, ${VAR+r}, $VAR, $$) and the .env / env_file line format. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compose.h"
#include "xmalloc.h"

#define MAX_NEST 16

struct interp {
	mts_compose_lookup_fn lookup;
	void *arg;
	char *err;
	size_t errlen;
};

static int
name_start(int c)
{
	return c == '_' || isalpha((unsigned char)c);
}

static int
name_char(int c)
{
	return c == '_' || isalnum((unsigned char)c);
}

static int expand(struct interp *, const char *s, size_t len,
    struct mts_buf *out, int depth);

/* The end of a ${...} body starting at s (just past "${"): the index of its
 * closing brace, nested braces counted; -1 if unterminated. */
static long
braced_end(const char *s, size_t len)
{
	size_t i;
	int nest = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '$' && i + 1 < len && s[i + 1] == '{') {
			nest++;
			i++;
		} else if (s[i] == '}') {
			if (nest-- == 0)
				return (long)i;
		}
	}
	return -1;
}

/* Handles the body of ${...}: NAME, then an optional operator and word. */
static int
braced(struct interp *in, const char *s, size_t len, struct mts_buf *out,
    int depth)
{
	size_t n = 0;
	char name[256], op[3] = "";
	const char *val, *word;
	size_t wlen;
	int set, nonempty;

	while (n < len && name_char(s[n]))
		n++;
	if (n == 0 || !name_start(s[0]) || n >= sizeof(name)) {
		snprintf(in->err, in->errlen,
		    "invalid interpolation "
		    "\"${%.*s}\": a variable name is letters, digits and _, "
		    "not starting with a digit",
		    (int)(len > 60 ? 60 : len), s);
		return -1;
	}
	memcpy(name, s, n);
	name[n] = '\0';
	if (n < len) {
		size_t k = (s[n] == ':') ? 2 : 1;

		if (n + k > len || strchr("-?+", s[n + k - 1]) == NULL) {
			snprintf(in->err, in->errlen,
			    "invalid interpolation "
			    "\"${%.*s}\": after the name comes }, :-, -, :?, "
			    "?, :+ or +",
			    (int)(len > 60 ? 60 : len), s);
			return -1;
		}
		memcpy(op, s + n, k);
		op[k] = '\0';
		n += k;
	}
	word = s + n;
	wlen = len - n;
	val = in->lookup(in->arg, name);
	set = val != NULL;
	nonempty = set && *val != '\0';
	if (op[0] == '\0') {
		if (val)
			mts_buf_put(out, val, strlen(val));
		return 0;
	}
	if (strchr(op, '-')) {
		if (op[0] == ':' ? nonempty : set)
			mts_buf_put(out, val, strlen(val));
		else
			return expand(in, word, wlen, out, depth + 1);
		return 0;
	}
	if (strchr(op, '+')) {
		if (op[0] == ':' ? nonempty : set)
			return expand(in, word, wlen, out, depth + 1);
		return 0;
	}
	/* ? and :? */
	if (op[0] == ':' ? nonempty : set) {
		mts_buf_put(out, val, strlen(val));
		return 0;
	}
	{
		struct mts_buf msg;

		mts_buf_init(&msg);
		if (expand(in, word, wlen, &msg, depth + 1) == 0) {
			snprintf(in->err, in->errlen,
			    "required variable %s "
			    "is %s: %.*s",
			    name, set ? "empty" : "missing", (int)msg.len,
			    msg.len ? (char *)msg.data : "(no message)");
		}
		mts_buf_free(&msg);
	}
	return -1;
}

static int
expand(struct interp *in, const char *s, size_t len, struct mts_buf *out,
    int depth)
{
	size_t i = 0, n;
	long end;

	if (depth > MAX_NEST) {
		snprintf(in->err, in->errlen,
		    "interpolation nested more than "
		    "%d deep",
		    MAX_NEST);
		return -1;
	}
	while (i < len) {
		if (s[i] != '$') {
			mts_buf_put(out, s + i, 1);
			i++;
			continue;
		}
		if (i + 1 < len && s[i + 1] == '$') {
			mts_buf_put(out, "$", 1);
			i += 2;
		} else if (i + 1 < len && s[i + 1] == '{') {
			if ((end = braced_end(s + i + 2, len - i - 2)) < 0) {
				snprintf(in->err, in->errlen,
				    "invalid "
				    "interpolation: \"${\" without its \"}\"");
				return -1;
			}
			if (braced(in, s + i + 2, (size_t)end, out, depth) < 0)
				return -1;
			i += 2 + (size_t)end + 1;
		} else if (i + 1 < len && name_start(s[i + 1])) {
			char name[256];
			const char *val;

			for (n = i + 1; n < len && name_char(s[n]); n++)
				;
			if (n - i - 1 >= sizeof(name)) {
				snprintf(in->err, in->errlen,
				    "variable name "
				    "too long");
				return -1;
			}
			memcpy(name, s + i + 1, n - i - 1);
			name[n - i - 1] = '\0';
			if ((val = in->lookup(in->arg, name)) != NULL)
				mts_buf_put(out, val, strlen(val));
			i = n;
		} else {
			snprintf(in->err, in->errlen,
			    "invalid interpolation: "
			    "a lone \"$\" (write $$ for a literal dollar)");
			return -1;
		}
	}
	return 0;
}

int
mts_compose_interpolate(const char *s, size_t len, mts_compose_lookup_fn lookup,
    void *arg, char **out, size_t *outlen, char *err, size_t errlen)
{
	struct interp in = { lookup, arg, err, errlen };
	struct mts_buf b;

	mts_buf_init(&b);
	if (memchr(s, '$', len) == NULL) {
		*out = xmalloc(len + 1);
		memcpy(*out, s, len);
		(*out)[len] = '\0';
		*outlen = len;
		return 0;
	}
	if (expand(&in, s, len, &b, 0) < 0) {
		mts_buf_free(&b);
		return -1;
	}
	*outlen = b.len;
	mts_buf_put(&b, "", 1);
	*out = (char *)b.data; /* the buffer's storage becomes the string */
	return 0;
}

/* --- the .env line format ------------------------------------------------------ */

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Unquotes v in place: 'single' is literal, "double" knows \n \t \\ \" ;
 * an unquoted value ends at " #". */
static int
unquote(char *v, char *err, size_t errlen)
{
	char q = v[0], *r, *w;

	if (q != '"' && q != '\'') {
		char *c = strstr(v, " #");

		if (c)
			*c = '\0';
		trim(v);
		return 0;
	}
	for (r = v + 1, w = v; *r && *r != q; r++) {
		if (q == '"' && *r == '\\' && r[1]) {
			r++;
			*w++ = *r == 'n' ? '\n'
			    : *r == 't'  ? '\t'
			    : *r == 'r'  ? '\r'
			                 : *r;
		} else
			*w++ = *r;
	}
	if (*r != q) {
		snprintf(err, errlen, "unterminated %c quote", q);
		return -1;
	}
	*w = '\0';
	return 0;
}

int
mts_compose_env_parse(const char *file, const char *text,
    struct mts_kvlist *out, char *err, size_t errlen)
{
	char *copy = xstrdup(text), *line, *next, *eq, *key;
	int lineno = 0, rc = -1;
	char why[200];

	for (line = copy; line != NULL; line = next) {
		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		line = trim(line);
		if (*line == '\0' || *line == '#')
			continue;
		if (strncmp(line, "export ", 7) == 0)
			line = trim(line + 7);
		eq = strchr(line, '=');
		if (eq)
			*eq = '\0';
		key = trim(line);
		if (*key == '\0' || !name_start(key[0]) ||
		    strspn(key,
		        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
		        strlen(key)) {
			snprintf(err, errlen,
			    "%s:%d: \"%s\" is not a variable "
			    "name",
			    file, lineno, key);
			goto out;
		}
		if (eq == NULL) {
			mts_kvlist_set(out, key, NULL);
			continue;
		}
		eq = trim(eq + 1);
		if (unquote(eq, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s:%d: %s", file, lineno, why);
			goto out;
		}
		mts_kvlist_set(out, key, eq);
	}
	rc = 0;
out:
	free(copy);
	return rc;
}
