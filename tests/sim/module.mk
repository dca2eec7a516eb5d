# tests/sim/module.mk: mts-sim, the deterministic simulator linking the production cores of gossipd, the statestore, schedd and reconciled; and mts-sim-nocap, the same with an injected bug (the ledger grants a prepare whatever its capacity) that the capacity invariant must catch.
SIM_SRCS := tests/sim/mts_sim.c tests/sim/sim_net.c tests/sim/sim_node.c tests/sim/sim_run.c tests/sim/sim_sched.c tests/sim/sim_recon.c tests/sim/sim_store.c \
	agents/gossipd/swim_core.c agents/gossipd/delta_core.c agents/gossipd/ae_core.c \
	agents/statestore/mst_core.c agents/statestore/state_core.c \
	agents/schedd/ledger_core.c agents/schedd/place_core.c agents/reconciled/recon_core.c \
	agents/reconciled/update_core.c agents/reconciled/update_pb.c
$(eval $(call testprog,mts-sim,$(SIM_SRCS),-lm))

# The injected-bug build: ledger_core.c compiled with MTS_INJECT_NOCAP.
TESTPROGS += $(BUILD)/tests/mts-sim-nocap
$(BUILD)/obj/tests/sim/ledger_nocap.o: agents/schedd/ledger_core.c | $(PROTO_H)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DMTS_INJECT_NOCAP -c -o $@ $<
$(BUILD)/tests/mts-sim-nocap: $(filter-out %/ledger_core.o,$(call objs,$(SIM_SRCS))) $(BUILD)/obj/tests/sim/ledger_nocap.o $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lm $(LDLIBS)

# The shared store's unit suite: per-node views independent, refcounts to zero.
$(eval $(call unittest,test_sim_store,tests/sim/test_sim_store.c tests/sim/sim_store.c agents/statestore/mst_core.c agents/gossipd/delta_core.c,-lm))
