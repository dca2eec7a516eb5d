/* mtsctl.h: what every mtsctl command file shares — the command table types, the context, output and IPC helpers. */
#ifndef MTSCTL_H
#define MTSCTL_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

/* Exit status of mtsctl (documented in docs/mtsctl.md and every --help). */
enum mtsctl_exit {
	MTSCTL_OK = 0,
	MTSCTL_EFAIL = 1,     /* the operation failed (the server said why) */
	MTSCTL_EUSAGE = 2,    /* bad command line */
	MTSCTL_EUNREACH = 3,  /* socket missing, or no reply in time */
	MTSCTL_EDENIED = 4,   /* permission denied */
	MTSCTL_ENOTFOUND = 5, /* no such key, agent, or file */
};

enum mtsctl_fmt {
	MTSCTL_FMT_TABLE,
	MTSCTL_FMT_JSON,
};

struct mtsctl_cmd;

/* Global options, already removed from argv before a handler runs. */
struct mtsctl {
	const char *rundir;           /* -r, MTS_RUNDIR, /run/mts */
	enum mtsctl_fmt fmt;          /* -o table|json */
	int timeout_ms;               /* -t, default 5000 */
	const struct mtsctl_cmd *cmd; /* the command running */
};

/*
 * One command: `mtsctl GROUP NAME args...` (NAME NULL: `mtsctl GROUP args`).
 * The handler gets argv[0] = the command's last word and the arguments
 * after it, and returns an enum mtsctl_exit.
 */
struct mtsctl_cmd {
	const char *name;
	int (*fn)(struct mtsctl *, int argc, char **argv);
	const char *synopsis; /* arguments, e.g. "[--hashes] [PREFIX]" */
	const char *summary;  /* one line, for the command list */
	const char *help;     /* DESCRIPTION and OPTIONS text of --help */
};

/* A group of commands, one per cli/cmd_<group>.c file. */
struct mtsctl_group {
	const char *name;
	const char *summary;
	const struct mtsctl_cmd *cmds; /* ended by an entry with fn NULL */
};

/* Every group, in help order, NULL-terminated (cli/commands.c). */
extern const struct mtsctl_group *const mtsctl_groups[];
/* Groups after whose name -t is their own option (exec -t, as docker has
 * it) rather than the global timeout; NULL-terminated. */
extern const struct mtsctl_group *const mtsctl_groups_own_t[];

/* A command with no JSON form: -o json is refused with the reason (exit 2)
 * rather than ignored. Every other command prints JSON under -o json
 * (tests/integration/mtsctl_json.sh runs them all). */
struct mtsctl_no_json {
	const struct mtsctl_group *group;
	const char *cmd; /* NULL: the group's only command */
	const char *why;
};
/* Ended by an entry with group NULL (cli/commands.c). */
extern const struct mtsctl_no_json mtsctl_no_json[];

/* Prints "mtsctl: ..." to stderr. */
void mtsctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the usage line of the running command and returns MTSCTL_EUSAGE. */
int mtsctl_usage(const struct mtsctl *);
/* After a getopt loop: whether it stopped at a "--" (argv[optind - 1],
 * unless that is last, the last option's value), i.e. nothing came between
 * the options and "--" (task run -- CMD: the image is missing, not "CMD").
 * getopt clears optarg when it ends: the loop keeps last itself. */
int mtsctl_dashdash_ended(char **argv, int optind_, const char *last);

/*
 * Sends req to the agent's socket (mts_ipc_sock_path: "init" is admin.sock)
 * and waits for the reply (the caller frees it with
 * protobuf_c_message_free_unpacked). On failure prints a message saying
 * what went wrong (missing socket, permission denied, server error) and
 * returns the exit status; 0 on success.
 */
int mtsctl_call(struct mtsctl *, const char *agent, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *reply_desc, ProtobufCMessage **reply);

/* Like mtsctl_call but prints nothing: 0, or a negated enum mts_err with
 * the reason in err (-MTS_ERR_NOTFOUND: the socket does not exist). */
int mtsctl_try_call(struct mtsctl *, const char *agent, ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *reply_desc, ProtobufCMessage **reply,
    char *err, size_t errlen);
/* The exit status for a negated enum mts_err. */
int mtsctl_exit_for(int err);

/* Output: a table column maps a JSON field of each row to a header. */
struct mtsctl_col {
	const char *field;
	const char *header;
};

/* Prints rows (a JSON array of objects; stolen) as a table with the given
 * columns (NULL-terminated) or as JSON, as -o says. */
void mtsctl_print_rows(const struct mtsctl *, json_t *rows,
    const struct mtsctl_col *cols);
/* Prints one object (stolen) as "Field: value" lines or as JSON. */
void mtsctl_print_obj(const struct mtsctl *, json_t *obj,
    const struct mtsctl_col *cols);
/* Bytes as text for people (tables): printable ASCII and valid UTF-8
 * kept, other bytes (controls, invalid sequences, a backslash) as \xNN. */
json_t *mtsctl_json_bytes(const uint8_t *p, size_t len);
/* Any protobuf-c message as a JSON object, by its descriptor (pbjson.c). */
json_t *mtsctl_pb_json(const ProtobufCMessage *);
/* The bytes one value of field f takes in its message's C struct (one
 * element, for a repeated field). */
size_t mtsctl_pb_value_size(const ProtobufCFieldDescriptor *f);
/* Whether p holds only valid UTF-8 (RFC 3629). */
int mtsctl_utf8_valid(const uint8_t *p, size_t len);
/* Sets obj[field] to bytes: for -o json the exact text when they are valid
 * UTF-8 (JSON escapes do the rest), else obj[field + "_base64"] in
 * standard base64; for tables the mtsctl_json_bytes text. */
void mtsctl_json_set_bytes(const struct mtsctl *, json_t *obj,
    const char *field, const uint8_t *p, size_t len);
/* Lowercase hex of bytes as a JSON string. */
json_t *mtsctl_json_hex(const uint8_t *p, size_t len);
/* "3d4h", "2m5s", "850ms" for a duration. */
void mtsctl_fmt_duration(char *out, size_t outlen, uint64_t ms);

#endif
