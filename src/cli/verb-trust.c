/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo trust [PATH...] / untrust [PATH...] / trusted: the project files that may apply.
 * The store and its format: src/policy/trust.h. */
#include <getopt.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/policy-error.h"
#include "cli/request-from-process.h"
#include "cli/verbs.h"
#include "policy/policy.h"
#include "policy/trust.h"
#include "util/ask.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/sandbox-unit.h"
#include "util/strv.h"

#define TRUST_FILE_MAX (1024U * 1024U)

/* Whether argv asks for help: then the usage is printed. */
static bool help_asked(int argc, char **argv, const char *usage) {
        for (int i = 1; i < argc; i++)
                if (streq(argv[i], "-h") || streq(argv[i], "--help")) {
                        fputs(usage, stdout);
                        return true;
                }
        return false;
}

/* Trust is given from outside: a command inside must not trust what it wrote. Where the
 * kernel cannot say, refuse too. Returns 0 outside any sandbox, or a negative errno after
 * saying why not. */
static int refuse_inside_sandbox(const char *verb) {
        char unit[SCUDO_UNIT_NAME_MAX];
        int r = sandbox_unit_of(0, unit);
        if (r > 0)
                return log_error_errno(
                        SYNTHETIC_ERRNO(EPERM),
                        "scudo %s cannot be used inside a scudo sandbox (%s): trust is given from outside",
                        verb, unit);
        if (r < 0)
                return log_error_errno(r, "scudo %s: cannot tell whether this runs inside a scudo sandbox "
                                       "(/proc/self/cgroup: %m); trust is given from outside", verb);
        return 0;
}

/* Where trust is kept, for a verb that may use it: only from outside every sandbox. */
static int open_trust_store(const char *verb, char **ret) {
        int r = refuse_inside_sandbox(verb);
        if (r < 0)
                return r;
        r = trust_store_path(ret);
        if (r < 0)
                return log_error_errno(r, "Cannot locate the trust store: %m");
        return 0;
}

int verb_trust(int argc, char **argv) {
        static const struct option options[] = {
                { "yes",  no_argument, NULL, 'y' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(request_done) Request req = {};
        _cleanup_strv_free_ char **paths = NULL, **hashes = NULL;
        _cleanup_free_ char *store = NULL, *summary = NULL, *error = NULL;
        bool yes = false;
        int c;

        if (help_asked(argc, argv,
                       "Usage: scudo trust [--yes] [PATH...]\n\n"
                       "Lets project files apply, as they are now: the trust is bound to each\n"
                       "file's path and content, so an edited file needs trusting again.\n"
                       "Without PATH: the .scudo.toml and .scudo.lua of this directory, never\n"
                       "those of a directory above it (name their path). PATH: a file, or a\n"
                       "directory for the project files in it; only regular files named\n"
                       ".scudo.toml or *.lua (project and hook files) can be trusted. The hook\n"
                       "files a TOML file names are trusted with it when they lie in its own\n"
                       "directory or below; others need a 'scudo trust PATH' of their own.\n"
                       "Shows what each file grants, then asks; without a terminal to ask on,\n"
                       "trusts nothing unless given --yes.\n\n"
                       "  -y, --yes    trust without asking (after showing what is trusted)\n"))
                return 0;
        int r = open_trust_store(argv[0], &store);
        if (r < 0)
                return r;
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "yh", options, NULL)) >= 0)
                switch (c) {
                case 'y':
                        yes = true;
                        break;
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "unknown option '%s' (see 'scudo trust --help')",
                                               argv[optind - 1]);
                }

        r = request_from_process(&req);
        if (r < 0)
                return r;
        r = policy_trust_targets(&req, (const char *const *) argv + optind, &paths, &hashes, &summary,
                                 &error);
        if (r < 0)
                return log_policy_error(r, error, "Cannot read the files to trust: %m");

        /* What is about to be trusted, as the files say it (control characters shown as '?'),
         * and the question. A file edited meanwhile is not trusted: the hashes are of what
         * was shown. */
        fputs(summary, stdout);
        if (!yes) {
                if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
                        return log_error_errno(SYNTHETIC_ERRNO(ENOTTY), "no terminal to ask on: nothing "
                                               "trusted (after reading the above, 'scudo trust --yes' "
                                               "trusts without asking)");
                }
                fputc('\n', stdout);
                r = ask_yes_no(STDIN_FILENO, stdout, strv_length(paths) == 1 ? "Trust this file?" :
                       "Trust these files?");
                if (r < 0)
                        return log_error_errno(r, "Cannot read the answer: %m");
                if (r == 0) {
                        printf("nothing trusted\n");
                        return 1;
                }
        }
        for (size_t i = 0; paths && paths[i]; i++) {
                r = trust_add(store, paths[i], hashes[i]);
                if (r < 0)
                        return log_error_errno(r, "Cannot record trust in %s: %m", store);
                printf("trusted %s (sha256 %.16s...)\n", paths[i], hashes[i]);
        }
        return 0;
}

