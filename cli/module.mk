# cli/module.mk: mtsctl — every cli/*.c file is part of it (a new command group is a new cmd_<group>.c plus one line in commands.c).
MTSCTL_SRCS := $(wildcard cli/*.c)
$(eval $(call program,mtsctl,$(MTSCTL_SRCS),-ljansson))
