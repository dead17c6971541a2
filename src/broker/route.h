/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Routing inside a sandbox that delegates: the commands its delegated profiles match must reach
 * scudo there, whatever the agent knows of them (a name on its PATH, nothing more). The home
 * directory is hidden in the sandbox, and with it any link `scudo link` made; so scudo makes a
 * directory of its own of links, one per command name (Plan.delegate_commands), each to scudo
 * itself, bound read-only into the sandbox and put first on the command's PATH
 * (unit-build.c). Run through such a link, scudo inside asks the broker (client.h). */

#include <stdbool.h>
#include <stddef.h>

/* At most this many links; a delegated profile with a regex that matches more of PATH gets the
 * first ones, in name order, and a warning. */
#define BROKER_ROUTES_MAX 4096U

/* Makes `dir` (new, mode 0700 while it is filled, then 0500) with a link named after each of
 * `commands` to `scudo`. Names that cannot be a file name ("", ".", "..", a '/') are skipped.
 * `map`: pairs of an executable scudo is bound over inside and the command name it stands for
 * (PATH_SOURCE_BROKER_ROUTE), written to BROKER_ROUTE_MAP_NAME in `dir`, each string
 * NUL-terminated, for a scudo started through such a path by a name that is not the
 * command's (`node .../npm-cli.js`, `exec -a`). Returns the number of links made, or -errno. */
int broker_route_links(const char *dir, char * const *commands, const char *scudo, char * const *map);

/* Inside: the command name the executable at `path` (canonical) stands for, from the map in
 * `dir`; -ENOENT when it stands for none. */
int broker_route_lookup(const char *dir, const char *path, char **ret_name);
/* The map's parser (pure, fuzzed): in `n` bytes of NUL-terminated pairs, the name of the
 * target `key` (or the target of the name `key`, !by_target); -ENOENT when none, -EBADMSG when
 * the pairs are not whole. */
int broker_route_map_find(const char *buf, size_t n, bool by_target, const char *key, char **ret);
/* Inside: an executable scudo takes the place of for the command `name`; -ENOENT: none. */
int broker_route_executable(const char *dir, const char *name, char **ret_path);

/* Inside, started through `bin`'s routing links or an executable they take the place of (bound
 * over it, by a path or a name that need not be the command's: `/usr/lib/.../npm-cli.js`,
 * `exec -a x`): argv[0] made the command's name, which the broker resolves outside, where `bin`
 * is elsewhere. *ret_routed: started through such an executable (a routing link by its name
 * is not). 0, or -ENOMEM. */
int broker_route_name(const char *bin, char **argv, bool *ret_routed);

/* Removes what broker_route_links() made (links in `dir`, then `dir`), nothing else. */
void broker_route_remove(const char *dir);
