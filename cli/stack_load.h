/* stack_load.h: the Compose-file loading shared by mtsctl's stack config, deploy and plan. */
#ifndef MTSCTL_STACK_LOAD_H
#define MTSCTL_STACK_LOAD_H

#include "compose/compose.h"
#include "mtsctl.h"

#define MAX_FILES 16

struct stack_args {
	const char *opts; /* the option letters the command takes: c (and
			     f), s (--stack), q, d (--detach), p (--prune),
			     T (--wait) */
	const char *files[MAX_FILES];
	size_t nfiles;
	const char *stack;
	int quiet, detach, prune;
	long timeout_s;
};

/* Parses -c/-f FILE..., --stack, and the options a->opts allows; without
 * a file, the first of Compose's default names here. An exit status. */
int mtsctl_stack_args(struct mtsctl *, int argc, char **argv,
    struct stack_args *a);
/* Loads the stack (env_file entries read, warnings printed on stderr).
 * An exit status; on 0 *st is the stack (mts_stack_free). */
int mtsctl_stack_load(const struct stack_args *, struct mts_stack **st);

#endif
