/* compose.h: Compose stack files as `docker stack deploy` takes them — a pure loader fed text (several files merged in order, interpolation, anchors and merge keys), the stack spec it yields, warnings for what mts does not run, and a printer. */
#ifndef MTS_COMPOSE_H
#define MTS_COMPOSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* --- small containers ------------------------------------------------------------ */

struct mts_strv {
	char **v;
	size_t n;
};

/* A key with a value; value NULL means "set without a value" (an
 * environment entry taken from the deploying shell, a bare label). */
struct mts_kv {
	char *key;
	char *value;
};

struct mts_kvlist {
	struct mts_kv *v;
	size_t n;
};

void mts_strv_push(struct mts_strv *, const char *);
void mts_strv_clear(struct mts_strv *);
/* Sets key (replacing an earlier value, keeping its position). */
void mts_kvlist_set(struct mts_kvlist *, const char *key, const char *value);
const struct mts_kv *mts_kvlist_get(const struct mts_kvlist *, const char *key);
void mts_kvlist_clear(struct mts_kvlist *);

/* --- the spec -------------------------------------------------------------------- */

enum mts_svc_mode {
	MTS_MODE_REPLICATED,
	MTS_MODE_GLOBAL,
	MTS_MODE_REPLICATED_JOB,
	MTS_MODE_GLOBAL_JOB,
};

enum mts_port_mode {
	MTS_PORT_INGRESS,
	MTS_PORT_HOST,
};

struct mts_port {
	char *host_ip;      /* NULL: every address */
	uint32_t target;    /* container port */
	uint32_t published; /* 0: none chosen (mts picks one for ingress) */
	char protocol[8];   /* tcp | udp | sctp */
	enum mts_port_mode mode;
};

enum mts_mount_type {
	MTS_MOUNT_VOLUME,
	MTS_MOUNT_BIND,
	MTS_MOUNT_TMPFS,
};

struct mts_mount {
	enum mts_mount_type type;
	char *source; /* volume name or host path; NULL: anonymous */
	char *target;
	int read_only;
	uint64_t tmpfs_size; /* bytes, 0: the kernel's default */
	uint32_t tmpfs_mode; /* 0: 1777 */
	int nocopy;
};

struct mts_ulimit {
	char *name;
	int64_t soft, hard;
};

struct mts_health {
	int set; /* the file has a healthcheck */
	int disable;
	struct mts_strv test; /* ["CMD", ...], ["CMD-SHELL", cmd] or ["NONE"] */
	int64_t interval_ms, timeout_ms, start_period_ms, start_interval_ms;
	int32_t retries; /* -1: default */
};

struct mts_restart {
	char condition[16]; /* none | on-failure | any */
	int64_t delay_ms;
	uint32_t max_attempts; /* 0: unlimited */
	int64_t window_ms;     /* 0: unbounded */
};

struct mts_update {
	uint32_t parallelism;
	int64_t delay_ms;
	char failure_action[16]; /* pause | continue | rollback */
	int64_t monitor_ms;
	double max_failure_ratio;
	char order[16]; /* stop-first | start-first */
};

struct mts_resources {
	uint32_t cpu_millis; /* 1000 = one CPU, 0: none */
	uint64_t memory;     /* bytes, 0: none */
	uint32_t pids;       /* 0: none */
};

struct mts_placement {
	struct mts_strv constraints;    /* "node.labels.zone == a" as written */
	struct mts_strv spread;         /* preferences: spread: LABEL */
	uint32_t max_replicas_per_node; /* 0: no limit */
	char strategy[16];              /* x-mts: spread | binpack */
};

struct mts_svc_network {
	char *name;
	struct mts_strv aliases;
	char *ipv4_address;
};

struct mts_depend {
	char *service;
	char condition[40]; /* service_started | service_healthy |
			       service_completed_successfully */
	int required;
	int restart;
};

struct mts_canary {
	uint32_t count; /* 0: no canaries */
	int auto_promote;
	int auto_revert;
	int64_t healthy_deadline_ms; /* a new task not healthy this long
					failed; 0: 5 minutes */
};

