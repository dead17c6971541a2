/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The one way a Request is made from this process, for a run, explain, check, profiles and
 * trust alike (the broker makes a delegated run's from its message: verb-delegated.c). */

#include "plan/request.h"

/* Fills in who and where the caller is: uid, home directory ($HOME, else the password
 * database), runtime directory ($XDG_RUNTIME_DIR, else /run/user/UID), whether it runs inside
 * a scudo sandbox (its cgroup says: util/sandbox-unit.h, never the environment), the working
 * directory, and the environment less what systemd cannot carry. argv, when not set yet (a
 * configuration verb), becomes "scudo". Returns 0, or a negative errno after printing why. */
int request_from_process(Request *req);

/* The command of a run or explain: its name, and its path on PATH (never scudo itself), made
 * absolute. Returns 0, or a negative errno after printing why: -ENOENT not found, -EACCES not
 * executable (cli/exit-status.h turns them into 127 and 126). */
int request_resolve_command(Request *req);
