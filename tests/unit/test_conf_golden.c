/* test_conf_golden.c: mts.conf golden cases — each tests/data/conf/NAME.conf parsed against the real schema gives NAME.out (its sections as -n prints them, or the error), and every printed configuration parses again to the same text. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg.h"
#include "xmalloc.h"

#define DIR_ TOP "/tests/data/conf"

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (f == NULL)
		return NULL;
	do {
		cap = cap ? cap * 2 : 4096;
		buf = xreallocarray(buf, cap + 1, 1);
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (n == cap);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static char *
printed(const struct mts_cfg *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	mts_cfg_print(cfg, f);
	fclose(f);
	return text;
}

/* The sections of the printed configuration that the input file names. */
static char *
named_sections(const struct mts_cfg *cfg)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	for (i = 0; i < cfg->nsections; i++)
		mts_cfg_print_section(cfg, cfg->sections[i], f);
	fclose(f);
	return text;
}

/* What NAME.conf gives: its sections, or "error: MESSAGE". */
static char *
outcome(const char *name, const char *text)
{
	struct mts_cfg *cfg, *again;
	char err[1024], *out, *p1, *p2;

	if (mts_cfg_parse(text, name, mts_conf_schema(), &cfg, err,
	        sizeof(err)) < 0)
		return xasprintf("error: %s\n", err);
	out = named_sections(cfg);
	p1 = printed(cfg);
	if (mts_cfg_parse(p1, "printed", mts_conf_schema(), &again, err,
	        sizeof(err)) < 0)
		fail_msg("%s: the printed configuration does not parse: %s",
		    name, err);
	p2 = printed(again);
	if (strcmp(p1, p2) != 0)
		fail_msg("%s: printing the printed configuration differs",
		    name);
	free(p1);
	free(p2);
	mts_cfg_free(again);
	mts_cfg_free(cfg);
	return out;
}

static int
is_case(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

static void
test_golden(void **state)
{
	struct dirent **ents;
	int n, i, ncases = 0, failed = 0;
	int update = getenv("MTS_GOLDEN_UPDATE") != NULL;

	n = scandir(DIR_, &ents, is_case, alphasort);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		char *conf = xasprintf("%s/%s", DIR_, ents[i]->d_name);
		char *outp = xasprintf("%.*s.out", (int)strlen(conf) - 5, conf);
		char *text = slurp(conf), *want = slurp(outp), *got;
		FILE *f;

		assert_non_null(text);
		got = outcome(ents[i]->d_name, text);
		if (update && (f = fopen(outp, "w")) != NULL) {
			fputs(got, f);
			fclose(f);
		} else if (want == NULL || strcmp(got, want) != 0) {
			print_message("--- %s: expected\n%s--- got\n%s",
			    ents[i]->d_name, want ? want : "(no .out file)\n",
			    got);
			failed++;
		}
		ncases++;
		free(conf);
		free(outp);
		free(text);
		free(want);
		free(got);
		free(ents[i]);
	}
	free(ents);
	print_message("%d golden cases, %d differ\n", ncases, failed);
	assert_int_equal(failed, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
