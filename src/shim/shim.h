/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The FUSE shim (docs/shim.md): a read-only directory, meant to stand first on PATH, with a
 * symlink to scudo for each command some profile matches by name (as seen from the calling
 * process's working directory) that its PATH holds after the shim. Running one runs scudo
 * with the command's name as argv[0], which runs the real command confined. */

/* Where the shim is mounted for this user: $XDG_RUNTIME_DIR/scudo/shim (or /run/user/UID/...). */
int shim_mount_path(char **ret);

/* Mounts the shim at `mount` (cleaning up a stale mount left by a crash first) and serves it
 * until SIGTERM or SIGINT; `scudo_path` is what its entries point to. Returns 0 after a clean
 * stop, a negative errno (reported) otherwise. */
int shim_serve(const char *mount, const char *scudo_path);

/* Whether the shim is mounted at `mount`: running, absent, or stale (its process is gone and
 * the mount answers ENOTCONN). For scudo status and scudo doctor. */
typedef enum ShimState { SHIM_ABSENT, SHIM_RUNNING, SHIM_STALE } ShimState;
ShimState shim_mount_state(const char *mount);
