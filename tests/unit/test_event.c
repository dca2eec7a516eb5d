/* test_event.c: event lines — every field, JSON escapes (quotes, controls, UTF-8 kept, stray bytes replaced), fields cut without splitting an escape, the longest event within MTS_EVENT_LINE_MAX, unknown types refused; the writer appends, rotates at its size and keeps going without a file. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "event.h"
#include "log.h"
#include "mtserr.h"

static json_t *
parse(const char *line)
{
	json_error_t e;
	json_t *j = json_loads(line, 0, &e);

	if (j == NULL)
		fail_msg("not JSON (%s): %s", e.text, line);
	return j;
}

static const char *
str(json_t *j, const char *k)
{
	return json_string_value(json_object_get(j, k));
}

static void
test_format(void **state)
{
	struct mts_event ev = { .type = "task.failed",
		.service = "shop_web",
		.task = "t1",
		.node = "node-2",
		.message = "exit 1: \"boom\"\\\n\x01 caf\xc3\xa9 \xff" };
	char buf[MTS_EVENT_LINE_MAX];
	json_t *j;
	int n;

	n = mts_event_format(buf, sizeof(buf), 1764592205123ULL, "node-1",
	    "reconciled", &ev);
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	assert_int_equal(buf[n - 1], '\n');
	assert_non_null(strstr(buf, "\\u0001"));
	j = parse(buf);
	assert_string_equal(str(j, "time"), "2025-12-01T12:30:05.123Z");
	assert_int_equal(json_integer_value(json_object_get(j, "ms")),
	    1764592205123LL);
	assert_string_equal(str(j, "node"), "node-1");
	assert_string_equal(str(j, "agent"), "reconciled");
	assert_string_equal(str(j, "type"), "task.failed");
	assert_string_equal(str(j, "service"), "shop_web");
	assert_string_equal(str(j, "task"), "t1");
	assert_string_equal(str(j, "on"), "node-2");
	assert_string_equal(str(j, "message"),
	    "exit 1: \"boom\"\\\n\x01 caf\xc3\xa9 \xef\xbf\xbd");
	json_decref(j);
	/* absent fields are left out */
	ev.service = NULL;
	ev.task = "";
	ev.node = NULL;
	ev.message = NULL;
	assert_true(mts_event_format(buf, sizeof(buf), 0, "", "a", &ev) > 0);
	j = parse(buf);
	assert_int_equal(json_object_size(j), 4); /* time ms agent type */
	json_decref(j);
	/* unknown types, small buffers */
	ev.type = "task.exploded";
	assert_int_equal(mts_event_format(buf, sizeof(buf), 0, "", "", &ev),
	    -MTS_ERR_INVAL);
	ev.type = "node.dead";
	assert_int_equal(mts_event_format(buf, 100, 0, "", "", &ev),
	    -MTS_ERR_INVAL);
	assert_true(mts_event_known("update.batch_done"));
	assert_false(mts_event_known(NULL));
}

/* The longest event fits; a cut never splits an escape or a UTF-8
 * sequence. */
static void
test_cuts(void **state)
{
	char big[3000], quotes[600], utf[700], buf[MTS_EVENT_LINE_MAX];
	struct mts_event ev = { .type = "update.rolled_back" };
	json_t *j;
	int n;

	memset(big, 1, sizeof(big) - 1); /* every byte a 6-byte escape */
	big[sizeof(big) - 1] = '\0';
	ev.service = ev.task = ev.node = ev.message = big;
	n = mts_event_format(buf, sizeof(buf), UINT64_MAX / 2, big, big, &ev);
	assert_true(n > 0 && n < MTS_EVENT_LINE_MAX);
	json_decref(parse(buf));
	memset(quotes, '"', sizeof(quotes) - 1);
	quotes[sizeof(quotes) - 1] = '\0';
	ev.service = ev.task = ev.node = NULL;
	ev.message = quotes;
	assert_true(mts_event_format(buf, sizeof(buf), 0, "", "", &ev) > 0);
	j = parse(buf);
	assert_int_equal(strlen(str(j, "message")), 200); /* 400 bytes: \" */
	json_decref(j);
	for (n = 0; n + 3 < (int)sizeof(utf); n += 3)
		memcpy(utf + n, "\xe2\x82\xac", 3); /* euro signs */
	utf[n] = '\0';
	ev.message = utf;
	assert_true(mts_event_format(buf, sizeof(buf), 0, "", "", &ev) > 0);
	j = parse(buf);
	assert_int_equal(strlen(str(j, "message")), 399); /* 133 whole */
	json_decref(j);
}

static int
lines(const char *path)
{
	FILE *f = fopen(path, "r");
	char l[MTS_EVENT_LINE_MAX + 8];
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(l, sizeof(l), f)) {
		json_decref(parse(l));
		n++;
	}
	fclose(f);
	return n;
}

static void
test_writer(void **state)
{
	char dir[] = "/tmp/mts-test-event.XXXXXX", path[128], rot[128];
	struct mts_event ev = { .type = "task.started",
		.service = "shop_web",
		.task = "t7" };
	struct mts_event_log *l;
	struct stat st;
	int i;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/" MTS_EVENT_FILE, dir);
	snprintf(rot, sizeof(rot), "%s/" MTS_EVENT_FILE ".1", dir);
	l = mts_event_log_open(dir, 500, "n1", "reconciled");
	assert_non_null(l);
	for (i = 0; i < 3; i++)
		assert_int_equal(mts_event_emit(l, &ev), 0);
	assert_int_equal(lines(path), 3);
	assert_int_equal(lines(rot), -1);
	ev.type = "task.vanished";
	assert_int_equal(mts_event_emit(l, &ev), -MTS_ERR_INVAL);
	assert_int_equal(lines(path), 3);
	ev.type = "task.stopped";
	for (i = 0; i < 4; i++)
		assert_int_equal(mts_event_emit(l, &ev), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= 500);
	/* ~135-byte lines: rotated at the 4th and the 7th, the oldest lost */
	assert_int_equal(lines(rot), 3);
	assert_int_equal(lines(path), 1);
	assert_int_equal(stat(rot, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	mts_event_log_close(l);
	/* a second writer appends */
	l = mts_event_log_open(dir, 0, NULL, NULL);
	i = lines(path);
	assert_int_equal(mts_event_emit(l, &ev), 0);
	assert_int_equal(lines(path), i + 1);
	mts_event_log_close(l);
	unlink(path);
	unlink(rot);
	rmdir(dir);
	/* no directory: no log, and events still go to the agent's log */
	assert_null(mts_event_log_open("/nonexistent/dir", 0, "n", "a"));
	assert_int_equal(mts_event_emit(NULL, &ev), 0);
	mts_event_log_close(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_cuts),
		cmocka_unit_test(test_writer),
	};

	log_init("test_event", MTS_LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
