/* cfg.h: mts.conf — INI text parsed (libinih) against a schema, typed getters, and a printer. */
#ifndef MTS_CFG_H
#define MTS_CFG_H

#include <stdint.h>
#include <stdio.h>

enum mts_cfg_type {
	MTS_CFG_STR,
	MTS_CFG_INT,      /* signed decimal */
	MTS_CFG_UINT,     /* decimal digits, 0 to INT64_MAX (counts, limits) */
	MTS_CFG_BOOL,     /* yes/no, true/false, on/off, 1/0 */
	MTS_CFG_DURATION, /* 500ms, 2s, 5m, 1h, 7d; stored in ms */
	MTS_CFG_SIZE,     /* 4096, 64K, 4M, 1G; stored in bytes */
	MTS_CFG_LIST,     /* whitespace- or comma-separated words */
	MTS_CFG_PLAIN,    /* marker entry {"sec", "", MTS_CFG_PLAIN}: [sec]
			     takes only its own keys, no "*" keys */
};

/* One known key. section "*" matches every section that has no schema entry
 * of its own for that key (the per-agent keys init understands). */
struct mts_cfg_schema {
	const char *section;
	const char *key;
	enum mts_cfg_type type;
	const char *def; /* default, NULL = none */
	const char *help;
};

struct mts_cfg_entry {
	char *section;
	char *key;
	char *value;
	int line;
};

/* A parsed file: the entries as written, in order. */
struct mts_cfg {
	char *file;
	const struct mts_cfg_schema *schema;
	struct mts_cfg_entry *e;
	size_t n;
	char **sections; /* every [section] seen, in order */
	size_t nsections;
};

/*
 * mts.conf's schema is assembled from tables: common/confschema.c holds
 * [node] and the "*" keys init needs to run any agent (every agent's section
 * carries them), and each agent contributes the keys of its own section in
 * agents/<agent>/<agent>_conf.c (init its [init] in init/init_schema.c) with
 * MTS_CONF_TABLE. A program knows the tables it links: mts-init and mtsctl
 * link them all (MTS_CONF_SRCS in the module.mk files), an agent its own.
 */
struct mts_conf_table {
	const char *section;
	const struct mts_cfg_schema *keys; /* ends with a NULL key */
};

/* Registers table (a struct mts_conf_table) in this program's schema. */
#define MTS_CONF_TABLE(table) \
	static const struct mts_conf_table *const table##_registered \
	    __attribute__((used, section("mts_conf"), \
	        aligned(sizeof(void *)))) = &(table)

/* This program's schema: [node], the registered tables in section-name
 * order, then the "*" keys. Built once; stays valid. */
const struct mts_cfg_schema *mts_conf_schema(void);

/* Parses text. Unknown keys, duplicate keys and values of the wrong type are
 * errors reported as "FILE:LINE: what" in err. Returns 0 and a new cfg (the
 * caller frees it with mts_cfg_free) or a negative mts_err. */
int mts_cfg_parse(const char *text, const char *file,
    const struct mts_cfg_schema *schema, struct mts_cfg **out, char *err,
    size_t errlen);
/* Reads the file at path (at most 1 MiB) and parses it. */
int mts_cfg_load(const char *path, const struct mts_cfg_schema *schema,
    struct mts_cfg **out, char *err, size_t errlen);
/* The same for an agent: only the sections the schema names and the agent's
 * own section (own) are checked and kept; other agents' sections are
 * skipped, as their keys are theirs and mts-init checks the whole file. */
int mts_cfg_load_agent(const char *path, const struct mts_cfg_schema *schema,
    const char *own, struct mts_cfg **out, char *err, size_t errlen);
void mts_cfg_free(struct mts_cfg *);

int mts_cfg_has_section(const struct mts_cfg *, const char *section);
/* The value as written, or the schema default, or NULL. */
const char *mts_cfg_str(const struct mts_cfg *, const char *section,
    const char *key);
/* The line of an entry (0 when it comes from the default). */
int mts_cfg_line(const struct mts_cfg *, const char *section, const char *key);
int64_t mts_cfg_int(const struct mts_cfg *, const char *, const char *);
int mts_cfg_bool(const struct mts_cfg *, const char *, const char *);
/* Splits a list value into a NULL-terminated array (free with mts_cfg_list_free). */
char **mts_cfg_list(const struct mts_cfg *, const char *, const char *);
void mts_cfg_list_free(char **);

/* Prints the effective configuration (every section seen plus every schema
 * section, all known keys with their effective values); it parses again. */
void mts_cfg_print(const struct mts_cfg *, FILE *);
/* Prints one section the same way: every key that applies to it with its
 * effective value. */
void mts_cfg_print_section(const struct mts_cfg *, const char *section, FILE *);

/* Value parsers shared with the CLI; 0, -MTS_ERR_INVAL (not a value of
 * the type) or -MTS_ERR_TOOBIG (a number beyond int64_t). */
int mts_parse_int(const char *, int64_t *);
/* Digits only (no sign, no spaces), at most INT64_MAX. */
int mts_parse_uint(const char *, int64_t *);
int mts_parse_bool(const char *, int *);
int mts_parse_duration(const char *, int64_t *ms);
int mts_parse_size(const char *, int64_t *bytes);

#endif
