/* gossip_load.c: test/bench helper — writes N records round-robin through several nodes' statestores and measures when each reached every watched node (change feeds). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "mtserr.h"
#include "mtstime.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

#include <nng/supplemental/util/platform.h>

#define MAXN 32

struct opts {
	const char *put[MAXN], *watch[MAXN];
	int nput, nwatch;
	int count, size, rate;
	int timeout_s;
	const char *prefix;
};

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: gossip_load -p RUNDIR [-p ...] [-w RUNDIR ...] [-n COUNT] "
	    "[-s SIZE] [-r PER_SEC] [-k PREFIX] [-t SECONDS]\n"
	    "  prints: count, bytes written, then (with -w) p50/p99/max ms "
	    "until every watched node had each write, and how many arrived\n");
	exit(2);
}

static void
parse(struct opts *o, int argc, char **argv)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->count = 100;
	o->size = 100;
	o->timeout_s = 30;
	o->prefix = "load/";
	while ((c = getopt(argc, argv, "p:w:n:s:r:k:t:")) != -1) {
		switch (c) {
		case 'p':
			if (o->nput == MAXN)
				usage();
			o->put[o->nput++] = optarg;
			break;
		case 'w':
			if (o->nwatch == MAXN)
				usage();
			o->watch[o->nwatch++] = optarg;
			break;
		case 'n':
			o->count = atoi(optarg);
			break;
		case 's':
			o->size = atoi(optarg);
			break;
		case 'r':
			o->rate = atoi(optarg);
			break;
		case 'k':
			o->prefix = optarg;
			break;
		case 't':
			o->timeout_s = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (o->nput == 0 || o->count <= 0 || o->size < 0 || o->size > (1 << 20))
		usage();
}

/* Records arrivals of our keys on watcher w. */
static void
poll_watch(nng_socket s, int w, const char *prefix, int count, int64_t *arrive,
    unsigned char *seen, int nwatch, int *left)
{
	ProtobufCMessage *body;
	Mts__Statestore__Change *ch;
	size_t plen = strlen(prefix);
	char num[16];
	int i;

	while (mts_sub_recv(s, &mts__statestore__change__descriptor, &body,
	           NNG_FLAG_NONBLOCK) != -MTS_ERR_TIMEOUT) {
		if (body == NULL)
			continue;
		ch = (Mts__Statestore__Change *)body;
		if (ch->key.len > plen && ch->key.len - plen < sizeof(num)) {
			memcpy(num, ch->key.data + plen, ch->key.len - plen);
			num[ch->key.len - plen] = '\0';
			i = atoi(num);
			if (i >= 0 && i < count && !seen[i * nwatch + w]) {
				seen[i * nwatch + w] = 1;
				if (--left[i] == 0)
					arrive[i] = mts_now_us();
			}
		}
		protobuf_c_message_free_unpacked(body, NULL);
	}
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct mts_ipc_client *cl[MAXN];
	nng_socket subs[MAXN];
	char path[512], err[256], key[128];
	int64_t *start, *arrive, deadline, *lat;
	unsigned char *seen;
	int *left, i, w, done = 0, nlat = 0;
	uint8_t *val;
	long long bytes = 0;

	parse(&o, argc, argv);
	for (i = 0; i < o.nput; i++) {
		mts_ipc_sock_path(path, sizeof(path), o.put[i], "statestore",
		    NULL);
		if ((cl[i] = mts_ipc_client_open(path, 10000, err,
		         sizeof(err))) == NULL) {
			fprintf(stderr, "gossip_load: %s\n", err);
			return 1;
		}
	}
	for (w = 0; w < o.nwatch; w++) {
		mts_ipc_sock_path(path, sizeof(path), o.watch[w], "statestore",
		    "statestore.pub");
		if (mts_sub_open(path, o.prefix, strlen(o.prefix), &subs[w],
		        err, sizeof(err)) < 0) {
			fprintf(stderr, "gossip_load: %s\n", err);
			return 1;
		}
	}
	nng_msleep(300); /* let the SUB sockets connect */
	start = xcalloc((size_t)o.count, sizeof(*start));
	arrive = xcalloc((size_t)o.count, sizeof(*arrive));
	left = xcalloc((size_t)o.count, sizeof(*left));
	seen = xcalloc((size_t)o.count * (o.nwatch ? o.nwatch : 1), 1);
	val = xmalloc((size_t)o.size + 1);
	memset(val, 'v', (size_t)o.size);
	for (i = 0; i < o.count; i++) {
		Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
		Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
		ProtobufCMessage *rep;
		int64_t due;

		if (o.rate > 0) {
			due = start[0] + (int64_t)i * 1000000 / o.rate;
			while (i > 0 && mts_now_us() < due)
				for (w = 0; w < o.nwatch; w++)
					poll_watch(subs[w], w, o.prefix,
					    o.count, arrive, seen, o.nwatch,
					    left);
		}
		left[i] = o.nwatch;
		snprintf(key, sizeof(key), "%s%d", o.prefix, i);
		put.key.data = (uint8_t *)key;
		put.key.len = strlen(key);
		put.value.data = val;
		put.value.len = (size_t)o.size;
		req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
		req.put = &put;
		start[i] = mts_now_us();
		if (mts_ipc_client_call(cl[i % o.nput], &req.base,
		        &mts__statestore__reply__descriptor, &rep, err,
		        sizeof(err)) < 0) {
			fprintf(stderr, "gossip_load: put %s: %s\n", key, err);
			return 1;
		}
		protobuf_c_message_free_unpacked(rep, NULL);
		bytes += (long long)(put.key.len + put.value.len + 26);
		for (w = 0; w < o.nwatch; w++)
			poll_watch(subs[w], w, o.prefix, o.count, arrive, seen,
			    o.nwatch, left);
	}
	deadline = mts_now_us() + (int64_t)o.timeout_s * 1000000;
	while (o.nwatch > 0 && mts_now_us() < deadline) {
		for (w = 0; w < o.nwatch; w++)
			poll_watch(subs[w], w, o.prefix, o.count, arrive, seen,
			    o.nwatch, left);
		for (i = 0, done = 0; i < o.count; i++)
			done += left[i] == 0;
		if (done == o.count)
			break;
		nng_msleep(2);
	}
	printf("count %d\nbytes %lld\n", o.count, bytes);
	if (o.nwatch > 0) {
		lat = xcalloc((size_t)o.count, sizeof(*lat));
		for (i = 0; i < o.count; i++)
			if (left[i] == 0)
				lat[nlat++] = arrive[i] - start[i];
		qsort(lat, (size_t)nlat, sizeof(*lat), cmp64);
		printf("arrived %d\n", nlat);
		if (nlat > 0)
			printf("p50_ms %.1f\np99_ms %.1f\nmax_ms %.1f\n",
			    lat[nlat / 2] / 1000.0,
			    lat[(nlat * 99) / 100 < nlat ? (nlat * 99) / 100
			                                 : nlat - 1] /
			        1000.0,
			    lat[nlat - 1] / 1000.0);
		free(lat);
	}
	for (i = 0; i < o.nput; i++)
		mts_ipc_client_close(cl[i]);
	for (w = 0; w < o.nwatch; w++)
		nng_close(subs[w]);
	free(start);
	free(arrive);
	free(left);
	free(seen);
	free(val);
	return nlat == o.count || o.nwatch == 0 ? 0 : 1;
}
