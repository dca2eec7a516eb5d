# agents/statestore/module.mk: mts-statestore (the node's replica of the cluster state), its tests, fuzz target and benchmarks.
STATESTORE_CORE := agents/statestore/mst_core.c agents/statestore/state_core.c
MTS_CONF_SRCS += agents/statestore/statestore_conf.c
$(eval $(call program,mts-statestore,agents/statestore/statestore_conf.c agents/statestore/statestore.c agents/statestore/statestore_api.c agents/statestore/commit.c agents/statestore/prune.c agents/statestore/store.c agents/statestore/round.c agents/statestore/committer.c $(STATESTORE_CORE),-lrocksdb))
$(eval $(call testprog,sstool,tests/integration/sstool.c))
$(eval $(call unittest,test_mst,tests/unit/test_mst.c tests/unit/mst_ref.c agents/statestore/mst_core.c,-ljansson))
$(eval $(call unittest,test_replicas,tests/unit/test_replicas.c tests/unit/mst_ref.c agents/statestore/mst_core.c))
$(eval $(call testprog,bench_mst,tests/bench/bench_mst.c agents/statestore/mst_core.c))
$(eval $(call unittest,test_state,tests/unit/test_state.c agents/statestore/state_core.c))
$(eval $(call testprog,storebench,tests/bench/storebench.c agents/statestore/store.c,-lrocksdb))
$(eval $(call fuzzer,fuzz_statestore_req,tests/fuzz/fuzz_statestore_req.c agents/statestore/state_core.c))
$(eval $(call testprog,ipcbench,tests/bench/ipcbench.c tests/unit/ipc_echo.c))
# the real agent (its statestore.c included, main renamed) on a temporary RocksDB
$(eval $(call fuzzer,fuzz_statestore_api,tests/fuzz/fuzz_statestore_api.c tests/fuzz/fuzz_harness.c agents/statestore/statestore_conf.c agents/statestore/statestore_api.c agents/statestore/commit.c agents/statestore/prune.c agents/statestore/store.c agents/statestore/round.c agents/statestore/committer.c $(STATESTORE_CORE),-lrocksdb))
