/* store.c: RocksDB (C API) behind the small interface the statestore needs, read-only while its disk is full. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <rocksdb/c.h>

#include "log.h"
#include "mtserr.h"
#include "store.h"
#include "xmalloc.h"

/*
 * A full disk. Opening a database read-write writes to it (a new MANIFEST,
 * OPTIONS file, WAL and info LOG), and Debian's RocksDB 7.8 aborts on an
 * assertion when its info LOG is written after a failed write, so a
 * statestore started on a full disk died before serving anything. Below
 * MIN_FREE the store is opened read-only instead, which writes nothing:
 * reads are served, commits refused with ENOSPC named. The first commit
 * that finds MIN_FREE available again reopens the database read-write
 * (under the write side of `lock`, so no read or iterator is using the old
 * handles) and goes through. A disk that fills while the database is open
 * read-write is RocksDB's to report, and it recovers by itself.
 */
#define MIN_FREE (1u << 20)

struct mts_store {
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_options_t *cf_opts[2];
	rocksdb_block_based_table_options_t *table;
	rocksdb_cache_t *cache;
	rocksdb_column_family_handle_t *cf[2];
	rocksdb_writeoptions_t *wo;
	rocksdb_readoptions_t *ro;
	pthread_rwlock_t lock;  /* read: every use of db; write: reopening */
	pthread_mutex_t reopen; /* one commit at a time tries to reopen */
	atomic_int readonly;    /* opened read-only: the disk was full */
	char *dir;
};

/* A batch is bound to its store: RocksDB batches name column families by
 * the store's handles. */
struct mts_store_batch {
	rocksdb_writebatch_t *wb;
	struct mts_store *st;
};

struct mts_store_iter {
	rocksdb_iterator_t *it;
	struct mts_store *st; /* read-locked until the iterator is freed */
};

static const char *const cf_names[] = { "records", "meta" };

/* RocksDB reports errors as malloc'ed strings; this moves one into err. */
static int
take_error(char *rerr, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", rerr);
	free(rerr);
	return -MTS_ERR_IO;
}

/* Bytes available to us on dir's filesystem (a large number if unknown). */
static unsigned long long
free_bytes(const char *dir)
{
	struct statvfs v;

	if (statvfs(dir, &v) < 0)
		return ~0ull;
	return (unsigned long long)v.f_bavail * v.f_frsize;
}

/* Opens st->dir with st->opts, read-only or not, into st->db and st->cf. */
static int
open_db(struct mts_store *st, int readonly, char *err, size_t errlen)
{
	const char *names[3] = { "default", cf_names[0], cf_names[1] };
	const rocksdb_options_t *cfo[3] = { st->opts, st->cf_opts[0],
		st->cf_opts[1] };
	rocksdb_column_family_handle_t *handles[3];
	char *rerr = NULL;

	if (readonly)
		st->db = rocksdb_open_for_read_only_column_families(st->opts,
		    st->dir, 3, names, cfo, handles, 0, &rerr);
	else
		st->db = rocksdb_open_column_families(st->opts, st->dir, 3,
		    names, cfo, handles, &rerr);
	if (rerr != NULL) {
		st->db = NULL;
		return take_error(rerr, err, errlen);
	}
	rocksdb_column_family_handle_destroy(handles[0]);
	st->cf[0] = handles[1];
	st->cf[1] = handles[2];
	st->readonly = readonly;
	return 0;
}

static void
close_db(struct mts_store *st)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (st->cf[i] != NULL)
			rocksdb_column_family_handle_destroy(st->cf[i]);
		st->cf[i] = NULL;
	}
	if (st->db != NULL)
		rocksdb_close(st->db);
	st->db = NULL;
}

/* Read-write if the disk has room, else (or if that fails for want of
 * room) read-only. */
