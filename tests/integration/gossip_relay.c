/* gossip_relay.c: test helper — sends a statestore.proto request to an agent of another node (the statestore, or the test agent) through the local gossipd relay and prints what came back. */
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
	    "       gossip_relay RUNDIR NODE_ID REQUEST_ID get KEY\n"
	    "  prints the remote reply: 'root HEX', 'hlc N' or 'value V'\n"
	    "  env: RELAY_AGENT (default statestore), RELAY_TIMEOUT_MS (5000)\n");
	exit(2);
}

/* Packs a statestore request for the relay payload (caller frees). */
static uint8_t *
pack_req(int argc, char **argv, size_t *len)
{
	Mts__Statestore__Request req = MTS__STATESTORE__REQUEST__INIT;
	Mts__Statestore__RootReq rr = MTS__STATESTORE__ROOT_REQ__INIT;
	Mts__Statestore__PutReq put = MTS__STATESTORE__PUT_REQ__INIT;
	Mts__Statestore__GetReq get = MTS__STATESTORE__GET_REQ__INIT;
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
	} else if (strcmp(argv[4], "get") == 0 && argc == 6) {
		get.key.data = (uint8_t *)argv[5];
		get.key.len = strlen(argv[5]);
		req.body_case = MTS__STATESTORE__REQUEST__BODY_GET;
		req.get = &get;
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
	/* root, put and get share the oneof's union: look at the case */
	if (r->body_case == MTS__STATESTORE__REPLY__BODY_ROOT &&
	    r->root->hash.len == MTS_HASH_LEN) {
		mts_hex(hex, r->root->hash.data, MTS_HASH_LEN);
		printf("root %s\n", hex);
	} else if (r->body_case == MTS__STATESTORE__REPLY__BODY_PUT &&
	    r->put->record) {
		printf("hlc %llu\n", (unsigned long long)r->put->record->hlc);
	} else if (r->body_case == MTS__STATESTORE__REPLY__BODY_GET) {
		printf("value %.*s\n",
		    r->get->record ? (int)r->get->record->value.len : 0,
		    r->get->record ? (char *)r->get->record->value.data : "");
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

	if (argc < 5 ||
	    mts_unhex(node, sizeof(node), argv[2], strlen(argv[2])) < 0)
		usage();
	payload = pack_req(argc, argv, &len);
	mts_ipc_sock_path(path, sizeof(path), argv[1], "gossipd", NULL);
	if ((c = mts_ipc_client_open(path, 20000, err, sizeof(err))) == NULL) {
		fprintf(stderr, "gossip_relay: %s\n", err);
		return 1;
	}
	rr.to_node.data = node;
	rr.to_node.len = sizeof(node);
	rr.agent = getenv("RELAY_AGENT") ? getenv("RELAY_AGENT") : "statestore";
	rr.payload.data = payload;
	rr.payload.len = len;
	rr.request_id = strtoull(argv[3], NULL, 10);
	rr.timeout_ms = getenv("RELAY_TIMEOUT_MS")
	    ? (uint32_t)strtoul(getenv("RELAY_TIMEOUT_MS"), NULL, 10)
	    : 5000;
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
