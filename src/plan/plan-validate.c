/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/net-rule.h"
#include "plan/plan-validate.h"
#include "unit/properties.h"
#include "util/env-util.h"
#include "util/path-util.h"
#include "util/strv.h"

static bool has_control_chars(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* realpath() with 3 system calls instead of one per component: the kernel's own name for an
 * O_PATH descriptor. Falls back on realpath() where /proc cannot tell. */
static char *fast_realpath(const char *path, char resolved[static PATH_MAX]) {
        char link[64];
        int fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return NULL;    /* errno as realpath() would set it */
        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, resolved, PATH_MAX - 1);
        (void) close(fd);
        if (n <= 0 || resolved[0] != '/' || (size_t) n >= PATH_MAX - 1 ||
            (n >= 10 && memcmp(resolved + n - 10, " (deleted)", 10) == 0))
                return realpath(path, resolved);
        resolved[n] = 0;
        return resolved;
}

int plan_path_canonicalize(const char *path, char **ret) {
        char work[PATH_MAX], resolved[PATH_MAX];
        /* The stripped components, as [start, end) ranges of `path`, innermost first. */
        struct { size_t start, end; } rest[PATH_MAX / 2];
        size_t nrest = 0, cut;

        if (!path_is_absolute(path) || has_control_chars(path))
                return -EINVAL;
        cut = strlen(path);
        if (cut >= sizeof(work))
                return -ENAMETOOLONG;
        memcpy(work, path, cut + 1);

        /* Strip components from the end until what is left exists; "/" always does. */
        while (!fast_realpath(work, resolved)) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return negative_errno();
                char *slash = strrchr(work, '/');
                size_t pos = (size_t) (slash - work);
                if (pos + 1 < cut && nrest < ELEMENTSOF(rest)) {
                        rest[nrest].start = pos + 1;
                        rest[nrest].end = cut;
                        nrest++;
                }
                if (pos == 0) {
                        work[1] = 0;
                        cut = 1;
                } else {
                        work[pos] = 0;
                        cut = pos;
                }
        }

        /* Apply them, outermost first, with "." and ".." taken lexically: nothing below an
         * existing prefix exists, so no symlink can change their meaning. */
        size_t len = strlen(resolved);
        for (size_t i = nrest; i > 0; i--) {
                const char *c = path + rest[i - 1].start;
                size_t cl = rest[i - 1].end - rest[i - 1].start;
                if (cl == 0 || (cl == 1 && c[0] == '.'))
                        continue;
                if (cl == 2 && c[0] == '.' && c[1] == '.') {
                        char *s = strrchr(resolved, '/');
                        if (s == resolved)
                                len = 1;
                        else
                                len = (size_t) (s - resolved);
                        resolved[len] = 0;
                        continue;
                }
                bool root = len == 1;
                if (len + !root + cl >= sizeof(resolved))
                        return -ENAMETOOLONG;
                if (!root)
                        resolved[len++] = '/';
                memcpy(resolved + len, c, cl);
                len += cl;
                resolved[len] = 0;
        }

        char *r = strdup(resolved);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

