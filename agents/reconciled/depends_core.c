/* depends_core.c: whether each service of a first deploy may start, from its dependencies' conditions and their tasks' counts. */
#include <stdio.h>
#include <string.h>

#include "depends_core.h"

static const struct {
	const char *name;
	enum mts_dep_cond cond;
	const char *says; /* "waiting for X to be ..." */
} conds[] = {
	{ "service_started", DEP_STARTED, "started" },
	{ "service_healthy", DEP_HEALTHY, "healthy" },
	{ "service_completed_successfully", DEP_COMPLETED,
	    "completed successfully" },
};

int
mts_dep_cond_parse(const char *s, enum mts_dep_cond *out)
{
	size_t i;

	if (s == NULL || *s == '\0') {
		*out = DEP_STARTED;
		return 0;
	}
	for (i = 0; i < sizeof(conds) / sizeof(conds[0]); i++)
		if (strcmp(s, conds[i].name) == 0) {
			*out = conds[i].cond;
			return 0;
		}
	return -1;
}

static const struct mts_dep_service *
find(const struct mts_dep_service *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

/* The tasks of d that count toward cond. */
static uint32_t
meeting(const struct mts_dep_service *d, enum mts_dep_cond cond)
{
	switch (cond) {
	case DEP_STARTED:
		return d->running + d->completed;
	case DEP_HEALTHY:
		return d->healthy;
	case DEP_COMPLETED:
		return d->completed;
	}
	return 0;
}

/* 1 when dependency dep is met; else why says what is awaited. */
static int
met(const struct mts_dep_service *v, size_t n, const struct mts_dep *dep,
    char *why, size_t whylen)
{
	const struct mts_dep_service *d = find(v, n, dep->service);
	uint32_t want, have;

	if (d == NULL) {
		if (!dep->required)
			return 1;
		snprintf(why, whylen, "waiting for %s: not deployed",
		    dep->service);
		return 0;
	}
	want = d->desired ? d->desired : 1;
	have = meeting(d, dep->cond);
	if (have >= want)
		return 1;
	if (dep->cond == DEP_COMPLETED && d->failed > 0)
		snprintf(why, whylen,
		    "waiting for %s: %u of its tasks failed (it must complete "
		    "successfully)",
		    dep->service, d->failed);
	else
		snprintf(why, whylen, "waiting for %s to be %s (%u of %u)",
		    dep->service, conds[dep->cond].says, have, want);
	return 0;
}

void
mts_dep_decide(const struct mts_dep_service *v, size_t n,
    struct mts_dep_verdict *out)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		out[i].may_start = 1;
		out[i].why[0] = '\0';
		if (v[i].started_before)
			continue;
		for (k = 0; k < v[i].ndeps && out[i].may_start; k++)
			out[i].may_start = met(v, n, &v[i].deps[k], out[i].why,
			    sizeof(out[i].why));
	}
}
