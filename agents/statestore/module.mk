# agents/statestore/module.mk: mts-statestore — the record and MST cores' unit tests, fuzz target and benchmark.
$(eval $(call unittest,test_mst,tests/unit/test_mst.c tests/unit/mst_ref.c agents/statestore/mst_core.c,-ljansson))
$(eval $(call unittest,test_record,tests/unit/test_record.c agents/statestore/record_core.c))
