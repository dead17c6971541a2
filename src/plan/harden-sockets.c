/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The hardening step's section on sockets (plan-harden.h): the empty /run with what commands
 * need given back, the buses, and the sockets out of reach whatever the profiles say. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "plan/broker-paths.h"
#include "plan/harden-internal.h"
#include "plan/plan-validate.h"
#include "util/env-util.h"
#include "util/path-util.h"
#include "util/strv.h"

/* The reasons, as explain shows them after "scudo". */
#define WHY_SYSTEM_BUS_ALLOWED \
        "the system bus, as dbus.system = \"allow\" asks, given back in the empty /run"
#define WHY_RUN "services put their sockets here, and connect() ignores a read-only mount: an empty " \
        "/run, with what commands need given back; a profile that names a path below it gives that back"
#define WHY_JOURNAL "journald's sockets: logging to the journal works (logger, /dev/log)"
#define WHY_RESOLV "/etc/resolv.conf leads here: names resolve"
#define WHY_MANAGER "the service manager's private socket starts units outside the sandbox"
#define WHY_BUS "the session bus starts programs outside the sandbox (dbus.session = \"allow\" gives it)"
#define WHY_BUS_PROXY "the filtered session bus (dbus.session = \"filtered\") in place of the bus"
#define WHY_SYSTEM_BUS "the system bus reaches services outside (logind kills the user's processes, " \
        "lingering outlives the run); dbus.system = \"filtered\" or \"allow\" gives it"
#define WHY_SYSTEM_BUS_PROXY "the filtered system bus (dbus.system = \"filtered\") in place of the bus"
#define WHY_BPFD "scudo-bpfd's socket, which sets the network rules of sandboxes"
#define WHY_ROOT_MANAGER "a root container or VM manager: its group reaches it, and it mounts anything " \
        "as root; a profile that names the socket decides"
#define WHY_BROKERS "every delegation broker's socket is below it: out of reach"
#define WHY_BROKER_DIR "this sandbox delegates: an empty directory for its own broker's socket and links"
#define WHY_BROKER_SOCKET "the socket of this sandbox's broker, which the runner starts"
#define WHY_BROKER_BIN "the links that route the delegated commands to scudo, first on PATH"
#define WHY_SCUDO "scudo itself, which scudo-route hands what is not a delegated run"
#define WHY_SCUDO_ROUTE "scudo-route, where the routing links lead: the broker's client"
#define WHY_ROUTE "a delegated command's executable: scudo-route in its place, so the command reaches the " \
        "broker however it is started (by name under any PATH, by this path, through an interpreter)"
#define WHY_NAME_SERVICE "with network rules, a service that resolves names or fetches for whoever " \
        "asks, past the rules; a profile that names the socket decides"

/* Root's container and VM managers: a member of their group (docker, libvirt, lxd, ...)
 * reaches them from inside as from outside, and they start a container that mounts the home
 * directory, or anything else, as root. */
static const char * const root_managers[] = {
        "/run/docker.sock",
        "/run/containerd/containerd.sock",
        "/run/podman/podman.sock",
        "/run/libvirt/libvirt-sock",
        "/run/libvirt/virtqemud-sock",
        "/var/snap/lxd/common/lxd/unix.socket",
        "/var/lib/lxd/unix.socket",
        "/var/lib/incus/unix.socket",
};

/* With network rules, the services that look names up or fetch things for whoever asks over a
 * local socket: through them a name the rules refuse is resolved anyway (and a secret spelled
 * into it reaches that name's DNS server), and the DNS proxy never sees the answers the rules
 * for allowed names are made from. glibc then falls back to /etc/resolv.conf, whose port 53
 * leads to the proxy. */
static const char * const name_services[] = {
        "/run/systemd/resolve/io.systemd.Resolve",      /* nss-resolve (Fedora, Arch) */
        "/run/nscd/socket",                             /* glibc's name service cache */
        "/run/avahi-daemon/socket",                     /* nss-mdns */
        "/run/snapd.socket",                            /* the snap store's search */
        "/run/snapd-snap.socket",
};

/* ---- 3. sockets ------------------------------------------------------------------------- */

/* The system bus, unless the plan asks for it: through it logind kills any process of the
 * user (KillUser, TerminateUser) and sets lingering, systemd starts units, resolved looks
 * names up past the network rules. Filtered, the proxy's socket is where the bus is, read-only
 * (connecting needs no write access). The key decides: a profile's entry for the socket is
 * replaced. */
