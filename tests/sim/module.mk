# tests/sim/module.mk: mts-sim, the deterministic simulator linking the production cores of gossipd, the statestore and schedd.
SIM_SRCS := tests/sim/mts_sim.c tests/sim/sim_net.c tests/sim/sim_node.c tests/sim/sim_run.c tests/sim/sim_sched.c \
	agents/gossipd/swim_core.c agents/gossipd/delta_core.c agents/gossipd/ae_core.c \
	agents/statestore/mst_core.c agents/statestore/state_core.c \
	agents/schedd/ledger_core.c agents/schedd/place_core.c
$(eval $(call testprog,mts-sim,$(SIM_SRCS),-lm))
