# agents/gossipd/module.mk: mts-gossipd, its Noise engine and cores, and their tests.
GOSSIPD_NOISE := agents/gossipd/noise.c
GOSSIPD_CORE  := $(GOSSIPD_NOISE) agents/gossipd/conn_core.c agents/gossipd/swim_core.c \
	agents/gossipd/delta_core.c agents/gossipd/ae_core.c agents/gossipd/admit_core.c

$(eval $(call unittest,noise_vectors,tests/unit/noise_vectors.c $(GOSSIPD_NOISE),-ljansson))
$(eval $(call unittest,test_noise,tests/unit/test_noise.c $(GOSSIPD_NOISE)))
$(eval $(call unittest,test_conn,tests/unit/test_conn.c $(GOSSIPD_CORE),-lm))
$(eval $(call unittest,test_swim,tests/unit/test_swim.c $(GOSSIPD_CORE),-lm))
$(eval $(call unittest,test_admit,tests/unit/test_admit.c agents/gossipd/admit_core.c))
$(eval $(call unittest,test_ae,tests/unit/test_ae.c $(GOSSIPD_CORE) agents/statestore/mst_core.c,-lm))

MTS_CONF_SRCS += agents/gossipd/gossipd_conf.c
GOSSIPD_SRCS := agents/gossipd/gossipd_conf.c agents/gossipd/gossipd.c agents/gossipd/net.c agents/gossipd/msg.c \
	agents/gossipd/store.c agents/gossipd/cluster.c agents/gossipd/api.c \
	agents/gossipd/sync.c agents/gossipd/relay.c agents/gossipd/token_core.c
$(eval $(call program,mts-gossipd,$(GOSSIPD_SRCS) $(GOSSIPD_CORE),-lm))
$(eval $(call unittest,test_token,tests/unit/test_token.c agents/gossipd/token_core.c))
$(eval $(call fuzzer,fuzz_gossip_frame,tests/fuzz/fuzz_gossip_frame.c agents/gossipd/noise.c agents/gossipd/conn_core.c agents/gossipd/token_core.c))
$(eval $(call testprog,gossip_load,tests/integration/gossip_load.c))
$(eval $(call testprog,gossip_relay,tests/integration/gossip_relay.c))
# gossipd's real API (dispatch table and handlers) under libFuzzer; its
# main() is renamed so libFuzzer's is the program's
$(eval $(call fuzzer,fuzz_gossipd_api,tests/fuzz/fuzz_gossipd_api.c tests/fuzz/fuzz_harness.c $(GOSSIPD_SRCS) $(GOSSIPD_CORE),-Dmain=gossipd_main -lm))
