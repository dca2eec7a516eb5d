/* out.c: mtsctl output — tables with aligned columns or JSON, from the same rows. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			cell[i][j] = cell_text(json_object_get(
			    json_array_get(rows, i), cols[j].field));
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

json_t *
mtsctl_json_bytes(const uint8_t *p, size_t len)
{
	char *s = xmalloc(len * 4 + 1);
	size_t i, n = 0;
	json_t *v;

	for (i = 0; i < len; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
			s[n++] = p[i];
		} else {
			snprintf(s + n, 5, "\\x%02x", p[i]);
			n += 4;
		}
	}
	s[n] = '\0';
	v = json_string(s);
	free(s);
	return v;
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
