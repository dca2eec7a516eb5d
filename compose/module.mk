# compose/module.mk: the Compose stack-file loader (a pure library fed text; mtsctl and the tests link it) and its tests.
COMPOSE_SRCS := $(wildcard compose/*.c)
$(eval $(call unittest,test_compose,tests/unit/test_compose.c $(COMPOSE_SRCS),-lyaml -ljansson))
$(eval $(call fuzzer,fuzz_compose,tests/fuzz/fuzz_compose.c $(COMPOSE_SRCS),-lyaml -ljansson))
$(BUILD)/obj/tests/unit/test_compose.o: CPPFLAGS += -DTOP='"$(CURDIR)"'
