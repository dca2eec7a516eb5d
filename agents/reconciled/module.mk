# agents/reconciled/module.mk: mts-reconciled (owners placing and stopping their services' tasks, node-local convergence with the shim, behind reconciled.sock) with its pure core and their tests.
RECON_CORE := agents/reconciled/recon_core.c agents/reconciled/failseen_core.c \
	agents/reconciled/hold_core.c
MTS_CONF_SRCS += agents/reconciled/reconciled_conf.c
RECON_SRCS := agents/reconciled/reconciled.c agents/reconciled/reconciled_api.c \
	agents/reconciled/reconciled_conf.c agents/reconciled/recon_view.c \
	agents/reconciled/recon_owner.c agents/reconciled/recon_local.c \
	agents/reconciled/recon_call.c agents/reconciled/recon_spec.c $(RECON_CORE) \
	agents/reconciled/recon_hold.c agents/reconciled/update_core.c agents/reconciled/update_pb.c \
	agents/reconciled/recon_depends.c agents/reconciled/depends_core.c
$(eval $(call program,mts-reconciled,$(RECON_SRCS)))
$(eval $(call unittest,test_recon,tests/unit/test_recon.c $(RECON_CORE)))
UPDATE_CORE := agents/reconciled/update_core.c
$(eval $(call unittest,test_update,tests/unit/test_update.c $(UPDATE_CORE)))
$(eval $(call unittest,test_update_pb,tests/unit/test_update_pb.c agents/reconciled/update_pb.c $(UPDATE_CORE)))
$(eval $(call unittest,test_depends,tests/unit/test_depends.c agents/reconciled/depends_core.c))
$(eval $(call fuzzer,fuzz_update,tests/fuzz/fuzz_update.c agents/reconciled/update_core.c agents/reconciled/update_pb.c))
$(eval $(call unittest,test_recon_spec,tests/unit/test_recon_spec.c agents/reconciled/recon_spec.c))
# The API fuzzer includes reconciled.c itself (main renamed) and links the rest.
$(eval $(call fuzzer,fuzz_reconciled_api,tests/fuzz/fuzz_reconciled_api.c tests/fuzz/fuzz_harness.c agents/reconciled/reconciled_api.c agents/reconciled/reconciled_conf.c agents/reconciled/recon_view.c agents/reconciled/recon_owner.c agents/reconciled/recon_local.c agents/reconciled/recon_hold.c agents/reconciled/recon_call.c agents/reconciled/recon_spec.c $(RECON_CORE) agents/reconciled/update_core.c agents/reconciled/update_pb.c agents/reconciled/recon_depends.c agents/reconciled/depends_core.c))
