# tests/unit/module.mk: unit suites of common/ (agent suites live in their agents' module.mk).
$(eval $(call unittest,test_common,tests/unit/test_common.c))
$(eval $(call unittest,test_ipc,tests/unit/test_ipc.c))
# The fuzzer macro links every common/*.c, so it needs the libraries of all of them.
$(eval $(call fuzzer,fuzz_ipc_server,tests/fuzz/fuzz_ipc_server.c,-lcap -lseccomp))
