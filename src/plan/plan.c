/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan/unit-properties.h"
#include "util/env-util.h"
#include "util/parse-util.h"
#include "util/strv.h"

static const char * const path_access_table[_PATH_ACCESS_MAX] = {
        [PATH_ACCESS_WRITE] = "write",
        [PATH_ACCESS_READ] = "read",
        [PATH_ACCESS_HIDE] = "hide",
        [PATH_ACCESS_DENY] = "deny",
};

static const char * const path_create_table[_PATH_CREATE_MAX] = {
        [PATH_CREATE_NONE] = "none",
        [PATH_CREATE_DIR] = "dir",
        [PATH_CREATE_FILE] = "file",
        [PATH_CREATE_JSON] = "json",
        [PATH_CREATE_PLACEHOLDER] = "placeholder",
};

static const char * const dbus_mode_table[_DBUS_MODE_MAX] = {
        [DBUS_NONE] = "none",
        [DBUS_FILTERED] = "filtered",
        [DBUS_ALLOW] = "allow",
};

static int lookup(const char * const *table, size_t n, const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (int) i;
        return -EINVAL;
}

const char *path_access_to_string(PathAccess a) {
        return a >= 0 && a < _PATH_ACCESS_MAX ? path_access_table[a] : NULL;
}
PathAccess path_access_from_string(const char *s) {
        return (PathAccess) lookup(path_access_table, _PATH_ACCESS_MAX, s);
}
const char *path_create_to_string(PathCreate c) {
        return c >= 0 && c < _PATH_CREATE_MAX ? path_create_table[c] : NULL;
}
PathCreate path_create_from_string(const char *s) {
        /* a placeholder is the hardening step's to ask for, never a profile's */
        return (PathCreate) lookup(path_create_table, PATH_CREATE_PLACEHOLDER, s);
}
const char *dbus_mode_to_string(DbusMode m) {
        return m >= 0 && m < _DBUS_MODE_MAX ? dbus_mode_table[m] : NULL;
}
DbusMode dbus_mode_from_string(const char *s) {
        return (DbusMode) lookup(dbus_mode_table, _DBUS_MODE_MAX, s);
}

Plan *plan_new(void) {
        Plan *p = calloc(1, sizeof(Plan));
        if (!p)
                return NULL;
        p->dns = DNS_FILTERED;
        p->dbus = DBUS_NONE;
        p->dbus_system = DBUS_NONE;
        return p;
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        free(p->exec_path);
        strv_free(p->argv);
        free(p->working_directory);
        strv_free(p->environment);
        strv_free(p->unset_environment);
        for (size_t i = 0; i < p->n_paths; i++)
                plan_path_done(&p->paths[i]);
        free(p->paths);
        for (size_t i = 0; i < p->n_dropped; i++) {
                plan_path_done(&p->dropped[i].entry);
                free(p->dropped[i].reason);
        }
        free(p->dropped);
        for (size_t i = 0; i < p->n_refused; i++) {
                plan_path_done(&p->refused[i].entry);
                free(p->refused[i].reason);
        }
        free(p->refused);
        for (size_t i = 0; i < p->n_properties; i++) {
                free(p->properties[i].name);
                free(p->properties[i].value);
                free(p->properties[i].origin);
        }
        free(p->properties);
        strv_free(p->net_allow);
        strv_free(p->net_deny);
        strv_free(p->net_allow_origin);
        strv_free(p->net_deny_origin);
        strv_free(p->dbus_talk);
        strv_free(p->dbus_own);
        strv_free(p->dbus_see);
        strv_free(p->dbus_system_talk);
        strv_free(p->delegate);
        strv_free(p->delegate_commands);
        strv_free(p->delegate_executables);
        strv_free(p->undelegable);
        strv_free(p->untrusted_files);
        free(p->confirm_origin);
        free(p->log_target);
        strv_free(p->log_report);
        strv_free(p->profiles);
        strv_free(p->config_files);
        strv_free(p->hook_files);
        strv_free(p->git_watch);
        strv_free(p->git_pins);
        free(p);
        return NULL;
}

