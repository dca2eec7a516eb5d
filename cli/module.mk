# cli/module.mk: mtsctl — every cli/*.c file is part of it (a new command group is a new cmd_<group>.c plus one line in commands.c); it links the Compose loader (compose/) and every agent's mts.conf key table (config print); `config check` runs mts-init -n, so mtsctl links neither libseccomp nor libcap.
MTSCTL_SRCS := $(wildcard cli/*.c) $(wildcard compose/*.c) $(MTS_CONF_SRCS)
$(eval $(call program,mtsctl,$(MTSCTL_SRCS),-ljansson -lyaml))
