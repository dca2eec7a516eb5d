/* nodeinfo.c: the n/<node> record — NodeInfo decoded into and encoded from a plain struct, and the asynchronous read-modify-write of n/<self> under the statestore's compare-and-set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "loop.h"
#include "mtserr.h"
#include "mtstime.h"
#include "node.pb-c.h"
#include "nodeinfo.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

static const char *const avail_names[MTS_AVAIL_N] = {
	[MTS_AVAIL_ACTIVE] = "active",
	[MTS_AVAIL_PAUSE] = "pause",
	[MTS_AVAIL_DRAIN] = "drain",
};

const char *
mts_availability_str(enum mts_availability a)
{
	return (unsigned)a < MTS_AVAIL_N ? avail_names[a] : "?";
}

int
mts_availability_parse(const char *s, enum mts_availability *out)
{
	size_t i;

	if (s == NULL || *s == '\0') {
		*out = MTS_AVAIL_ACTIVE;
		return 0;
	}
	for (i = 0; i < MTS_AVAIL_N; i++)
		if (strcmp(s, avail_names[i]) == 0) {
			*out = (enum mts_availability)i;
			return 0;
		}
	return -MTS_ERR_INVAL;
}

void
mts_nodeinfo_key(char *out, size_t outlen, const char *node_hex)
{
	snprintf(out, outlen, "%s%s", MTS_NODEINFO_PREFIX, node_hex);
}

int
mts_nodeinfo_key_node(const uint8_t *key, size_t klen,
    char hex[MTS_NODE_HEX_LEN + 1])
{
	uint8_t id[MTS_NODE_ID_LEN];

	if (klen != MTS_NODEINFO_KEY_LEN || memcmp(key, "n/", 2) != 0 ||
	    mts_unhex(id, sizeof(id), (const char *)key + 2, MTS_NODE_HEX_LEN) <
	        0)
		return -1;
	memcpy(hex, key + 2, MTS_NODE_HEX_LEN);
	hex[MTS_NODE_HEX_LEN] = '\0';
	return 0;
}

static void
copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

int
mts_nodeinfo_decode(const uint8_t *buf, size_t len, struct mts_nodeinfo *ni)
{
	Mts__Node__NodeInfo *m;
	size_t i;
	int rc = 0;

	memset(ni, 0, sizeof(*ni));
	if ((m = mts__node__node_info__unpack(NULL, len, buf)) == NULL)
		return -MTS_ERR_INVAL;
	copy_str(ni->hostname, sizeof(ni->hostname), m->hostname);
	copy_str(ni->os, sizeof(ni->os), m->os);
	copy_str(ni->arch, sizeof(ni->arch), m->arch);
	ni->cpu_millis = m->cpu_millis;
	ni->memory = m->memory;
	if (mts_availability_parse(m->availability, &ni->availability) < 0)
		rc = -MTS_ERR_INVAL;
	copy_str(ni->overlay_subnet, sizeof(ni->overlay_subnet),
	    m->overlay_subnet);
	for (i = 0; i < m->n_versions && i < MTS_NODEINFO_MAX_VERSIONS; i++) {
		copy_str(ni->versions[i].agent, sizeof(ni->versions[i].agent),
		    m->versions[i]->agent);
		copy_str(ni->versions[i].version,
		    sizeof(ni->versions[i].version), m->versions[i]->version);
	}
	ni->nversions = i;
	ni->updated_at_ms = m->updated_at_ms;
	ni->availability_at_ms = m->availability_at_ms;
	mts__node__node_info__free_unpacked(m, NULL);
	return rc;
}

uint8_t *
mts_nodeinfo_encode(const struct mts_nodeinfo *ni, size_t *len)
{
	Mts__Node__NodeInfo m = MTS__NODE__NODE_INFO__INIT;
	Mts__Node__AgentVersion v[MTS_NODEINFO_MAX_VERSIONS];
	Mts__Node__AgentVersion *vp[MTS_NODEINFO_MAX_VERSIONS];
	uint8_t *buf;
	size_t i;

	m.hostname = (char *)ni->hostname;
	m.os = (char *)ni->os;
	m.arch = (char *)ni->arch;
	m.cpu_millis = ni->cpu_millis;
	m.memory = ni->memory;
	m.availability = (char *)mts_availability_str(ni->availability);
	m.overlay_subnet = (char *)ni->overlay_subnet;
	for (i = 0; i < ni->nversions && i < MTS_NODEINFO_MAX_VERSIONS; i++) {
		mts__node__agent_version__init(&v[i]);
		v[i].agent = (char *)ni->versions[i].agent;
		v[i].version = (char *)ni->versions[i].version;
		vp[i] = &v[i];
	}
	m.versions = vp;
	m.n_versions = i;
	m.updated_at_ms = ni->updated_at_ms;
	m.availability_at_ms = ni->availability_at_ms;
	*len = mts__node__node_info__get_packed_size(&m);
	buf = xmalloc(*len + 1);
	mts__node__node_info__pack(&m, buf);
	return buf;
}

const char *
mts_nodeinfo_version(const struct mts_nodeinfo *ni, const char *agent)
{
	size_t i;

	for (i = 0; i < ni->nversions; i++)
		if (strcmp(ni->versions[i].agent, agent) == 0)
			return ni->versions[i].version;
	return NULL;
}

int
mts_nodeinfo_set_version(struct mts_nodeinfo *ni, const char *agent,
    const char *version)
{
	struct mts_agent_version *v = NULL;
	size_t i;

	for (i = 0; i < ni->nversions; i++)
		if (strcmp(ni->versions[i].agent, agent) == 0)
			v = &ni->versions[i];
	if (v != NULL && strcmp(v->version, version) == 0)
		return 0;
	if (v == NULL) {
		if (ni->nversions == MTS_NODEINFO_MAX_VERSIONS)
			return 0;
		v = &ni->versions[ni->nversions++];
		copy_str(v->agent, sizeof(v->agent), agent);
	}
	copy_str(v->version, sizeof(v->version), version);
	return 1;
}

/* --- read-modify-write ------------------------------------------------------------ */

