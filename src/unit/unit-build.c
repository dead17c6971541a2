/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "properties.h"
#include "unit-build.h"
#include "git/git-config-copies.h"
#include "util/env-util.h"
#include "util/error-message.h"
#include "util/parse-util.h"
#include "util/path-util.h"
#include "util/scudo-programs.h"
#include "util/strv.h"

static bool plan_private_devices(const Plan *plan) {
        const char *v = plan_property(plan, "PrivateDevices");
        return v && parse_boolean(v) == 1;
}

/* ExecStartEx with the "no-env-expand" flag: systemd would otherwise expand $VAR and $$ in
 * the arguments, and they must reach the command byte for byte. */
static int append_exec(sd_bus_message *m, const Plan *plan, const UnitContext *ctx, char **checks,
                       const UnitStdio *stdio) {
        static char *const flags[] = { (char *) "no-env-expand", NULL };
        _cleanup_free_ char **argv = NULL;
        size_t n = 0;

        /* scudo-confine [--check=WHAT...] [--controlling-tty] [--private-ptys] [--private-pids]
         * --exec-identity=DEV:INO EXECUTABLE ARGV...: it checks the mounts are what was checked
         * here, and EXECUTABLE the file checked here (which it then executes), adds what systemd
         * cannot, then execs. The pty given as standard input becomes the command's controlling
         * terminal (systemd would do it with StandardInput=tty, which it cannot mix with fds).
         * With PrivateDevices=, systemd still binds the session's /dev/pts, every terminal of
         * the user: scudo-confine puts a devpts of the command's own over it. Unless a profile
         * turns it off, the command gets a PID namespace and a /proc of its own, which systemd
         * 252 has no property for. */
        if (plan->exec_ino == 0)
                return -EINVAL;         /* every run's executable is checked: request_resolve_command() */
        argv = calloc(strv_length(checks) + strv_length(plan->argv) + 8, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        argv[n++] = (char *) "scudo-confine";
        STRV_FOREACH(c, checks)
                argv[n++] = *c;
        if (stdio->controlling_tty)
                argv[n++] = (char *) "--controlling-tty";
        if (plan_private_devices(plan))
                argv[n++] = (char *) "--private-ptys";
        /* With the PID namespace, the command's stops come back to this process (job control:
         * pid-init.c, run-control.c). */
        char notify[32];
        if (plan_private_pids(plan)) {
                argv[n++] = (char *) "--private-pids";
                (void) snprintf(notify, sizeof(notify), "--notify-stop=%ld", (long) getpid());
                argv[n++] = notify;
        }
        char identity[64];
        (void) snprintf(identity, sizeof(identity), "--exec-identity=%llu:%llu",
                        (unsigned long long) plan->exec_dev, (unsigned long long) plan->exec_ino);
        argv[n++] = identity;
        argv[n++] = plan->exec_path;
        STRV_FOREACH(a, plan->argv)
                argv[n++] = *a;

        int r = unit_property_open(m, "ExecStartEx", "a(sasas)");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "(sasas)");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'r', "sasas");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", ctx->confine_path);
        if (r < 0)
                return r;
        r = sd_bus_message_append_strv(m, argv);
        if (r < 0)
                return r;
        r = sd_bus_message_append_strv(m, (char **) flags);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return unit_property_close(m);
}

static int compare_paths(const void *a, const void *b) {
        return strcmp((*(const PlanPath * const *) a)->path, (*(const PlanPath * const *) b)->path);
}

typedef struct MountLists {
        char **bind_src, **bind_ro_src, **bind_ro_dst, **tmpfs, **inaccessible;
        char **checks;  /* scudo-confine's --check= arguments */
        char *error;    /* why the unit cannot be built, for the caller to report */
} MountLists;

/* Returns r (a negative errno) with the reason kept for the caller: the runner reports it,
 * once. */
_printf_(3, 4) static int mount_error(MountLists *l, int r, const char *fmt, ...) {
        va_list ap;
        free(l->error);
        l->error = NULL;
        va_start(ap, fmt);
        r = error_messagev(&l->error, r, fmt, ap);
        va_end(ap);
        return r;
}