/* The absolute form of PATH for the store: resolved if it exists (a file that is gone can
 * still be untrusted by the path it had). NULL when out of memory. */
static char *untrust_key(const char *path) {
        char buf[PATH_MAX];
        char *abs = NULL;

        if (realpath(path, buf))
                return strdup(buf);
        if (path_is_absolute(path))
                (void) path_normalize(path, &abs);
        else {
                char cwd[PATH_MAX];
                if (getcwd(cwd, sizeof(cwd))) {
                        _cleanup_free_ char *j = path_join(cwd, path);
                        if (j)
                                (void) path_normalize(j, &abs);
                }
        }
        return abs;
}

/* Removes one path; 1 if it was trusted, 0 if not, <0 on error (reported). */
static int untrust_path(const char *store, const char *path, bool named) {
        _cleanup_free_ char *abs = untrust_key(path);
        if (!abs)
                return log_oom();
        int r = trust_remove(store, abs);
        if (r < 0)
                return log_error_errno(r, "Cannot update %s: %m", store);
        if (r > 0)
                printf("untrusted %s\n", abs);
        else if (named)
                log_warning("%s was not trusted", abs);
        return r;
}

int verb_untrust(int argc, char **argv) {
        _cleanup_free_ char *store = NULL;
        static const char * const names[] = { ".scudo.toml", ".scudo.lua" };

        if (help_asked(argc, argv,
                       "Usage: scudo untrust [PATH...]\n\n"
                       "Removes PATH (a file, or a directory for the project files in it;\n"
                       "default: .scudo.toml and .scudo.lua in this directory) from the trust\n"
                       "store; it no longer applies.\n"))
                return 0;
        int r = open_trust_store(argv[0], &store);
        if (r < 0)
                return r;

        char *here[] = { (char *) ".", NULL };
        char **list = argc > 1 ? argv + 1 : here;
        int removed = 0;
        for (char **p = list; *p; p++) {
                struct stat st;
                if (stat(*p, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        r = untrust_path(store, *p, true);
                        if (r < 0)
                                return r;
                        removed += r;
                        continue;
                }
                int here_removed = 0;
                for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                        _cleanup_free_ char *f = path_join(*p, names[i]);
                        if (!f)
                                return log_oom();
                        r = untrust_path(store, f, false);
                        if (r < 0)
                                return r;
                        here_removed += r;
                }
                if (here_removed == 0 && argc > 1)
                        log_warning("nothing in %s was trusted", *p);
                removed += here_removed;
        }
        if (removed == 0 && argc <= 1)
                log_warning("nothing here was trusted");
        return 0;
}

int verb_trusted(int argc, char **argv) {
        _cleanup_free_ char *store = NULL;
        TrustEntry *e = NULL;
        size_t n = 0;

        if (help_asked(argc, argv,
                       "Usage: scudo trusted\n\n"
                       "Lists the trusted project files, and whether each is still as it was\n"
                       "when trusted (an edited or missing file does not apply).\n"))
                return 0;
        int r = open_trust_store(argv[0], &store);
        if (r < 0)
                return r;
        r = trust_load(store, &e, &n);
        if (r < 0)
                return log_error_errno(r, "Cannot read %s: %m", store);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *now = NULL;
                int k = trust_hash_file(e[i].path, TRUST_FILE_MAX, &now);
                const char *state = k == -ENOENT ? "missing" :
                        k < 0 ? "unreadable" :
                        streq(now, e[i].sha256) ? "trusted" : "CHANGED since trusted, does not apply";
                printf("%-8s %s\n", state, e[i].path);
        }
        if (n == 0)
                printf("no trusted files (store: %s)\n", store);
        trust_entries_free(e, n);
        return 0;
}
