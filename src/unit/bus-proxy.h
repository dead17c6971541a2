/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The filtered buses (dbus.session = "filtered", dbus.system = "filtered"): xdg-dbus-proxy,
 * run beside the sandbox as a transient service of the user manager, one per bus, listening on
 * a socket in a runtime directory of its own, which the sandbox gets bound where the bus is
 * ($XDG_RUNTIME_DIR/bus, /run/dbus/system_bus_socket). Through it the command sees, talks to
 * and owns only the names the plan lists (the session bus: dbus.see, dbus.talk, dbus.own; the
 * system bus: dbus.system_talk); the bus daemon itself always answers. */

#include <systemd/sd-bus.h>

#include "plan/plan.h"

typedef enum BusKind {
        BUS_SESSION,
        BUS_SYSTEM,
} BusKind;

typedef struct BusProxy {
        char unit[96];          /* scudo-<id>-bus.service, scudo-<id>-system-bus.service */
        char dir[80];           /* scudo-<id>[-system-bus]: its runtime directory, below $XDG_RUNTIME_DIR */
        char socket[4096];      /* $XDG_RUNTIME_DIR/<dir>/bus */
        BusKind kind;
} BusProxy;

/* Names the proxy of that bus after `id` (the run's unit name, less ".service") and fills *p. */
int bus_proxy_name(BusProxy *p, BusKind kind, const char *id, const char *runtime_dir);

/* Starts the proxy unit for the plan's names of its bus and waits (up to 5 s) until its socket
 * takes connections. `upstream` is the real bus's address. Errors are reported here. */
int bus_proxy_start(sd_bus *bus, const BusProxy *p, const Plan *plan, const char *upstream);

/* Stops the unit; systemd removes its runtime directory, socket and all. */
void bus_proxy_stop(sd_bus *bus, const BusProxy *p);
