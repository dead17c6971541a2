/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bus-proxy.h"
#include "manager-bus.h"
#include "transient-unit.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/strv.h"


/* How long the proxy may take to listen before the run is given up. */
#define BUS_PROXY_TIMEOUT_MS 5000

static const char *bus_kind_name(BusKind kind) {
        return kind == BUS_SYSTEM ? "system" : "session";
}

int bus_proxy_name(BusProxy *p, BusKind kind, const char *id, const char *runtime_dir) {
        struct sockaddr_un sa;
        const char *suffix = kind == BUS_SYSTEM ? "-system-bus" : "";
        if (!runtime_dir || !path_is_absolute(runtime_dir))
                return -EINVAL;
        p->kind = kind;
        if ((size_t) snprintf(p->unit, sizeof(p->unit), "%s%s-bus.service", id,
                              kind == BUS_SYSTEM ? "-system" : "") >= sizeof(p->unit) ||
            (size_t) snprintf(p->dir, sizeof(p->dir), "%s%s", id, suffix) >= sizeof(p->dir))
                return -ENAMETOOLONG;
        /* A unix socket's path has to fit in sun_path. */
        size_t n = (size_t) snprintf(p->socket, sizeof(p->socket), "%s/%s/bus", runtime_dir, p->dir);
        if (n >= sizeof(p->socket) || n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        return 0;
}

/* The proxy's command line: the upstream bus, the socket, and the plan's names for that bus.
 * The system bus gets talk names only: its services are what the command is to call, and
 * owning a name there is the bus's own policy's to grant (to root, as a rule). */
static int proxy_argv(const BusProxy *p, const Plan *plan, const char *upstream, char ***ret) {
        _cleanup_strv_free_ char **argv = NULL;
        int r = strv_extend(&argv, "xdg-dbus-proxy");
        if (r >= 0)
                r = strv_extend(&argv, upstream);
        if (r >= 0)
                r = strv_extend(&argv, p->socket);
        if (r >= 0)
                r = strv_extend(&argv, "--filter");
        bool system = p->kind == BUS_SYSTEM;
        const struct {
                const char *option;
                char **names;
        } lists[] = {
                { "--see=", system ? NULL : plan->dbus_see },
                { "--talk=", system ? plan->dbus_system_talk : plan->dbus_talk },
                { "--own=", system ? NULL : plan->dbus_own },
        };
        for (size_t i = 0; i < ELEMENTSOF(lists) && r >= 0; i++)
                STRV_FOREACH(n, lists[i].names) {
                        _cleanup_free_ char *a = NULL;
                        if (asprintf(&a, "%s%s", lists[i].option, *n) < 0)
                                return -ENOMEM;
                        r = strv_push(&argv, a);
                        if (r < 0)
                                break;
                        a = NULL;
                }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(argv);
        return 0;
}

static uint64_t now_ms(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Whether the socket takes a connection (the connection is closed at once: the proxy only
 * opens its own to the bus when a client speaks). */
static bool socket_listens(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return false;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        bool ok = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0;
        (void) close(fd);
        return ok;
}

typedef struct ProxyUnit {
        const BusProxy *proxy;
        const char *exe;
        char **argv;
        const char *description;
} ProxyUnit;

static int append_proxy_properties(sd_bus_message *m, void *userdata) {
        const ProxyUnit *u = userdata;
        int r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)",
                                      "Description", "s", u->description,
                                      "CollectMode", "s", "inactive-or-failed",
                                      "RuntimeDirectory", "as", 1, u->proxy->dir,
                                      "RuntimeDirectoryMode", "u", (uint32_t) 0700);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "ExecStart");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "a(sasb)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sasb)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "sasb");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", u->exe);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, u->argv);
        if (r >= 0)
                r = sd_bus_message_append(m, "b", 0);
        for (int i = 0; i < 4 && r >= 0; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_proxy_start(sd_bus *bus, const BusProxy *p, const Plan *plan, const char *upstream) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *exe = NULL;
        int r;

        const char *what = bus_kind_name(p->kind);
        _cleanup_free_ char *description = NULL;

        r = path_find_executable("xdg-dbus-proxy", getenv("PATH") ?: "/usr/bin:/bin", NULL, 0, &exe);
        if (r < 0)
                return log_error_errno(r, "dbus.%s = \"filtered\" needs xdg-dbus-proxy, which is not "
                                       "installed (Debian: apt install xdg-dbus-proxy); the command was "
                                       "not run", what);
        r = proxy_argv(p, plan, upstream, &argv);
        if (r < 0)
                return log_error_errno(r, "Failed to build the %s bus proxy's command line: %m", what);
        if (asprintf(&description, "scudo: filtered %s bus", what) < 0)
                return log_oom();

        /* The runtime directory, named after the run, holds the socket; systemd makes it
         * (0700) before the proxy starts and removes it when the unit stops, whatever way. */
        const ProxyUnit u = { p, exe, argv, description };
        r = transient_unit_message(bus, p->unit, append_proxy_properties, (void *) &u, &m);
        if (r < 0)
                return log_error_errno(r, "Failed to build the %s bus proxy's unit: %m", what);
        r = sd_bus_call(bus, m, 0, &e, &reply);
        if (r < 0)
                return log_error_errno(r, "systemd refused to start the %s bus proxy: %s", what,
                                       e.message ?: "unknown error");

        for (uint64_t end = now_ms() + BUS_PROXY_TIMEOUT_MS; !socket_listens(p->socket);) {
                if (now_ms() >= end)
                        return log_error_errno(SYNTHETIC_ERRNO(ETIMEDOUT),
                                               "The filtered %s bus did not come up in %d s "
                                               "(journalctl --user -u %s); the command was not run",
                                               what, BUS_PROXY_TIMEOUT_MS / 1000, p->unit);
                (void) usleep(5 * 1000);
        }
        return 0;
}

void bus_proxy_stop(sd_bus *bus, const BusProxy *p) {
        if (!bus || !p->unit[0])
                return;
        (void) sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit", NULL, NULL, "ss", p->unit,
                                  "replace");
}
