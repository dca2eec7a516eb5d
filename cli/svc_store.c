/* svc_store.c: the service records s/<stack>_<service> through the local statestore — read, compare-and-set write, delete and list — and their rolling update status u/<stack>_<service>, for mtsctl's deploy, plan, service and stack commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconciled.pb-c.h"
#include "shim.pb-c.h"
#include "statestore.pb-c.h"
#include "svc_spec.h"
#include "xmalloc.h"

#define SVC_PREFIX "s/"
#define UPD_PREFIX "u/" /* UpdateStatus, written by the owner */
#define SCAN_PAGE 1000

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
	char *key = xasprintf(SVC_PREFIX "%s", name);
	size_t len = mts__service__service_record__get_packed_size(rec);
	uint8_t *buf = xmalloc(len ? len : 1);
	int rc;

	mts__service__service_record__pack(rec, buf);
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

int
mtsctl_upd_get(struct mtsctl *ctx, const char *name,
    Mts__Service__UpdateStatus **out)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep = NULL;
	char *key = xasprintf(UPD_PREFIX "%s", name);
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
	    (*out = mts__service__update_status__unpack(NULL, r->value.len,
	         r->value.data)) == NULL)
		mtsctl_err("warning: u/%s does not hold an update status "
		           "(ignored)",
		    name);
	if (rep)
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	free(key);
	return rc;
}

/* Appends the live records of one scan page; returns whether more. */
static int
take_page(const Mts__Statestore__ScanRep *sr, struct svc_rec **out, size_t *n,
    char *after, size_t afterlen)
{
	size_t i;

	for (i = 0; i < sr->n_items; i++) {
		const Mts__KeyRecord *kr = sr->items[i];
		char *name = xmalloc(kr->key.len + 1);

		memcpy(name, kr->key.data, kr->key.len);
		name[kr->key.len] = '\0';
		snprintf(after, afterlen, "%s", name);
		*out = xreallocarray(*out, *n + 1, sizeof(**out));
		from_record(name + strlen(SVC_PREFIX), kr->record, &(*out)[*n]);
		if ((*out)[*n].rec != NULL)
			(*n)++;
		else
			mtsctl_svc_rec_clear(&(*out)[*n]);
		free(name);
	}
	return sr->more;
}

int
mtsctl_svc_list(struct mtsctl *ctx, struct svc_rec **out, size_t *n)
{
	char after[512] = "";
	int rc, more = 1;

	*out = NULL;
	*n = 0;
	while (more) {
		Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
		Mts__Statestore__ScanReq s = MTS__STATESTORE__SCAN_REQ__INIT;
		Mts__Statestore__Reply *rep = NULL;

		s.prefix.data = (uint8_t *)SVC_PREFIX;
		s.prefix.len = strlen(SVC_PREFIX);
		s.start_after.data = (uint8_t *)after;
		s.start_after.len = strlen(after);
		s.limit = SCAN_PAGE;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
		req.scan = &s;
		if ((rc = ss(ctx, &req, &rep)) != 0) {
			mtsctl_svc_list_free(*out, *n);
			*out = NULL;
			*n = 0;
			return rc;
		}
		more = rep->scan
		    ? take_page(rep->scan, out, n, after, sizeof(after))
		    : 0;
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	return 0;
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

/* Hands each decodable task of one scan page to fn; returns whether more. */
static int
task_page(const Mts__Statestore__ScanRep *sr, char *after, size_t afterlen,
    mtsctl_task_fn fn, void *arg)
{
	size_t k;

	for (k = 0; k < sr->n_items; k++) {
		const Mts__KeyRecord *kr = sr->items[k];
		Mts__Shim__TaskStatus *t;
		char node[33];

		snprintf(after, afterlen, "%.*s", (int)kr->key.len,
		    (const char *)kr->key.data);
		if (kr->record == NULL || kr->record->tombstone ||
		    kr->key.len < 2 + 32 ||
		    (t = mts__shim__task_status__unpack(NULL,
		         kr->record->value.len, kr->record->value.data)) ==
		        NULL)
			continue;
		memcpy(node, kr->key.data + 2, 32);
		node[32] = '\0';
		fn(arg, node, t);
		mts__shim__task_status__free_unpacked(t, NULL);
	}
	return sr->more;
}

int
mtsctl_task_scan(struct mtsctl *ctx, mtsctl_task_fn fn, void *arg)
{
	char after[512] = "t/";
	int more = 1, rc;

	while (more) {
		Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
		Mts__Statestore__ScanReq s = MTS__STATESTORE__SCAN_REQ__INIT;
		Mts__Statestore__Reply *rep = NULL;

		s.prefix.data = (uint8_t *)"t/";
		s.prefix.len = 2;
		s.start_after.data = (uint8_t *)after;
		s.start_after.len = strlen(after);
		s.limit = SCAN_PAGE;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
		req.scan = &s;
		if ((rc = ss(ctx, &req, &rep)) != 0)
			return rc;
		more = rep->scan
		    ? task_page(rep->scan, after, sizeof(after), fn, arg)
		    : 0;
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	return 0;
}

/* Hands each decodable p/ record of one scan page to fn. */
static int
placement_page(const Mts__Statestore__ScanRep *sr, char *after, size_t afterlen,
    mtsctl_placement_fn fn, void *arg)
{
	size_t k;

	for (k = 0; k < sr->n_items; k++) {
		const Mts__KeyRecord *kr = sr->items[k];
		Mts__Reconciled__PlacementStatus *p;
		char *name;

		snprintf(after, afterlen, "%.*s", (int)kr->key.len,
		    (const char *)kr->key.data);
		if (kr->record == NULL || kr->record->tombstone ||
		    kr->key.len < 3 ||
		    (p = mts__reconciled__placement_status__unpack(NULL,
		         kr->record->value.len, kr->record->value.data)) ==
		        NULL)
			continue;
		name = xmalloc(kr->key.len - 2 + 1);
		memcpy(name, kr->key.data + 2, kr->key.len - 2);
		name[kr->key.len - 2] = '\0';
		fn(arg, name, p);
		free(name);
		mts__reconciled__placement_status__free_unpacked(p, NULL);
	}
	return sr->more;
}

int
mtsctl_placement_scan(struct mtsctl *ctx, mtsctl_placement_fn fn, void *arg)
{
	char after[512] = "p/";
	int more = 1, rc;

	while (more) {
		Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
		Mts__Statestore__ScanReq s = MTS__STATESTORE__SCAN_REQ__INIT;
		Mts__Statestore__Reply *rep = NULL;

		s.prefix.data = (uint8_t *)"p/";
		s.prefix.len = 2;
		s.start_after.data = (uint8_t *)after;
		s.start_after.len = strlen(after);
		s.limit = SCAN_PAGE;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
		req.scan = &s;
		if ((rc = ss(ctx, &req, &rep)) != 0)
			return rc;
		more = rep->scan
		    ? placement_page(rep->scan, after, sizeof(after), fn, arg)
		    : 0;
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
	return 0;
}
