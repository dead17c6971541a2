/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The filtered session bus (dbus.session = "filtered"): xdg-dbus-proxy, run beside the
 * sandbox as a transient service of the user manager, listening on a socket in a runtime
 * directory of its own, which the sandbox gets bound at $XDG_RUNTIME_DIR/bus. Through it the
 * command sees, talks to and owns only the names the plan lists (dbus.see, dbus.talk,
 * dbus.own); the bus daemon itself always answers. */

#include <systemd/sd-bus.h>

#include "plan/plan.h"

typedef struct BusProxy {
        char unit[96];          /* scudo-<id>-bus.service */
        char dir[80];           /* scudo-<id>: its runtime directory, below $XDG_RUNTIME_DIR */
        char socket[4096];      /* $XDG_RUNTIME_DIR/scudo-<id>/bus */
} BusProxy;

/* Names the proxy after `id` (the run's unit name, less ".service") and fills *p. */
int bus_proxy_name(BusProxy *p, const char *id, const char *runtime_dir);

/* Starts the proxy unit for the plan's names and waits (up to 5 s) until its socket takes
 * connections. `upstream` is the real session bus's address. Errors are reported here. */
int bus_proxy_start(sd_bus *bus, const BusProxy *p, const Plan *plan, const char *upstream);

/* Stops the unit; systemd removes its runtime directory, socket and all. */
void bus_proxy_stop(sd_bus *bus, const BusProxy *p);
