/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The unit properties of plan/unit-properties.h, appended to a StartTransientUnit message. */

#include <systemd/sd-bus.h>

#include "plan/unit-properties.h"

/* Appends the (sv) entry (or entries) for a checked property to an open a(sv) container. */
int unit_property_append(sd_bus_message *m, const char *name, const char *value);
/* What scudo sets on every unit (plan/unit-properties.h, unit_fixed_properties). */
int unit_fixed_properties_append(sd_bus_message *m);
/* The (sv) frame of plan/unit-properties.h over an sd-bus message, for entries the unit builder
 * writes in several appends: open, append the value, close. */
int unit_property_open(sd_bus_message *m, const char *name, const char *sig);
int unit_property_close(sd_bus_message *m);
