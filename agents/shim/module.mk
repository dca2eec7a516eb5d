# agents/shim/module.mk: mts-shim (containers through runc/crun), its per-container monitor, and their tests.
SHIM_CORE := agents/shim/image_core.c agents/shim/bundle_core.c agents/shim/shim_core.c \
	agents/shim/runtime_core.c agents/shim/exec_core.c agents/shim/peer_core.c
MTS_CONF_SRCS += agents/shim/shim_conf.c
SHIM_SRCS := agents/shim/shim_conf.c agents/shim/shim.c agents/shim/shim_watch.c agents/shim/shim_api.c agents/shim/shim_task.c \
	agents/shim/shim_io.c agents/shim/shim_exec.c agents/shim/shim_images.c \
	agents/shim/image_store.c agents/shim/image_held.c $(SHIM_CORE)
IMAGE_SRCS := agents/shim/image_tool.c agents/shim/image_store.c \
	agents/shim/image_import.c agents/shim/image_pull.c agents/shim/image_core.c \
	agents/shim/image_peer.c agents/shim/image_held.c agents/shim/peer_core.c
$(eval $(call program,mts-shim,$(SHIM_SRCS),-ljansson))
$(eval $(call program,mts-shim-image,$(IMAGE_SRCS),-ljansson -larchive -lcurl))
$(eval $(call program,mts-shim-monitor,agents/shim/monitor.c,))
$(eval $(call unittest,test_shim_image,tests/unit/test_shim_image.c agents/shim/image_core.c,-ljansson))
$(eval $(call unittest,test_shim_bundle,tests/unit/test_shim_bundle.c agents/shim/bundle_core.c,-ljansson))
$(eval $(call unittest,test_shim_core,tests/unit/test_shim_core.c agents/shim/shim_core.c))
$(eval $(call unittest,test_shim_runtime,tests/unit/test_shim_runtime.c agents/shim/runtime_core.c))
$(eval $(call unittest,test_shim_exec,tests/unit/test_shim_exec.c agents/shim/exec_core.c))
$(eval $(call fuzzer,fuzz_shim_manifest,tests/fuzz/fuzz_shim_manifest.c agents/shim/image_core.c,-ljansson))
$(eval $(call unittest,test_shim_peer,tests/unit/test_shim_peer.c agents/shim/peer_core.c))
$(eval $(call fuzzer,fuzz_shim_held,tests/fuzz/fuzz_shim_held.c agents/shim/image_held.c agents/shim/peer_core.c agents/shim/image_core.c,-ljansson))
$(eval $(call fuzzer,fuzz_shim_path,tests/fuzz/fuzz_shim_path.c agents/shim/image_core.c,-ljansson))
$(eval $(call unittest,test_shim_policy,tests/unit/test_shim_policy.c,-lseccomp))
$(BUILD)/obj/tests/unit/test_shim_policy.o: CPPFLAGS += -DTOP='"$(CURDIR)"'
$(eval $(call testprog,shim-bench-client,tests/bench/shim_client.c,-ljansson))
# The API fuzzer links the shim's real handlers and everything they call
# (not shim.c: the harness is the loop's owner).
SHIM_API_FUZZ := tests/fuzz/fuzz_shim_api.c agents/shim/shim_conf.c \
	agents/shim/shim_watch.c agents/shim/shim_api.c agents/shim/shim_task.c \
	agents/shim/shim_io.c agents/shim/shim_exec.c agents/shim/shim_images.c \
	agents/shim/image_store.c agents/shim/image_held.c $(SHIM_CORE)
$(eval $(call fuzzer,fuzz_shim_api,$(SHIM_API_FUZZ),-ljansson))