static void mount_lists_done(MountLists *l) {
        free(l->error);
        strv_free(l->checks);
        strv_free(l->bind_src);
        strv_free(l->bind_ro_src);
        strv_free(l->bind_ro_dst);
        strv_free(l->tmpfs);
        strv_free(l->inaccessible);
}

static int add_inaccessible(MountLists *l, const char *path) {
        _cleanup_free_ char *s = NULL;
        /* "-": a path that does not exist inside the sandbox has nothing to protect. */
        if (asprintf(&s, "-%s", path) < 0)
                return -ENOMEM;
        int r = strv_push(&l->inaccessible, s);
        if (r < 0)
                return r;
        s = NULL;
        return 0;
}

/* What scudo-confine is to find at `path` inside, before the command runs (see there). systemd
 * follows symlinks when it sets up a mount: a directory swapped for a symlink to ~/.ssh, by
 * another sandbox that may write its parent, between the checks of the plan and the mounts,
 * would have ~/.ssh bound in its place. So each mount source is identified here, reached
 * without following any symlink, and its identity checked inside once the mounts are made. */
static int add_check(MountLists *l, char kind, const struct stat *st, const char *path) {
        _cleanup_free_ char *s = NULL;
        int r = st ? asprintf(&s, "--check=%c:%llu:%llu:%s", kind, (unsigned long long) st->st_dev,
                              (unsigned long long) st->st_ino, path) :
                     asprintf(&s, "--check=%c:%s", kind, path);
        if (r < 0)
                return -ENOMEM;
        r = strv_push(&l->checks, s);
        if (r < 0)
                return r;
        s = NULL;
        return 0;
}

/* What the path leads to now, reached without a symlink: 1 (and *st), 0 when missing, or a
 * refusal when a symlink has appeared in a path the plan's checks found free of them (-ELOOP). */
static int identify(MountLists *l, const char *path, struct stat *st) {
        int r = path_stat_no_symlinks(path, st);
        if (r == -ELOOP)
                return mount_error(l, r, "%s changed into a symlink after it was checked", path);
        if (r == -EINVAL)
                return mount_error(l, r, "%s is not a canonical path", path);
        return r > 0 ? 1 : 0;   /* unreadable (EACCES): systemd, as the same user, cannot bind it */
}

/* What the runner starts for the run and an entry of source `s` is bound from, read-only at the
 * entry's path: a filtered bus's socket (where the bus is: connecting to a socket needs no write
 * access to the mount), the delegation broker's socket and its routing links. Returns what it
 * is, for messages, with *ret_src where it is (NULL when not started); NULL for any other
 * source. */
static const char *runtime_source(PathSource s, const UnitContext *ctx, const char *self,
                                  const char **ret_src) {
        switch (s) {
        case PATH_SOURCE_BUS_PROXY:
                *ret_src = ctx->bus_proxy_socket;
                return "the session bus proxy";
        case PATH_SOURCE_SYSTEM_BUS_PROXY:
                *ret_src = ctx->system_bus_proxy_socket;
                return "the system bus proxy";
        case PATH_SOURCE_BROKER_SOCKET:
                *ret_src = ctx->broker_socket;
                return "the delegation broker";
        case PATH_SOURCE_BROKER_BIN:
                *ret_src = ctx->broker_bin;
                return "the delegation broker's routing links";
        case PATH_SOURCE_BROKER_ROUTE:
                /* scudo-route beside the scudo that starts the broker, or that scudo
                 * (broker/route.h) */
                *ret_src = ctx->broker_bin ? self : NULL;
                return "scudo-route in place of a delegated command";
        default:
                *ret_src = NULL;
                return NULL;
        }
}

static int bind_runtime_source(MountLists *l, const PlanPath *p, const char *what, const char *src) {
        struct stat st;
        if (p->access != PATH_ACCESS_READ || !src)
                return mount_error(l, -EINVAL, "the plan asks for %s, which has not been started", what);
        int r = identify(l, src, &st);
        if (r == 0)
                r = mount_error(l, -ENOENT, "%s's %s is gone", what, src);
        if (r >= 0)
                r = strv_extend(&l->bind_ro_src, src);
        if (r >= 0)
                r = strv_extend(&l->bind_ro_dst, p->path);
        if (r >= 0)
                r = add_check(l, '=', &st, p->path);
        return r;
}

