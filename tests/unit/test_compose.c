/* test_compose.c: the Compose loader — interpolation, units and word splitting as tables; golden stacks in tests/data/compose (input files side by side with the printed stack, its warnings or its error), and print → load → print round trips. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compose/compose.h"
#include "xmalloc.h"

#define DATA TOP "/tests/data/compose"

static const char *
vars(void *arg, const char *name)
{
	static const struct {
		const char *k, *v;
	} env[] = {
		{ "TAG", "1.25" },
		{ "EMPTY", "" },
		{ "PORT", "8080" },
		{ "NAME", "web" },
	};
	size_t i;

	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		if (strcmp(env[i].k, name) == 0)
			return env[i].v;
	return NULL;
}

static void
test_interpolate(void **state)
{
	static const struct {
		const char *in, *out; /* out NULL: an error containing err */
		const char *err;
	} cases[] = {
		{ "nginx:${TAG}", "nginx:1.25", NULL },
		{ "$TAG-$NAME", "1.25-web", NULL },
		{ "${MISSING}", "", NULL },
		{ "${MISSING:-def}", "def", NULL },
		{ "${EMPTY:-def}", "def", NULL },
		{ "${EMPTY-def}", "", NULL },
		{ "${MISSING-def}", "def", NULL },
		{ "${TAG:-def}", "1.25", NULL },
		{ "${TAG:+alt}", "alt", NULL },
		{ "${EMPTY:+alt}", "", NULL },
		{ "${EMPTY+alt}", "alt", NULL },
		{ "${MISSING+alt}", "", NULL },
		{ "${MISSING:-${PORT}}", "8080", NULL },
		{ "${MISSING:-a${NAME}b}", "awebb", NULL },
		{ "$$TAG", "$TAG", NULL },
		{ "cost: $$5", "cost: $5", NULL },
		{ "${TAG:?need a tag}", "1.25", NULL },
		{ "${EMPTY?set but empty is fine}", "", NULL },
		{ "${MISSING:?need MISSING}", NULL,
		    "required variable MISSING "
		    "is missing: need MISSING" },
		{ "${EMPTY:?not empty}", NULL,
		    "required variable EMPTY is "
		    "empty: not empty" },
		{ "${MISSING?x}", NULL,
		    "required variable MISSING is missing" },
		{ "${TAG", NULL, "without its" },
		{ "${1X}", NULL, "invalid interpolation" },
		{ "${TAG!x}", NULL, "after the name" },
		{ "$", NULL, "lone" },
		{ "a $ b", NULL, "lone" },
	};
	size_t i, len;
	char *out, err[256];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc =
		    mts_compose_interpolate(cases[i].in, strlen(cases[i].in),
		        vars, NULL, &out, &len, err, sizeof(err));

		if (cases[i].out) {
			if (rc != 0)
				fail_msg("%s: %s", cases[i].in, err);
			if (strcmp(out, cases[i].out) != 0)
				fail_msg("%s: got \"%s\", want \"%s\"",
				    cases[i].in, out, cases[i].out);
			free(out);
		} else {
			if (rc == 0)
				fail_msg("%s: no error (got \"%s\")",
				    cases[i].in, out);
			if (strstr(err, cases[i].err) == NULL)
				fail_msg("%s: error \"%s\" lacks \"%s\"",
				    cases[i].in, err, cases[i].err);
		}
	}
}

static void
test_units(void **state)
{
	static const struct {
		const char *s;
		int64_t ms;
	} d[] = {
		{ "10s", 10000 },
		{ "1m30s", 90000 },
		{ "250ms", 250 },
		{ "2h", 7200000 },
		{ "1.5s", 1500 },
		{ "30", 30000 },
		{ "0s", 0 },
		{ "1h2m3s4ms", 3723004 },
	};
	static const char *const bad_d[] = { "", "s", "10x", "-1s", "1 s",
		"abc" };
	static const struct {
		const char *s;
		uint64_t b;
	} b[] = {
		{ "512m", 512ull << 20 },
		{ "1g", 1ull << 30 },
		{ "100kb", 102400 },
		{ "1024", 1024 },
		{ "1.5G", 3ull << 29 },
		{ "10b", 10 },
	};
	static const char *const bad_b[] = { "", "m", "10q", "-5m", "1mbx" };
	uint32_t millis;
	uint64_t bytes;
	int64_t ms;
	size_t i;

	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		assert_int_equal(mts_compose_duration(d[i].s, &ms), 0);
		assert_int_equal(ms, d[i].ms);
	}
	for (i = 0; i < sizeof(bad_d) / sizeof(bad_d[0]); i++)
		if (mts_compose_duration(bad_d[i], &ms) == 0)
			fail_msg("duration \"%s\" accepted", bad_d[i]);
	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		assert_int_equal(mts_compose_bytes(b[i].s, &bytes), 0);
		assert_int_equal(bytes, b[i].b);
	}
	for (i = 0; i < sizeof(bad_b) / sizeof(bad_b[0]); i++)
		if (mts_compose_bytes(bad_b[i], &bytes) == 0)
			fail_msg("size \"%s\" accepted", bad_b[i]);
	assert_int_equal(mts_compose_cpus("0.5", &millis), 0);
	assert_int_equal(millis, 500);
	assert_int_equal(mts_compose_cpus("2", &millis), 0);
	assert_int_equal(millis, 2000);
	assert_int_not_equal(mts_compose_cpus("half", &millis), 0);
}

