/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The hardening step: what scudo adds to a checked plan, and takes out of it, on its own
 * account, whatever the profiles say. It is the one place that decides it; each entry it adds
 * has origin "scudo" (PLAN_ORIGIN_SCUDO) and a reason, each entry it takes out goes to the
 * plan's `dropped` with a reason, so that `scudo explain` and `--dry-run` show exactly what a
 * run gets. It looks at the filesystem (lstat, never following a symlink) and changes nothing
 * there: what has to be made for a run (scudo's configuration directory, a .git placeholder)
 * is asked of the runner through the entry's `create`.
 *
 * Its first rule is applied earlier, by plan_normalize() (plan-validate.h), before one entry
 * per path is kept, since which entry wins for a path depends on it (harden-leads-out.h): a
 * read or write entry that leads out of a directory the command may write, through a symlink
 * the command could have planted there, is dropped, and a run warns of it (`warn`).
 *
 * Then, here, in this order:
 *   0. a read or write entry worked out from the request (`derived`) never overrides a deny:
 *      one in the place of a deny of the same path (`over_deny`) is dropped and the deny put
 *      back; one below a deny, with no entry that is not derived between them, is dropped;
 *   0b. (applied first, by plan_refuse_persistence_writes, below) a write entry worked out from
 *      the request on, above or inside a place whose contents run later: dropped, with a warning;
 *   1. scudo's configuration and trust store, when a writable entry covers them, and every
 *      project file and hook file the plan was made from: read-only (written from inside, they
 *      would widen or un-trust the next run);
 *   1b. what runs later outside (plan/persistence.h) but is reached through a symlink (a stow
 *      layout: ~/.bashrc -> dotfiles/bashrc): read-only where the command could write it (made
 *      empty first where it is missing);
 *   1c. what the user's own configuration points at (harden-user-config.c): where every symlink
 *      of the home, of its dot-directories and of $PATH's directories leads, and every path a
 *      value of the user's git configuration names (core.hooksPath, core.pager, an alias),
 *      read-only where the command could write it; a write entry worked out from the request
 *      at or below what a symlink leads to made read-only as well;
 *   2. a .git at the top of a writable directory: read-only, and an empty one made for the run
 *      where the command starts and none is (git/git-guard.h); unless a profile names it;
 *   2b. git's configuration, the home's and each shown .git's: every file it includes, as 1b;
 *      every file of it the command sees read-only and that holds credentials, shown as a copy
 *      less them (PATH_SOURCE_GIT_CONFIG_COPY: the runner makes it, git/git-config-copies.h);
 *   2c. in a delegable plan, each file of a tool's configuration a profile shows read-only in
 *      the home directory (and the files at the top of such a directory in $XDG_CONFIG_HOME)
 *      that holds credentials: shown as a copy less them (PATH_SOURCE_CONFIG_COPY,
 *      plan/config-filter.h);
 *   3. out of reach: the system bus and the session bus unless the plan allows them (the
 *      filtered proxy's socket in place of each it filters), the service manager's private
 *      socket, scudo-bpfd's socket; root's container and VM managers' sockets and, with
 *      network rules, the name services' unless a profile names one; every delegation
 *      broker's directory (broker-paths.h), but in the sandbox that delegates: there, its own
 *      broker's socket and routing links in an empty directory, and scudo at its path;
 *   4. dropped: every hide or deny entry whose mount would change nothing, because its path
 *      does not exist or lies under a directory the command sees empty or cannot reach (a
 *      hide under a hide only makes an empty directory: kept for the runtime directory; and no
 *      entry between gives it back). Read and write entries all stay: one whose path is
 *      missing is still checked to be missing inside (scudo-confine);
 *   5. pinned: every existing directory between a read, hide or deny entry and the writable
 *      entry above it, bound onto itself (writable, as it was), so that the command cannot
 *      rename it away and leave what the entry keeps at another path for the next run. */

#include "plan/persistence.h"
#include "plan/plan.h"

typedef struct HardenContext {
        const char *home;               /* the caller's home directory, or NULL */
        const char *runtime_dir;        /* the caller's $XDG_RUNTIME_DIR, or NULL */
        const char *config_home;        /* $XDG_CONFIG_HOME, or NULL (then ~/.config) */
        const char *state_home;         /* $XDG_STATE_HOME, or NULL (then ~/.local/state) */
        const char *data_home;          /* $XDG_DATA_HOME, or NULL (then ~/.local/share) */
        const char *path;               /* the caller's $PATH, or NULL */
        char * const *environ;          /* the caller's environment (GIT_CONFIG_GLOBAL, ...), or NULL */
        const char *bpfd_socket;        /* scudo-bpfd's socket when not SCUDO_BPFD_SOCKET, or NULL */
        const char *scudo_path;         /* scudo itself, canonical: bound where the sandbox
                                         * delegates (scudo-route hands it what is not a
                                         * delegated run); or NULL */
        const char *route_path;         /* what the routing links lead to and what is bound over
                                         * a delegated command's executables, canonical:
                                         * scudo-route, or scudo itself; or NULL */
        const char *git_dir_cache;      /* where the project walk's cache is (git-dir-cache.h):
                                         * out of every sandbox's reach; or NULL, none */
        /* The places of plan/persistence.h for this caller, resolved once from the fields above
         * by harden_context_resolve(): the rules 0b, 1b and 1c look at them. None without it. */
        PersistenceRoot *persistence;
        size_t n_persistence;
} HardenContext;

/* Resolves ctx's persistence places (persistence_roots()) from its home directory and
 * variables; none without an absolute home. 0 or -ENOMEM. harden_context_done() frees them. */
int harden_context_resolve(HardenContext *ctx);
void harden_context_done(HardenContext *ctx);

/* The rule of plan-harden.h's 0b, applied before delegation is decided (the grants a broker
 * looks at are the ones a run gets): each write entry worked out from the request on, above or
 * (where what lies below counts) below a place whose contents run later (plan/persistence.h)
 * is dropped, and a run warns of it; the path gets back the entry it had replaced. Compares
 * paths as the policy engine gave them, the home directory as the real one. 0 or -ENOMEM. */
int plan_refuse_persistence_writes(Plan *p, const HardenContext *ctx);

/* Hardens a normalized and checked plan in place and sets p->hardened. Returns 0 or -ENOMEM (then the plan
 * is not to be run), or another -errno from looking at the filesystem. */
int plan_harden(Plan *p, const HardenContext *ctx);
