/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Routing inside a sandbox that delegates: the commands its delegated profiles match must reach
 * scudo there, whatever the agent knows of them (a name on its PATH, nothing more). The home
 * directory is hidden in the sandbox, and with it any link `scudo link` made; so scudo makes a
 * directory of its own of links, one per command name (Plan.delegate_commands), each to scudo
 * itself, bound read-only into the sandbox and put first on the command's PATH
 * (unit-build.c). Run through such a link, scudo inside asks the broker (client.h). */

#include <stddef.h>

/* At most this many links; a delegated profile with a regex that matches more of PATH gets the
 * first ones, in name order, and a warning. */
#define BROKER_ROUTES_MAX 4096U

/* Makes `dir` (new, mode 0700 while it is filled, then 0500) with a link named after each of
 * `commands` to `scudo`. Names that cannot be a file name ("", ".", "..", a '/') are skipped.
 * Returns the number of links made, or -errno. */
int broker_route_links(const char *dir, char * const *commands, const char *scudo);

/* Removes what broker_route_links() made (links in `dir`, then `dir`), nothing else. */
void broker_route_remove(const char *dir);
