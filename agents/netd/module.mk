# agents/netd/module.mk: mts-netd (the WireGuard overlay mts0, the bridge mtsbr0 and the tasks' network namespaces behind netd.sock) with its pure core, the core's test and its fuzzer.
NETD_CORE := agents/netd/netd_core.c agents/netd/netd_nft_core.c
MTS_CONF_SRCS += agents/netd/netd_conf.c
NETD_SRCS := agents/netd/netd_conf.c agents/netd/netd.c \
	agents/netd/netd_api.c agents/netd/netd_nl.c agents/netd/netd_wg.c \
	agents/netd/netd_sync.c agents/netd/netd_attach.c agents/netd/netd_nft.c \
	$(NETD_CORE)
$(eval $(call program,mts-netd,$(NETD_SRCS),-lmnl -lnftables))
$(eval $(call unittest,test_netd_core,tests/unit/test_netd_core.c $(NETD_CORE)))
$(eval $(call fuzzer,fuzz_netd_core,tests/fuzz/fuzz_netd_core.c $(NETD_CORE)))