struct nodeinfo_update {
	struct mts_ipc_async *store;
	struct mts_timer retry;
	char key[MTS_NODEINFO_KEY_LEN + 1];
	mts_nodeinfo_edit_fn edit;
	void *earg;
	mts_nodeinfo_done_fn done;
	void *darg;
	int tries;
	struct mts_nodeinfo ni;
	/* what the record read was, for the compare-and-set */
	int exists;
	uint64_t hlc;
	uint8_t origin[MTS_NODE_ID_LEN];
};

static void
finish(struct nodeinfo_update *u, int rc, const char *err)
{
	u->done(u->darg, rc, rc == 0 ? &u->ni : NULL, err ? err : "");
	free(u);
}

static int start_read(struct nodeinfo_update *);

static void
on_retry(void *arg, mts_time_t now)
{
	struct nodeinfo_update *u = arg;

	(void)now;
	if (start_read(u) < 0)
		finish(u, -MTS_ERR_CANCELED, "statestore client closing");
}

/* A conflict: another writer's update landed; read again a little later
 * rather than at once, so two writers do not keep colliding. */
static void
on_put(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct nodeinfo_update *u = arg;
	int shift;

	(void)m;
	if (rc == -MTS_ERR_CONFLICT && ++u->tries < MTS_NODEINFO_CAS_TRIES) {
		shift = u->tries < 6 ? u->tries - 1 : 5;
		mts_timer_arm(mts_ipc_async_loop(u->store), &u->retry,
		    mts_now() + (MTS_NODEINFO_BACKOFF_MS << shift));
		return;
	}
	finish(u, rc, rc < 0 ? err : NULL);
}

