/* cmd_state.c: `mtsctl state get|put|rm|ls|root` — debug access to the local replica over statestore.sock. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "hash.h"
#include "mtsctl.h"
#include "record.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

#define SCAN_PAGE 1000
#define MAX_VALUE (1u << 20)

static int
ss_call(struct mtsctl *ctx, Mts__Statestore__Request *req,
    Mts__Statestore__Reply **rep, Mts__Statestore__Reply__BodyCase want)
{
	int rc = mtsctl_call(ctx, "statestore", &req->base,
	    &mts__statestore__reply__descriptor, (ProtobufCMessage **)rep);

	if (rc == 0 && (*rep)->body_case != want) {
		mtsctl_err("statestore sent an unexpected reply");
		protobuf_c_message_free_unpacked(&(*rep)->base, NULL);
		*rep = NULL;
		return MTSCTL_EFAIL;
	}
	return rc;
}

/* rh of a record as the statestore computes it (common/record.c), so
 * `ls --hashes` matches the MST's items. */
static void
record_rh(const Mts__Record *r, uint8_t rh[MTS_HASH_LEN])
{
	struct mts_record rec = { .hlc = r->hlc,
		.tombstone = r->tombstone,
		.value = r->value.data,
		.vlen = r->value.len };

	if (r->origin.len > 0)
		memcpy(rec.origin, r->origin.data,
		    r->origin.len < sizeof(rec.origin) ? r->origin.len
		                                       : sizeof(rec.origin));
	mts_record_hash(&rec, rh);
}

/* A record as JSON: key and value are bytes (mtsctl_json_set_bytes: text
 * when valid UTF-8, else key_base64/value_base64 under -o json). */
static json_t *
record_json(const struct mtsctl *ctx, const uint8_t *key, size_t klen,
    const Mts__Record *r)
{
	uint8_t rh[MTS_HASH_LEN];
	json_t *o;

	record_rh(r, rh);
	o = json_pack("{sI so sb sI so}", "hlc", (json_int_t)r->hlc, "origin",
	    mtsctl_json_hex(r->origin.data, r->origin.len), "tombstone",
	    r->tombstone, "size", (json_int_t)r->value.len, "rh",
	    mtsctl_json_hex(rh, sizeof(rh)));
	mtsctl_json_set_bytes(ctx, o, "key", key, klen);
	mtsctl_json_set_bytes(ctx, o, "value", r->value.data, r->value.len);
	return o;
}

static const struct mtsctl_col record_cols[] = {
	{ "key", "key:" },
	{ "value", "value:" },
	{ "hlc", "hlc:" },
	{ "origin", "origin:" },
	{ "tombstone", "tombstone:" },
	{ "rh", "rh:" },
	{ NULL, NULL },
};

