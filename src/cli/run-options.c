/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "run-options.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/strv.h"

void run_command_line_done(RunCommandLine *a) {
        request_done(&a->request);
        free(a->run.report_json);
        free(a->refusal);
}

void help_run(void) {
        printf("Usage: scudo [OPTIONS] [--] COMMAND [ARG...]\n"
               "       scudo explain|check|profiles|trust|untrust|trusted|link|unlink|suggest ...\n"
               "       scudo doctor|shim|status ...\n"
               "\n"
               "Runs COMMAND confined in a transient systemd --user unit, as the profiles that\n"
               "match it say. Invoked through a symlink named after a command (scudo link),\n"
               "runs that command the same way.\n"
               "\n"
               "Options of a run:\n"
               "  -p, --profile NAME     apply profile NAME too (repeatable)\n"
               "  -P, --no-match         apply only the --profile ones, not those matched by name\n"
               "      --fs-write PATH    make PATH writable for this run\n"
               "      --fs-read PATH     make PATH readable (read-only) for this run\n"
               "      --fs-hide PATH     replace PATH by an empty directory or file\n"
               "      --fs-deny PATH     make PATH inaccessible\n"
               "      --net-allow RULE   allow reaching RULE (host[:port], CIDR, :port)\n"
               "      --net-deny RULE    refuse RULE even when allowed\n"
               "      --no-network       no network at all\n"
               "      --env NAME         pass variable NAME even if a profile denies it\n"
               "      --deny-env GLOB    remove matching variables\n"
               "      --allow-env GLOB   keep matching variables after all\n"
               "      --property K=V     set unit property K (see 'scudo explain --list-properties')\n"
               "  -t, --pty              stdout on the pseudo-terminal too, though not a terminal\n"
               "  -T, --no-pty           never use a pseudo-terminal (pass the streams as they are;\n"
               "                         refused when one is a terminal)\n"
               "      --tui              the command in a terminal UI, its refusal reports below it\n"
               "                         (^A s shows and hides them, ^A ^A sends ^A)\n"
               "      --report-json FILE write the run's refusal reports to FILE, one JSON object\n"
               "                         a line (emptied first), for 'scudo suggest'\n"
               "      --delegate         delegate every delegable profile's commands\n"
               "      --no-delegate      delegate nothing\n"
               "      --dry-run          print what would be started, start nothing\n"
               "  -q, --quiet            fewer messages of scudo's own\n"
               "  -v, --verbose          more messages of scudo's own\n"
               "  -h, --help             this help\n"
               "      --version          the version\n"
               "\n"
               "Exit status: the command's own; 128+N when it died of signal N; 125 when scudo\n"
               "could not set up the sandbox (configuration, bus, helper), 126 when the command\n"
               "cannot be executed, 127 when it is not found. The command never runs with less\n"
               "confinement than its profiles say.\n");
}

enum {
        ARG_FS_WRITE = 0x100,
        ARG_FS_READ,
        ARG_FS_HIDE,
        ARG_FS_DENY,
        ARG_NET_ALLOW,
        ARG_NET_DENY,
        ARG_NO_NETWORK,
        ARG_ENV,
        ARG_DENY_ENV,
        ARG_ALLOW_ENV,
        ARG_PROPERTY,
        ARG_DELEGATE,
        ARG_NO_DELEGATE,
        ARG_DRY_RUN,
        ARG_TUI,
        ARG_JSON,
        ARG_REPORT_JSON,
        ARG_LIST_PROPERTIES,
        ARG_VERSION,
};

/* Made absolute and clean here, where the caller's directory is known: the file is opened
 * refusing any symlink on the way (src/report/refusals.c). */
static int report_json_path(const char *arg, char **ret) {
        _cleanup_free_ char *cwd = NULL, *joined = NULL;
        char *n = NULL;

        if (!*arg)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--report-json needs a file name");
        if (!path_is_absolute(arg)) {
                cwd = getcwd(NULL, 0);
                if (!cwd)
                        return log_error_errno(errno,
                                               "Cannot tell the current directory for --report-json: %m");
                joined = path_join(cwd, arg);
                if (!joined)
                        return log_oom();
                arg = joined;
        }
        if (path_normalize(arg, &n) < 0 || streq(n, "/")) {
                free(n);
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "--report-json: bad file name '%s'", arg);
        }
        free(*ret);
        *ret = n;
        return 0;
}

static int push(char ***l, const char *s) {
        int r = strv_extend(l, s);
        if (r < 0)
                return log_oom();
        return 0;
}

/* The options that add to one of the request's lists, and that list. */
static char ***request_list(Request *req, int c) {
        switch (c) {
        case 'p':               return &req->profiles;
        case ARG_FS_WRITE:      return &req->fs_write;
        case ARG_FS_READ:       return &req->fs_read;
        case ARG_FS_HIDE:       return &req->fs_hide;
        case ARG_FS_DENY:       return &req->fs_deny;
        case ARG_NET_ALLOW:     return &req->net_allow;
        case ARG_NET_DENY:      return &req->net_deny;
        case ARG_ENV:           return &req->env_copy;
        case ARG_DENY_ENV:      return &req->deny_env;
        case ARG_ALLOW_ENV:     return &req->allow_env;
        case ARG_PROPERTY:      return &req->properties;
        default:                return NULL;
        }
}