static void
write_back(struct nodeinfo_update *u)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	uint8_t *buf;
	size_t len;

	u->ni.updated_at_ms = mts_wall_ms();
	buf = mts_nodeinfo_encode(&u->ni, &len);
	put.key.data = (uint8_t *)u->key;
	put.key.len = strlen(u->key);
	put.value.data = buf;
	put.value.len = len;
	put.has_expected = 1;
	if (u->exists) {
		put.expected_hlc = u->hlc;
		put.expected_origin.data = u->origin;
		put.expected_origin.len = sizeof(u->origin);
	}
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &put;
	if (mts_ipc_async_call(u->store, &req.base,
	        &mts__statestore__reply__descriptor, 0, on_put, u) == NULL)
		finish(u, -MTS_ERR_CANCELED, "statestore client closing");
	free(buf);
}

/* The record as read: decoded (a tombstone or no record: zeroed), edited,
 * written back if edit changed it. */
static void
on_get(void *arg, int rc, const ProtobufCMessage *m, const char *err)
{
	struct nodeinfo_update *u = arg;
	const Mts__Statestore__Reply *rep = (const Mts__Statestore__Reply *)m;
	const Mts__Statestore__GetRep *g = rc == 0 ? rep->get : NULL;
	const Mts__Record *r;
	int e;

	if (rc < 0 || g == NULL) {
		finish(u, rc < 0 ? rc : -MTS_ERR_IO,
		    rc < 0 ? err : "no get in the statestore's reply");
		return;
	}
	memset(&u->ni, 0, sizeof(u->ni));
	u->exists = 0;
	r = g->found ? g->record : NULL;
	if (r != NULL && !r->tombstone && r->origin.len == MTS_NODE_ID_LEN) {
		u->exists = 1;
		u->hlc = r->hlc;
		memcpy(u->origin, r->origin.data, MTS_NODE_ID_LEN);
		/* an undecodable record is replaced by what edit makes */
		if (mts_nodeinfo_decode(r->value.data, r->value.len, &u->ni) <
		    0)
			memset(&u->ni, 0, sizeof(u->ni));
	}
	if ((e = u->edit(&u->ni, u->earg)) <= 0) {
		finish(u, e, e < 0 ? "the edit gave up" : NULL);
		return;
	}
	write_back(u);
}

static int
start_read(struct nodeinfo_update *u)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;

	g.key.data = (uint8_t *)u->key;
	g.key.len = strlen(u->key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &g;
	return mts_ipc_async_call(u->store, &req.base,
	           &mts__statestore__reply__descriptor, 0, on_get, u) == NULL
	    ? -1
	    : 0;
}

int
mts_nodeinfo_update(struct mts_ipc_async *store, const char *self_hex,
    mts_nodeinfo_edit_fn edit, void *earg, mts_nodeinfo_done_fn done,
    void *darg)
{
	struct nodeinfo_update *u = xcalloc(1, sizeof(*u));

	u->store = store;
	mts_timer_init(&u->retry, "nodeinfo retry", on_retry, u);
	mts_nodeinfo_key(u->key, sizeof(u->key), self_hex);
	u->edit = edit;
	u->earg = earg;
	u->done = done;
	u->darg = darg;
	if (start_read(u) < 0) {
		free(u);
		return -MTS_ERR_IO;
	}
	return 0;
}

int
mts_nodeinfo_get(struct mts_ipc_client *c, const char *node_hex,
    struct mts_nodeinfo *out, char *err, size_t errlen)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	const Mts__Record *r;
	char key[MTS_NODEINFO_KEY_LEN + 1];
	int rc;

	memset(out, 0, sizeof(*out));
	mts_nodeinfo_key(key, sizeof(key), node_hex);
	g.key.data = (uint8_t *)key;
	g.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &g;
	if ((rc = mts_ipc_client_call(c, &req.base,
	         &mts__statestore__reply__descriptor, (ProtobufCMessage **)&rep,
	         err, errlen)) < 0)
		return rc;
	r = rep->get && rep->get->found ? rep->get->record : NULL;
	rc = 0;
	if (r != NULL && !r->tombstone) {
		rc = mts_nodeinfo_decode(r->value.data, r->value.len, out);
		if (rc < 0)
			snprintf(err, errlen, "%s: not a NodeInfo record", key);
		else
			rc = 1;
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return rc;
}
