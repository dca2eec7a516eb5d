/* words.c: a Compose command string split into words as a POSIX shell splits them (single and double quotes, backslashes; no expansion), as Compose does for command: and entrypoint: strings. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compose_int.h"

int
compose_shell_split(const char *s, struct mts_strv *out)
{
	struct mts_buf w;
	int in_word = 0, rc = -1;
	char q = 0;

	mts_buf_init(&w);
	for (; *s; s++) {
		if (q == '\'') {
			if (*s == '\'')
				q = 0;
			else
				mts_buf_put(&w, s, 1);
			continue;
		}
		if (q == '"') {
			if (*s == '"')
				q = 0;
			else if (*s == '\\' && s[1] && strchr("\"\\$`", s[1]))
				mts_buf_put(&w, ++s, 1);
			else
				mts_buf_put(&w, s, 1);
			continue;
		}
		if (*s == ' ' || *s == '\t' || *s == '\n') {
			if (in_word) {
				mts_buf_put(&w, "", 1);
				mts_strv_push(out, (char *)w.data);
				mts_buf_reset(&w);
				in_word = 0;
			}
			continue;
		}
		in_word = 1;
		if (*s == '\'' || *s == '"')
			q = *s;
		else if (*s == '\\' && s[1])
			mts_buf_put(&w, ++s, 1);
		else
			mts_buf_put(&w, s, 1);
	}
	if (q)
		goto out;
	if (in_word) {
		mts_buf_put(&w, "", 1);
		mts_strv_push(out, (char *)w.data);
	}
	rc = 0;
out:
	mts_buf_free(&w);
	return rc;
}
