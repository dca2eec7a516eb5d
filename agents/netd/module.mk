# agents/netd/module.mk: mts-netd (the WireGuard overlay mts0, the bridge mtsbr0, the tasks' network namespaces behind netd.sock, their nftables isolation, the service directory and its DNS server) with its pure cores, their tests and fuzzers.
NETD_CORE := agents/netd/netd_core.c agents/netd/netd_nft_core.c \
	agents/netd/uapi_core.c
NETD_DNS_CORE := agents/netd/disc_core.c agents/netd/dns_core.c \
	agents/netd/vip_core.c
MTS_CONF_SRCS += agents/netd/netd_conf.c
NETD_SRCS := agents/netd/netd_conf.c agents/netd/netd.c \
	agents/netd/netd_api.c agents/netd/netd_nl.c agents/netd/netd_wg.c \
	agents/netd/netd_uapi.c \
	agents/netd/netd_sync.c agents/netd/netd_attach.c agents/netd/netd_nft.c \
	agents/netd/netd_disc.c agents/netd/netd_dns.c agents/netd/netd_dns_tcp.c \
	$(NETD_CORE) $(NETD_DNS_CORE)
$(eval $(call program,mts-netd,$(NETD_SRCS),-lmnl -lnftables -lldns))
$(eval $(call unittest,test_netd_core,tests/unit/test_netd_core.c $(NETD_CORE)))
$(eval $(call unittest,test_netd_uapi,tests/unit/test_netd_uapi.c agents/netd/uapi_core.c))
$(eval $(call unittest,test_netd_dns,tests/unit/test_netd_dns.c $(NETD_DNS_CORE) $(NETD_CORE),-lldns))
$(eval $(call fuzzer,fuzz_netd_core,tests/fuzz/fuzz_netd_core.c $(NETD_CORE)))
$(eval $(call fuzzer,fuzz_netd_dns,tests/fuzz/fuzz_netd_dns.c $(NETD_DNS_CORE) $(NETD_CORE),-lldns))
# The API fuzzer links netd's handlers and everything they call (netd.c
# is included by it: the harness is the loop's owner).
NETD_API_FUZZ := tests/fuzz/fuzz_netd_api.c tests/fuzz/fuzz_harness.c \
	$(filter-out agents/netd/netd.c,$(NETD_SRCS))
$(eval $(call fuzzer,fuzz_netd_api,$(NETD_API_FUZZ),-lmnl -lnftables -lldns))
