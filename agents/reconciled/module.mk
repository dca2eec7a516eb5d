# agents/reconciled/module.mk: mts-reconciled's pure core (owners, missing and extra replicas, a node's own duties) and its tests; the agent's main joins it with the scheduling issue.
RECON_CORE := agents/reconciled/recon_core.c
$(eval $(call unittest,test_recon,tests/unit/test_recon.c $(RECON_CORE)))