static int
cmd_get(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = { { "value", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 } };
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__GetReq g = MTS__STATESTORE__GET_REQ__INIT;
	Mts__Statestore__Reply *rep;
	int c, raw = 0, rc;

	while ((c = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		if (c != 'v')
			return mtsctl_usage(ctx);
		raw = 1;
	}
	if (argc - optind != 1)
		return mtsctl_usage(ctx);
	g.key.data = (uint8_t *)argv[optind];
	g.key.len = strlen(argv[optind]);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
	req.get = &g;
	if ((rc = ss_call(ctx, &req, &rep, MTS__STATESTORE__REPLY__BODY_GET)))
		return rc;
	if (!rep->get->found || rep->get->record == NULL ||
	    (raw && rep->get->record->tombstone)) {
		mtsctl_err("%s: not found", argv[optind]);
		rc = MTSCTL_ENOTFOUND;
	} else if (raw && ctx->fmt == MTSCTL_FMT_JSON) {
		json_t *o = json_object();

		mtsctl_json_set_bytes(ctx, o, "value",
		    rep->get->record->value.data, rep->get->record->value.len);
		mtsctl_print_obj(ctx, o, NULL);
	} else if (raw) {
		fwrite(rep->get->record->value.data, 1,
		    rep->get->record->value.len, stdout);
	} else {
		mtsctl_print_obj(ctx,
		    record_json(ctx, g.key.data, g.key.len, rep->get->record),
		    record_cols);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return rc;
}

/* Reads stdin (at most MAX_VALUE bytes) into *out; the caller frees it. */
static int
read_stdin(uint8_t **out, size_t *len)
{
	uint8_t *buf = xmalloc(MAX_VALUE + 1);
	size_t n = 0, r;

	while ((r = fread(buf + n, 1, MAX_VALUE + 1 - n, stdin)) > 0)
		n += r;
	if (n > MAX_VALUE) {
		free(buf);
		mtsctl_err("value on stdin is larger than %u bytes", MAX_VALUE);
		return MTSCTL_EUSAGE;
	}
	*out = buf;
	*len = n;
	return 0;
}

static int
cmd_put(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__PutReq p = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Statestore__Reply *rep;
	uint8_t *in = NULL;
	int rc;

	if (argc != 3)
		return mtsctl_usage(ctx);
	p.key.data = (uint8_t *)argv[1];
	p.key.len = strlen(argv[1]);
	if (strcmp(argv[2], "-") == 0) {
		if ((rc = read_stdin(&in, &p.value.len)) != 0)
			return rc;
		p.value.data = in;
	} else {
		p.value.data = (uint8_t *)argv[2];
		p.value.len = strlen(argv[2]);
	}
	req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
	req.put = &p;
	rc = ss_call(ctx, &req, &rep, MTS__STATESTORE__REPLY__BODY_PUT);
	free(in);
	if (rc != 0)
		return rc;
	if (rep->put->record != NULL)
		mtsctl_print_obj(ctx,
		    record_json(ctx, p.key.data, p.key.len, rep->put->record),
		    record_cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_rm(struct mtsctl *ctx, int argc, char **argv)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__DeleteReq d = MTS__STATESTORE__DELETE_REQ__INIT;
	Mts__Statestore__Reply *rep;
	int rc;

	if (argc != 2)
		return mtsctl_usage(ctx);
	d.key.data = (uint8_t *)argv[1];
	d.key.len = strlen(argv[1]);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_DELETE;
	req.delete_ = &d;
	rc = ss_call(ctx, &req, &rep, MTS__STATESTORE__REPLY__BODY_DELETE);
	if (rc != 0)
		return rc;
	if (rep->delete_->record != NULL)
		mtsctl_print_obj(ctx,
		    record_json(ctx, d.key.data, d.key.len,
		        rep->delete_->record),
		    record_cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

/* One scan page after *after (updated to the page's last key); appends the
 * rows and tells whether more follow. */
static int
scan_page(struct mtsctl *ctx, const char *prefix, int tombs,
    struct mts_buf *after, json_t *rows, int *more)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__ScanReq s = MTS__STATESTORE__SCAN_REQ__INIT;
	Mts__Statestore__Reply *rep;
	Mts__KeyRecord *kr;
	size_t i;
	int rc;

	s.prefix.data = (uint8_t *)prefix;
	s.prefix.len = strlen(prefix);
	s.start_after.data = after->data;
	s.start_after.len = after->len;
	s.limit = SCAN_PAGE;
	s.include_tombstones = tombs;
	req.body_case = MTS__STATESTORE__REQUEST__BODY_SCAN;
	req.scan = &s;
	if ((rc = ss_call(ctx, &req, &rep, MTS__STATESTORE__REPLY__BODY_SCAN)))
		return rc;
	for (i = 0; i < rep->scan->n_items; i++) {
		kr = rep->scan->items[i];
		if (kr->record != NULL)
			json_array_append_new(rows,
			    record_json(ctx, kr->key.data, kr->key.len,
			        kr->record));
	}
	*more = rep->scan->more && rep->scan->n_items > 0;
	if (rep->scan->n_items > 0) {
		kr = rep->scan->items[rep->scan->n_items - 1];
		mts_buf_reset(after);
		mts_buf_put(after, kr->key.data, kr->key.len);
	}
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static int
cmd_ls(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "hashes", no_argument, NULL, 'H' },
		{ "tombstones", no_argument, NULL, 'a' }, { NULL, 0, NULL, 0 }
	};
	static const struct mtsctl_col cols[] = { { "key", "KEY" },
		{ "size", "SIZE" }, { "hlc", "HLC" },
		{ "tombstone", "DELETED" }, { NULL, NULL } };
	static const struct mtsctl_col hcols[] = { { "key", "KEY" },
		{ "rh", "RH" }, { NULL, NULL } };
	int c, hashes = 0, tombs = 0, more = 1, rc = 0;
	struct mts_buf after;
	json_t *rows;

	while ((c = getopt_long(argc, argv, "Ha", lo, NULL)) != -1) {
		if (c == 'H')
			hashes = 1;
		else if (c == 'a')
			tombs = 1;
		else
			return mtsctl_usage(ctx);
	}
	if (argc - optind > 1)
		return mtsctl_usage(ctx);
	rows = json_array();
	mts_buf_init(&after);
	while (more && rc == 0)
		rc = scan_page(ctx, optind < argc ? argv[optind] : "",
		    tombs || hashes, &after, rows, &more);
	mts_buf_free(&after);
	if (rc == 0)
		mtsctl_print_rows(ctx, rows, hashes ? hcols : cols);
	else
		json_decref(rows);
	return rc;
}

static int
cmd_root(struct mtsctl *ctx, int argc, char **argv)
{
	static const struct mtsctl_col cols[] = { { "hash", "root:" },
		{ "records", "records:" }, { "live", "live:" },
		{ "pages", "pages:" }, { NULL, NULL } };
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq r = MTS__STATESTORE__ROOT_REQ__INIT;
	Mts__Statestore__Reply *rep;
	int rc;

	if (argc != 1)
		return mtsctl_usage(ctx);
	req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
	req.root = &r;
	if ((rc = ss_call(ctx, &req, &rep, MTS__STATESTORE__REPLY__BODY_ROOT)))
		return rc;
	mtsctl_print_obj(ctx,
	    json_pack("{so sI sI sI}", "hash",
	        mtsctl_json_hex(rep->root->hash.data, rep->root->hash.len),
	        "records", (json_int_t)rep->root->records, "live",
	        (json_int_t)rep->root->live, "pages",
	        (json_int_t)rep->root->pages),
	    cols);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return 0;
}

static const struct mtsctl_cmd cmds[] = {
	{ "get", cmd_get, "[-v|--value] KEY", "show one record",
	    "DESCRIPTION\n"
	    "    Reads KEY from the local replica (statestore.sock) and shows\n"
	    "    its record: value (UTF-8 as is, other bytes as \\xNN), hlc,\n"
	    "    origin node id, tombstone flag and rh, the record hash the\n"
	    "    Merkle Search Tree uses. A deleted key shows its tombstone.\n"
	    "    With -o json a value (or key) that is valid UTF-8 is a JSON\n"
	    "    string, \"value\"; any other is base64 in \"value_base64\".\n"
	    "\nOPTIONS\n"
	    "    -v, --value   print only the value's raw bytes (exit 5 for a\n"
	    "                  deleted key); with -o json {\"value\": ...} or\n"
	    "                  {\"value_base64\": ...}\n"
	    "\nEXAMPLES\n"
	    "    mtsctl state get c/cluster-name\n"
	    "    mtsctl state get --value s/web > web.spec\n" },
	{ "put", cmd_put, "KEY VALUE|-", "write a record (debug)",
	    "DESCRIPTION\n"
	    "    Writes VALUE (or stdin, for \"-\"; at most 1 MiB) under KEY in\n"
	    "    the local replica with a fresh hlc and this node as origin,\n"
	    "    and prints the new record. It replicates like any write.\n"
	    "    Writing keys owned by an agent can confuse that agent: this\n"
	    "    is a debugging tool.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl state put c/motd 'hello'\n"
	    "    mtsctl state put s/web - < web.spec\n" },
	{ "rm", cmd_rm, "KEY", "delete a record (writes a tombstone)",
	    "DESCRIPTION\n"
	    "    Deletes KEY: writes a tombstone record, which replicates and\n"
	    "    is pruned after the tombstone retention period.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl state rm c/motd\n" },
	{ "ls", cmd_ls, "[--hashes] [--tombstones] [PREFIX]",
	    "list keys under a prefix",
	    "DESCRIPTION\n"
	    "    Lists the keys starting with PREFIX (all keys without one),\n"
	    "    in key order, with value size, hlc and whether deleted.\n"
	    "\nOPTIONS\n"
	    "    -H, --hashes      print each key with its record's rh (hex),\n"
	    "                      tombstones included: two replicas hold the\n"
	    "                      same state exactly when these lists match\n"
	    "    -a, --tombstones  include deleted keys\n"
	    "\nEXAMPLES\n"
	    "    mtsctl state ls n/\n"
	    "    mtsctl state ls --hashes t/ | sha256sum\n" },
	{ "root", cmd_root, "", "show the MST root hash and counts",
	    "DESCRIPTION\n"
	    "    Prints the Merkle Search Tree root hash of the local replica,\n"
	    "    the number of records (tombstones included), live records and\n"
	    "    pages. Equal roots on two nodes mean equal state.\n"
	    "\nEXAMPLES\n"
	    "    mtsctl state root\n" },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct mtsctl_group mtsctl_group_state = { "state",
	"read and write the local replica (debugging)", cmds };
