# tests/testagent/module.mk: the test agent used by the init and mtsctl integration tests.
$(eval $(call testprog,mts-testagent,tests/testagent/testagent.c))
