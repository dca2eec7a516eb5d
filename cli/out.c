/* out.c: mtsctl output — tables with aligned columns or JSON, from the same rows. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "mtsctl.h"
#include "xmalloc.h"

void
mtsctl_err(const char *fmt, ...)
{
	va_list ap;

	fputs("mtsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A cell's text (caller frees). */
static char *
cell_text(json_t *v)
{
	if (v == NULL || json_is_null(v))
		return xstrdup("-");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_boolean(v))
		return xstrdup(json_is_true(v) ? "yes" : "no");
	if (json_is_array(v)) {
		size_t i, n = json_array_size(v);
		char *s = xstrdup(""), *t;

		for (i = 0; i < n; i++) {
			char *e = cell_text(json_array_get(v, i));

			t = xasprintf("%s%s%s", s, i ? "," : "", e);
			free(e);
			free(s);
			s = t;
		}
		if (n == 0) {
			free(s);
			s = xstrdup("-");
		}
		return s;
	}
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void
print_json(json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY);
	fputc('\n', stdout);
}

void
mtsctl_print_rows(const struct mtsctl *ctx, json_t *rows,
    const struct mtsctl_col *cols)
{
	size_t ncol, nrow, i, j, *w;
	char ***cell;

	if (ctx->fmt == MTSCTL_FMT_JSON) {
		print_json(rows);
		json_decref(rows);
		return;
	}
	for (ncol = 0; cols[ncol].field != NULL; ncol++)
		;
	nrow = json_array_size(rows);
	w = xcalloc(ncol, sizeof(*w));
	cell = xcalloc(nrow, sizeof(*cell));
	for (j = 0; j < ncol; j++)
		w[j] = strlen(cols[j].header);
	for (i = 0; i < nrow; i++) {
		cell[i] = xcalloc(ncol, sizeof(char *));
		for (j = 0; j < ncol; j++) {
			cell[i][j] =
			    cell_text(json_object_get(json_array_get(rows, i),
			        cols[j].field));
			if (strlen(cell[i][j]) > w[j])
				w[j] = strlen(cell[i][j]);
		}
	}
	for (j = 0; j < ncol; j++)
		printf("%-*s%s", j + 1 < ncol ? (int)w[j] : 0, cols[j].header,
		    j + 1 < ncol ? "  " : "\n");
	for (i = 0; i < nrow; i++) {
		for (j = 0; j < ncol; j++) {
			printf("%-*s%s", j + 1 < ncol ? (int)w[j] : 0,
			    cell[i][j], j + 1 < ncol ? "  " : "\n");
			free(cell[i][j]);
		}
		free(cell[i]);
	}
	free(cell);
	free(w);
	json_decref(rows);
}

void
mtsctl_print_obj(const struct mtsctl *ctx, json_t *obj,
    const struct mtsctl_col *cols)
{
	size_t j, w = 0;

	if (ctx->fmt == MTSCTL_FMT_JSON) {
		print_json(obj);
		json_decref(obj);
		return;
	}
	for (j = 0; cols[j].field != NULL; j++)
		if (strlen(cols[j].header) > w)
			w = strlen(cols[j].header);
	for (j = 0; cols[j].field != NULL; j++) {
		char *t = cell_text(json_object_get(obj, cols[j].field));

		printf("%-*s  %s\n", (int)w + 1, cols[j].header, t);
		free(t);
	}
	json_decref(obj);
}

/* The length of the valid UTF-8 sequence at p (RFC 3629: no overlongs,
 * surrogates or code points above U+10FFFF), 0 if there is none. */
static size_t
utf8_seq(const uint8_t *p, size_t len)
{
	uint8_t lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (len < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

int
mtsctl_utf8_valid(const uint8_t *p, size_t len)
{
	size_t i, n;

	for (i = 0; i < len; i += n)
		if ((n = utf8_seq(p + i, len - i)) == 0)
			return 0;
	return 1;
}

json_t *
mtsctl_json_bytes(const uint8_t *p, size_t len)
{
	char *s = xmalloc(len * 4 + 1);
	size_t i = 0, n = 0, k;
	json_t *v;

	while (i < len) {
		k = utf8_seq(p + i, len - i);
		/* printable ASCII, and UTF-8 beyond the C1 controls, as is */
		if ((k == 1 && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') ||
		    (k > 1 && !(p[i] == 0xc2 && p[i + 1] < 0xa0))) {
			memcpy(s + n, p + i, k);
			n += k;
			i += k;
		} else {
			snprintf(s + n, 5, "\\x%02x", p[i++]);
			n += 4;
		}
	}
	s[n] = '\0';
	v = json_string(s);
	free(s);
	return v;
}

void
mtsctl_json_set_bytes(const struct mtsctl *ctx, json_t *obj, const char *field,
    const uint8_t *p, size_t len)
{
	char *b64, *name;
	size_t blen;

	if (ctx->fmt != MTSCTL_FMT_JSON) {
		json_object_set_new(obj, field, mtsctl_json_bytes(p, len));
		return;
	}
	if (mtsctl_utf8_valid(p, len)) {
		json_object_set_new(obj, field,
		    json_stringn((const char *)p, len));
		return;
	}
	blen = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);
	b64 = xmalloc(blen);
	sodium_bin2base64(b64, blen, p, len, sodium_base64_VARIANT_ORIGINAL);
	name = xasprintf("%s_base64", field);
	json_object_set_new(obj, name, json_string(b64));
	free(name);
	free(b64);
}

json_t *
mtsctl_json_hex(const uint8_t *p, size_t len)
{
	char *s = xmalloc(len * 2 + 1);
	size_t i;
	json_t *v;

	for (i = 0; i < len; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	s[2 * len] = '\0';
	v = json_string(s);
	free(s);
	return v;
}

void
mtsctl_fmt_duration(char *out, size_t outlen, uint64_t ms)
{
	uint64_t s = ms / 1000;

	if (ms < 1000)
		snprintf(out, outlen, "%llums", (unsigned long long)ms);
	else if (s < 60)
		snprintf(out, outlen, "%llu.%llus", (unsigned long long)s,
		    (unsigned long long)(ms % 1000) / 100);
	else if (s < 3600)
		snprintf(out, outlen, "%llum%llus", (unsigned long long)s / 60,
		    (unsigned long long)s % 60);
	else if (s < 86400)
		snprintf(out, outlen, "%lluh%llum",
		    (unsigned long long)s / 3600,
		    (unsigned long long)(s % 3600) / 60);
	else
		snprintf(out, outlen, "%llud%lluh",
		    (unsigned long long)s / 86400,
		    (unsigned long long)(s % 86400) / 3600);
}
