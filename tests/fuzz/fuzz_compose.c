/* fuzz_compose.c: libFuzzer target for the Compose loader — the input is split at the first NUL into a .env text and a stack file (and at a second NUL into an override file), loaded, printed and loaded again. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose/compose.h"

static const char *
env(void *arg, const char *name)
{
	return strcmp(name, "HOME") == 0 ? "/root" : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mts_compose_file f[2];
	struct mts_compose_input in = { .files = f,
		.getenv = env,
		.dirname = "fuzz" };
	const char *p = (const char *)data, *z1, *z2;
	char *dotenv = NULL, err[512], *out = NULL;
	struct mts_stack *st;
	size_t n = 0;
	FILE *m;

	z1 = memchr(p, '\0', size);
	if (z1) {
		dotenv = strndup(p, (size_t)(z1 - p));
		in.dotenv = dotenv;
		size -= (size_t)(z1 - p) + 1;
		p = z1 + 1;
	}
	z2 = memchr(p, '\0', size);
	f[0] = (struct mts_compose_file){ "a.yml", p,
		z2 ? (size_t)(z2 - p) : size };
	in.nfiles = 1;
	if (z2) {
		f[1] = (struct mts_compose_file){ "b.yml", z2 + 1,
			size - (size_t)(z2 - p) - 1 };
		in.nfiles = 2;
	}
	if (mts_compose_load(&in, &st, err, sizeof(err)) == 0) {
		m = open_memstream(&out, &n);
		mts_stack_print(st, m);
		fclose(m);
		mts_stack_free(st);
		f[0] = (struct mts_compose_file){ "printed.yml", out, n };
		in.nfiles = 1;
		in.dotenv = NULL;
		/* what mts printed must load again */
		if (mts_compose_load(&in, &st, err, sizeof(err)) != 0) {
			fprintf(stderr, "printed stack does not load: %s\n%s\n",
			    err, out);
			abort();
		}
		mts_stack_free(st);
		free(out);
	}
	free(dotenv);
	return 0;
}
