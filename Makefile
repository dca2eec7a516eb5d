# Makefile: the one entry point of mts — build, test, check (sanitizers), fuzz, bench, deps, demo, install.
#
# Every component lives in its own folder with a `module.mk` fragment that
# declares its programs and tests through the `program`, `unittest` and
# `fuzzer` macros below, so adding an agent never means editing this file.

BUILD    ?= build
CC       ?= cc
PROTOC_C ?= protoc-c
PREFIX   ?= /usr/local

WARN     := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -MMD -MP -D_GNU_SOURCE -fno-strict-aliasing
CPPFLAGS += -I. -Icommon -I$(BUILD)/proto
LDFLAGS  += -Wl,--as-needed
LDLIBS   += -lnng -lprotobuf-c -lsodium -linih -lpthread

ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

.DEFAULT_GOAL := all
.PHONY: all test check fuzz bench chaos deps demo install clean format format-check

# --- generated protobuf-c code -------------------------------------------
PROTOS   := $(wildcard proto/*.proto)
PROTO_C  := $(PROTOS:proto/%.proto=$(BUILD)/proto/%.pb-c.c)
PROTO_H  := $(PROTO_C:.c=.h)

# Generated files are kept (not deleted as intermediates of a chain).
.SECONDARY: $(PROTO_C) $(PROTO_H)

$(BUILD)/proto/%.pb-c.c $(BUILD)/proto/%.pb-c.h: proto/%.proto $(PROTOS)
	@mkdir -p $(BUILD)/proto
	$(PROTOC_C) --proto_path=proto --c_out=$(BUILD)/proto $<

# --- the shared library every program links --------------------------------
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(BUILD)/obj/%.o) $(PROTO_C:$(BUILD)/%.c=$(BUILD)/obj/%.o)
COMMON_LIB  := $(BUILD)/libmtscommon.a

$(COMMON_LIB): $(COMMON_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/obj/%.o: %.c | $(PROTO_H)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/proto/%.o: $(BUILD)/proto/%.c | $(PROTO_H)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(filter-out -Werror -Wshadow,$(CFLAGS)) -c -o $@ $<

objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

# $(call program,NAME,SOURCES,EXTRA_LIBS): an installed binary $(BUILD)/bin/NAME.
define program
BINS += $(BUILD)/bin/$(1)
$(BUILD)/bin/$(1): $(call objs,$(2)) $(COMMON_LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $(call objs,$(2)) $(COMMON_LIB) $(3) $$(LDLIBS)
endef

# $(call testprog,NAME,SOURCES,EXTRA_LIBS): a helper binary used only by tests.
define testprog
TESTPROGS += $(BUILD)/tests/$(1)
$(BUILD)/tests/$(1): $(call objs,$(2)) $(COMMON_LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $(call objs,$(2)) $(COMMON_LIB) $(3) $$(LDLIBS)
endef

# $(call unittest,NAME,SOURCES,EXTRA_LIBS): a cmocka suite run by `make test`.
define unittest
UNITTESTS += $(BUILD)/tests/unit/$(1)
$(BUILD)/tests/unit/$(1): $(call objs,$(2)) $(COMMON_LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $(call objs,$(2)) $(COMMON_LIB) $(3) -lcmocka $$(LDLIBS)
endef

# $(call fuzzer,NAME,SOURCES,EXTRA): a libFuzzer target built by `make fuzz` (clang).
# EXTRA holds libraries and may hold -D/-U/-I flags for SOURCES. common/*.c and
# the protobuf code are compiled once for all fuzzers (build/fuzz/obj/shared,
# instrumented, not archived: every object is linked as before); SOURCES are
# compiled per fuzzer (build/fuzz/obj/NAME), since EXTRA's flags are its own.
FUZZ_LIBS   := -lcap -lseccomp
FUZZ_CFLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE -MMD -MP \
    -fsanitize=fuzzer-no-link,address,undefined
# Object paths are absolute whatever BUILD's form, so the dependency files
# name the same targets whether make ran with BUILD=build or with the
# absolute path tests/integration/fuzz_smoke.sh passes (else an object built
# one way is never rebuilt the other way when a header changes).
FUZZ_OBJ    := $(abspath $(BUILD))/fuzz/obj
FUZZ_SHARED := $(COMMON_SRCS:%.c=$(FUZZ_OBJ)/shared/%.o) \
    $(PROTO_C:$(BUILD)/proto/%.c=$(FUZZ_OBJ)/shared/proto/%.o)

$(FUZZ_OBJ)/shared/%.o: %.c | $(PROTO_H)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(CPPFLAGS) -c -o $@ $<

$(FUZZ_OBJ)/shared/proto/%.o: $(BUILD)/proto/%.c | $(PROTO_H)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(CPPFLAGS) -c -o $@ $<

define fuzzer
FUZZERS += $(BUILD)/fuzz/$(1)
$(FUZZ_OBJ)/$(1)/%.o: %.c | $(PROTO_H)
	@mkdir -p $$(@D)
	clang $(FUZZ_CFLAGS) $(CPPFLAGS) $(filter -D% -U% -I%,$(3)) -c -o $$@ $$<
$(BUILD)/fuzz/$(1): $(patsubst %.c,$(FUZZ_OBJ)/$(1)/%.o,$(2)) $(FUZZ_SHARED)
	@mkdir -p $$(@D)
	clang -fsanitize=fuzzer,address,undefined -o $$@ $$^ $(filter-out -D% -U% -I%,$(3)) $(FUZZ_LIBS) $(LDLIBS)
endef

# Agents first: each adds its mts.conf key table to MTS_CONF_SRCS, which init
# (it checks every section), mtsctl and the config tests link.
MTS_CONF_SRCS :=
include $(wildcard common/module.mk compose/module.mk) \
    $(sort $(wildcard agents/*/module.mk)) \
    $(wildcard init/module.mk cli/module.mk) $(sort $(wildcard tests/*/module.mk))

all: $(BINS) $(TESTPROGS) $(UNITTESTS)

# `make test` installs what is missing, builds, and runs every suite; its last
# line is `N passed, N failed, N skipped`.
test: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(abspath $(BUILD)) tests/run

check:
	@LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	    $(MAKE) --no-print-directory BUILD=build-san SAN=1 test

fuzz: $(FUZZERS)

bench: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(abspath $(BUILD)) tests/bench/run

# `make chaos`: the full chaos test (180 s of node kills, restarts and link
# cuts on 5 nodes in network namespaces; CHAOS_SEED=N replays a run).
chaos: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(abspath $(BUILD)) CHAOS_SECS=$${CHAOS_SECS:-180} tests/netns/recon_chaos.sh

deps:
	@scripts/install-deps

demo: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(abspath $(BUILD)) scripts/demo

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)/etc/mts/seccomp \
	    $(DESTDIR)$(PREFIX)/share/doc/mts $(DESTDIR)/lib/systemd/system
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 config/seccomp/*.policy $(DESTDIR)/etc/mts/seccomp/
	test -e $(DESTDIR)/etc/mts/mts.conf || \
	    install -m 0644 config/mts.conf $(DESTDIR)/etc/mts/mts.conf
	install -m 0644 config/mts-init.service $(DESTDIR)/lib/systemd/system/
	install -m 0644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/mts/

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Fails, naming them, when files differ from what `make format` would make.
format-check:
	@bad=$$(for f in $$(git ls-files '*.c' '*.h'); do \
	    clang-format --dry-run -Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then \
	    echo "format-check: not laid out as .clang-format says (make format does it):"; \
	    echo "$$bad" | sed 's/^/    /'; exit 1; fi

clean:
	rm -rf build build-san

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
