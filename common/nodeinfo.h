/* nodeinfo.h: the n/<node> record (proto/node.proto) as a plain struct — decode and encode for every reader (placement, reconciled, mtsctl), and the read-modify-write under the statestore's compare-and-set that lets several agents of one node each update their own fields of it. */
#ifndef MTS_NODEINFO_H
#define MTS_NODEINFO_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

#define MTS_NODEINFO_PREFIX "n/"
#define MTS_NODEINFO_KEY_LEN (2 + MTS_NODE_HEX_LEN) /* "n/<32 hex>" */
#define MTS_NODEINFO_MAX_VERSIONS 16
#define MTS_NODEINFO_CAS_TRIES 12  /* conflicts before an update gives up */
#define MTS_NODEINFO_BACKOFF_MS 10 /* after a conflict, doubling to 320 */

/* Whether a node takes new tasks (Swarm's node availability). */
enum mts_availability {
	MTS_AVAIL_ACTIVE = 0, /* takes new tasks */
	MTS_AVAIL_PAUSE,      /* no new tasks; its tasks stay */
	MTS_AVAIL_DRAIN,      /* no new tasks; owners move its tasks away */
	MTS_AVAIL_N,
};

struct mts_agent_version {
	char agent[32];
	char version[32];
};

/* Strings are cut to their buffers; a record with more versions keeps
 * the first MTS_NODEINFO_MAX_VERSIONS. */
struct mts_nodeinfo {
	char hostname[256];
	char os[65], arch[65]; /* as uname(2) has them */
	uint32_t cpu_millis;   /* capacity after the reserve */
	uint64_t memory;
	enum mts_availability availability;
	char overlay_subnet[64];
	struct mts_agent_version versions[MTS_NODEINFO_MAX_VERSIONS];
	size_t nversions;
	uint64_t updated_at_ms;      /* Unix ms */
	uint64_t availability_at_ms; /* Unix ms */
};

/* "active", "pause", "drain". */
const char *mts_availability_str(enum mts_availability);
/* Parses those three names (and "" as active). 0 or -MTS_ERR_INVAL. */
int mts_availability_parse(const char *, enum mts_availability *);

/* "n/<hex>" into out (at least MTS_NODEINFO_KEY_LEN + 1 bytes). */
void mts_nodeinfo_key(char *out, size_t outlen, const char *node_hex);
/* The node id (hex) of an n/ key, 0; -1 when key is not "n/<32 hex>". */
int mts_nodeinfo_key_node(const uint8_t *key, size_t klen,
    char hex[MTS_NODE_HEX_LEN + 1]);

/* Decodes a record's value. 0 or -MTS_ERR_INVAL (not a NodeInfo, or an
 * unknown availability). */
int mts_nodeinfo_decode(const uint8_t *buf, size_t len, struct mts_nodeinfo *);
/* Encodes; the returned buffer (malloc'ed, *len bytes) is the caller's. */
uint8_t *mts_nodeinfo_encode(const struct mts_nodeinfo *, size_t *len);
/* Sets agent's version; 1 if that changed the record, else 0. */
int mts_nodeinfo_set_version(struct mts_nodeinfo *, const char *agent,
    const char *version);
/* The version recorded for agent, NULL if none. */
const char *mts_nodeinfo_version(const struct mts_nodeinfo *,
    const char *agent);

/*
 * Read-modify-write of n/<self> on the node's statestore (asynchronous,
 * on the client's loop): reads the record, calls edit on it (a zeroed
 * struct when there is none), and when edit returns 1 writes it back
 * with updated_at_ms set, under compare-and-set against the record read;
 * a conflict (another agent of the node wrote in between) starts again
 * from the read after a short wait on the client's loop (10 ms doubling
 * to 320 ms), up to MTS_NODEINFO_CAS_TRIES times. edit touches only
 * its own fields and returns 1 (write), 0 (nothing to change: no write)
 * or a negative mts_err (give up). done runs once, never from inside
 * this call: rc 0 with the record as it is now, or a negative mts_err
 * with err (-MTS_ERR_CANCELED when the client closes). edit and done
 * run on the loop's thread; earg and darg must live until done.
 */
struct mts_ipc_async;
typedef int (*mts_nodeinfo_edit_fn)(struct mts_nodeinfo *, void *arg);
typedef void (*mts_nodeinfo_done_fn)(void *arg, int rc,
    const struct mts_nodeinfo *now, const char *err);
/* 0, or -MTS_ERR_IO when the client is closing (done will not run). */
int mts_nodeinfo_update(struct mts_ipc_async *store, const char *self_hex,
    mts_nodeinfo_edit_fn edit, void *earg, mts_nodeinfo_done_fn done,
    void *darg);

/* Blocking read of n/<node> over a blocking statestore client (for an
 * agent's start, before its loop runs): 1 found (into *out), 0 none or
 * a tombstone (*out zeroed), or a negative mts_err with err. */
struct mts_ipc_client;
int mts_nodeinfo_get(struct mts_ipc_client *, const char *node_hex,
    struct mts_nodeinfo *out, char *err, size_t errlen);

#endif
