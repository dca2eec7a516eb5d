# agents/netd/module.mk: mts-netd (the WireGuard overlay mts0, the bridge mtsbr0 and the tasks' network namespaces behind netd.sock) with its pure core and the core's test.
NETD_CORE := agents/netd/netd_core.c
$(eval $(call unittest,test_netd_core,tests/unit/test_netd_core.c $(NETD_CORE)))