struct mts_service {
	char *name;
	char *image;
	struct mts_strv command, entrypoint;
	int has_command, has_entrypoint; /* set, even to an empty list */
	struct mts_kvlist environment; /* env_file entries, then environment */
	struct mts_strv env_file;      /* paths, relative to the project dir */
	struct mts_kvlist labels;      /* container labels */
	char *hostname, *user, *working_dir, *stop_signal;
	int read_only, init;
	int64_t stop_grace_ms; /* -1: default (10 s) */
	struct mts_health health;
	struct mts_port *ports;
	size_t nports;
	struct mts_mount *mounts; /* volumes and tmpfs */
	size_t nmounts;
	struct mts_ulimit *ulimits;
	size_t nulimits;
	struct mts_strv cap_add, cap_drop, extra_hosts, dns;
	struct mts_kvlist sysctls;
	char *log_driver;
	uint64_t log_max_size; /* bytes, 0: default */
	uint32_t log_max_file; /* 0: default */
	struct mts_svc_network *networks;
	size_t nnetworks;
	struct mts_depend *depends;
	size_t ndepends;
	/* deploy */
	enum mts_svc_mode mode;
	uint32_t replicas;               /* replicated modes; default 1 */
	struct mts_kvlist deploy_labels; /* service labels */
	char endpoint_mode[8];           /* vip | dnsrr */
	struct mts_resources limits, reservations;
	struct mts_restart restart;
	struct mts_update update, rollback;
	struct mts_placement placement;
	struct mts_canary canary; /* x-mts.update */
};

struct mts_stack_network {
	char *name;      /* the key in the file */
	char *real_name; /* name: / external name, else <stack>_<key> */
	int external;
	char *driver;
	int internal, attachable;
	struct mts_kvlist labels;
};

struct mts_stack_volume {
	char *name;
	char *real_name;
	int external;
	char *driver;
	struct mts_kvlist labels;
};

struct mts_stack {
	char *name;
	struct mts_service *services;
	size_t nservices;
	struct mts_stack_network *networks;
	size_t nnetworks;
	struct mts_stack_volume *volumes;
	size_t nvolumes;
	struct mts_strv warnings; /* "FILE:LINE:COL: service "x": ..." */
};

/* --- loading --------------------------------------------------------------------- */

/* Looks up a variable for interpolation: its value, or NULL when unset. */
typedef const char *(*mts_compose_lookup_fn)(void *arg, const char *name);

struct mts_compose_file {
	const char *name; /* for messages */
	const char *text;
	size_t len;
};

struct mts_compose_input {
	const struct mts_compose_file *files; /* merged in this order */
	size_t nfiles;
	const char *stack;   /* --stack, or NULL */
	const char *dirname; /* the first file's directory's name */
	const char *dotenv;  /* text of the .env beside the first file */
	const char *dotenv_name;
	/* the environment (wins over .env); NULL: none */
	mts_compose_lookup_fn getenv;
	void *getenv_arg;
};

/* Loads a stack. On success *out is the stack (free it with
 * mts_stack_free) and its warnings list what mts ignores. On failure
 * returns -1, err holds "FILE:LINE:COLUMN: what is wrong", *out is NULL. */
int mts_compose_load(const struct mts_compose_input *, struct mts_stack **out,
    char *err, size_t errlen);
void mts_stack_free(struct mts_stack *);

/* Prints the stack in canonical form, as Compose YAML that loads again to
 * the same stack (every default written out). */
int mts_stack_print(const struct mts_stack *, FILE *f);

/* The same as JSON (a new jansson object), NULL when out of memory. */
struct json_t;
struct json_t *mts_stack_json(const struct mts_stack *);

/* Interpolates s (len bytes): *out is a new NUL-terminated string. -1 with
 * err (no position) on an invalid reference or a required variable. */
int mts_compose_interpolate(const char *s, size_t len,
    mts_compose_lookup_fn lookup, void *arg, char **out, size_t *outlen,
    char *err, size_t errlen);
/* Parses .env / env_file text (KEY=VALUE lines, # comments, export,
 * quotes) into out, later lines winning. -1 with "FILE:LINE: ..." in err. */
int mts_compose_env_parse(const char *file, const char *text,
    struct mts_kvlist *out, char *err, size_t errlen);

/* Units as Compose writes them: durations ("1m30s", "250ms", "2h"),
 * byte sizes ("512m", "1g", "100kb", plain bytes), CPUs ("0.5"). */
int mts_compose_duration(const char *s, int64_t *ms);
int mts_compose_bytes(const char *s, uint64_t *bytes);
int mts_compose_cpus(const char *s, uint32_t *millis);

#endif
