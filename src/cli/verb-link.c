/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "run-options.h"
#include "verb-link.h"

static int parse(int argc, char **argv, const char *verb, char **ret_dir, int *ret_first) {
        static const struct option options[] = {
                { "dir",  required_argument, NULL, 'd' },
                { "help", no_argument,       NULL, 'h' },
                {}
        };
        _cleanup_free_ char *dir = NULL;
        int c;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "d:h", options, NULL)) >= 0)
                switch (c) {
                case 'd':
                        free(dir);
                        dir = realpath(optarg, NULL);
                        if (!dir)
                                return log_error_errno(negative_errno(), "--dir '%s': %m", optarg);
                        break;
                case 'h':
                        printf("Usage: scudo %s NAME... [--dir DIR]\n\n"
                               "%s symlinks named after commands that point to scudo, so that running\n"
                               "NAME runs the real NAME (found on PATH after the link) confined.\n"
                               "DIR defaults to ~/.local/bin, which must come first on PATH.\n",
                               verb, streq(verb, "link") ? "Creates" : "Removes");
                        return 0;
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s: unknown option '%s'", verb,
                                               argv[optind - 1]);
                }
        if (optind >= argc)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "%s needs at least one command name", verb);
        if (!dir) {
                const char *home = getenv("HOME");
                if (!home || home[0] != '/')
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "$HOME is not set; use --dir");
                dir = path_join(home, ".local/bin");
                if (!dir)
                        return log_oom();
                if (mkdir_p(dir, 0755) < 0)
                        return log_error_errno(negative_errno(), "Cannot create '%s': %m", dir);
        }
        *ret_dir = TAKE_PTR(dir);
        *ret_first = optind;
        return 1;
}

static bool name_is_valid(const char *n) {
        return *n && !strchr(n, '/') && !streq(n, ".") && !streq(n, "..") && strlen(n) < NAME_MAX;
}

/* Whether `link` is a symlink to this very scudo binary. */
static bool links_to_us(const char *link, const struct stat *self) {
        struct stat l, t;
        if (lstat(link, &l) < 0 || !S_ISLNK(l.st_mode))
                return false;
        return stat(link, &t) >= 0 && t.st_dev == self->st_dev && t.st_ino == self->st_ino;
}

/* Each says why it failed, and returns a negative errno then. */
/* A directory the user can write that comes before `dir` on PATH, where a link of scudo's
 * goes first; NULL when none does. */
static char *dir_before_on_path(const char *dir) {
        _cleanup_free_ char *canonical = realpath(dir, NULL);
        const char *path = getenv("PATH");
        if (!canonical)
                return NULL;
        for (const char *p = path ?: ""; *p;) {
                size_t l = strcspn(p, ":");
                _cleanup_free_ char *d = strndup(p, l), *c = NULL;
                if (!d)
                        return NULL;
                p += l + (p[l] == ':');
                if (d[0] != '/' || !(c = realpath(d, NULL)))
                        continue;
                if (streq(c, canonical))
                        return NULL;
                if (access(c, W_OK) >= 0)
                        return TAKE_PTR(c);
        }
        return NULL;
}

/* An installer's launcher of the same name (Claude Code's ~/.local/bin/claude, say): not
 * scudo's to replace, and the installer would put it back. Say what to do instead. */
static int name_taken(const char *link, const char *dir, const char *name) {
        _cleanup_free_ char *target = realpath(link, NULL), *before = dir_before_on_path(dir);
        log_error("Cannot create '%s': a file of that name is there already, and it is not scudo's "
                  "link%s%s%s", link, target ? " (it leads to " : "", target ?: "",
                  target ? ": an installer's launcher?)" : "");
        if (before)
                log_error("Leave it, and put scudo's link in %s, which comes before %s on PATH: "
                          "scudo link --dir %s %s", before, dir, before, name);
        else
                log_error("Leave it, and put scudo's link in a directory that comes before %s on PATH: "
                          "mkdir -p ~/.local/scudo/bin && scudo link --dir ~/.local/scudo/bin %s, with "
                          "PATH=\"$HOME/.local/scudo/bin:$PATH\" in your shell's profile; or run it as "
                          "'scudo %s'", dir, name, name);
        return -EEXIST;
}

static int make_link(const char *link, const char *self_path, const struct stat *self) {
        if (links_to_us(link, self))
                return 0;       /* already there */
        if (symlink(self_path, link) < 0) {
                int r = negative_errno();
                if (r == -EEXIST) {
                        _cleanup_free_ char *dir = strdup(link);
                        char *slash = dir ? strrchr(dir, '/') : NULL;
                        if (!slash)
                                return log_oom();
                        *slash = 0;
                        return name_taken(link, dir, slash + 1);
                }
                return log_error_errno(r, "Cannot create '%s': %m", link);
        }
        log_info("%s -> %s", link, self_path);
        return 0;
}

static int remove_link(const char *link, const struct stat *self) {
        /* Only ever remove our own links, never a file someone else put there. */
        if (!links_to_us(link, self))
                return log_error_errno(SYNTHETIC_ERRNO(EPERM),
                                       "'%s' is not a link to scudo; leaving it alone", link);
        if (unlink(link) < 0)
                return log_error_errno(negative_errno(), "Cannot remove '%s': %m", link);
        return 0;
}

/* Returns the number of names that failed, or a negative errno (reported) when none could be
 * tried. */
static int change_links(int argc, char **argv, bool make) {
        _cleanup_free_ char *dir = NULL, *self_path = NULL;
        struct stat self;
        int first = 0, r, failed = 0;

        r = parse(argc, argv, make ? "link" : "unlink", &dir, &first);
        if (r <= 0)
                return r;
        self_path = realpath("/proc/self/exe", NULL);
        if (!self_path || stat(self_path, &self) < 0)
                return log_error_errno(negative_errno(), "Cannot find scudo's own executable: %m");

        for (int i = first; i < argc; i++) {
                _cleanup_free_ char *link = NULL;
                if (!name_is_valid(argv[i])) {
                        log_error("'%s' is not a command name", argv[i]);
                        failed++;
                        continue;
                }
                if (make && invoked_as_scudo(argv[i])) {
                        log_error("refusing to link '%s': that name would run scudo itself", argv[i]);
                        failed++;
                        continue;
                }
                link = path_join(dir, argv[i]);
                if (!link)
                        return log_oom();
                r = make ? make_link(link, self_path, &self) : remove_link(link, &self);
                failed += r < 0;
        }
        return failed;
}

/* 1 when anything failed, as for any file utility. */
int verb_link(int argc, char **argv) {
        return change_links(argc, argv, true) != 0 ? 1 : 0;
}

int verb_unlink(int argc, char **argv) {
        return change_links(argc, argv, false) != 0 ? 1 : 0;
}
