/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The plan: everything a run will be given, resolved from the profiles and the command line.
 *
 * This is the contract between the policy engine (policy/, which fills it from Lua) and the
 * runner (unit/, which turns it into a transient unit). Three steps stand between them, in C:
 *   1. plan_normalize() (plan-validate.h) makes every path canonical and keeps one entry per
 *      path (the later one, as in the profiles); before that, the hardening step's first rule
 *      (harden-leads-out.h) takes out every entry that leads out of a directory the command
 *      may write, into `dropped` with its reason, as which entry wins for a path depends on it;
 *   2. plan_check() (plan-validate.h) refuses what is invalid;
 *   3. plan_harden() (plan-harden.h) adds what scudo protects whatever the profiles say (its
 *      configuration, the project files, .git, the service manager's, root's and the name
 *      services' sockets), each entry with origin "scudo" and its reason, then drops the
 *      entries whose mount would change nothing; what it drops goes to `dropped`, each with
 *      its reason.
 * The runner takes only a hardened plan (`hardened`) and turns it into properties as it is:
 * what a run gets is what `scudo explain` and `--dry-run` show. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "net/net-rule.h"
#include "util/macro.h"

typedef enum PathAccess {
        PATH_ACCESS_WRITE,      /* read-write bind */
        PATH_ACCESS_READ,       /* read-only bind */
        PATH_ACCESS_HIDE,       /* replaced by an empty directory or empty file */
        PATH_ACCESS_DENY,       /* inaccessible */
        _PATH_ACCESS_MAX,
        _PATH_ACCESS_INVALID = -EINVAL,
} PathAccess;

const char *path_access_to_string(PathAccess a);
PathAccess path_access_from_string(const char *s);

/* What a grant makes when its path is missing (plan-create.h): nothing, a directory (0700), an
 * empty file (0600) or one holding "{}" (0600: the state of tools that take an empty file for
 * a corrupt one), owned by the user, just before the unit starts. The hardening step
 * alone asks for a placeholder: an empty .git made for the run and removed after it
 * (git/git-guard.h); no profile can. */
typedef enum PathCreate {
        PATH_CREATE_NONE,
        PATH_CREATE_DIR,
        PATH_CREATE_FILE,
        PATH_CREATE_JSON,
        PATH_CREATE_PLACEHOLDER,
        _PATH_CREATE_MAX,
        _PATH_CREATE_INVALID = -EINVAL,
} PathCreate;

const char *path_create_to_string(PathCreate c);
PathCreate path_create_from_string(const char *s);

/* Where a read or write entry's contents come from; for a hide, who makes the directory. */
typedef enum PathSource {
        PATH_SOURCE_SELF,       /* the path itself, bound onto itself */
        PATH_SOURCE_BUS_PROXY,  /* the filtered session bus's socket, which the runner starts
                                 * (unit/bus-proxy.h); only the hardening step names it */
        PATH_SOURCE_SYSTEM_BUS_PROXY, /* the filtered system bus's socket, likewise */
        PATH_SOURCE_GIT_CONFIG_COPY, /* a copy of the file less its credentials, which the runner
                                      * makes (git/git-config-copies.h); only the hardening step
                                      * names it (plan-harden.h, 2b) */
        PATH_SOURCE_BROKER_DIR, /* hide: this sandbox's broker's directory, which the runner
                                 * makes before the unit starts (broker-paths.h) */
        PATH_SOURCE_BROKER_SOCKET, /* read: the socket of this sandbox's broker, which the runner
                                    * starts; only the hardening step names it */
        PATH_SOURCE_BROKER_BIN, /* read: the broker's links that route delegated commands to scudo */
        PATH_SOURCE_CONFIG_COPY, /* a copy of a tool's configuration less its credentials, which
                                  * the runner makes (git/git-config-copies.h); only the
                                  * hardening step names it (plan-harden.h, 2c) */
        PATH_SOURCE_BROKER_ROUTE, /* read: scudo itself, bound over a delegated command's executable
                                   * (`given`: the path on PATH that leads there) */
        _PATH_SOURCE_MAX,
        _PATH_SOURCE_INVALID = -EINVAL,
} PathSource;

typedef struct PlanPath {
        PathAccess access;
        char *path;             /* absolute and canonical once normalized */
        char *given;            /* the path as the policy engine gave it, before plan_normalize()
                                 * made it canonical (explain gives both); what the leads-out rule
                                 * walks (harden-leads-out.h). NULL: the same as `path` */
        char *origin;           /* where it was written: "file:line", "--fs-write", "built-in";
                                 * "scudo" for what the hardening step adds */
        char *reason;           /* why the hardening step added it; NULL for a profile's entry */
        bool derived;           /* worked out from the request ($PWD, ${arg_*}, a lookup variable,
                                 * a relative path): a delegated run may only be granted it inside
                                 * what the caller can write */
        char *over_deny;        /* a derived entry that took the place of a deny of the same path
                                 * (build.lua, plan_normalize): where that deny was written. The
                                 * hardening step puts the deny back (plan-harden.h) */
        char *over_origin;      /* a derived write that took the place of another entry of the
                                 * same path, not a deny: where that entry was written, and */
        PathAccess over_access; /* its access; what the path gets back when the write is refused
                                 * (harden-persistence.c). Meaningless without over_origin */
        PathCreate create;      /* made when missing, before the unit starts (write and read only;
                                 * checked by plan_create_check) */
        PathSource source;
} PlanPath;

#define PLAN_ORIGIN_SCUDO "scudo"

/* An entry the hardening step took out of the plan, and why. */
typedef struct PlanDrop {
        PlanPath entry;         /* as it was in the plan */
        char *reason;
        bool warn;              /* a run says so on stderr (policy_resolve's warnings): the entry
                                 * was asked for and is left out for what the profile could not
                                 * know (a symlink planted in a writable directory) */
} PlanDrop;

typedef struct PlanProperty {
        char *name;             /* a systemd unit property, e.g. "MemoryMax" */
        char *value;            /* its value as text; plan/unit-properties.c converts and checks it */
        char *origin;
} PlanProperty;

typedef enum DbusMode {
        DBUS_NONE,
        DBUS_FILTERED,
        DBUS_ALLOW,
        _DBUS_MODE_MAX,
        _DBUS_MODE_INVALID = -EINVAL,
} DbusMode;

const char *dbus_mode_to_string(DbusMode m);
DbusMode dbus_mode_from_string(const char *s);

typedef struct Plan {
        /* What runs. */
        char *exec_path;        /* resolved executable */
        dev_t exec_dev;         /* its identity when it was checked: what scudo-confine must */
        ino_t exec_ino;         /*   find there before it executes it (0: not known) */
        char **argv;            /* argv[0] as the caller gave it */
        char *working_directory;

        /* Environment: the final KEY=VALUE list, and names to remove from what the service
         * manager would add on its own. */
        char **environment;
        char **unset_environment;

        /* Filesystem view: in the profiles' order, then what plan_harden() adds; one entry per
         * path once normalized. */
        PlanPath *paths;
        size_t n_paths;
        PlanDrop *dropped;      /* what the hardening step took out, in its order */
        size_t n_dropped;
        PlanDrop *refused;      /* derived writes refused before delegation, in their order
                                 * (plan_refuse_persistence_writes): never granted, so not among
                                 * `dropped`; a run warns of each, explain lists them as dropped */
        size_t n_refused;
        bool hardened;          /* plan_harden() ran: the runner refuses a plan without it */

        /* Extra unit properties from profiles and --property. */
        PlanProperty *properties;
        size_t n_properties;

        /* Network: when `network_filtered` is false the network is left as it is. */
        bool network_filtered;
        char **net_allow;
        char **net_deny;
        /* Where each rule was written ("file:line", "--net-allow"), in the same order; for
         * the reports, which name the rule that refused. May be shorter (then: unknown). */
        char **net_allow_origin;
        char **net_deny_origin;
        DnsMode dns;
        /* network.git_remote: the host of the git remote the command uses is allowed too
         * (plan-git-remote.h, which adds its rules) */
        bool git_remote;

        /* Session bus. */
        DbusMode dbus;
        char **dbus_talk;
        char **dbus_own;
        char **dbus_see;
        /* System bus: none by default; filtered, the command talks to dbus_system_talk only. */
        DbusMode dbus_system;
        char **dbus_system_talk;

        /* Delegation, as resolved for this sandbox. */
        bool delegable;
        char **delegate;        /* profile names this sandbox delegates */
        char **delegate_commands;       /* the command names they match: routed to scudo inside */
        char **delegate_executables;    /* those they match whatever the arguments: scudo in place
                                         * of their executables inside (PATH_SOURCE_BROKER_ROUTE) */
        /* For a delegated run of this plan (plan-delegate.h): the applied profiles that say
         * delegable = false, themselves or through what they extend, and the project files
         * ignored as not trusted. */
        char **undelegable;
        char **untrusted_files;
        /* The delegation step's answer to a delegated request that no delegated profile
         * matches: the caller runs the command inside its own sandbox, as without a broker. */
        bool delegation_in_place;

        bool confirm;
        char *confirm_origin;   /* where confirm = true was said, "file:line" */
        char *log_target;       /* "stderr", "journald" or a path */
        char **log_report;      /* "file", "net", "dns" */

        char **profiles;        /* names of the profiles applied, for messages */
        /* The project files the plan was made from, trusted or not (discover.lua finds them in
         * directories that are their own canonical path), and the project hook files it ran
         * (any path). plan_harden() keeps both as they are inside. */
        char **config_files;
        char **hook_files;

        /* The directories of a .git the command may commit to whose new entries the runner
         * checks as they are made (plan-harden.c, git/gitdir-watch.h): the git directories'
         * tops, their modules/ and worktrees/, and objects/info. Set by plan_harden(). */
        char **git_watch;
        /* The .git symlinks in directories the command may write: the runner puts each back as
         * it was if the command removes or replaces it, and stops the run (gitdir-watch.h). */
        char **git_pins;
} Plan;

/* The most directories of writable .git directories one run watches (git/gitdir-watch.h):
 * past it, the .git stays read-only. */
#define PLAN_GIT_WATCH_MAX 64

/* Where the system bus is (D-Bus's default address), and so where the filtered one is bound. */
#define PLAN_SYSTEM_BUS_SOCKET "/run/dbus/system_bus_socket"

/* The most .git placeholders one run makes (git/git-guard.h). */
#define PLAN_GIT_PLACEHOLDERS_MAX 8

Plan *plan_new(void);
Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

/* Appends an entry, copying the strings. */
int plan_add_path(Plan *p, PathAccess access, const char *path, const char *origin);
/* Frees the strings of an entry. */
void plan_path_done(PlanPath *e);
/* Moves every entry i with reasons[i] set into the dropped ones, with that reason (taken: set
 * to NULL), keeping the order of the rest. 0 or -ENOMEM (then nothing moved). */
int plan_drop_marked(Plan *p, char **reasons);
int plan_add_property(Plan *p, const char *name, const char *value, const char *origin);

/* Sets `name=value` in the environment list, replacing an earlier value. */
int plan_setenv(Plan *p, const char *name, const char *value);

/* Whether an entry of the plan names exactly this path. */
bool plan_names_path(const Plan *p, const char *path);

/* The value of the last assignment of unit property `name` (the one systemd applies), or NULL. */
const char *plan_property(const Plan *p, const char *name);

/* Whether the command gets a PID namespace of its own (scudo-confine --private-pids): yes
 * unless the plan's last PrivatePIDs says no. */
bool plan_private_pids(const Plan *p);
