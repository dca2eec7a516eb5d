/* bench_place.c: the placement + reservation cores in one process on 1,000 synthetic nodes — each service's tasks are placed by mts_place, then every choice is prepared and committed on that node's own ledger (as the owner and the target nodes would); prints tasks placed per second (median of 5 runs). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/schedd/ledger_core.h"
#include "agents/schedd/place_core.h"
#include "mtstime.h"

#define NODES 1000
#define SERVICES 500
#define PER_SERVICE 40
#define MIB (1024ull * 1024)

static char ids[NODES][33];
static struct mts_label labels[NODES][2];
static char zone[NODES][8], rack[NODES][8];

static void
make_nodes(struct mts_place_node *n, struct mts_ledger *l)
{
	int i;

	for (i = 0; i < NODES; i++) {
		struct mts_res cap = { 16000, 65536 * MIB };

		snprintf(ids[i], sizeof(ids[i]), "%032x", i * 2654435761u);
		snprintf(zone[i], sizeof(zone[i]), "z%d", i % 3);
		snprintf(rack[i], sizeof(rack[i]), "r%d", i % 40);
		labels[i][0] = (struct mts_label){ "zone", zone[i] };
		labels[i][1] = (struct mts_label){ "rack", rack[i] };
		memset(&n[i], 0, sizeof(n[i]));
		n[i].a.id = ids[i];
		n[i].a.hostname = ids[i];
		n[i].a.os = "linux";
		n[i].a.arch = "x86_64";
		n[i].a.labels = labels[i];
		n[i].a.nlabels = 2;
		n[i].alive = n[i].active = 1;
		n[i].capacity = n[i].free = cap;
		mts_ledger_init(&l[i], cap, 0);
	}
}

/* One run: every service placed and reserved; returns tasks/s. */
static double
run(int with_spread)
{
	static struct mts_place_node n[NODES];
	static struct mts_ledger l[NODES];
	const char *spread[] = { "zone" };
	struct mts_constraint c;
	char err[128], lease[64], task[64], svc[32];
	uint32_t out[PER_SERVICE], placed, total = 0, i;
	int64_t t0, t1;
	struct mts_place_why why;
	int s;

	make_nodes(n, l);
	mts_constraint_parse("node.labels.rack != r7", &c, err, sizeof(err));
	t0 = mts_now_us();
	for (s = 0; s < SERVICES; s++) {
		struct mts_place_req r = { .res = { 100, 128 * MIB },
			.count = PER_SERVICE,
			.constraints = &c,
			.nconstraints = 1,
			.spread = spread,
			.nspread = with_spread ? 1 : 0 };

		snprintf(svc, sizeof(svc), "svc%d", s);
		for (i = 0; i < NODES; i++)
			n[i].service_tasks = 0;
		placed = mts_place(n, NODES, &r, out, &why);
		for (i = 0; i < placed; i++) {
			struct mts_ledger *led = &l[out[i]];
			struct mts_digest d;

			snprintf(lease, sizeof(lease), "%s.%u", svc, i);
			snprintf(task, sizeof(task), "%s.%u.t", svc, i);
			if (mts_ledger_prepare(led, lease, ids[0], svc, r.res,
			        0, 5000, 0) != LEDGER_OK ||
			    mts_ledger_commit(led, lease, task, 1) != LEDGER_OK)
				continue;
			mts_ledger_digest(led, &d);
			n[out[i]].free = d.free;
			n[out[i]].tasks = d.tasks;
			total++;
		}
	}
	t1 = mts_now_us();
	for (i = 0; i < NODES; i++)
		mts_ledger_free(&l[i]);
	return total / ((t1 - t0) / 1e6);
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(void)
{
	double r[5];
	int k, spread;

	printf("%-58s %12s\n", "placement + reservation, 1,000 nodes",
	    "tasks/s");
	for (spread = 0; spread <= 1; spread++) {
		for (k = 0; k < 5; k++)
			r[k] = run(spread);
		qsort(r, 5, sizeof(r[0]), cmp);
		printf("%-58s %12.0f\n",
		    spread ? "  500 services x 40, constraint, spread over zone"
		           : "  500 services x 40, constraint",
		    r[2]);
	}
	return 0;
}
