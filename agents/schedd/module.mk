# agents/schedd/module.mk: mts-schedd's pure cores (the node's slot ledger with its leases, and placement), their tests and the placement benchmark; the agent's main joins them with the scheduling issue.
SCHEDD_CORE := agents/schedd/ledger_core.c agents/schedd/place_core.c
$(eval $(call unittest,test_schedd,tests/unit/test_schedd.c $(SCHEDD_CORE)))
$(eval $(call testprog,bench_place,tests/bench/bench_place.c $(SCHEDD_CORE)))
