/* svc_store.c: the service records s/<stack>_<service> through the local statestore — read, compare-and-set write, delete and list — and their rolling update status u/<stack>_<service>, for mtsctl's deploy, plan, service and stack commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconciled.pb-c.h"
#include "shim.pb-c.h"
#include "statestore.pb-c.h"
#include "store_scan.h"
#include "svc_spec.h"
#include "svcrec.h"
#include "xmalloc.h"

#define SVC_PREFIX "s/"
#define UPD_PREFIX "u/" /* UpdateStatus, written by the owner */

static int
ss(struct mtsctl *ctx, Mts__Statestore__Request *req,
    Mts__Statestore__Reply **rep)
{
	return mtsctl_call(ctx, "statestore", &req->base,
	    &mts__statestore__reply__descriptor, (ProtobufCMessage **)rep);
}

/* Fills out from a stored record (a tombstone or a value that does not
 * decode counts as absent, with a warning for the latter). */
static void
from_record(const char *name, const Mts__Record *r, struct svc_rec *out)
{
	memset(out, 0, sizeof(*out));
	out->name = xstrdup(name);
	if (r == NULL)
		return;
	out->hlc = r->hlc;
	if (r->origin.len == sizeof(out->origin))
		memcpy(out->origin, r->origin.data, sizeof(out->origin));
	if (r->tombstone)
		return;
	out->rec = mts__service__service_record__unpack(NULL, r->value.len,
	    r->value.data);
	if (out->rec == NULL || out->rec->spec == NULL)
		mtsctl_err("warning: s/%s does not hold a service record "
		           "(ignored)",
		    name);
	if (out->rec && out->rec->spec == NULL) {
		mts__service__service_record__free_unpacked(out->rec, NULL);
		out->rec = NULL;
	}
}

int
mtsctl_svc_get(struct mtsctl *ctx, const char *name, struct svc_rec *out)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	char *key = xasprintf(SVC_PREFIX "%s", name);
	int rc;

	memset(out, 0, sizeof(*out)); /* cleared even when the call fails */
	g.key.data = (uint8_t *)key;
	g.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &g;
	rc = ss(ctx, &req, &rep);
	if (rc == 0)
		from_record(name,
		    rep->get && rep->get->found ? rep->get->record : NULL, out);
	if (rep)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	free(key);
	return rc;
}

int
mtsctl_svc_put(struct mtsctl *ctx, const char *name,
    const Mts__Service__ServiceRecord *rec, const struct svc_rec *cur)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq p = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	Mts__Service__ServiceRecord r = *rec;
	char *key = xasprintf(SVC_PREFIX "%s", name);
	size_t len;
	uint8_t *buf;
	int rc;

	/* a later version carries when the service was created */
	r.created_hlc = cur->rec ? mts_svc_created(cur->rec, cur->hlc) : 0;
	len = mts__service__service_record__get_packed_size(&r);
	buf = xmalloc(len ? len : 1);
	mts__service__service_record__pack(&r, buf);
	p.key.data = (uint8_t *)key;
	p.key.len = strlen(key);
	p.value.data = buf;
	p.value.len = len;
	p.has_expected = 1;
	p.expected_hlc = cur->hlc;
	if (cur->hlc) {
		p.expected_origin.data = (uint8_t *)cur->origin;
		p.expected_origin.len = sizeof(cur->origin);
	}
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &p;
	rc = ss(ctx, &req, &rep);
	if (rep)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	free(key);
	free(buf);
	return rc;
}

int
mtsctl_svc_delete(struct mtsctl *ctx, const char *name)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__DeleteReq d = MTS__STATESTORE__DELETE_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	char *key = xasprintf(SVC_PREFIX "%s", name);
	int rc;

	d.key.data = (uint8_t *)key;
	d.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
	req.delete_ = &d;
	rc = ss(ctx, &req, &rep);
	if (rep)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	free(key);
	return rc;
}

int
mtsctl_svc_need(struct mtsctl *ctx, const char *name, struct svc_rec *r)
{
	int rc = mtsctl_svc_get(ctx, name, r);

	if (rc == 0 && r->rec == NULL) {
		mtsctl_err("%s: no such service", name);
		rc = MTSCTL_ENOTFOUND;
	}
	if (rc != 0)
		mtsctl_svc_rec_clear(r);
	return rc;
}

/* The record at prefix+name unpacked as desc (NULL: none, or it does
 * not decode, with a warning). An exit status. */
