/* svc_spec.h: Compose services to replicated ServiceSpecs, and the service records (s/<stack>_<service>) mtsctl reads and writes through the local statestore. */
#ifndef MTSCTL_SVC_SPEC_H
#define MTSCTL_SVC_SPEC_H

#include "compose/compose.h"
#include "hash.h"
#include "mtsctl.h"
#include "service.pb-c.h"

/* A new ServiceSpec for service s of stack st (free it with
 * protobuf_c_message_free_unpacked). */
Mts__Service__ServiceSpec *mtsctl_svc_spec(const struct mts_stack *st,
    const struct mts_service *s);

/* One service record as read from the replica. */
struct svc_rec {
	char *name;
	Mts__Service__ServiceRecord *rec; /* NULL: absent or deleted */
	uint64_t hlc;                     /* for compare-and-set; 0: absent */
	uint8_t origin[16];
};

/* Reads s/<name>. An exit status (0 also when absent: rec NULL). */
int mtsctl_svc_get(struct mtsctl *, const char *name, struct svc_rec *out);
/* Writes rec to s/<name> if the record is still the one read (cur). An
 * exit status; MTSCTL_EFAIL with "changed meanwhile" when it is not.
 * The record written carries cur's creation HLC (created_hlc). */
int mtsctl_svc_put(struct mtsctl *, const char *name,
    const Mts__Service__ServiceRecord *rec, const struct svc_rec *cur);
int mtsctl_svc_delete(struct mtsctl *, const char *name);
/* mtsctl_svc_get that says "no such service" (exit 5) when it is absent;
 * r is cleared on failure. */
int mtsctl_svc_need(struct mtsctl *, const char *name, struct svc_rec *r);
/* The rolling update status u/<name> (NULL: none yet, or undecodable;
 * free with protobuf_c_message_free_unpacked). An exit status. */
int mtsctl_upd_get(struct mtsctl *, const char *name,
    Mts__Service__UpdateStatus **out);
/* The owner's placement status p/<name>, the same way. */
struct Mts__Reconciled__PlacementStatus;
int mtsctl_placement_get(struct mtsctl *, const char *name,
    struct Mts__Reconciled__PlacementStatus **out);
/* Every live service record, in name order (*out: n entries, free with
 * mtsctl_svc_list_free). */
int mtsctl_svc_list(struct mtsctl *, struct svc_rec **out, size_t *n);
void mtsctl_svc_rec_clear(struct svc_rec *);
void mtsctl_svc_list_free(struct svc_rec *, size_t n);

/* Calls fn for every task record t/<node>/<task> of the replica (node: 32
 * hex digits). An exit status. */
struct Mts__Shim__TaskStatus;
typedef void (*mtsctl_task_fn)(void *arg, const char *node,
    const struct Mts__Shim__TaskStatus *);
int mtsctl_task_scan(struct mtsctl *, mtsctl_task_fn fn, void *arg);
/* Calls fn for each owner's placement status p/<service> (written by
 * the service's owner, mts-reconciled). */
struct Mts__Reconciled__PlacementStatus;
typedef void (*mtsctl_placement_fn)(void *arg, const char *service,
    const struct Mts__Reconciled__PlacementStatus *);
int mtsctl_placement_scan(struct mtsctl *, mtsctl_placement_fn fn, void *arg);

/* The members gossipd reports; empty (not an error) when gossipd cannot
 * be reached, so the service commands still work on a lone statestore
 * (cmd_service.c). */
struct members {
	uint8_t (*alive)[MTS_NODE_ID_LEN]; /* candidates for ownership */
	size_t nalive;
	char (*hex)[MTS_NODE_HEX_LEN + 1]; /* every member, with names */
	char **names;
	size_t n;
};
void mtsctl_members_load(struct mtsctl *, struct members *);
void mtsctl_members_free(struct members *);
/* The name of member hex ("" when unknown). */
const char *mtsctl_member_name(const struct members *, const char *hex);
/* Whether member hex is one this node sees alive (every node is when the
 * membership is unknown: gossipd did not answer). */
int mtsctl_member_alive(const struct members *, const char *hex);

/* service rebalance (cmd_rebalance.c). */
int mtsctl_cmd_service_rebalance(struct mtsctl *, int argc, char **argv);
extern const char mtsctl_help_service_rebalance[];

/* service update, rollback and promote (cmd_update.c). */
int mtsctl_cmd_service_update(struct mtsctl *, int argc, char **argv);
int mtsctl_cmd_service_rollback(struct mtsctl *, int argc, char **argv);
int mtsctl_cmd_service_promote(struct mtsctl *, int argc, char **argv);
extern const char mtsctl_help_service_update[], mtsctl_help_service_rollback[],
    mtsctl_help_service_promote[];

/* The stack group's record commands (cmd_service.c). */
int mtsctl_cmd_stack_ls(struct mtsctl *, int argc, char **argv);
int mtsctl_cmd_stack_services(struct mtsctl *, int argc, char **argv);
int mtsctl_cmd_stack_ps(struct mtsctl *, int argc, char **argv);
int mtsctl_cmd_stack_rm(struct mtsctl *, int argc, char **argv);

#endif
