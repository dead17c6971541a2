/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/suggest.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

typedef struct Suggestion {
        char **read, **write, **allow;          /* values for the snippet, each once */
        char **why_read, **why_write, **why_allow;      /* a comment for each, same order */
        char **notes;                           /* refusals an allow cannot lift */
} Suggestion;

static void suggestion_done(Suggestion *s) {
        strv_free(s->read);
        strv_free(s->write);
        strv_free(s->allow);
        strv_free(s->why_read);
        strv_free(s->why_write);
        strv_free(s->why_allow);
        strv_free(s->notes);
}

static const char *get(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

static int add(char ***values, char ***whys, const char *value, const char *why) {
        if (strv_contains(*values, value))
                return 0;
        if (strv_extend(values, value) < 0 || strv_extend(whys, why) < 0)
                return -ENOMEM;
        return 0;
}

static bool is_write_op(const char *op) {
        return streq_ptr(op, "write") || streq_ptr(op, "create") || streq_ptr(op, "remove") ||
                streq_ptr(op, "rename") || streq_ptr(op, "change");
}

/* The directory of an absolute path, or NULL for "/". */
static char *parent_of(const char *path) {
        const char *slash = strrchr(path, '/');

        if (!slash || slash == path)
                return NULL;
        return strndup(path, (size_t) (slash - path));
}

static int file_refusal(Suggestion *s, json_object *o) {
        const char *path = get(o, "resolved") ?: get(o, "path"), *op = get(o, "op"), *rule = get(o, "rule"),
                *origin = get(o, "origin"), *error = get(o, "error"), *git;
        _cleanup_free_ char *why = NULL, *dir = NULL;
        struct stat st;

        if (!path || !path_is_absolute(path) || !op)
                return 0;
        if (asprintf(&why, "refused %s (%s): %s%s%s", op, strempty(error), strempty(rule),
                     origin ? " at " : "", strempty(origin)) < 0)
                return -ENOMEM;

        /* A .git scudo made read-only: named in the plan, it is writable. */
        if (streq_ptr(origin, "<scudo>") && (git = strstr(path, "/.git"))) {
                dir = strndup(path, (size_t) (git - path) + strlen("/.git"));
                return dir ? add(&s->write, &s->why_write, dir, why) : -ENOMEM;
        }
        if (is_write_op(op)) {
                /* A grant of what is not there is skipped: one that creates gets its directory. */
                bool missing = lstat(path, &st) < 0;

                if (!streq(op, "write") && !streq(op, "change"))
                        missing = true;
                if (missing) {
                        dir = parent_of(path);
                        if (!dir)
                                return 0;
                        path = dir;
                }
                return add(&s->write, &s->why_write, path, why);
        }
        return add(&s->read, &s->why_read, path, why);
}

static int net_refusal(Suggestion *s, json_object *o, bool dns) {
        const char *target = get(o, dns ? "name" : "target"), *op = get(o, "op"), *rule = get(o, "rule"),
                *origin = get(o, "origin");
        _cleanup_free_ char *why = NULL;

        if (!target || streq_ptr(op, "socket"))
                return 0;
        if (rule && startswith(rule, "network.deny")) {
                if (asprintf(&why, "%s %s: refused by %s%s%s, which an allow rule does not lift: narrow or "
                             "remove that rule", dns ? "the name" : op, target, rule, origin ? " at " : "",
                             strempty(origin)) < 0)
                        return -ENOMEM;
                return strv_contains(s->notes, why) ? 0 : strv_extend(&s->notes, why);
        }
        if (asprintf(&why, "refused %s%s", dns ? "the name" : op, dns ? " (any port: name one, as name:443, "
                     "to narrow it)" : "") < 0)
                return -ENOMEM;
        return add(&s->allow, &s->why_allow, target, why);
}

static void toml_string(FILE *out, const char *home, const char *value) {
        const char *rest = home ? path_startswith(value, home) : NULL;

        fputc('"', out);
        if (rest) {
                fputs(*rest ? "~/" : "~", out);
                value = rest;
        }
        for (const unsigned char *c = (const unsigned char *) value; *c; c++) {
                if (*c == '"' || *c == '\\')
                        fprintf(out, "\\%c", *c);
                else if (*c < 0x20 || *c == 0x7f)
                        fprintf(out, "\\u%04x", *c);
                else
                        fputc(*c, out);
        }
        fputc('"', out);
}

static void toml_list(FILE *out, const char *home, const char *key, char **values, char **whys) {
        size_t n = strv_length(values);

        if (n == 0)
                return;
        fprintf(out, "%s = [\n", key);
        for (size_t i = 0; i < n; i++) {
                fputs("    ", out);
                toml_string(out, home, values[i]);
                fprintf(out, ",  # %s\n", whys[i]);
        }
        fputs("]\n", out);
}

/* Where the snippet goes: the deepest project file the run read, else a new one where it
 * started. */
static char *project_file(json_object *run) {
        const char *start = get(run, "start_dir"), *best = NULL;
        json_object *files;
        char *r = NULL;

        if (json_object_object_get_ex(run, "config_files", &files) &&
            json_object_is_type(files, json_type_array))
                for (size_t i = 0; i < json_object_array_length(files); i++) {
                        const char *f = json_object_get_string(json_object_array_get_idx(files, i));

                        if (f && path_is_absolute(f) && strstr(f, "/.scudo.") &&
                            (!best || strlen(f) > strlen(best)))
                                best = f;
                }
        if (best)
                return strdup(best);
        if (asprintf(&r, "%s/.scudo.toml", start && path_is_absolute(start) ? start : ".") < 0)
                return NULL;
        return r;
}

static const char *last_profile(json_object *run) {
        json_object *p;
        size_t n;

        if (!json_object_object_get_ex(run, "profiles", &p) || !json_object_is_type(p, json_type_array))
                return NULL;
        n = json_object_array_length(p);
        return n ? json_object_get_string(json_object_array_get_idx(p, n - 1)) : NULL;
}

static bool in_array(json_object *a, const char *s) {
        if (!a || !json_object_is_type(a, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(a); i++)
                if (streq_ptr(json_object_get_string(json_object_array_get_idx(a, i)), s))
                        return true;
        return false;
}

#define UNUSED_HEADER "\n# Granted, and never used by this run (candidates to remove):\n"

/* Write grants under which nothing changed during the run. Returns whether it listed any. */
static bool unused_writes(FILE *out, const char *home, json_object *run, json_object *usage) {
        json_object *writes, *written = NULL;
        bool any = false;

        if (!usage || !json_object_object_get_ex(run, "write", &writes) ||
            !json_object_is_type(writes, json_type_array))
                return false;
        (void) json_object_object_get_ex(usage, "written", &written);
        for (size_t i = 0; i < json_object_array_length(writes); i++) {
                json_object *w = json_object_array_get_idx(writes, i);
                const char *path = get(w, "path"), *origin = get(w, "origin");

                if (!path || in_array(written, path))
                        continue;
                if (!any)
                        fputs(UNUSED_HEADER, out);
                any = true;
                fputs("#   filesystem.write ", out);
                toml_string(out, home, path);
                fprintf(out, "%s%s: nothing written there\n", origin && *origin ? " at " : "",
                        strempty(origin));
        }
        return any;
}

/* `header`: UNUSED_HEADER is still to be written. */
static void unreached_hosts(FILE *out, json_object *run, json_object *usage, bool header) {
        json_object *allow, *reached = NULL;
        bool any = false;

        if (!usage || !json_object_object_get_ex(run, "allow", &allow) ||
            !json_object_is_type(allow, json_type_array))
                return;
        if (!json_object_object_get_ex(usage, "reached", &reached)) {
                if (json_object_array_length(allow) > 0)
                        fprintf(out, "%s#   (which network.allow rules were reached was not recorded)\n",
                                header ? UNUSED_HEADER : "");
                return;
        }
        for (size_t i = 0; i < json_object_array_length(allow); i++) {
                json_object *a = json_object_array_get_idx(allow, i);
                const char *rule = get(a, "rule"), *origin = get(a, "origin");

                if (!rule || in_array(reached, rule))
                        continue;
                if (!any)
                        fprintf(out, "%s# Hosts never reached:\n", header ? UNUSED_HEADER : "");
                any = true;
                fprintf(out, "#   network.allow \"%s\"%s%s\n", rule, origin && *origin ? " at " : "",
                        strempty(origin));
        }
}

int suggest_write(const char *text, const char *home, FILE *out, unsigned *ret_line) {
        _cleanup_(suggestion_done) Suggestion s = {};
        _cleanup_free_ char *file = NULL;
        json_object *run = NULL, *usage = NULL;
        json_object **all = NULL;
        size_t n_all = 0;
        unsigned line = 0;
        const char *p = text;
        const char *profile;
        int r = 0;

        home = home && path_is_absolute(home) && !streq(home, "/") ? home : NULL;
        while (*p && r >= 0) {
                const char *nl = strchrnul(p, '\n');
                _cleanup_free_ char *l = strndup(p, (size_t) (nl - p));
                json_object *o, **a;
                const char *kind;

                line++;
                p = *nl ? nl + 1 : nl;
                if (!l) {
                        r = -ENOMEM;
                        break;
                }
                if (!*l)
                        continue;
                o = json_tokener_parse(l);
                kind = o ? get(o, "kind") : NULL;
                if (!kind || (!run && !streq(kind, "run"))) {
                        json_object_put(o);
                        *ret_line = line;
                        r = -EBADMSG;
                        break;
                }
                a = reallocarray(all, n_all + 1, sizeof(json_object *));
                if (!a) {
                        json_object_put(o);
                        r = -ENOMEM;
                        break;
                }
                all = a;
                all[n_all++] = o;
                if (streq(kind, "run"))
                        run = o;
                else if (streq(kind, "usage"))
                        usage = o;
                else if (streq(kind, "file"))
                        r = file_refusal(&s, o);
                else if (streq(kind, "network") || streq(kind, "dns"))
                        r = net_refusal(&s, o, streq(kind, "dns"));
        }
        if (r >= 0 && !run) {
                *ret_line = line;
                r = -EBADMSG;
        }
        if (r < 0)
                goto done;

        file = project_file(run);
        profile = last_profile(run) ?: "sandbox";
        if (!file) {
                r = -ENOMEM;
                goto done;
        }
        if (strv_length(s.read) + strv_length(s.write) + strv_length(s.allow) > 0) {
                fprintf(out,
                        "# What would have allowed what was refused. Add these keys to [%s] in\n# %s (a "
                        "project file applies once trusted: scudo trust %s),\n# or to [%s] in "
                        "~/.config/scudo/config.toml for every directory. Check each first:\n# nothing here "
                        "has been applied.\n\n[%s]\n",
                        profile, file, file, profile, profile);
                toml_list(out, home, "filesystem.read", s.read, s.why_read);
                toml_list(out, home, "filesystem.write", s.write, s.why_write);
                toml_list(out, home, "network.allow", s.allow, s.why_allow);
        } else if (strv_length(s.notes) == 0)
                fputs("# Nothing was refused that a grant would allow.\n", out);
        if (strv_length(s.notes) > 0) {
                fputs("\n# Refused by a deny rule:\n", out);
                STRV_FOREACH(n, s.notes)
                        fprintf(out, "#   %s\n", *n);
        }
        unreached_hosts(out, run, usage, !unused_writes(out, home, run, usage));
done:
        for (size_t i = 0; i < n_all; i++)
                json_object_put(all[i]);
        free(all);
        return r;
}