/* Any other option. Returns 1 when the command line is done with (--help, --version). */
static int apply_option(RunCommandLine *ret, int c, char **argv) {
        switch (c) {
        case 'P':
                ret->request.no_match = true;
                return 0;
        case ARG_NO_NETWORK:
                ret->request.no_network = true;
                return 0;
        case 't':
                ret->run.force_pty = true;
                ret->run.no_pty = false;
                return 0;
        case 'T':
                ret->run.no_pty = true;
                ret->run.force_pty = false;
                return 0;
        case ARG_DELEGATE:
                ret->request.delegate = 1;      /* the last of the two wins */
                return 0;
        case ARG_NO_DELEGATE:
                ret->request.delegate = -1;
                return 0;
        case ARG_DRY_RUN:
                ret->dry_run = true;
                return 0;
        case ARG_TUI:
                ret->run.tui = true;
                return 0;
        case ARG_JSON:
                ret->json = true;
                return 0;
        case ARG_REPORT_JSON:
                return report_json_path(optarg, &ret->run.report_json);
        case ARG_LIST_PROPERTIES:
                ret->list_properties = true;
                return 0;
        case 'q':
                log_set_max_level(LOG_LEVEL_ERROR);
                return 0;
        case 'v':
                log_set_max_level(LOG_LEVEL_DEBUG);
                return 0;
        case 'h':
                help_run();
                return 1;
        case ARG_VERSION:
                printf("scudo %s\n%s\n", SCUDO_VERSION, SCUDO_FEATURES);
                return 1;
        default:
                if (optopt && optopt < 0x100)
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "unknown option '-%c' (see 'scudo --help')", optopt);
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL), "unknown or incomplete option '%s' "
                                       "(see 'scudo --help')", argv[optind - 1]);
        }
}

int parse_run_args(int argc, char **argv, const char *verb, RunCommandLine *ret) {
        static const struct option options[] = {
                { "profile",         required_argument, NULL, 'p' },
                { "no-match",        no_argument,       NULL, 'P' },
                { "fs-write",        required_argument, NULL, ARG_FS_WRITE },
                { "fs-read",         required_argument, NULL, ARG_FS_READ },
                { "fs-hide",         required_argument, NULL, ARG_FS_HIDE },
                { "fs-deny",         required_argument, NULL, ARG_FS_DENY },
                { "net-allow",       required_argument, NULL, ARG_NET_ALLOW },
                { "net-deny",        required_argument, NULL, ARG_NET_DENY },
                { "no-network",      no_argument,       NULL, ARG_NO_NETWORK },
                { "env",             required_argument, NULL, ARG_ENV },
                { "deny-env",        required_argument, NULL, ARG_DENY_ENV },
                { "allow-env",       required_argument, NULL, ARG_ALLOW_ENV },
                { "property",        required_argument, NULL, ARG_PROPERTY },
                { "pty",             no_argument,       NULL, 't' },
                { "no-pty",          no_argument,       NULL, 'T' },
                { "delegate",        no_argument,       NULL, ARG_DELEGATE },
                { "no-delegate",     no_argument,       NULL, ARG_NO_DELEGATE },
                { "dry-run",         no_argument,       NULL, ARG_DRY_RUN },
                { "tui",             no_argument,       NULL, ARG_TUI },
                { "json",            no_argument,       NULL, ARG_JSON },
                { "report-json",     required_argument, NULL, ARG_REPORT_JSON },
                { "list-properties", no_argument,       NULL, ARG_LIST_PROPERTIES },
                { "quiet",           no_argument,       NULL, 'q' },
                { "verbose",         no_argument,       NULL, 'v' },
                { "help",            no_argument,       NULL, 'h' },
                { "version",         no_argument,       NULL, ARG_VERSION },
                {}
        };
        Request *req = &ret->request;
        int c;

        /* "+": options end at the command; its own options are its own. */
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+p:PtTqvh", options, NULL)) >= 0) {
                char ***list = request_list(req, c);
                int r;
                if (c == ARG_PROPERTY && !strchr(optarg, '='))
                        return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                               "--property needs NAME=VALUE, got '%s'", optarg);
                r = list ? push(list, optarg) : apply_option(ret, c, argv);
                if (r < 0)
                        return r;
                if (r > 0)
                        return 0;       /* --help, --version: done */
        }

        if (ret->list_properties)
                return 1;
        if (optind >= argc)
                return log_error_errno(SYNTHETIC_ERRNO(EINVAL),
                                       "%s%sneeds a command to run (see 'scudo --help')",
                                       verb ?: "", verb ? " " : "");

        req->argv = strv_copy(argv + optind);
        if (!req->argv)
                return log_oom();
        return 1;
}

bool invoked_as_scudo(const char *argv0) {
        const char *b = strrchr(argv0, '/');
        b = b ? b + 1 : argv0;
        return streq(b, "scudo");
}
