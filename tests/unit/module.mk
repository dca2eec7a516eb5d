# tests/unit/module.mk: unit suites of common/ (agent suites live in their agents' module.mk).
$(eval $(call unittest,test_common,tests/unit/test_common.c $(MTS_CONF_SRCS)))
$(eval $(call unittest,test_record,tests/unit/test_record.c))
$(eval $(call unittest,test_nodeinfo,tests/unit/test_nodeinfo.c))
$(eval $(call unittest,test_fsutil,tests/unit/test_fsutil.c))
$(eval $(call unittest,test_acl,tests/unit/test_acl.c))
$(eval $(call fuzzer,fuzz_mst_page,tests/fuzz/fuzz_mst_page.c))
$(eval $(call unittest,test_ipc,tests/unit/test_ipc.c tests/unit/ipc_echo.c))
$(eval $(call fuzzer,fuzz_ipc_server,tests/fuzz/fuzz_ipc_server.c tests/unit/ipc_echo.c))
$(eval $(call unittest,test_loop,tests/unit/test_loop.c))
$(eval $(call unittest,test_inroot,tests/unit/test_inroot.c))
$(eval $(call unittest,test_ratelimit,tests/unit/test_ratelimit.c))
$(eval $(call unittest,test_conf_golden,tests/unit/test_conf_golden.c $(MTS_CONF_SRCS)))
$(BUILD)/obj/tests/unit/test_conf_golden.o: CPPFLAGS += -DTOP='"$(CURDIR)"'