bool plan_names_path(const Plan *p, const char *path) {
        for (size_t i = 0; i < p->n_paths; i++)
                if (streq(p->paths[i].path, path))
                        return true;
        return false;
}

const char *plan_property(const Plan *p, const char *name) {
        const char *v = NULL;
        for (size_t i = 0; i < p->n_properties; i++)
                if (streq(p->properties[i].name, name))
                        v = p->properties[i].value;
        return v;
}

int plan_add_path(Plan *p, PathAccess access, const char *path, const char *origin) {
        _cleanup_free_ char *a = strdup(path), *b = strdup(strempty(origin));
        if (!a || !b)
                return -ENOMEM;
        /* Room for 8, then doubled at each power of two: one entry more at a time copied the
         * whole array each time where realloc() could not grow it in place (always under
         * AddressSanitizer), quadratic in the paths. Dropping entries (plan_normalize) leaves
         * the block larger than that, never smaller. */
        size_t k = p->n_paths;
        if (k == 0 || (k >= 8 && (k & (k - 1)) == 0)) {
                PlanPath *n = reallocarray(p->paths, k == 0 ? 8 : 2 * k, sizeof(PlanPath));
                if (!n)
                        return -ENOMEM;
                p->paths = n;
        }
        p->paths[p->n_paths++] = (PlanPath) {
                .access = access,
                .path = TAKE_PTR(a),
                .origin = TAKE_PTR(b),
        };
        return 0;
}

void plan_path_done(PlanPath *e) {
        free(e->path);
        free(e->given);
        free(e->origin);
        free(e->reason);
        free(e->over_deny);
        free(e->over_origin);
        *e = (PlanPath) {};
}

int plan_drop_marked(Plan *p, char **reasons) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_paths; i++)
                n += reasons[i] != NULL;
        if (n == 0)
                return 0;
        PlanDrop *d = reallocarray(p->dropped, p->n_dropped + n, sizeof(PlanDrop));
        if (!d)
                return -ENOMEM;
        p->dropped = d;
        size_t k = 0;
        for (size_t i = 0; i < p->n_paths; i++) {
                if (reasons[i])
                        p->dropped[p->n_dropped++] = (PlanDrop) {
                                .entry = p->paths[i],
                                .reason = TAKE_PTR(reasons[i]),
                        };
                else
                        p->paths[k++] = p->paths[i];
        }
        p->n_paths = k;
        return 0;
}

bool plan_private_pids(const Plan *p) {
        const char *v = plan_property(p, "PrivatePIDs");
        return !v || parse_boolean(v) != 0;
}

int plan_add_property(Plan *p, const char *name, const char *value, const char *origin) {
        _cleanup_free_ char *a = strdup(name), *b = strdup(value), *c = strdup(strempty(origin));
        if (!a || !b || !c)
                return -ENOMEM;
        PlanProperty *n = realloc(p->properties, sizeof(PlanProperty) * (p->n_properties + 1));
        if (!n)
                return -ENOMEM;
        p->properties = n;
        p->properties[p->n_properties++] = (PlanProperty) {
                .name = TAKE_PTR(a),
                .value = TAKE_PTR(b),
                .origin = TAKE_PTR(c),
        };
        return 0;
}

int plan_setenv(Plan *p, const char *name, const char *value) {
        size_t l = strlen(name);
        _cleanup_free_ char *kv = malloc(l + 1 + strlen(value) + 1);
        if (!kv)
                return -ENOMEM;
        memcpy(kv, name, l);
        kv[l] = '=';
        strcpy(kv + l + 1, value);

        char **e = env_find(p->environment, name, l);
        if (e) {
                free(*e);
                *e = TAKE_PTR(kv);
                return 0;
        }
        int r = strv_push(&p->environment, kv);
        if (r < 0)
                return r;
        kv = NULL;
        return 0;
}
