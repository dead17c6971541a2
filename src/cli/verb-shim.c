/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo shim: mount the FUSE shim (src/shim/), or say where it is and how to put it on PATH;
 * scudo __shim-names: the names it lists for one directory, in a process of their own. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/policy-error.h"
#include "cli/request-from-process.h"
#include "cli/verbs.h"
#include "policy/policy.h"
#include "shim/shim-path.h"
#include "shim/shim.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/strv.h"

/* The line that puts `dir` first on PATH, for `shell`; quoted with single quotes, which no
 * directory scudo makes contains. */
static int print_env(const char *shell, const char *dir) {
        if (strchr(dir, '\''))
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "the shim's path '%s' cannot be quoted",
                                       dir);
        if (streq(shell, "bash") || streq(shell, "zsh") || streq(shell, "sh"))
                printf("export PATH='%s'\":$PATH\"\n", dir);
        else if (streq(shell, "fish"))
                printf("set -gx PATH '%s' $PATH\n", dir);
        else
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "--print-env: '%s' is not one of bash, zsh, fish", shell);
        return 0;
}

int verb_shim(int argc, char **argv) {
        static const struct option options[] = {
                { "print-path", no_argument,       NULL, 'p' },
                { "print-env",  required_argument, NULL, 'e' },
                { "mountpoint", required_argument, NULL, 'm' },
                { "verbose",    no_argument,       NULL, 'v' },
                { "help",       no_argument,       NULL, 'h' },
                {}
        };
        _cleanup_free_ char *mount = NULL, *self = NULL;
        const char *shell = NULL;
        bool print_path = false;
        int c;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "hv", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        print_path = true;
                        break;
                case 'e':
                        shell = optarg;
                        break;
                case 'm':
                        free(mount);
                        mount = strdup(optarg);
                        if (!mount)
                                return log_oom();
                        if (mount[0] != '/')
                                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                                       "--mountpoint needs an absolute path");
                        break;
                case 'v':
                        log_set_max_level(LOG_LEVEL_DEBUG);
                        break;
                case 'h':
                        printf("Usage: scudo shim [--print-path | --print-env bash|zsh|fish] [--mountpoint "
                               "DIR]\n\n"
                               "Mounts the FUSE shim: a read-only directory, meant to stand first on PATH, "
                               "with\n"
                               "an entry for each command a profile matches by name (seen from the calling\n"
                               "process's directory) that PATH holds after it. Running one runs the "
                               "command\n"
                               "confined. Normally started by the user unit scudo-shim.service.\n"
                               "  --print-path        print the shim's directory and exit\n"
                               "  --print-env SHELL   print the line that puts it first on PATH\n"
                               "  -v, --verbose       say what is listed for whom, on standard error\n"
                               "See docs/shim.md.\n");
                        return 0;
                default:
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "shim: unknown option '%s'",
                                               argv[optind - 1]);
                }
        if (optind < argc)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "shim takes no arguments");
        if (!mount && shim_mount_path(&mount) < 0)
                return log_oom();
        if (print_path) {
                puts(mount);
                return 0;
        }
        if (shell)
                return print_env(shell, mount);

        self = realpath("/proc/self/exe", NULL);
        if (!self)
                return log_error_errno(negative_errno(), "Cannot find scudo's own executable: %m");
        return shim_serve(mount, self);
}

int verb_shim_names(int argc, char **argv) {
        _cleanup_(request_done) Request req = {};
        _cleanup_free_ char *text = NULL, *error = NULL, *real = NULL;
        _cleanup_strv_free_ char **names = NULL;

        if (argc != 2)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "__shim-names DIR");
        int r = request_from_process(&req);
        if (r < 0)
                return r;
        /* The caller's directory as the kernel gave it: used only if it is a directory and its
         * own realpath (what discovery expects of a start directory); else the global
         * profiles alone, as from "/". */
        real = realpath(argv[1], NULL);
        free(req.start_dir);
        req.start_dir = strdup(real && streq(real, argv[1]) ? argv[1] : "/");
        if (!req.start_dir)
                return log_oom();
        r = policy_command_names(&req, &text, &error);
        if (r < 0)
                return log_policy_error(r, error, "Cannot list the command names: %m");
        r = shim_names_parse(text, &names);
        if (r < 0)
                return log_oom();
        STRV_FOREACH(n, names)
                puts(*n);
        return fflush(stdout) == 0 ? 0 : 1;
}
