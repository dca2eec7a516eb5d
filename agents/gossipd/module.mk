# agents/gossipd/module.mk: mts-gossipd, its Noise engine, and their tests.
GOSSIPD_NOISE := agents/gossipd/noise.c

$(eval $(call unittest,noise_vectors,tests/unit/noise_vectors.c $(GOSSIPD_NOISE),-ljansson))
$(eval $(call unittest,test_noise,tests/unit/test_noise.c $(GOSSIPD_NOISE)))
