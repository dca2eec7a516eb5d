/* gossip_relay.c: test helper — sends a statestore request to another node's statestore through the local gossipd relay and prints what came back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gossipd.pb-c.h"
#include "hash.h"
#include "ipc.h"
#include "statestore.pb-c.h"
#include "xmalloc.h"

static void
usage(void)
{
	fprintf(stderr,
	    "usage: gossip_relay RUNDIR NODE_ID REQUEST_ID root\n"
	    "       gossip_relay RUNDIR NODE_ID REQUEST_ID put KEY VALUE\n"
	    "  prints the remote reply: 'root HEX' or 'hlc N'\n");
	exit(2);
}

/* Packs a statestore request for the relay payload (caller frees). */
static uint8_t *
pack_req(int argc, char **argv, size_t *len)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq rr = MTS__STATESTORE__ROOT_REQ__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	uint8_t *buf;

	req.version = 1;
	if (strcmp(argv[4], "root") == 0 && argc == 5) {
		req.body_case = MTS__STATESTORE__REQUEST__BODY_ROOT;
		req.root = &rr;
	} else if (strcmp(argv[4], "put") == 0 && argc == 7) {
		put.key.data = (uint8_t *)argv[5];
		put.key.len = strlen(argv[5]);
		put.value.data = (uint8_t *)argv[6];
		put.value.len = strlen(argv[6]);
		req.body_case = MTS__STATESTORE__REQUEST__BODY_PUT;
		req.put = &put;
	} else {
		usage();
	}
	*len = mts__statestore__request__get_packed_size(&req);
	buf = xmalloc(*len + 1);
	mts__statestore__request__pack(&req, buf);
	return buf;
}

static int
print_reply(const ProtobufCBinaryData *p)
{
	Mts__Statestore__Reply *r;
	char hex[2 * MTS_HASH_LEN + 1];

	r = mts__statestore__reply__unpack(NULL, p->len, p->data);
	if (r == NULL) {
		fprintf(stderr, "gossip_relay: undecodable statestore reply\n");
		return 1;
	}
	if (r->root && r->root->hash.len == MTS_HASH_LEN) {
		mts_hex(hex, r->root->hash.data, MTS_HASH_LEN);
		printf("root %s\n", hex);
	} else if (r->put && r->put->record) {
		printf("hlc %llu\n", (unsigned long long)r->put->record->hlc);
	} else {
		fprintf(stderr, "gossip_relay: reply carries %s\n",
		    r->error ? r->error->message : "nothing expected");
		mts__statestore__reply__free_unpacked(r, NULL);
		return 1;
	}
	mts__statestore__reply__free_unpacked(r, NULL);
	return 0;
}

int
main(int argc, char **argv)
{
	Mts__Gossipd__Request req = MTS__GOSSIPD__REQUEST__INIT;
	Mts__Gossipd__RelayReq rr = MTS__GOSSIPD__RELAY_REQ__INIT;
	Mts__Gossipd__Reply *rep;
	struct mts_ipc_client *c;
	uint8_t node[MTS_NODE_ID_LEN], *payload;
	char path[512], err[256];
	size_t len;
	int rc;

	if (argc < 5 || mts_unhex(node, sizeof(node), argv[2],
			    strlen(argv[2])) < 0)
		usage();
	payload = pack_req(argc, argv, &len);
	mts_ipc_sock_path(path, sizeof(path), argv[1], "gossipd", NULL);
	if ((c = mts_ipc_client_open(path, 10000, err, sizeof(err))) == NULL) {
		fprintf(stderr, "gossip_relay: %s\n", err);
		return 1;
	}
	rr.to_node.data = node;
	rr.to_node.len = sizeof(node);
	rr.agent = "statestore";
	rr.payload.data = payload;
	rr.payload.len = len;
	rr.request_id = strtoull(argv[3], NULL, 10);
	rr.timeout_ms = 5000;
	req.body_case = MTS__GOSSIPD__REQUEST__BODY_RELAY;
	req.relay = &rr;
	rc = mts_ipc_client_call(c, &req.base, &mts__gossipd__reply__descriptor,
	    (ProtobufCMessage **)&rep, err, sizeof(err));
	free(payload);
	mts_ipc_client_close(c);
	if (rc < 0) {
		fprintf(stderr, "gossip_relay: %s\n", err);
		return 1;
	}
	rc = rep->relay ? print_reply(&rep->relay->payload) : 1;
	mts__gossipd__reply__free_unpacked(rep, NULL);
	return rc;
}
