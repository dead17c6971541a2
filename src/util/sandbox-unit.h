/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Whether a process runs inside a scudo sandbox, decided from the kernel alone: the cgroup the
 * process is in.
 *
 * Every sandbox is a transient service of the user's own manager, named scudo-ID.service (ID:
 * SCUDO_UNIT_ID_BYTES random bytes in lowercase hex), so the kernel lists a cgroup of that name
 * below user@UID.service in /proc/PID/cgroup for each of its processes. Inside, the cgroup file
 * system is read-only (ProtectControlGroups=yes, which scudo always sets), so the command cannot
 * move out of it; outside, no variable, file or argument moves a process into one. An
 * environment variable (SCUDO_SANDBOX, which each sandbox still gets, for a shell prompt to
 * show) decides nothing.
 *
 * The one decision: the run (which then runs the command in place, refusing widening options),
 * explain, check and the trust verbs all ask sandbox_unit_of(0). The delegation broker will ask
 * it of the process at the other end of its socket (SO_PEERCRED), to learn which sandbox a
 * request comes from. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SCUDO_UNIT_PREFIX "scudo-"
#define SCUDO_UNIT_SUFFIX ".service"
#define SCUDO_UNIT_ID_BYTES 8
/* "scudo-" + the id in hex + ".service" + NUL */
#define SCUDO_UNIT_NAME_MAX \
        (sizeof(SCUDO_UNIT_PREFIX) - 1 + 2 * SCUDO_UNIT_ID_BYTES + sizeof(SCUDO_UNIT_SUFFIX))

/* Whether name is the name of a sandbox's unit: SCUDO_UNIT_PREFIX, the id, SCUDO_UNIT_SUFFIX
 * (not the session bus proxy's scudo-ID-bus.service, nor any other). len: its length. */
bool sandbox_unit_name_is_valid(const char *name, size_t len);

/* The sandbox unit that the cgroup listing `text` (the contents of /proc/PID/cgroup, size
 * bytes) names below the manager of uid, in the unified hierarchy ("0::PATH") or in systemd's
 * own v1 hierarchy ("N:name=systemd:PATH"). Returns 1 and the unit's name in ret, or 0 when
 * there is none. */
int sandbox_unit_from_cgroup(const char *text, size_t size, uid_t uid, char ret[SCUDO_UNIT_NAME_MAX]);

/* The sandbox process pid (0: the caller) runs in, by its cgroup listing: 1 and the unit's
 * name, 0 outside every sandbox, or a negative errno when the listing cannot be read (no /proc,
 * the process gone). The caller decides which side an error counts for: a run takes it for
 * "outside" (it then confines the command in full), a verb that writes the trust store refuses. */
int sandbox_unit_of(pid_t pid, char ret[SCUDO_UNIT_NAME_MAX]);
