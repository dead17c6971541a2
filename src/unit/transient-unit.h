/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The one builder of StartTransientUnit calls: the run's service (run/run.c), its slice
 * (run/run-helper.c) and the bus proxies (bus-proxy.c). Each says what goes inside the unit's
 * property array; the name, the job mode ("fail": a unit of that name already there is an
 * error, never a unit to share) and the empty list of auxiliary units are the same for all. */

#include <systemd/sd-bus.h>

/* Appends the unit's properties, each a "(sv)", to m, which is inside the array. */
typedef int (*TransientProperties)(sd_bus_message *m, void *userdata);

int transient_unit_message(sd_bus *bus, const char *name, TransientProperties append, void *userdata,
                           sd_bus_message **ret);
