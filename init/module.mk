# init/module.mk: mts-init (main loop, admin socket, reload, config building, the pure supervisor core) and its unit tests.
INIT_SRCS := init/init.c init/init_admin.c init/init_reload.c init/init_conf.c init/init_core.c
$(eval $(call program,mts-init,$(INIT_SRCS),-lseccomp -lcap))
$(eval $(call unittest,test_init_core,tests/unit/test_init_core.c init/init_core.c))
$(eval $(call unittest,test_seccomp,tests/unit/test_seccomp.c,-lseccomp))
$(eval $(call fuzzer,fuzz_seccomp_policy,tests/fuzz/fuzz_seccomp_policy.c,-ljansson))
