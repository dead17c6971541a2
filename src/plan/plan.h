/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The plan: everything a run will be given, resolved from the profiles and the command line.
 *
 * This is the contract between the policy engine (policy/, which fills it from Lua) and the
 * runner (unit/, which turns it into a transient unit). plan_validate() checks it before
 * anything is started; the runner trusts nothing that did not pass there. */

#include <stdbool.h>
#include <stddef.h>

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

/* What a grant makes when its path is missing (plan-create.h): nothing, a directory (0700) or
 * an empty file (0600), owned by the user, just before the unit starts. */
typedef enum PathCreate {
        PATH_CREATE_NONE,
        PATH_CREATE_DIR,
        PATH_CREATE_FILE,
        _PATH_CREATE_MAX,
        _PATH_CREATE_INVALID = -EINVAL,
} PathCreate;

const char *path_create_to_string(PathCreate c);
PathCreate path_create_from_string(const char *s);

typedef struct PlanPath {
        PathAccess access;
        char *path;             /* absolute and canonical once validated */
        char *origin;           /* where it was written: "file:line", "--fs-write", "built-in" */
        bool derived;           /* worked out from the request ($PWD, ${arg_*}, a lookup variable,
                                 * a relative path): a delegated run may only be granted it inside
                                 * what the caller can write */
        PathCreate create;      /* made when missing, before the unit starts (write and read only;
                                 * checked by plan_create_check) */
} PlanPath;

typedef struct PlanProperty {
        char *name;             /* a systemd unit property, e.g. "MemoryMax" */
        char *value;            /* its value as text; unit/properties.c converts and checks it */
        char *origin;
} PlanProperty;

typedef enum DnsMode {
        DNS_FILTERED,
        DNS_OPEN,
        _DNS_MODE_MAX,
        _DNS_MODE_INVALID = -EINVAL,
} DnsMode;

typedef enum DbusMode {
        DBUS_NONE,
        DBUS_FILTERED,
        DBUS_ALLOW,
        _DBUS_MODE_MAX,
        _DBUS_MODE_INVALID = -EINVAL,
} DbusMode;

const char *dns_mode_to_string(DnsMode m);
DnsMode dns_mode_from_string(const char *s);
const char *dbus_mode_to_string(DbusMode m);
DbusMode dbus_mode_from_string(const char *s);

typedef struct Plan {
        /* What runs. */
        char *exec_path;        /* resolved executable */
        char **argv;            /* argv[0] as the caller gave it */
        char *working_directory;

        /* Environment: the final KEY=VALUE list, and names to remove from what the service
         * manager would add on its own. */
        char **environment;
        char **unset_environment;

        /* Filesystem view. Order does not matter: the runner sorts by depth. */
        PlanPath *paths;
        size_t n_paths;

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

        /* Session bus. */
        DbusMode dbus;
        char **dbus_talk;
        char **dbus_own;
        char **dbus_see;

        /* Delegation, as resolved for this sandbox. */
        bool delegable;
        char **delegate;        /* profile names this sandbox delegates */

        bool confirm;
        char *log_target;       /* "stderr", "journald" or a path */
        char **log_report;      /* "file", "net", "dns" */

        char **profiles;        /* names of the profiles applied, for messages */
        /* The project files the plan was made from (trusted or not; in directories that are
         * their own canonical path, discover.lua) and the project hook files it ran (any
         * path): kept as they are inside (policy.c, protect_config_files). */
        char **config_files;
        char **hook_files;
} Plan;

Plan *plan_new(void);
Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

/* Appends an entry, copying the strings. */
int plan_add_path(Plan *p, PathAccess access, const char *path, const char *origin);
int plan_add_property(Plan *p, const char *name, const char *value, const char *origin);

/* Sets `name=value` in the environment list, replacing an earlier value. */
int plan_setenv(Plan *p, const char *name, const char *value);

/* Whether an entry of the plan names exactly this path. */
bool plan_names_path(const Plan *p, const char *path);

/* The value of the last assignment of unit property `name` (the one systemd applies), or NULL. */
const char *plan_property(const Plan *p, const char *name);
