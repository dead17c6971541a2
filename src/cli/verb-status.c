/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo status [--json] [NAME...]: for each command a profile matches, how it starts from this
 * directory and this PATH (through the shim, a scudo link, or unconfined), and the bypasses
 * that remain whatever is set up. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/policy-error.h"
#include "cli/request-from-process.h"
#include "cli/verbs.h"
#include "policy/policy.h"
#include "shim/shim-path.h"
#include "shim/shim.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

static const char * const bypasses[] = {
        "a command run by its full path (/usr/bin/NAME) or a relative one (./NAME) is never confined",
        "a PATH without the shim or the link directory before the real command (env -i, sudo, cron, "
        "systemd units, IDE launchers, a script that sets PATH) runs the real command unconfined",
        "a shell that looked NAME up before the shim was first on its PATH keeps the old path in its "
        "hash table until 'hash -r' (bash, zsh) or a new shell",
        "the shim lists only names a profile matches by name: 're:' patterns list none",
        "inside a sandbox the shim is hidden with $XDG_RUNTIME_DIR: there a command runs in place, "
        "or through its broker when the sandbox delegates it",
};


typedef struct Hit {
        char *path;             /* first executable on PATH, or NULL */
        bool in_shim, is_scudo;
        char *real;             /* the first that is not scudo: what a confined run executes */
        char *real_target;      /* where `real` leads when it is a symlink (an installer's link) */
} Hit;

static void hit_done(Hit *h) {
        free(h->path);
        free(h->real);
        free(h->real_target);
}

static int find(const char *name, const char *path_env, const char *mount, const struct stat *self, Hit *h) {
        if (!path_env)
                path_env = "/usr/local/bin:/usr/bin:/bin";
        for (const char *p = path_env; ; ) {
                const char *e = strchrnul(p, ':');
                size_t len = (size_t) (e - p);
                if (len > 0 && p[0] == '/') {
                        _cleanup_free_ char *dir = strndup(p, len);
                        _cleanup_free_ char *cand = dir ? path_join(dir, name) : NULL;
                        struct stat st;
                        if (!cand)
                                return -ENOMEM;
                        if (stat(cand, &st) >= 0 && !S_ISDIR(st.st_mode) && access(cand, X_OK) >= 0) {
                                bool scudo = st.st_dev == self->st_dev && st.st_ino == self->st_ino;
                                if (!h->path) {
                                        h->path = strdup(cand);
                                        h->in_shim = shim_same_dir(p, len, mount);
                                        h->is_scudo = scudo;
                                        if (!h->path)
                                                return -ENOMEM;
                                }
                                if (!scudo) {
                                        struct stat l;
                                        h->real = TAKE_PTR(cand);
                                        if (lstat(h->real, &l) >= 0 && S_ISLNK(l.st_mode))
                                                h->real_target = realpath(h->real, NULL);
                                        return 0;
                                }
                        }
                }
                if (!*e)
                        return 0;
                p = e + 1;
        }
}

static const char *how_of(const Hit *h) {
        if (!h->path)
                return "not-found";
        if (h->is_scudo)
                return h->in_shim ? "shim" : "link";
        return "unconfined";
}

/* Why an unconfined command is unconfined, in words. */
static const char *why_unconfined(ShimState st, int pos, bool matched) {
        if (!matched)
                return "no profile matches it by name: neither the shim nor a link confines it";
        if (st == SHIM_STALE)
                return "the shim's mount is dead (its process was killed): restart it with "
                       "'systemctl --user restart scudo-shim'";
        if (st == SHIM_ABSENT)
                return "the shim is not running and no scudo link comes first on PATH";
        if (pos < 0)
                return "the shim is not on PATH (see 'scudo shim --print-env')";
        return "the first hit on PATH is the real command";
}

static int names_here(char ***ret) {
        _cleanup_(request_done) Request req = {};
        _cleanup_free_ char *text = NULL, *error = NULL;
        int r = request_from_process(&req);
        if (r < 0)
                return r;
        r = policy_command_names(&req, &text, &error);
        if (r < 0)
                return log_policy_error(r, error, "Cannot list the commands the profiles match: %m");
        return shim_names_parse(text, ret) < 0 ? log_oom() : 0;
}