_printf_(2, 3) static int fail(char **ret_error, const char *fmt, ...) {
        va_list ap;
        if (ret_error) {
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return -EINVAL;
}

static int validate_paths(Plan *p, char **ret_error) {
        for (size_t i = 0; i < p->n_paths; i++) {
                PlanPath *e = &p->paths[i];
                _cleanup_free_ char *c = NULL;

                if (e->access < 0 || e->access >= _PATH_ACCESS_MAX)
                        return fail(ret_error, "%s: bad access mode", strempty(e->origin));
                if (!e->path || !path_is_absolute(e->path))
                        return fail(ret_error, "%s: filesystem.%s: '%s' is not an absolute path",
                                    strempty(e->origin), path_access_to_string(e->access), strempty(e->path));
                int r = plan_path_canonicalize(e->path, &c);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return fail(ret_error, "%s: filesystem.%s: cannot resolve '%s': %s",
                                    strempty(e->origin), path_access_to_string(e->access), e->path,
                                    strerror(-r));
                if (streq(c, "/") && (e->access == PATH_ACCESS_HIDE || e->access == PATH_ACCESS_DENY))
                        return fail(ret_error, "%s: filesystem.%s: '/' would leave nothing to run",
                                    strempty(e->origin), path_access_to_string(e->access));
                free(e->path);
                e->path = TAKE_PTR(c);
        }

        /* One entry per path: the later one wins, as it did in the profiles. */
        size_t k = 0;
        for (size_t i = 0; i < p->n_paths; i++) {
                bool later = false;
                for (size_t j = i + 1; j < p->n_paths && !later; j++)
                        later = streq(p->paths[i].path, p->paths[j].path);
                if (later) {
                        free(p->paths[i].path);
                        free(p->paths[i].origin);
                        continue;
                }
                p->paths[k++] = p->paths[i];
        }
        p->n_paths = k;
        return 0;
}

static int validate_rules(char **rules, const char *key, char **ret_error) {
        STRV_FOREACH(r, rules) {
                NetRule rule;
                const char *reason = NULL;
                if (net_rule_parse_reason(*r, &rule, &reason) < 0)
                        return fail(ret_error, "%s: bad rule '%s': %s", key, *r, reason ?: "does not parse");
        }
        return 0;
}

int plan_validate(Plan *p, char **ret_error) {
        int r;

        if (!p->exec_path || !path_is_absolute(p->exec_path))
                return fail(ret_error, "the command's executable '%s' is not an absolute path",
                            strempty(p->exec_path));
        if (strv_length(p->argv) == 0)
                return fail(ret_error, "the command line is empty");
        if (p->working_directory && !path_is_absolute(p->working_directory))
                return fail(ret_error, "the working directory '%s' is not absolute", p->working_directory);

        r = validate_paths(p, ret_error);
        if (r < 0)
                return r;

        for (size_t i = 0; i < p->n_properties; i++) {
                PlanProperty *q = &p->properties[i];
                _cleanup_free_ char *error = NULL;
                if (!q->name || !q->value)
                        return fail(ret_error, "%s: incomplete unit property", strempty(q->origin));
                r = unit_property_check(q->name, q->value, &error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return fail(ret_error, "%s: %s", strempty(q->origin),
                                    error ?: "invalid unit property");
        }

        r = validate_rules(p->net_allow, "network.allow", ret_error);
        if (r < 0)
                return r;
        r = validate_rules(p->net_deny, "network.deny", ret_error);
        if (r < 0)
                return r;
        if (!p->network_filtered && (p->net_allow || p->net_deny))
                return fail(ret_error, "network rules in a plan whose network is not filtered");
        if (p->dns < 0 || p->dns >= _DNS_MODE_MAX)
                return fail(ret_error, "network.dns: bad mode");
        if (p->dbus < 0 || p->dbus >= _DBUS_MODE_MAX)
                return fail(ret_error, "dbus.session: bad mode");
        if (p->dbus == DBUS_ALLOW && strv_length(p->delegate) > 0)
                return fail(ret_error, "delegate needs a sealed sandbox, but dbus.session = \"allow\" "
                            "gives the command the real session bus; refusing the combination");

        STRV_FOREACH(e, p->environment) {
                if (!env_assignment_is_valid(*e))
                        return fail(ret_error, "environment: '%s' is not NAME=VALUE (or holds what "
                                    "systemd cannot carry)", *e);
        }
        STRV_FOREACH(e, p->unset_environment)
                if (!env_name_is_valid(*e, strlen(*e)))
                        return fail(ret_error, "environment: '%s' is not a variable name", *e);

        if (p->log_target && !streq(p->log_target, "stderr") && !streq(p->log_target, "journald") &&
            !path_is_absolute(p->log_target))
                return fail(ret_error, "log.target: '%s' is not stderr, journald or an absolute path",
                            p->log_target);
        STRV_FOREACH(k, p->log_report)
                if (!streq(*k, "file") && !streq(*k, "net") && !streq(*k, "dns"))
                        return fail(ret_error, "log.report: unknown kind '%s'", *k);
        return 0;
}
