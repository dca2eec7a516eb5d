# tests/testagent/module.mk: the test agent used by the init and mtsctl integration tests (the skeleton of a new agent: docs/agents.md), and its core's unit test.
# A shipped agent also adds its key table to MTS_CONF_SRCS (mts-init and
# mtsctl then know its keys); the test agent is not shipped, so only it
# links testagent_conf.c.
TESTAGENT_CORE := tests/testagent/testagent_core.c
TESTAGENT_SRCS := tests/testagent/testagent_conf.c tests/testagent/testagent.c \
	tests/testagent/testagent_api.c $(TESTAGENT_CORE)
$(eval $(call testprog,mts-testagent,$(TESTAGENT_SRCS)))
$(eval $(call unittest,test_testagent_core,tests/unit/test_testagent_core.c $(TESTAGENT_CORE)))