static int collect_mounts(const Plan *plan, const UnitContext *ctx, MountLists *l) {
        _cleanup_free_ const PlanPath **sorted = NULL;
        _cleanup_free_ char *self = NULL;
        int r;

        /* What the plan says, and nothing else: what scudo adds on its own account is in it
         * already (plan-harden.h), and shown by explain as it is here. */
        if (!plan->hardened)
                return -EINVAL;
        if (ctx->broker_bin && !(self = scudo_route_path()))
                return mount_error(l, -ENOMEM, "cannot find scudo-route or scudo's own executable");
        sorted = calloc(plan->n_paths + 1, sizeof(PlanPath *));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_paths; i++)
                sorted[i] = &plan->paths[i];
        qsort(sorted, plan->n_paths, sizeof(PlanPath *), compare_paths);

        for (size_t i = 0; i < plan->n_paths; i++) {
                const PlanPath *p = sorted[i];
                struct stat st;

                if ((i > 0 && streq(sorted[i - 1]->path, p->path)) || !path_is_absolute(p->path))
                        return -EINVAL;         /* one entry per path, canonical: plan_normalize() */
                const char *started, *what = runtime_source(p->source, ctx, self, &started);
                if (what) {
                        r = bind_runtime_source(l, p, what, started);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = identify(l, p->path, &st);
                if (r < 0)
                        return r;
                bool exists = r > 0;
                switch (p->access) {
                case PATH_ACCESS_WRITE:
                        r = strv_extend(&l->bind_src, p->path);
                        if (r >= 0)
                                r = add_check(l, exists ? '=' : '-', exists ? &st : NULL, p->path);
                        break;
                case PATH_ACCESS_READ: {
                        /* git's or a tool's configuration less its credentials, in place of the
                         * file */
                        bool copy = p->source == PATH_SOURCE_GIT_CONFIG_COPY ||
                                p->source == PATH_SOURCE_CONFIG_COPY;
                        const char *src = copy ? git_config_copy_of(ctx->git_config, p->path) : NULL;
                        if (src) {
                                r = identify(l, src, &st);
                                if (r < 0)
                                        return r;
                                exists = r > 0;
                        } else if (copy && exists)
                                return mount_error(l, -ENOENT, "%s: the configuration there has no copy "
                                                   "without its credentials", p->path);
                        r = strv_extend(&l->bind_ro_src, src ?: p->path);
                        if (r >= 0)
                                r = strv_extend(&l->bind_ro_dst, p->path);
                        if (r >= 0)
                                r = add_check(l, exists ? '=' : '-', exists ? &st : NULL, p->path);
                        break;
                }
                case PATH_ACCESS_HIDE:
                        if (!exists)
                                r = 0;  /* nothing there to hide */
                        else if (S_ISDIR(st.st_mode)) {
                                r = strv_extend(&l->tmpfs, p->path);
                                if (r >= 0)
                                        r = add_check(l, 't', &st, p->path);
                        } else {
                                /* an empty file in place of the file: /dev/null, read-only */
                                r = strv_extend(&l->bind_ro_src, "/dev/null");
                                if (r >= 0)
                                        r = strv_extend(&l->bind_ro_dst, p->path);
                                if (r >= 0)
                                        r = add_check(l, 'n', NULL, p->path);
                        }
                        break;
                case PATH_ACCESS_DENY:
                        r = add_inaccessible(l, p->path);
                        if (r >= 0)
                                r = add_check(l, 'x', NULL, p->path);
                        break;
                default:
                        return -EINVAL;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int append_binds(sd_bus_message *m, const char *name, char **src, char **dst) {
        if (!src)
                return 0;
        int r = unit_property_open(m, name, "a(ssbt)");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "(ssbt)");
        if (r < 0)
                return r;
        for (size_t i = 0; src[i]; i++) {
                /* ignore_enoent: a missing source is skipped, which only ever grants less */
                r = sd_bus_message_append(m, "(ssbt)", src[i], dst ? dst[i] : src[i], 1,
                                          (uint64_t) MS_REC);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return unit_property_close(m);
}

static bool plan_protect_system_strict(const Plan *plan) {
        const char *v = plan_property(plan, "ProtectSystem");
        return v && streq(v, "strict");
}

static int append_mounts(sd_bus_message *m, const Plan *plan, const UnitContext *ctx, MountLists *l) {
        int r;

        if (l->tmpfs) {
                r = unit_property_open(m, "TemporaryFileSystem", "a(ss)");
                if (r < 0)
                        return r;
                r = sd_bus_message_open_container(m, 'a', "(ss)");
                if (r < 0)
                        return r;
                STRV_FOREACH(t, l->tmpfs) {
                        r = sd_bus_message_append(m, "(ss)", *t, "mode=0755");
                        if (r < 0)
                                return r;
                }
                r = sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
                r = unit_property_close(m);
                if (r < 0)
                        return r;
        }
        r = append_binds(m, "BindPaths", l->bind_src, NULL);
        if (r < 0)
                return r;
        /* scudo-confine must be there whatever the profile hides: bind it at its own path. */
        if (ctx->confine_path) {
                r = strv_extend(&l->bind_ro_src, ctx->confine_path);
                if (r >= 0)
                        r = strv_extend(&l->bind_ro_dst, ctx->confine_path);
                if (r < 0)
                        return r;
        }
        r = append_binds(m, "BindReadOnlyPaths", l->bind_ro_src, l->bind_ro_dst);
        if (r < 0)
                return r;
        /* systemd 252 leaves /run (and /run/lock, world-writable on Debian) writable under
         * ProtectSystem=strict as soon as ProtectControlGroups=yes is set too, which scudo always
         * does: a command could leave files there for the rest of the session. Say it again for
         * /run. The mounts of the plan under it (the hidden runtime directory, a profile's write
         * grant) and /run/user keep their own access: systemd does not remount them. An empty
         * /run of the sandbox's own (plan-harden.c) is not: the two would name one path, and
         * systemd keeps only one of them. */
        bool run_hidden = false;
        for (size_t i = 0; i < plan->n_paths; i++)
                if (streq(plan->paths[i].path, "/run"))
                        run_hidden = plan->paths[i].access == PATH_ACCESS_HIDE;
        if (plan_protect_system_strict(plan) && !run_hidden) {
                r = unit_property_open(m, "ReadOnlyPaths", "as");
                if (r >= 0)
                        r = sd_bus_message_append_strv(m, (char *[]) { (char *) "-/run", NULL });
                if (r >= 0)
                        r = unit_property_close(m);
                if (r < 0)
                        return r;
        }
        if (!l->inaccessible)
                return 0;
        r = unit_property_open(m, "InaccessiblePaths", "as");
        if (r < 0)
                return r;
        r = sd_bus_message_append_strv(m, l->inaccessible);
        if (r < 0)
                return r;
        return unit_property_close(m);
}

/* Exposed for tests: the mounts alone. */
int unit_append_paths(sd_bus_message *m, const Plan *plan, const UnitContext *ctx, char **ret_error) {
        _cleanup_(mount_lists_done) MountLists l = {};
        int r = collect_mounts(plan, ctx, &l);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(l.error);
                return r;
        }
        return append_mounts(m, plan, ctx, &l);
}

int unit_unset_environment(const Plan *plan, char **manager_environment, char **own, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        /* (UnsetEnvironment= applies to Environment= too: what scudo sets itself stays.) */
        STRV_FOREACH(n, plan->unset_environment) {
                if (env_find(own, *n, strlen(*n)))
                        continue;
                r = strv_extend(&l, *n);
                if (r < 0)
                        return r;
        }
        /* The unit starts from the manager's environment block (set-environment,
         * import-environment: often SSH_AUTH_SOCK, tokens, ...) before Environment= is
         * applied. The command is to get the caller's environment less what the profiles
         * deny, so every variable of the manager's that the plan does not set goes. */
        STRV_FOREACH(e, manager_environment) {
                size_t len = strcspn(*e, "=");
                if (len == 0 || (*e)[len] != '=' || env_find(plan->environment, *e, len) ||
                    env_find(own, *e, len))
                        continue;
                _cleanup_free_ char *name = strndup(*e, len);
                if (!name)
                        return -ENOMEM;
                if (strv_contains(l, name))
                        continue;
                r = strv_push(&l, name);
                if (r < 0)
                        return r;
                name = NULL;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int append_stdio(sd_bus_message *m, const UnitStdio *stdio) {
        static const char * const fd_props[3] = {
                "StandardInputFileDescriptor", "StandardOutputFileDescriptor", "StandardErrorFileDescriptor",
        };
        for (int i = 0; i < 3; i++) {
                int r = sd_bus_message_append(m, "(sv)", fd_props[i], "h", stdio->fd[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int unit_append_properties(sd_bus_message *m, const Plan *plan, const UnitContext *ctx,
                           const UnitStdio *stdio, char **ret_error) {
        _cleanup_free_ char *description = NULL;
        int r;

        _cleanup_free_ char *sandbox_var = NULL;
        if (asprintf(&description, "scudo: %s", plan->argv && plan->argv[0] ? plan->argv[0] : "?") < 0 ||
            asprintf(&sandbox_var, "SCUDO_SANDBOX=%s", strempty(ctx->unit_name)) < 0)
                return -ENOMEM;

        /* Defaults a profile may change: a keyring of the unit's own, not the manager's; and
         * 5 s, not the manager's 90, between the SIGTERM of a stop (Ctrl-C twice, scudo killed,
         * the command's main process gone with children left) and the SIGKILL: a command that
         * ignores SIGTERM must not run on for a minute and a half after the user stopped it. */
        r = sd_bus_message_append(m, "(sv)", "KeyringMode", "s", "private");
        if (r >= 0)
                r = unit_property_append(m, "TimeoutStopSec", "5s");
        /* With network rules, only the families the BPF programs see (and AF_UNIX, AF_NETLINK
         * for the local machine): the cgroup hooks never see AF_VSOCK, which in a VM reaches
         * the host, nor any other family. First, so that it sets the allow-list form: a
         * profile may still add a family to it (its choice) or take one away ("~AF_NETLINK"). */
        if (r >= 0 && plan->network_filtered)
                r = unit_property_append(m, "RestrictAddressFamilies",
                                         "AF_UNIX AF_INET AF_INET6 AF_NETLINK");
        if (r < 0)
                return r;

        /* Profile properties next: the fixed ones below come last, so that nothing a
         * profile says can replace them. */
        for (size_t i = 0; i < plan->n_properties; i++) {
                r = unit_property_append(m, plan->properties[i].name, plan->properties[i].value);
                if (r < 0)
                        return r;
        }

        r = sd_bus_message_append(m, "(sv)", "Description", "s", description);
        if (r >= 0)
                /* exec: a failed execve fails the start job */
                r = sd_bus_message_append(m, "(sv)", "Type", "s", "exec");
        if (r >= 0)
                /* results stay readable until we close */
                r = sd_bus_message_append(m, "(sv)", "AddRef", "b", 1);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
        if (r >= 0 && ctx->slice)
                r = sd_bus_message_append(m, "(sv)", "Slice", "s", ctx->slice);
        /* With a PID namespace, the stop's SIGTERM and SIGHUP go to the main process alone,
         * whose init passes them on to every process of the namespace (confine/pid-init.c):
         * sent to all of them as well, each would get them twice. The SIGKILL that ends a
         * stop still goes to all. */
        if (r >= 0 && plan_private_pids(plan))
                r = sd_bus_message_append(m, "(sv)", "KillMode", "s", "mixed");
        if (r < 0)
                return r;

        /* The mounts first: what they are is checked inside, by scudo-confine's arguments. */
        _cleanup_(mount_lists_done) MountLists mounts = {};
        r = collect_mounts(plan, ctx, &mounts);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(mounts.error);
                return r;
        }
        r = append_exec(m, plan, ctx, mounts.checks, stdio);
        if (r < 0)
                return r;
        if (plan->working_directory) {
                r = sd_bus_message_append(m, "(sv)", "WorkingDirectory", "s", plan->working_directory);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_append(m, "(sv)", "SendSIGHUP", "b", 1);
        if (r < 0)
                return r;

        r = unit_property_open(m, "Environment", "as");
        if (r >= 0)
                r = sd_bus_message_append_strv(m, plan->environment ?: (char *[]) { NULL });
        if (r >= 0)
                r = unit_property_close(m);
        if (r < 0)
                return r;
        /* Last, so it wins over the caller's: the unit's name, for a shell prompt to show. scudo
         * itself never reads it: whether a scudo runs nested is its cgroup's to say. */
        r = sd_bus_message_append(m, "(sv)", "Environment", "as", 1, sandbox_var);
        if (r < 0)
                return r;
        /* The filtered bus is where the bus always is (the profiles deny the caller's
         * address, which may name another place). */
        _cleanup_free_ char *bus_var = NULL;
        bool proxied = plan->dbus == DBUS_FILTERED && ctx->bus_proxy_socket && ctx->runtime_dir;
        if (proxied) {
                if (asprintf(&bus_var, "DBUS_SESSION_BUS_ADDRESS=unix:path=%s/bus", ctx->runtime_dir) < 0)
                        return -ENOMEM;
                r = sd_bus_message_append(m, "(sv)", "Environment", "as", 1, bus_var);
                if (r < 0)
                        return r;
        }
        /* Likewise the filtered system bus, where the caller's environment may name another
         * address. */
        const char *system_bus_var = NULL;
        if (plan->dbus_system == DBUS_FILTERED && ctx->system_bus_proxy_socket) {
                system_bus_var = "DBUS_SYSTEM_BUS_ADDRESS=unix:path=" PLAN_SYSTEM_BUS_SOCKET;
                r = sd_bus_message_append(m, "(sv)", "Environment", "as", 1, system_bus_var);
                if (r < 0)
                        return r;
        }
        /* In a sandbox that delegates, the links that route its delegated commands to scudo
         * come first on PATH (broker/route.h). */
        _cleanup_free_ char *path_var = NULL;
        const PlanPath *routes = NULL;
        for (size_t i = 0; i < plan->n_paths && !routes; i++)
                if (plan->paths[i].source == PATH_SOURCE_BROKER_BIN)
                        routes = &plan->paths[i];
        if (routes) {
                const char *path = env_get(plan->environment, "PATH");
                if (asprintf(&path_var, "PATH=%s:%s", routes->path,
                             path && *path ? path : "/usr/local/bin:/usr/bin:/bin") < 0)
                        return -ENOMEM;
                r = sd_bus_message_append(m, "(sv)", "Environment", "as", 1, path_var);
                if (r < 0)
                        return r;
        }
        char *own[5] = { sandbox_var };
        size_t n_own = 1;
        if (bus_var)
                own[n_own++] = bus_var;
        if (system_bus_var)
                own[n_own++] = (char *) system_bus_var;
        if (path_var)
                own[n_own++] = path_var;
        _cleanup_strv_free_ char **unset = NULL;
        r = unit_unset_environment(plan, ctx->manager_environment, own, &unset);
        if (r < 0)
                return r;
        if (unset) {
                r = unit_property_open(m, "UnsetEnvironment", "as");
                if (r >= 0)
                        r = sd_bus_message_append_strv(m, unset);
                if (r >= 0)
                        r = unit_property_close(m);
                if (r < 0)
                        return r;
        }

        r = append_stdio(m, stdio);
        if (r < 0)
                return r;

        r = append_mounts(m, plan, ctx, &mounts);
        if (r < 0)
                return r;

        /* The sandbox itself, last: nothing a profile said can replace it. */
        return unit_fixed_properties_append(m);
}