static int protect_system_bus(Plan *p) {
        if (p->dbus_system == DBUS_ALLOW)
                /* given back in the empty /run */
                return harden_force_entry(p, PATH_ACCESS_READ, PLAN_SYSTEM_BUS_SOCKET,
                                          WHY_SYSTEM_BUS_ALLOWED, PATH_SOURCE_SELF);
        if (p->dbus_system == DBUS_FILTERED)
                return harden_force_entry(p, PATH_ACCESS_READ, PLAN_SYSTEM_BUS_SOCKET, WHY_SYSTEM_BUS_PROXY,
                                   PATH_SOURCE_SYSTEM_BUS_PROXY);
        return harden_force_entry(p, PATH_ACCESS_DENY, PLAN_SYSTEM_BUS_SOCKET, WHY_SYSTEM_BUS,
                                  PATH_SOURCE_SELF);
}

/* /run (and /var/run where it is a directory of its own) empty: the sockets of the services
 * on the machine are there (a screen session's, a database's, a container manager's), and a
 * read-only mount keeps none of them from being connected to. Given back: journald's sockets
 * and what /etc/resolv.conf leads to; a profile names what else (a read or write entry below
 * /run is bound over the empty one). A plan that names /run itself decides. */
static int empty_run(Plan *p) {
        static const char * const runs[] = { "/run", "/var/run" };
        struct stat st;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(runs); i++) {
                if (lstat(runs[i], &st) < 0 || !S_ISDIR(st.st_mode) || plan_names_path(p, runs[i]))
                        continue;
                r = harden_add_entry(p, PATH_ACCESS_HIDE, runs[i], WHY_RUN, PATH_CREATE_NONE,
                                     PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        if (lstat("/run/systemd/journal", &st) >= 0 && S_ISDIR(st.st_mode) &&
            !plan_names_path(p, "/run/systemd/journal")) {
                r = harden_add_entry(p, PATH_ACCESS_READ, "/run/systemd/journal", WHY_JOURNAL,
                                     PATH_CREATE_NONE, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        /* the file itself, not its directory: systemd-resolved's holds its varlink socket too */
        _cleanup_free_ char *resolv = NULL;
        if (plan_path_canonicalize("/etc/resolv.conf", &resolv) >= 0 && path_startswith(resolv, "/run") &&
            stat(resolv, &st) >= 0 && S_ISREG(st.st_mode) && !plan_names_path(p, resolv)) {
                r = harden_add_entry(p, PATH_ACCESS_READ, resolv, WHY_RESOLV, PATH_CREATE_NONE,
                                     PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Where the command's own PATH, and the one a login shell or `env -i` rebuilds, find
 * executables. */
#define ROUTE_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const PlanPath *find_route(const Plan *p, const char *path) {
        for (size_t i = 0; i < p->n_paths; i++)
                if (p->paths[i].source == PATH_SOURCE_BROKER_ROUTE && streq(p->paths[i].path, path))
                        return &p->paths[i];
        return NULL;
}

/* `name` found in `dir`: scudo bound over the executable it resolves to (a link on PATH leads
 * there, so the link is covered too), unless the plan keeps that file out of reach anyway. */
static int route_one(Plan *p, const char *dir, const char *name, const HardenContext *ctx) {
        _cleanup_free_ char *given = NULL, *target = NULL;
        struct stat st;

        if (!path_is_absolute(dir) || !(given = path_join(dir, name)))
                return path_is_absolute(dir) ? -ENOMEM : 0;
        if (plan_path_canonicalize(given, &target) < 0 || stat(target, &st) < 0 || !S_ISREG(st.st_mode) ||
            access(target, X_OK) < 0 || find_route(p, target) || streq_ptr(target, ctx->scudo_path) ||
            streq_ptr(target, ctx->route_path))
                return 0;
        const PlanPath *g = harden_governing_entry(p, target);
        if (g && (g->access == PATH_ACCESS_DENY || g->access == PATH_ACCESS_HIDE))
                return 0;               /* not there to run inside: nothing to take the place of */
        int r = harden_force_entry(p, PATH_ACCESS_READ, target, WHY_ROUTE, PATH_SOURCE_BROKER_ROUTE);
        if (r < 0)
                return r;
        if (!streq(given, target))
                p->paths[p->n_paths - 1].given = TAKE_PTR(given);
        return 0;
}

/* Each executable a delegated command name leads to, in the directories of the command's PATH
 * and the usual ones: the routing links are found by name on PATH, which a login shell, `env
 * -i` or the tool itself rebuilds, and the real file can be started by its path or handed to
 * its interpreter. With scudo in its place, every one of these starts reaches the broker
 * (broker/route.h). Only names delegated whatever the arguments: a name that a command-line
 * pattern alone delegates ("git push") runs in place for its other uses. */
static int routes(Plan *p, const HardenContext *ctx) {
        const char *env_path = env_get(p->environment, "PATH");
        _cleanup_free_ char *search = NULL;
        if (asprintf(&search, "%s:%s", env_path && *env_path ? env_path : "", ROUTE_DEFAULT_PATH) < 0)
                return -ENOMEM;
        STRV_FOREACH(n, p->delegate_executables) {
                if (!**n || strchr(*n, '/') || streq(*n, ".") || streq(*n, ".."))
                        continue;
                for (const char *d = search; *d;) {
                        size_t l = strcspn(d, ":");
                        _cleanup_free_ char *dir = strndup(d, l);
                        if (!dir)
                                return -ENOMEM;
                        int r = route_one(p, dir, *n, ctx);
                        if (r < 0)
                                return r;
                        d += l + (d[l] == ':');
                }
        }
        return 0;
}

/* The delegation brokers (broker-paths.h): out of reach, but in the sandbox that delegates,
 * which finds its own broker's socket and routing links where a scudo inside looks, and scudo
 * itself at its path. plan_check() has refused a profile's grant below the root. */
static int brokers(Plan *p, const HardenContext *ctx) {
        _cleanup_free_ char *root = NULL, *socket = NULL, *bin = NULL;
        int r = plan_broker_root(getuid(), &root);
        if (r < 0)
                return r;
        if (strv_length(p->delegate) == 0)
                return harden_force_entry(p, PATH_ACCESS_DENY, root, WHY_BROKERS, PATH_SOURCE_SELF);
        socket = path_join(root, BROKER_SOCKET_NAME);
        bin = path_join(root, BROKER_BIN_NAME);
        if (!socket || !bin)
                return -ENOMEM;
        r = harden_force_entry(p, PATH_ACCESS_HIDE, root, WHY_BROKER_DIR, PATH_SOURCE_BROKER_DIR);
        if (r >= 0)
                r = harden_force_entry(p, PATH_ACCESS_READ, socket, WHY_BROKER_SOCKET,
                                       PATH_SOURCE_BROKER_SOCKET);
        if (r >= 0)
                r = harden_force_entry(p, PATH_ACCESS_READ, bin, WHY_BROKER_BIN, PATH_SOURCE_BROKER_BIN);
        const char *own[] = { ctx->scudo_path, ctx->route_path }, *why[] = { WHY_SCUDO, WHY_SCUDO_ROUTE };
        for (size_t i = 0; i < ELEMENTSOF(own) && r >= 0; i++)
                if (own[i] && path_is_absolute(own[i]) && !plan_names_path(p, own[i]))
                        r = harden_add_entry(p, PATH_ACCESS_READ, own[i], why[i], PATH_CREATE_NONE,
                                             PATH_SOURCE_SELF);
        if (r >= 0)
                r = routes(p, ctx);
        return r;
}

int harden_sockets(Plan *p, const HardenContext *ctx) {
        int r = empty_run(p);
        if (r >= 0)
                r = brokers(p, ctx);
        if (r >= 0)
                r = protect_system_bus(p);
        if (r < 0)
                return r;

        if (ctx->runtime_dir) {
                _cleanup_free_ char *manager = path_join(ctx->runtime_dir, "systemd");
                _cleanup_free_ char *bus = path_join(ctx->runtime_dir, "bus");
                if (!manager || !bus)
                        return -ENOMEM;
                r = harden_force_entry(p, PATH_ACCESS_DENY, manager, WHY_MANAGER, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
                /* The proxy's socket where the bus is: read-only, as connecting to a socket needs
                 * no write access to the mount. */
                if (p->dbus == DBUS_FILTERED)
                        r = harden_force_entry(p, PATH_ACCESS_READ, bus, WHY_BUS_PROXY,
                                               PATH_SOURCE_BUS_PROXY);
                else if (p->dbus != DBUS_ALLOW)
                        r = harden_force_entry(p, PATH_ACCESS_DENY, bus, WHY_BUS, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(root_managers); i++)
                if (!plan_names_path(p, root_managers[i])) {
                        r = harden_add_entry(p, PATH_ACCESS_DENY, root_managers[i], WHY_ROOT_MANAGER,
                                             PATH_CREATE_NONE, PATH_SOURCE_SELF);
                        if (r < 0)
                                return r;
                }
        if (p->network_filtered)
                for (size_t i = 0; i < ELEMENTSOF(name_services); i++)
                        if (!plan_names_path(p, name_services[i])) {
                                r = harden_add_entry(p, PATH_ACCESS_DENY, name_services[i], WHY_NAME_SERVICE,
                                              PATH_CREATE_NONE, PATH_SOURCE_SELF);
                                if (r < 0)
                                        return r;
                        }
        if (ctx->bpfd_socket && path_is_absolute(ctx->bpfd_socket) &&
            !streq(ctx->bpfd_socket, SCUDO_BPFD_SOCKET)) {
                r = harden_force_entry(p, PATH_ACCESS_DENY, ctx->bpfd_socket, WHY_BPFD, PATH_SOURCE_SELF);
                if (r < 0)
                        return r;
        }
        return harden_force_entry(p, PATH_ACCESS_DENY, SCUDO_BPFD_SOCKET, WHY_BPFD, PATH_SOURCE_SELF);
}
