/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What was asked: the command, where it was started, the caller's environment and the
 * one-run overrides from the command line. Made by cli/request-from-process.h (from this process) or by
 * the delegation broker (from a message), read by policy/ to resolve a Plan. Nothing here has
 * been checked against any profile yet. */

#include <stdbool.h>
#include <sys/types.h>

#include "util/macro.h"
#include "util/sandbox-unit.h"

struct DelegationContext;

typedef struct Request {
        char **argv;            /* COMMAND [ARG...], argv[0] as typed */
        char *command_name;     /* basename of argv[0]: what profiles match against */
        char *exec_path;        /* COMMAND resolved on PATH */
        /* That file, opened when it was checked (O_PATH) and held for the run: what the sandbox
         * executes must be this device and inode (docs/shim.md, "What runs"), and the open
         * descriptor keeps the inode from being freed and its number given to another file. */
        int exec_fd;
        bool exec_fd_open;      /* exec_fd is set (a zeroed Request holds none) */
        dev_t exec_dev;
        ino_t exec_ino;
        char *start_dir;        /* the caller's working directory */
        char **environ;         /* the caller's environment, KEY=VALUE */
        char *home;             /* the caller's home directory */
        char *runtime_dir;      /* $XDG_RUNTIME_DIR, or /run/user/UID */
        uid_t uid;

        bool via_link;          /* invoked through a symlink named after the command */
        bool nested;            /* started inside a scudo sandbox (decided by its cgroup) */
        char enclosing_unit[SCUDO_UNIT_NAME_MAX];       /* that sandbox's unit, when nested */

        /* One-run overrides, in command-line order. */
        char **profiles;        /* --profile */
        bool no_match;          /* --no-match */
        char **fs_write, **fs_read, **fs_hide, **fs_deny;
        char **net_allow, **net_deny;
        bool no_network;
        char **env_copy;        /* --env NAME */
        char **deny_env, **allow_env;
        char **properties;      /* --property K=V */
        int delegate;           /* -1 --no-delegate, 0 profile's choice, 1 --delegate */

        /* Set by the broker for a request it received: the sandbox it came from (borrowed).
         * The plan then goes through the delegation step (plan/plan-delegate.h). */
        const struct DelegationContext *delegation;
} Request;

void request_done(Request *r);

/* The first one-run option that could change what a sandbox grants (profiles, paths, network,
 * environment, properties, delegation), or NULL. Inside a sandbox every one of them is refused:
 * the sandbox around the command decides. The one list of them. */
const char *request_widening_option(const Request *req);
