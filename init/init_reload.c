/* init_reload.c: SIGHUP / admin reload — the new config is built and checked completely, then swapped in; changed agents are restarted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "init.h"
#include "log.h"
#include "mtserr.h"
#include "xmalloc.h"

struct names {
	char **v;
	size_t n;
};

static void
names_add(struct names *l, const char *s)
{
	l->v = xreallocarray(l->v, l->n + 2, sizeof(char *));
	l->v[l->n++] = xstrdup(s);
	l->v[l->n] = NULL;
}

static char **
names_take(struct names *l, char ***out)
{
	if (l->v == NULL)
		l->v = xcalloc(1, sizeof(char *));
	if (out != NULL) {
		*out = l->v;
		return NULL;
	}
	return l->v;
}

static int
conf_find(const struct init_conf *c, const char *name)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		if (strcmp(c->a[j].name, name) == 0)
			return (int)j;
	return -1;
}

/* Matches the running agents with the new config; returns the events to
 * fire once the new config is in place (one per agent, -1 for none). */
static int *
rebind(struct init *in, struct init_conf *nc, struct names *re,
    struct names *rm)
{
	int *ev = xcalloc(in->core.n + nc->n + 1, sizeof(int));
	size_t i;
	int j;

	for (i = 0; i < in->core.n; i++) {
		struct mts_sup *s = &in->core.s[i];

		ev[i] = -1;
		if (s->removed)
			continue;
		j = conf_find(nc, s->name);
		if (j < 0) {
			s->removed = 1;
			in->rt[i].conf = NULL;
			ev[i] = SEV_STOP;
			names_add(rm, s->name);
			continue;
		}
		if (strcmp(in->rt[i].conf->fingerprint, nc->a[j].fingerprint) !=
		    0) {
			s->p = nc->a[j].p;
			if (s->want || in->rt[i].pid > 0 || s->st == SUP_FAILED)
				ev[i] = SEV_RESTART;
			names_add(re, s->name);
		}
		in->rt[i].conf = &nc->a[j];
	}
	return ev;
}

/* An agent that an earlier reload removed, by name; -1 if none. */
static int
find_removed(const struct init *in, const char *name)
{
	size_t i;

	for (i = 0; i < in->core.n; i++)
		if (in->core.s[i].removed &&
		    strcmp(in->core.s[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Agents new to the running config. One that a reload removed comes back
 * in its old entry: if its process is still stopping, the start waits for
 * its exit (a second entry ran a second copy of it at once, on the same
 * sockets and state, and every remove and add grew the table). */
static void
add_new(struct init *in, struct init_conf *nc, int *ev, struct names *add)
{
	size_t j, i;
	int k;

	for (j = 0; j < nc->n; j++) {
		if (init_find(in, nc->a[j].name) >= 0)
			continue;
		names_add(add, nc->a[j].name);
		if ((k = find_removed(in, nc->a[j].name)) >= 0) {
			in->core.s[k].removed = 0;
			in->core.s[k].p = nc->a[j].p;
			in->rt[k].conf = &nc->a[j];
			ev[k] = SEV_START;
			continue;
		}
		i = mts_init_add(&in->core, nc->a[j].name, &nc->a[j].p);
		in->rt = xreallocarray(in->rt, in->core.n, sizeof(*in->rt));
		memset(&in->rt[i], 0, sizeof(in->rt[i]));
		in->rt[i].conf = &nc->a[j];
		in->rt[i].notify_fd = -1;
		ev[i] = SEV_START;
	}
}

static void
set_deps(struct init *in)
{
	size_t i, j, n, idx[64];
	int k;

	for (i = 0; i < in->core.n; i++) {
		if (in->rt[i].conf == NULL) {
			mts_init_set_after(&in->core, i, NULL, 0);
			continue;
		}
		for (n = 0, j = 0; in->rt[i].conf->after[j] && n < 64; j++)
			if ((k = init_find(in, in->rt[i].conf->after[j])) >= 0)
				idx[n++] = (size_t)k;
		mts_init_set_after(&in->core, i, idx, n);
	}
}

int
init_reload(struct init *in, char ***restarted, char ***added, char ***removed,
    char *err, size_t errlen)
{
	struct names re = { 0 }, add = { 0 }, rm = { 0 };
	struct init_conf *nc, *old = in->conf;
	size_t i;
	int *ev;

	if (in->core.shutting_down) {
		snprintf(err, errlen, "mts-init is shutting down");
		return -1;
	}
	if (mts_init_conf_load(in->config_path, &nc, err, errlen) < 0)
		return -1;
	if (strcmp(nc->rundir, old->rundir) != 0 ||
	    strcmp(nc->statedir, old->statedir) != 0 ||
	    strcmp(nc->key, old->key) != 0)
		log_warnx(
		    "reload: rundir, statedir and key changes take effect "
		    "when mts-init restarts");
	free(nc->rundir);
	free(nc->statedir);
	nc->rundir = xstrdup(old->rundir);
	nc->statedir = xstrdup(old->statedir);
	free(nc->key);
	nc->key = xstrdup(old->key);
	ev = rebind(in, nc, &re, &rm);
	add_new(in, nc, ev, &add);
	in->conf = nc;
	mts_ipc_server_set_acl(in->admin, &nc->admin_acl);
	mts_init_conf_free(old);
	set_deps(in);
	log_info("reloaded %s: %zu restarted, %zu added, %zu removed",
	    in->config_path, re.n, add.n, rm.n);
	for (i = 0; i < in->core.n; i++)
		if (ev[i] >= 0)
			init_event(in, i, (enum mts_sup_event)ev[i]);
	free(ev);
	if (names_take(&re, restarted))
		mts_cfg_list_free(re.v);
	if (names_take(&add, added))
		mts_cfg_list_free(add.v);
	if (names_take(&rm, removed))
		mts_cfg_list_free(rm.v);
	return 0;
}
