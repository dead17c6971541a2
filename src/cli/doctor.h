/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* scudo doctor: can this host confine anything, and what is degraded?
 *
 * Two kinds of evidence. The host checks (doctor-host.c) read what the kernel and the user
 * manager declare: versions, sysctls, controllers, sockets. Declared settings are not proof,
 * so the live probe (doctor-probe.c) starts one real sandbox under the built-in profile and
 * tries, from inside, what the sandbox exists to stop; each attempt is also checked from
 * outside. Only the probe can say "cannot confine". */

#include <stdbool.h>
#include <stddef.h>

typedef enum CheckState {
        CHECK_OK,
        CHECK_DEGRADED,         /* scudo runs, something a profile may ask for is not enforced */
        CHECK_MISSING,          /* scudo cannot confine at all (or refuses every run) */
        _CHECK_STATE_MAX,
} CheckState;

typedef struct Check {
        const char *name;
        CheckState state;
        char *detail;           /* what was found */
        char *meaning;          /* what it means for confinement (NULL when ok) */
        char *fix;              /* how to mend it (NULL when ok) */
} Check;

typedef struct Doctor {
        Check *checks;
        size_t n_checks;
} Doctor;

void doctor_done(Doctor *d);

/* Appends a check; the strings are formatted copies. Returns 0 or -ENOMEM. */
int doctor_add(Doctor *d, const char *name, CheckState state, const char *detail, const char *meaning,
               const char *fix);

/* The worst state among the checks. */
CheckState doctor_worst(const Doctor *d);

const char *check_state_to_string(CheckState s);

/* The host checks, each appended to d. Returns 0 or -ENOMEM. */
int doctor_check_host(Doctor *d);

/* Whether scudo-bpfd's socket accepts a connection (without a request). */
bool doctor_helper_reachable(void);

/* The live probe: one sandbox started through this very binary, as `scudo --no-network
 * (when the helper is there) -- scudo __doctor-probe ...`. Appends one check per attempt
 * ("probe: hidden file", "probe: read-only path", "probe: private /tmp", "probe: network"),
 * or one missing "probe" check when the sandbox could not be started, with scudo's own
 * reason. Returns 0 or -ENOMEM. */
int doctor_probe(Doctor *d, bool with_network);

/* What runs inside the probe's sandbox: `scudo __doctor-probe SECRET RO_DIR TMP_NAME PORT`. Prints
 * one line per attempt, "NAME held|breached DETAIL". Not for people. */
int verb_doctor_probe(int argc, char **argv);
