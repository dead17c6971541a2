/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The places whose contents run later by themselves, outside any sandbox: the one list of
 * them. The hardening step refuses a grant worked out from the request on or around one, and
 * keeps what one leads to through symlinks read-only, and the files git's configuration
 * includes (harden-persistence.c). */

#include <stdbool.h>
#include <stddef.h>

typedef struct PersistenceEnv {
        const char *home;               /* required */
        const char *config_home;        /* $XDG_CONFIG_HOME; NULL or relative: ~/.config */
        const char *data_home;          /* $XDG_DATA_HOME; NULL or relative: ~/.local/share */
        const char *state_home;         /* $XDG_STATE_HOME; NULL or relative: ~/.local/state */
        const char *path;               /* $PATH, or NULL */
} PersistenceEnv;

typedef struct PersistenceRoot {
        char *path;                     /* absolute, as the environment spells it (not resolved) */
        bool deep;                      /* what lies below counts too (units in systemd/user/) */
        bool file;                      /* a file (a shell's start-up file), not a directory */
} PersistenceRoot;

/* The roots, in a fixed order: scudo's configuration and trust store, the service manager's
 * user units, autostart entries, environment.d, git's and fish's configuration; ~/.local/bin,
 * ~/bin and every absolute $PATH directory (only searched themselves: not deep); the start-up
 * files of bash, zsh, the login shell, readline, the X session and pam_env, and ~/.gitconfig.
 * 0 or -ENOMEM. */
int persistence_roots(const PersistenceEnv *env, PersistenceRoot **ret, size_t *ret_n);
void persistence_roots_free(PersistenceRoot *r, size_t n);

/* Whether path c (absolute, clean, lc bytes) is root (lr bytes), lies above it or, deep, below
 * it: as strings, without looking at the filesystem. What a derived write may not be granted. */
bool persistence_related(const char *c, size_t lc, const char *root, size_t lr, bool deep);
