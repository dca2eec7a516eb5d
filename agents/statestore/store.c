/* store.c: RocksDB (C API) behind the small interface the statestore needs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rocksdb/c.h>

#include "mtserr.h"
#include "store.h"
#include "xmalloc.h"

struct mts_store {
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_options_t *cf_opts[2];
	rocksdb_block_based_table_options_t *table;
	rocksdb_cache_t *cache;
	rocksdb_column_family_handle_t *cf[2];
	rocksdb_writeoptions_t *wo;
	rocksdb_readoptions_t *ro;
};

/* A batch is bound to its store: RocksDB batches name column families by
 * the store's handles. */
struct mts_store_batch {
	rocksdb_writebatch_t *wb;
	struct mts_store *st;
};

struct mts_store_iter {
	rocksdb_iterator_t *it;
};

static const char *const cf_names[] = {"records", "meta"};

/* RocksDB reports errors as malloc'ed strings; this moves one into err. */
static int
take_error(char *rerr, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", rerr);
	free(rerr);
	return -MTS_ERR_IO;
}

struct mts_store *
mts_store_open(const char *dir, const struct mts_store_opts *o, char *err,
    size_t errlen)
{
	struct mts_store *st = xcalloc(1, sizeof(*st));
	const char *names[3] = {"default", cf_names[0], cf_names[1]};
	const rocksdb_options_t *cfo[3];
	rocksdb_column_family_handle_t *handles[3];
	char *rerr = NULL;
	int i;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		free(st);
		return NULL;
	}
	st->cache = rocksdb_cache_create_lru(o->cache_bytes);
	st->table = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_cache(st->table, st->cache);
	st->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(st->opts, 1);
	rocksdb_options_set_create_missing_column_families(st->opts, 1);
	rocksdb_options_set_max_open_files(st->opts, 256);
	rocksdb_options_set_keep_log_file_num(st->opts, 2);
	rocksdb_options_set_max_background_jobs(st->opts, 2);
	rocksdb_options_set_block_based_table_factory(st->opts, st->table);
	for (i = 0; i < 2; i++) {
		st->cf_opts[i] = rocksdb_options_create_copy(st->opts);
		rocksdb_options_set_write_buffer_size(st->cf_opts[i],
		    i == MTS_CF_RECORDS ? o->write_buffer : 1 << 20);
		rocksdb_options_set_max_write_buffer_number(st->cf_opts[i], 2);
	}
	cfo[0] = st->opts;
	cfo[1] = st->cf_opts[0];
	cfo[2] = st->cf_opts[1];
	st->db = rocksdb_open_column_families(st->opts, dir, 3, names, cfo,
	    handles, &rerr);
	if (rerr != NULL) {
		take_error(rerr, err, errlen);
		st->db = NULL;
		mts_store_close(st);
		return NULL;
	}
	rocksdb_column_family_handle_destroy(handles[0]);
	st->cf[0] = handles[1];
	st->cf[1] = handles[2];
	st->wo = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(st->wo, o->sync ? 1 : 0);
	st->ro = rocksdb_readoptions_create();
	return st;
}

void
mts_store_close(struct mts_store *st)
{
	int i;

	if (st == NULL)
		return;
	for (i = 0; i < 2; i++)
		if (st->cf[i] != NULL)
			rocksdb_column_family_handle_destroy(st->cf[i]);
	if (st->db != NULL)
		rocksdb_close(st->db);
	if (st->wo != NULL)
		rocksdb_writeoptions_destroy(st->wo);
	if (st->ro != NULL)
		rocksdb_readoptions_destroy(st->ro);
	for (i = 0; i < 2; i++)
		if (st->cf_opts[i] != NULL)
			rocksdb_options_destroy(st->cf_opts[i]);
	rocksdb_options_destroy(st->opts);
	rocksdb_block_based_options_destroy(st->table);
	rocksdb_cache_destroy(st->cache);
	free(st);
}

int
mts_store_get(struct mts_store *st, enum mts_store_cf cf, const void *key,
    size_t klen, uint8_t **val, size_t *vlen, char *err, size_t errlen)
{
	char *rerr = NULL, *v;
	size_t n;

	v = rocksdb_get_cf(st->db, st->ro, st->cf[cf], key, klen, &n, &rerr);
	if (rerr != NULL)
		return take_error(rerr, err, errlen);
	if (v == NULL)
		return -MTS_ERR_NOTFOUND;
	*val = (uint8_t *)v;
	*vlen = n;
	return 0;
}

struct mts_store_batch *
mts_store_batch_new(struct mts_store *st)
{
	struct mts_store_batch *b = xcalloc(1, sizeof(*b));

	b->st = st;
	b->wb = rocksdb_writebatch_create();
	return b;
}

void
mts_store_batch_free(struct mts_store_batch *b)
{
	if (b == NULL)
		return;
	rocksdb_writebatch_destroy(b->wb);
	free(b);
}

void
mts_store_batch_put(struct mts_store_batch *b, enum mts_store_cf cf,
    const void *key, size_t klen, const void *val, size_t vlen)
{
	rocksdb_writebatch_put_cf(b->wb, b->st->cf[cf], key, klen, val,
	    vlen);
}

void
mts_store_batch_del(struct mts_store_batch *b, enum mts_store_cf cf,
    const void *key, size_t klen)
{
	rocksdb_writebatch_delete_cf(b->wb, b->st->cf[cf], key, klen);
}

size_t
mts_store_batch_count(const struct mts_store_batch *b)
{
	return (size_t)rocksdb_writebatch_count(b->wb);
}

int
mts_store_commit(struct mts_store *st, struct mts_store_batch *b, char *err,
    size_t errlen)
{
	char *rerr = NULL;

	if (b->st != st) {
		snprintf(err, errlen, "batch belongs to another store");
		return -MTS_ERR_INVAL;
	}
	rocksdb_write(st->db, st->wo, b->wb, &rerr);
	if (rerr != NULL)
		return take_error(rerr, err, errlen);
	return 0;
}

struct mts_store_iter *
mts_store_iter_new(struct mts_store *st, enum mts_store_cf cf,
    const void *start, size_t slen)
{
	struct mts_store_iter *it = xcalloc(1, sizeof(*it));

	it->it = rocksdb_create_iterator_cf(st->db, st->ro, st->cf[cf]);
	if (slen > 0)
		rocksdb_iter_seek(it->it, start, slen);
	else
		rocksdb_iter_seek_to_first(it->it);
	return it;
}

int
mts_store_iter_valid(struct mts_store_iter *it)
{
	return rocksdb_iter_valid(it->it);
}

void
mts_store_iter_next(struct mts_store_iter *it)
{
	rocksdb_iter_next(it->it);
}

const uint8_t *
mts_store_iter_key(struct mts_store_iter *it, size_t *len)
{
	return (const uint8_t *)rocksdb_iter_key(it->it, len);
}

const uint8_t *
mts_store_iter_val(struct mts_store_iter *it, size_t *len)
{
	return (const uint8_t *)rocksdb_iter_value(it->it, len);
}

void
mts_store_iter_free(struct mts_store_iter *it)
{
	if (it == NULL)
		return;
	rocksdb_iter_destroy(it->it);
	free(it);
}
