/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The unit properties a profile (`[NAME.unit]`) or `--property K=V` may set, their D-Bus
 * types and how their text is converted. One table serves three users: plan validation
 * (is this name known, is the value well-formed), the runner (append it to the
 * StartTransientUnit message, through unit/properties.h) and `scudo explain
 * --list-properties`.
 *
 * Properties that make the sandbox (PrivateUsers, ProtectControlGroups, NoNewPrivileges)
 * are set by scudo on every unit and can only be repeated as "yes"; properties that would
 * bypass the profile's filesystem keys (BindPaths, ...) or the runner (ExecStart, User, ...)
 * are not in the table at all. */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Checks `value` for property `name`. On error returns -EINVAL (bad value) or -ENOENT
 * (unknown name) and, if ret_error is set, a message that includes a did-you-mean. */
int unit_property_check(const char *name, const char *value, char **ret_error);

/* The closest known name, or NULL when nothing is close. */
const char *unit_property_suggest(const char *name);

/* The cgroup controller property `name` needs ("memory" for MemoryMax), or NULL for one that
 * needs none and for an unknown name. Without its controller in the user manager's cgroup,
 * systemd accepts the property and enforces nothing: the runner checks (run/run-status.c). */
const char *unit_property_controller(const char *name);

/* The i-th name of the table (for listing, with unit_property_controller()), or NULL past its
 * end. */
const char *unit_property_name_at(size_t i);

/* Where a converted property goes: sd-bus's message calls, as unit/properties.c gives them (the
 * table knows nothing of D-Bus itself, so that validation does not either). Each returns 0 or
 * a negative errno. */
typedef struct PropertyWriter {
        int (*open)(void *userdata, char type, const char *contents);
        int (*close)(void *userdata);
        int (*appendv)(void *userdata, const char *types, va_list ap);
        int (*append_strv)(void *userdata, char **l);
        void *userdata;
} PropertyWriter;

/* The frame of one (sv) entry whose value takes more than one append: opens the entry, writes
 * `name` and opens the variant of signature `sig`; closing closes both. Every (sv) entry scudo
 * writes, the table's and the unit builder's (through unit/properties.h), has this frame. */
int unit_property_write_open(const PropertyWriter *w, const char *name, const char *sig);
int unit_property_write_close(const PropertyWriter *w);

/* Writes the (sv) entry (or entries) for a checked property into an open a(sv) container. */
int unit_property_write(const PropertyWriter *w, const char *name, const char *value);

/* What scudo sets on every unit, whatever the profiles say, as NAME=VALUE (NULL-terminated):
 * for explain and --dry-run to show. unit_fixed_properties_write() writes the same. */
extern const char *const unit_fixed_properties[];
int unit_fixed_properties_write(const PropertyWriter *w);

/* Prints every accepted name with its expected value, one per line. */
void unit_property_dump(FILE *f);
