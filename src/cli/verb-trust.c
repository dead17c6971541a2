/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo trust [PATH...] / untrust [PATH...] / trusted: the project files that may apply.
 * The store and its format: src/policy/trust.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/verb-config.h"
#include "cli/verbs.h"
#include "policy/policy.h"
#include "policy/trust.h"
#include "unit/run.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/strv.h"

#define TRUST_FILE_MAX (1024U * 1024U)

static int help_or_refuse(int argc, char **argv, const char *usage) {
        for (int i = 1; i < argc; i++)
                if (streq(argv[i], "-h") || streq(argv[i], "--help")) {
                        fputs(usage, stdout);
                        return 0;
                }
        const char *sandbox = getenv("SCUDO_SANDBOX");
        if (sandbox && *sandbox) {
                log_error("scudo %s cannot be used inside a scudo sandbox: trust is given from outside",
                          argv[0]);
                return EXIT_SCUDO_SETUP;
        }
        return -1;
}

static int store_path(char **ret) {
        int r = trust_store_path(ret);
        if (r < 0)
                return log_error_errno(r, "Cannot locate the trust store: %m"), EXIT_SCUDO_SETUP;
        return 0;
}

int verb_trust(int argc, char **argv) {
        _cleanup_(request_done) Request req = {};
        _cleanup_strv_free_ char **paths = NULL, **hashes = NULL;
        _cleanup_free_ char *store = NULL, *error = NULL;

        int r = help_or_refuse(argc, argv,
                               "Usage: scudo trust [PATH...]\n\n"
                               "Lets the project files PATH (default: every .scudo.toml and .scudo.lua\n"
                               "from / down to this directory) apply, as they are now: the trust is\n"
                               "bound to each file's path and content, so an edited file needs trusting\n"
                               "again. Hook files a TOML file names are trusted with it.\n");
        if (r >= 0)
                return r;
        if (argc > 1 && argv[1][0] == '-') {
                log_error("unknown option '%s'", argv[1]);
                return EXIT_SCUDO_SETUP;
        }
        r = config_request(&req);
        if (r == 0)
                r = store_path(&store);
        if (r != 0)
                return r;
        r = policy_trust_targets(&req, (const char * const *) argv + 1, &paths, &hashes, &error);
        if (r < 0) {
                if (error)
                        log_error("%s", error);
                else
                        log_error_errno(r, "Cannot read the files to trust: %m");
                return EXIT_SCUDO_SETUP;
        }
        for (size_t i = 0; paths && paths[i]; i++) {
                r = trust_add(store, paths[i], hashes[i]);
                if (r < 0)
                        return log_error_errno(r, "Cannot record trust in %s: %m", store), EXIT_SCUDO_SETUP;
                printf("trusted %s (sha256 %.16s...)\n", paths[i], hashes[i]);
        }
        return 0;
}

int verb_untrust(int argc, char **argv) {
        _cleanup_free_ char *store = NULL;

        int r = help_or_refuse(argc, argv,
                               "Usage: scudo untrust [PATH...]\n\n"
                               "Removes PATH (default: .scudo.toml and .scudo.lua in this directory)\n"
                               "from the trust store; it no longer applies.\n");
        if (r >= 0)
                return r;
        r = store_path(&store);
        if (r != 0)
                return r;

        char *defaults[] = { (char *) ".scudo.toml", (char *) ".scudo.lua", NULL };
        char **list = argc > 1 ? argv + 1 : defaults;
        int removed = 0;
        for (char **p = list; *p; p++) {
                char buf[PATH_MAX];
                _cleanup_free_ char *abs = NULL;
                /* A file that is gone can still be untrusted by the path it had. */
                if (realpath(*p, buf))
                        abs = strdup(buf);
                else if (path_is_absolute(*p))
                        (void) path_normalize(*p, &abs);
                else {
                        char cwd[PATH_MAX];
                        if (getcwd(cwd, sizeof(cwd))) {
                                _cleanup_free_ char *j = path_join(cwd, *p);
                                if (j)
                                        (void) path_normalize(j, &abs);
                        }
                }
                if (!abs)
                        return log_error_errno(ENOMEM, "Out of memory"), EXIT_SCUDO_SETUP;
                r = trust_remove(store, abs);
                if (r < 0)
                        return log_error_errno(r, "Cannot update %s: %m", store), EXIT_SCUDO_SETUP;
                if (r > 0) {
                        printf("untrusted %s\n", abs);
                        removed++;
                } else if (argc > 1)
                        log_warning("%s was not trusted", abs);
        }
        if (removed == 0 && argc <= 1)
                log_warning("nothing here was trusted");
        return 0;
}

int verb_trusted(int argc, char **argv) {
        _cleanup_free_ char *store = NULL;
        TrustEntry *e = NULL;
        size_t n = 0;

        int r = help_or_refuse(argc, argv,
                               "Usage: scudo trusted\n\n"
                               "Lists the trusted project files, and whether each is still as it was\n"
                               "when trusted (an edited or missing file does not apply).\n");
        if (r >= 0)
                return r;
        r = store_path(&store);
        if (r != 0)
                return r;
        r = trust_load(store, &e, &n);
        if (r < 0)
                return log_error_errno(r, "Cannot read %s: %m", store), EXIT_SCUDO_SETUP;
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
