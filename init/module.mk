# init/module.mk: mts-init (main loop, admin socket, reload, config building, the pure supervisor core) and its unit tests.
# mts-init checks every section of mts.conf, so it links every agent's key
# table (MTS_CONF_SRCS, added by the agents' module.mk, read before this one).
MTS_CONF_SRCS += init/init_schema.c
INIT_SRCS := init/init.c init/init_admin.c init/init_reload.c init/init_conf.c init/init_core.c $(MTS_CONF_SRCS)
$(eval $(call program,mts-init,$(INIT_SRCS),-lseccomp -lcap))
$(eval $(call unittest,test_init_core,tests/unit/test_init_core.c init/init_core.c))
$(eval $(call unittest,test_seccomp,tests/unit/test_seccomp.c,-lseccomp))
$(eval $(call fuzzer,fuzz_seccomp_policy,tests/fuzz/fuzz_seccomp_policy.c,-ljansson))
# the real mts-init (its init.c included, main renamed) on a stand-in config
$(eval $(call fuzzer,fuzz_init_admin,tests/fuzz/fuzz_init_admin.c tests/fuzz/fuzz_harness.c init/init_admin.c init/init_reload.c init/init_conf.c init/init_core.c $(MTS_CONF_SRCS),-lseccomp -lcap))
