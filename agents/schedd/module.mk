# agents/schedd/module.mk: mts-schedd (the node's slot ledger behind schedd.sock: leases, the d/<node> digest) with its pure cores (the ledger, placement), their tests, the API fuzzer and the placement benchmark.
SCHEDD_CORE := agents/schedd/ledger_core.c agents/schedd/place_core.c \
	agents/schedd/journal_core.c
MTS_CONF_SRCS += agents/schedd/schedd_conf.c
SCHEDD_SRCS := agents/schedd/schedd_conf.c agents/schedd/schedd.c \
	agents/schedd/schedd_api.c agents/schedd/schedd_store.c \
	agents/schedd/schedd_place.c agents/schedd/schedd_node.c agents/schedd/schedd_save.c $(SCHEDD_CORE)
$(eval $(call program,mts-schedd,$(SCHEDD_SRCS)))
$(eval $(call unittest,test_schedd,tests/unit/test_schedd.c $(SCHEDD_CORE)))
$(eval $(call testprog,bench_place,tests/bench/bench_place.c $(SCHEDD_CORE)))
$(eval $(call testprog,schedtool,tests/integration/schedtool.c))
$(eval $(call unittest,test_schedd_conf,tests/unit/test_schedd_conf.c agents/schedd/schedd_conf.c))
# The API fuzzer includes schedd.c itself (main renamed) and links the rest.
$(eval $(call fuzzer,fuzz_schedd_api,tests/fuzz/fuzz_schedd_api.c tests/fuzz/fuzz_harness.c agents/schedd/schedd_api.c agents/schedd/schedd_store.c agents/schedd/schedd_place.c agents/schedd/schedd_node.c agents/schedd/schedd_save.c agents/schedd/schedd_conf.c $(SCHEDD_CORE)))
$(eval $(call fuzzer,fuzz_schedd_journal,tests/fuzz/fuzz_schedd_journal.c $(SCHEDD_CORE)))
