/* failseen_core.c: the task failures this node has seen, stamped with its own monotonic time when it first saw each (failed_avoid's clock; see failseen_core.h). */
#include <stdlib.h>
#include <string.h>

#include "failseen_core.h"
#include "xmalloc.h"

void
mts_failseen_note(struct mts_failseen *fs, const char *id, const char *service,
    const char *node, mts_time_t now)
{
	struct mts_failure *f;
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (strcmp(fs->v[i].id, id) == 0 &&
		    strcmp(fs->v[i].node, node) == 0) {
			fs->v[i].present = 1;
			return;
		}
	if (fs->n == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 16;
		fs->v = xreallocarray(fs->v, fs->cap, sizeof(*fs->v));
	}
	f = &fs->v[fs->n++];
	f->id = xstrdup(id);
	f->service = xstrdup(service);
	f->node = xstrdup(node);
	f->seen = now;
	f->present = 1;
}

static void
failure_free(struct mts_failure *f)
{
	free(f->id);
	free(f->service);
	free(f->node);
}

void
mts_failseen_sweep(struct mts_failseen *fs)
{
	size_t i, k = 0;

	for (i = 0; i < fs->n; i++) {
		if (!fs->v[i].present) {
			failure_free(&fs->v[i]);
			continue;
		}
		fs->v[i].present = 0;
		fs->v[k++] = fs->v[i];
	}
	fs->n = k;
}

int
mts_failseen_recent(const struct mts_failseen *fs, const char *service,
    const char *node, mts_time_t now, mts_time_t window)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (strcmp(fs->v[i].service, service) == 0 &&
		    strcmp(fs->v[i].node, node) == 0 &&
		    now - fs->v[i].seen < window)
			return 1;
	return 0;
}

void
mts_failseen_free(struct mts_failseen *fs)
{
	size_t i;

	if (fs == NULL)
		return;
	for (i = 0; i < fs->n; i++)
		failure_free(&fs->v[i]);
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}
