/* shimctl.h: what mtsctl's shim command files (task, image, logs, exec) share. */
#ifndef MTSCTL_SHIMCTL_H
#define MTSCTL_SHIMCTL_H

#include "mtsctl.h"
#include "shim.pb-c.h"

/* Calls shim.sock and checks the reply's body; waits at least min_tmo ms
 * (the global -t when larger). */
int shimctl_call(struct mtsctl *, Mts__Shim__Request *, Mts__Shim__Reply **,
    Mts__Shim__Reply__BodyCase want, int min_tmo);

#endif