int verb_status(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_strv_free_ char **names = NULL, **matched = NULL;
        _cleanup_free_ char *mount = NULL;
        bool json = false;
        struct stat self;
        int c, r;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'h':
                        printf("Usage: scudo status [--json] [NAME...]\n\n"
                               "For each command a profile matches by name (or each NAME), how it starts "
                               "from\n"
                               "this directory with this PATH: through the shim, a scudo link, or "
                               "unconfined;\n"
                               "and the ways around both that remain. See docs/shim.md.\n");
                        return 0;
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "status: unknown option '%s'",
                                               argv[optind - 1]);
                }
        r = names_here(&matched);
        if (r < 0)
                return r;
        names = strv_copy(optind < argc ? argv + optind : matched);
        if (!names)
                return log_oom();
        if (shim_mount_path(&mount) < 0)
                return log_oom();
        if (stat("/proc/self/exe", &self) < 0)
                return log_error_errno(negative_errno(), "Cannot find scudo's own executable: %m");
        const char *path_env = getenv("PATH");
        ShimState st = shim_mount_state(mount);
        int pos = shim_path_position(path_env, mount);
        static const char * const state_names[] = { "absent", "running", "stale" };

        json_object *root = json_object_new_object(), *cmds = json_object_new_array(),
                    *shim = json_object_new_object();
        if (!root || !cmds || !shim) {
                json_object_put(root);
                json_object_put(cmds);
                json_object_put(shim);
                return log_oom();
        }
        json_object_object_add(shim, "path", json_object_new_string(mount));
        json_object_object_add(shim, "state", json_object_new_string(state_names[st]));
        json_object_object_add(shim, "path_position", json_object_new_int(pos));
        json_object_object_add(root, "shim", shim);
        json_object_object_add(root, "commands", cmds);

        if (!json) {
                printf("shim: %s (%s)", mount, st == SHIM_RUNNING ? "running" : st == SHIM_STALE ?
                       "dead: its mount answers 'Transport endpoint is not connected'; restart it with "
                       "'systemctl --user restart scudo-shim'" : "not running");
                if (pos == 0)
                        printf(", first on PATH\n");
                else if (pos > 0)
                        printf(", on PATH after %d other director%s: what those hold runs first\n", pos,
                               pos == 1 ? "y" : "ies");
                else
                        printf(", not on PATH\n");
        }
        r = 0;
        STRV_FOREACH(n, names) {
                _cleanup_(hit_done) Hit h = {};
                bool is_matched = shim_names_contain(matched, *n);
                if (find(*n, path_env, mount, &self, &h) < 0) {
                        r = log_oom();
                        break;
                }
                const char *how = how_of(&h);
                json_object *o = json_object_new_object();
                if (!o) {
                        r = log_oom();
                        break;
                }
                json_object_object_add(o, "name", json_object_new_string(*n));
                json_object_object_add(o, "how", json_object_new_string(how));
                json_object_object_add(o, "matched_by_name", json_object_new_boolean(is_matched));
                json_object_object_add(o, "first", h.path ? json_object_new_string(h.path) : NULL);
                json_object_object_add(o, "real", h.real ? json_object_new_string(h.real) : NULL);
                if (h.real_target)
                        json_object_object_add(o, "real_link_to", json_object_new_string(h.real_target));
                if (streq(how, "unconfined"))
                        json_object_object_add(o, "why",
                                               json_object_new_string(why_unconfined(st, pos, is_matched)));
                json_object_array_add(cmds, o);
                if (json)
                        continue;
                if (!h.path)
                        printf("%-16s not found on PATH\n", *n);
                else if (streq(how, "unconfined"))
                        printf("%-16s UNCONFINED: %s runs as it is (%s)\n", *n, h.path,
                               why_unconfined(st, pos, is_matched));
                else {
                        printf("%-16s confined: through the %s (%s), running %s\n", *n,
                               streq(how, "shim") ? "shim" : "scudo link", h.path,
                               h.real ?: "nothing: not found");
                        if (h.real_target)
                                printf("%-16s   without it, the link %s (to %s) would win, unconfined\n", "",
                                       h.real, h.real_target);
                }
        }
        json_object *b = json_object_new_array();
        for (size_t i = 0; b && i < ELEMENTSOF(bypasses); i++)
                json_object_array_add(b, json_object_new_string(bypasses[i]));
        json_object_object_add(root, "bypasses", b);
        if (json)
                puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
        else if (r >= 0) {
                printf("\nWhat no shim or link confines:\n");
                for (size_t i = 0; i < ELEMENTSOF(bypasses); i++)
                        printf("  - %s\n", bypasses[i]);
        }
        json_object_put(root);
        return r;
}