static void
test_env_file(void **state)
{
	struct mts_kvlist kv = { NULL, 0 };
	char err[256];

	assert_int_equal(mts_compose_env_parse("e",
	                     "# c\nA=1\nexport B = two "
	                     "# note\nC=\"x\\ny\"\nD='lit $X'\nE\n\nA=3\n",
	                     &kv, err, sizeof(err)),
	    0);
	assert_int_equal(kv.n, 5);
	assert_string_equal(mts_kvlist_get(&kv, "A")->value, "3");
	assert_string_equal(mts_kvlist_get(&kv, "B")->value, "two");
	assert_string_equal(mts_kvlist_get(&kv, "C")->value, "x\ny");
	assert_string_equal(mts_kvlist_get(&kv, "D")->value, "lit $X");
	assert_null(mts_kvlist_get(&kv, "E")->value);
	mts_kvlist_clear(&kv);
	assert_int_equal(mts_compose_env_parse("e", "A=1\n9X=2\n", &kv, err,
	                     sizeof(err)),
	    -1);
	assert_string_equal(err, "e:2: \"9X\" is not a variable name");
	mts_kvlist_clear(&kv);
	assert_int_equal(mts_compose_env_parse("e", "A=\"open\n", &kv, err,
	                     sizeof(err)),
	    -1);
	assert_string_equal(err, "e:1: unterminated \" quote");
	mts_kvlist_clear(&kv);
}

/* --- golden cases -------------------------------------------------------------- */

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = xmalloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		fail_msg("short read of %s", path);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The case's input files: NN-*.yml in name order. */
static size_t
case_files(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	*names = NULL;
	if (d == NULL)
		fail_msg("cannot open %s", dir);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (l < 5 || strcmp(e->d_name + l - 4, ".yml") != 0)
			continue;
		*names = xreallocarray(*names, n + 1, sizeof(**names));
		(*names)[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	qsort(*names, n, sizeof(**names), by_name);
	return n;
}

static void
expect_text(const char *path, const char *got)
{
	char *want = slurp(path, NULL);

	if (getenv("UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		fputs(got, f);
		fclose(f);
		free(want);
		return;
	}
	if (want == NULL)
		fail_msg("%s is missing; got:\n%s", path, got);
	if (strcmp(want, got) != 0)
		fail_msg("%s differs; got:\n%s", path, got);
	free(want);
}

static char *
print_stack(const struct mts_stack *st)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	assert_int_equal(mts_stack_print(st, f), 0);
	fclose(f);
	return out;
}

static char *
join_warnings(const struct mts_stack *st)
{
	char *out = NULL;
	size_t n = 0, i;
	FILE *f = open_memstream(&out, &n);

	for (i = 0; i < st->warnings.n; i++)
		fprintf(f, "%s\n", st->warnings.v[i]);
	fclose(f);
	return out;
}

static void
round_trip(const char *printed)
{
	struct mts_compose_file f = { "printed.yml", printed, strlen(printed) };
	struct mts_compose_input in = { .files = &f, .nfiles = 1 };
	struct mts_stack *st;
	char err[512], *again;

	if (mts_compose_load(&in, &st, err, sizeof(err)) != 0)
		fail_msg("the printed stack does not load: %s\n%s", err,
		    printed);
	again = print_stack(st);
	if (strcmp(again, printed) != 0)
		fail_msg("print -> load -> print differs:\n%s\n---\n%s",
		    printed, again);
	free(again);
	mts_stack_free(st);
}

static void
run_case(const char *name)
{
	char dir[512], path[600], err[1024], **names;
	struct mts_compose_file files[8];
	struct mts_compose_input in = { .getenv = vars, .dirname = name };
	struct mts_stack *st;
	size_t n, i;
	char *out;

	snprintf(dir, sizeof(dir), "%s/%s", DATA, name);
	n = case_files(dir, &names);
	assert_true(n > 0 && n <= 8);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		files[i].text = slurp(path, &files[i].len);
		files[i].name = names[i];
	}
	in.files = files;
	in.nfiles = n;
	snprintf(path, sizeof(path), "%s/dot.env", dir);
	in.dotenv = slurp(path, NULL);
	in.dotenv_name = ".env";
	snprintf(path, sizeof(path), "%s/stack", dir);
	{
		char *s = slurp(path, NULL);

		if (s)
			s[strcspn(s, "\n")] = '\0';
		in.stack = s;
	}
	if (mts_compose_load(&in, &st, err, sizeof(err)) != 0) {
		snprintf(path, sizeof(path), "%s/error", dir);
		strcat(err, "\n");
		expect_text(path, err);
	} else {
		snprintf(path, sizeof(path), "%s/stack.out", dir);
		out = print_stack(st);
		expect_text(path, out);
		round_trip(out);
		free(out);
		snprintf(path, sizeof(path), "%s/warnings", dir);
		out = join_warnings(st);
		expect_text(path, out);
		free(out);
		mts_stack_free(st);
	}
	for (i = 0; i < n; i++) {
		free((char *)files[i].text);
		free(names[i]);
	}
	free(names);
	free((char *)in.dotenv);
	free((char *)in.stack);
}

static void
test_golden(void **state)
{
	DIR *d = opendir(DATA);
	struct dirent *e;
	int ran = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		run_case(e->d_name);
		ran++;
	}
	closedir(d);
	assert_true(ran >= 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interpolate),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_env_file),
		cmocka_unit_test(test_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
