/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* scudo's programs of their own, found where scudo is. */

/* Run first in every sandbox, before the command (src/confine/). */
#define SCUDO_CONFINE_NAME "scudo-confine"
/* What a delegated command's names and executables lead to inside the sandbox that delegates
 * it (src/route/): the broker's client alone, a static program that starts in a fraction of
 * scudo's time. */
#define SCUDO_ROUTE_NAME "scudo-route"

/* NAME beside the running executable's canonical path, when it is an executable there:
 * malloc'd, or NULL. */
char *scudo_program_beside_self(const char *name);

/* NAME beside the running executable's canonical path (a build tree, or both in one bin dir),
 * else where meson installs it (SCUDO_LIBEXECDIR): malloc'd, or NULL when neither is an
 * executable (or out of memory). */
char *scudo_program_path(const char *name);

/* What a delegated command leads to inside: scudo-route where it is installed, else scudo
 * itself (canonical), which does the same work with a slower start. NULL when out of memory
 * or when /proc/self/exe cannot be resolved. */
char *scudo_route_path(void);
