/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The unit properties a profile (`[NAME.unit]`) or `--property K=V` may set, their D-Bus
 * types and how their text is converted. One table serves three users: plan validation
 * (is this name known, is the value well-formed), the runner (append it to the
 * StartTransientUnit message) and `scudo explain --list-properties`.
 *
 * Properties that make the sandbox (PrivateUsers, ProtectControlGroups, NoNewPrivileges)
 * are set by scudo on every unit and can only be repeated as "yes"; properties that would
 * bypass the profile's filesystem keys (BindPaths, ...) or the runner (ExecStart, User, ...)
 * are not in the table at all. */

#include <stdio.h>
#include <systemd/sd-bus.h>

/* Checks `value` for property `name`. On error returns -EINVAL (bad value) or -ENOENT
 * (unknown name) and, if ret_error is set, a message that includes a did-you-mean. */
int unit_property_check(const char *name, const char *value, char **ret_error);

/* The closest known name, or NULL when nothing is close. */
const char *unit_property_suggest(const char *name);

/* Appends the (sv) entry (or entries) for a checked property to an open a(sv) container. */
int unit_property_append(sd_bus_message *m, const char *name, const char *value);

/* Prints every accepted name with its expected value, one per line. */
void unit_property_dump(FILE *f);

/* Parses a boolean the way systemd does: yes/no, true/false, on/off, 1/0. */
int parse_boolean(const char *s);