static int
open_best(struct mts_store *st, char *err, size_t errlen)
{
	unsigned long long avail = free_bytes(st->dir);

	if (avail >= MIN_FREE) {
		if (open_db(st, 0, err, errlen) == 0)
			return 0;
		if (strstr(err, "No space left") == NULL)
			return -MTS_ERR_IO;
	}
	if (open_db(st, 1, err, errlen) < 0)
		return -MTS_ERR_IO;
	log_warnx("%s: the disk is full (%llu KiB available): serving reads "
	          "only, writes are refused until %u KiB are free",
	    st->dir, avail >> 10, MIN_FREE >> 10);
	return 0;
}

struct mts_store *
mts_store_open(const char *dir, const struct mts_store_opts *o, char *err,
    size_t errlen)
{
	struct mts_store *st = xcalloc(1, sizeof(*st));
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
	st->dir = xstrdup(dir);
	pthread_rwlock_init(&st->lock, NULL);
	pthread_mutex_init(&st->reopen, NULL);
	if (open_best(st, err, errlen) < 0) {
		mts_store_close(st);
		return NULL;
	}
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
	close_db(st);
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
	pthread_rwlock_destroy(&st->lock);
	pthread_mutex_destroy(&st->reopen);
	free(st->dir);
	free(st);
}

int
mts_store_get(struct mts_store *st, enum mts_store_cf cf, const void *key,
    size_t klen, uint8_t **val, size_t *vlen, char *err, size_t errlen)
{
	char *rerr = NULL, *v;
	size_t n;

	pthread_rwlock_rdlock(&st->lock);
	v = rocksdb_get_cf(st->db, st->ro, st->cf[cf], key, klen, &n, &rerr);
	pthread_rwlock_unlock(&st->lock);
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
	rocksdb_writebatch_put_cf(b->wb, b->st->cf[cf], key, klen, val, vlen);
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

/* Read-only and the disk has room again: reopens read-write. 0 once
 * writable, else -MTS_ERR_IO with err naming ENOSPC. */
static int
make_writable(struct mts_store *st, char *err, size_t errlen)
{
	unsigned long long avail;
	char msg[256];
	int rc = 0;

	pthread_mutex_lock(&st->reopen);
	if (!st->readonly)
		goto out;
	if ((avail = free_bytes(st->dir)) < MIN_FREE) {
		snprintf(err, errlen,
		    "no space left on device (ENOSPC): %llu KiB available in "
		    "%s, writes are refused until %u KiB are free",
		    avail >> 10, st->dir, MIN_FREE >> 10);
		rc = -MTS_ERR_IO;
		goto out;
	}
	pthread_rwlock_wrlock(&st->lock);
	close_db(st);
	if (open_db(st, 0, err, errlen) == 0) {
		log_info("%s: space is back (%llu KiB available): writes are "
		         "accepted again",
		    st->dir, avail >> 10);
	} else {
		rc = -MTS_ERR_IO;
		if (open_db(st, 1, msg, sizeof(msg)) < 0)
			fatalx("%s: cannot reopen the database: %s; %s",
			    st->dir, err, msg);
	}
	pthread_rwlock_unlock(&st->lock);
out:
	pthread_mutex_unlock(&st->reopen);
	return rc;
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
	if (st->readonly && make_writable(st, err, errlen) < 0)
		return -MTS_ERR_IO;
	pthread_rwlock_rdlock(&st->lock);
	rocksdb_write(st->db, st->wo, b->wb, &rerr);
	pthread_rwlock_unlock(&st->lock);
	if (rerr != NULL)
		return take_error(rerr, err, errlen);
	return 0;
}

struct mts_store_iter *
mts_store_iter_new(struct mts_store *st, enum mts_store_cf cf,
    const void *start, size_t slen)
{
	struct mts_store_iter *it = xcalloc(1, sizeof(*it));

	pthread_rwlock_rdlock(&st->lock);
	it->st = st;
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
	pthread_rwlock_unlock(&it->st->lock);
	free(it);
}
