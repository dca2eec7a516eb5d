# cli/module.mk: mtsctl — every cli/*.c file is part of it (a new command group is a new cmd_<group>.c plus one line in commands.c); `config check` links mts-init's config builder so both judge a file alike.
MTSCTL_SRCS := $(wildcard cli/*.c) init/init_conf.c
$(eval $(call program,mtsctl,$(MTSCTL_SRCS),-ljansson -lseccomp -lcap))