static int
msg_get(struct mtsctl *ctx, const char *prefix, const char *name,
    const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	char *key = xasprintf("%s%s", prefix, name);
	const Mts__Record *r;
	int rc;

	*out = NULL;
	g.key.data = (uint8_t *)key;
	g.key.len = strlen(key);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &g;
	rc = ss(ctx, &req, &rep);
	if (rc == 0 && rep->get && rep->get->found &&
	    (r = rep->get->record) != NULL && !r->tombstone &&
	    (*out = protobuf_c_message_unpack(desc, NULL, r->value.len,
	         r->value.data)) == NULL)
		mtsctl_err("warning: %s does not hold a %s (ignored)", key,
		    desc->short_name);
	if (rep)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	free(key);
	return rc;
}

int
mtsctl_upd_get(struct mtsctl *ctx, const char *name,
    Mts__Service__UpdateStatus **out)
{
	return msg_get(ctx, UPD_PREFIX, name,
	    &mts__service__update_status__descriptor, (ProtobufCMessage **)out);
}

int
mtsctl_placement_get(struct mtsctl *ctx, const char *name,
    Mts__Reconciled__PlacementStatus **out)
{
	return msg_get(ctx, "p/", name,
	    &mts__reconciled__placement_status__descriptor,
	    (ProtobufCMessage **)out);
}

struct svc_list {
	struct svc_rec *l;
	size_t n;
};

/* Appends one s/ record that decodes to the list. */
static int
take_svc(void *arg, const char *key, size_t len, const Mts__Record *rec)
{
	struct svc_list *sl = arg;

	sl->l = xreallocarray(sl->l, sl->n + 1, sizeof(*sl->l));
	from_record(key + strlen(SVC_PREFIX), rec, &sl->l[sl->n]);
	if (sl->l[sl->n].rec != NULL)
		sl->n++;
	else
		mtsctl_svc_rec_clear(&sl->l[sl->n]);
	return 0;
}

int
mtsctl_svc_list(struct mtsctl *ctx, struct svc_rec **out, size_t *n)
{
	struct svc_list sl = { NULL, 0 };
	int rc;

	if ((rc = mtsctl_scan_prefix(ctx, SVC_PREFIX, take_svc, &sl, NULL,
	         0)) != 0) {
		mtsctl_svc_list_free(sl.l, sl.n);
		sl.l = NULL;
		sl.n = 0;
	}
	*out = sl.l;
	*n = sl.n;
	return rc;
}

void
mtsctl_svc_rec_clear(struct svc_rec *r)
{
	free(r->name);
	if (r->rec)
		mts__service__service_record__free_unpacked(r->rec, NULL);
	memset(r, 0, sizeof(*r));
}

void
mtsctl_svc_list_free(struct svc_rec *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		mtsctl_svc_rec_clear(&l[i]);
	free(l);
}

/* The caller's callback of a task or placement scan. */
struct scan_cb {
	mtsctl_task_fn task;
	mtsctl_placement_fn placement;
	void *arg;
};

/* Hands a t/<node>/<task> record that decodes to the task callback. */
static int
take_task(void *arg, const char *key, size_t len, const Mts__Record *rec)
{
	const struct scan_cb *cb = arg;
	Mts__Shim__TaskStatus *t;
	char node[33];

	if (len < 2 + 32 ||
	    (t = mts__shim__task_status__unpack(NULL, rec->value.len,
	         rec->value.data)) == NULL)
		return 0;
	memcpy(node, key + 2, 32);
	node[32] = '\0';
	cb->task(cb->arg, node, t);
	mts__shim__task_status__free_unpacked(t, NULL);
	return 0;
}

int
mtsctl_task_scan(struct mtsctl *ctx, mtsctl_task_fn fn, void *arg)
{
	struct scan_cb cb = { fn, NULL, arg };

	return mtsctl_scan_prefix(ctx, "t/", take_task, &cb, NULL, 0);
}

/* Hands a p/<service> record that decodes to the placement callback. */
static int
take_placement(void *arg, const char *key, size_t len, const Mts__Record *rec)
{
	const struct scan_cb *cb = arg;
	Mts__Reconciled__PlacementStatus *p;

	if (len < 3 ||
	    (p = mts__reconciled__placement_status__unpack(NULL, rec->value.len,
	         rec->value.data)) == NULL)
		return 0;
	cb->placement(cb->arg, key + 2, p);
	mts__reconciled__placement_status__free_unpacked(p, NULL);
	return 0;
}

int
mtsctl_placement_scan(struct mtsctl *ctx, mtsctl_placement_fn fn, void *arg)
{
	struct scan_cb cb = { NULL, fn, arg };

	return mtsctl_scan_prefix(ctx, "p/", take_placement, &cb, NULL, 0);
}
