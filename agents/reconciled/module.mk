# agents/reconciled/module.mk: mts-reconciled's pure core (owners, missing and extra replicas, a node's own duties) and its tests; the agent's main joins it with the scheduling issue.
RECON_CORE := agents/reconciled/recon_core.c
$(eval $(call unittest,test_recon,tests/unit/test_recon.c $(RECON_CORE)))
UPDATE_CORE := agents/reconciled/update_core.c
$(eval $(call unittest,test_update,tests/unit/test_update.c $(UPDATE_CORE)))
$(eval $(call unittest,test_update_pb,tests/unit/test_update_pb.c agents/reconciled/update_pb.c $(UPDATE_CORE)))
$(eval $(call unittest,test_depends,tests/unit/test_depends.c agents/reconciled/depends_core.c))
$(eval $(call fuzzer,fuzz_update,tests/fuzz/fuzz_update.c agents/reconciled/update_core.c agents/reconciled/update_pb.c))
