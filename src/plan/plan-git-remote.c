/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/net-rule.h"
#include "plan/git-remote-url.h"
#include "plan/plan-delegate.h"
#include "plan/plan-git-remote.h"
#include "util/error-message.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

/* What git answers here is short: a path, a branch, a few URLs. */
#define GIT_OUTPUT_MAX 65536
/* A git that does not answer in this long (a FIFO for a config file) is not waited for. */
#define GIT_QUERY_TIMEOUT_MS 10000
#define GIT_REMOTES_MAX 64

static bool in_list(const char *const *l, const char *s, size_t n) {
        for (; *l; l++)
                if (strlen(*l) == n && strncmp(*l, s, n) == 0)
                        return true;
        return false;
}

typedef struct GitCommand {
        char *dir;                      /* the start directory with each -C applied */
        const char *verb;
        char **positional;              /* the verb's arguments that are no options */
        const char *repo;               /* push --repo=NAME */
        bool all;                       /* fetch --all */
        bool multiple;                  /* fetch --multiple */
        const char *refused;            /* the first option a delegated request may not carry */
} GitCommand;

static void git_command_done(GitCommand *c) {
        free(c->dir);
        strv_free(c->positional);
}

/* git's options before the verb that take the next argument as their value. */
static const char *const global_valued[] = {
        "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", NULL,
};
/* Those that choose the code git runs or the configuration it reads. */
static const char *const global_refused[] = {
        "-c", "--config-env", "--exec-path", "--git-dir", "--work-tree", NULL,
};
static const char *const push_valued[] = {
        "--repo", "-o", "--push-option", "--receive-pack", "--exec", NULL,
};
static const char *const fetch_valued[] = {
        "-o", "--server-option", "--upload-pack", "--depth", "--deepen", "--shallow-since",
        "--shallow-exclude", "--negotiation-tip", "--refmap", "-j", "--jobs", "--filter",
        "--recurse-submodules-default", "--submodule-prefix",
        /* pull's own */
        "-s", "--strategy", "-X", "--strategy-option", "--cleanup", NULL,
};
static const char *const ls_remote_valued[] = { "-o", "--server-option", "--upload-pack", "--sort", NULL };
static const char *const clone_valued[] = {
        "-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference", "--reference-if-able",
        "--separate-git-dir", "--depth", "--shallow-since", "--shallow-exclude", "-c", "--config",
        "--template", "-j", "--jobs", "--filter", "--server-option", "--bundle-uri", NULL,
};

static int parse_command(const Request *req, GitCommand *c, char **ret_error) {
        char * const *a = req->argv;
        size_t n = strv_length(a), i = 1;

        if (!(c->dir = strdup(req->start_dir)))
                return -ENOMEM;
        for (; i < n && a[i][0] == '-'; i++) {
                size_t nl = strcspn(a[i], "=");
                if (!c->refused && in_list(global_refused, a[i], nl))
                        c->refused = a[i];
                if (!in_list(global_valued, a[i], nl) || a[i][nl] == '=')
                        continue;
                if (++i >= n)
                        break;
                if (streq(a[i - 1], "-C") && a[i][0]) {
                        char *d = path_is_absolute(a[i]) ? strdup(a[i]) : path_join(c->dir, a[i]);
                        if (!d)
                                return -ENOMEM;
                        free(c->dir);
                        c->dir = d;
                }
        }
        if (i >= n)
                return error_message(ret_error, -EPERM, "network.git_remote: '%s' names no git command",
                                     a[0]);
        c->verb = a[i];
        const char *const *valued = streq(c->verb, "push") ? push_valued :
                                    streq(c->verb, "fetch") || streq(c->verb, "pull") ? fetch_valued :
                                    streq(c->verb, "ls-remote") ? ls_remote_valued :
                                    streq(c->verb, "clone") ? clone_valued : NULL;
        if (!valued)
                return error_message(ret_error, -EPERM, "network.git_remote: 'git %s' is not one of git's "
                                     "remote commands (push, fetch, pull, ls-remote, clone)", c->verb);
        bool options = true;
        for (i++; i < n; i++) {
                if (options && streq(a[i], "--")) {
                        options = false;
                        continue;
                }
                if (!options || a[i][0] != '-' || !a[i][1]) {
                        int r = strv_extend(&c->positional, a[i]);
                        if (r < 0)
                                return r;
                        continue;
                }
                size_t nl = strcspn(a[i], "=");
                if (streq(a[i], "--all"))
                        c->all = true;
                else if (streq(a[i], "--multiple"))
                        c->multiple = true;
                if (!in_list(valued, a[i], nl))
                        continue;
                const char *value = a[i][nl] == '=' ? a[i] + nl + 1 : i + 1 < n ? a[++i] : NULL;
                if (value && streq(c->verb, "push") && strncmp(a[i - (a[i] == value)], "--repo", 6) == 0)
                        c->repo = value;
        }
        return 0;
}

/* Runs `git -C dir ARGS...` (the command's own git, the request's environment), its output in
 * out[size] (NUL-terminated, at most size - 1 bytes kept). Returns its exit status, or -errno. */
static int git_query(const Request *req, const char *dir, const char *const *args, char *out, size_t size) {
        const char *argv[16] = { "git", "-C", dir };
        size_t k = 3;
        for (; *args && k < ELEMENTSOF(argv) - 1; args++)
                argv[k++] = *args;
        argv[k] = NULL;

        int fds[2];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(fds[0]);
                close(fds[1]);
                return r;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(null, 2) < 0)
                        _exit(127);
                close_range(3, ~0U, 0);
                char *no_env[] = { NULL };
                execve(req->exec_path, (char **) argv, req->environ ?: no_env);
                _exit(127);
        }
        close(fds[1]);

        size_t len = 0;
        int r = 0;
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                long left = GIT_QUERY_TIMEOUT_MS - ((now.tv_sec - start.tv_sec) * 1000 +
                                                    (now.tv_nsec - start.tv_nsec) / 1000000);
                struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
                int q = left > 0 ? poll(&pfd, 1, (int) left) : 0;
                if (q < 0 && errno == EINTR)
                        continue;
                if (q <= 0) {
                        r = q < 0 ? -errno : -ETIMEDOUT;
                        kill(pid, SIGKILL);
                        break;
                }
                char buf[4096];
                ssize_t l = read(fds[0], buf, sizeof buf);
                if (l < 0 && errno == EINTR)
                        continue;
                if (l <= 0)
                        break;
                size_t take = MIN((size_t) l, size - 1 - len);
                memcpy(out + len, buf, take);
                len += take;
        }
        out[len] = 0;
        close(fds[0]);
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (r < 0)
                return r;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

/* The remote a command that names none uses: for push branch.B.pushRemote, remote.pushDefault,
 * then, as for the others, branch.B.remote, else "origin" (git's order). */
static int default_remote(const Request *req, const GitCommand *c, char **ret) {
        _cleanup_free_ char *out = malloc(GIT_OUTPUT_MAX);
        char branch[256] = "";
        if (!out)
                return -ENOMEM;
        static const char *const head[] = { "symbolic-ref", "-q", "--short", "HEAD", NULL };
        int r = git_query(req, c->dir, head, out, GIT_OUTPUT_MAX);
        if (r == 0)
                snprintf(branch, sizeof branch, "%.*s", (int) strcspn(out, "\n"), out);
        /* The three keys at once, "KEY VALUE" a line (a branch name holds no space). */
        static const char *const keys[] = {
                "config", "--get-regexp", "^(branch\\..*\\.(pushremote|remote)|remote\\.pushdefault)$", NULL,
        };
        r = git_query(req, c->dir, keys, out, GIT_OUTPUT_MAX);
        if (r < 0)
                return r;
        char k[3][300];
        snprintf(k[0], sizeof k[0], "branch.%s.pushremote", branch);
        snprintf(k[1], sizeof k[1], "remote.pushdefault");
        snprintf(k[2], sizeof k[2], "branch.%s.remote", branch);
        const char *found[3] = {};                      /* the last value of each, as git takes */
        for (char *line = r == 0 ? out : NULL, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                char *v = strchr(line, ' ');
                if (!v || !*++v || streq(v, "."))
                        continue;
                v[-1] = 0;
                for (size_t i = 0; i < 3; i++)
                        if (streq(line, k[i]) && (branch[0] || i == 1))
                                found[i] = v;
        }
        bool push = streq(c->verb, "push");
        const char *name = (push ? (found[0] ?: found[1]) : NULL) ?: found[2] ?: "origin";
        return (*ret = strdup(name)) ? 0 : -ENOMEM;
}

static int add_rule(Plan *p, const char *rule, const char *origin) {
        NetRule parsed;
        if (net_rule_parse(rule, &parsed) < 0)
                return -EINVAL;
        if (strv_contains(p->net_allow, rule))
                return 0;
        /* The origins run beside the rules: fill in any the engine left out. */
        while (strv_length(p->net_allow_origin) < strv_length(p->net_allow)) {
                int r = strv_extend(&p->net_allow_origin, "");
                if (r < 0)
                        return r;
        }
        int r = strv_extend(&p->net_allow, rule);
        if (r < 0)
                return r;
        return strv_extend(&p->net_allow_origin, origin);
}

/* Adds the rule of each URL of `out` (one a line) for the remote `name`. */
static int add_urls(Plan *p, const GitCommand *c, const char *name, char *out, bool delegated,
                    char **ret_error) {
        bool any = false;
        for (char *line = out, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                if (!*line)
                        continue;
                char rule[GIT_REMOTE_HOST_MAX + 16];
                int r = git_remote_url_rule(line, rule, sizeof rule);
                if (r == -ENOENT && !delegated)
                        continue;                       /* a path: no network to allow */
                if (r == -ENOENT)
                        return error_message(ret_error, -EPERM, "git %s: the remote '%s' is a path on this "
                                             "machine, not a host: not run for a delegated request "
                                             "(a local repository could run what it likes as you)",
                                             c->verb, name);
                if (r < 0)
                        return error_message(ret_error, -EPERM, "git %s: cannot tell the host of the remote "
                                             "'%s' (%s): not run", c->verb, name,
                                             r == -EPROTO ? "a transport scudo does not know" :
                                             "a URL scudo cannot read");
                _cleanup_free_ char *origin = NULL;
                if (asprintf(&origin, "the remote %s (network.git_remote)", name) < 0)
                        return -ENOMEM;
                r = add_rule(p, rule, origin);
                if (r == -EINVAL)
                        return error_message(ret_error, -EPERM, "git %s: the host of the remote '%s' makes "
                                             "no network rule (%s): not run", c->verb, name, rule);
                if (r < 0)
                        return r;
                any = true;
        }
        (void) any;
        return 0;
}

/* A delegated request: the repository's config and hooks must be out of the caller's reach. */
static int check_repository(const Request *req, const GitCommand *c, char *out, char **ret_error) {
        int r = git_query(req, c->dir, (const char *const[]) { "rev-parse", "--path-format=absolute",
                          "--git-common-dir", NULL }, out, GIT_OUTPUT_MAX);
        if (r < 0)
                return r;
        out[strcspn(out, "\n")] = 0;
        _cleanup_free_ char *common = r == 0 && out[0] ? realpath(out, NULL) : NULL;
        if (!common)
                return error_message(ret_error, -EPERM, "git %s: %s is in no git repository: not run for a "
                                     "delegated request", c->verb, c->dir);
        static const char *const parts[] = { "config", "hooks", NULL };
        for (const char *const *part = parts; *part; part++) {
                _cleanup_free_ char *path = path_join(common, *part);
                if (!path)
                        return -ENOMEM;
                _cleanup_free_ char *real = realpath(path, NULL);
                if (!real && delegation_caller_can_write(req->delegation, path))
                        return error_message(ret_error, -EPERM, "git %s: %s is missing, and %s could make "
                                             "it, where git would take code from: not run for a delegated "
                                             "request (make it outside: mkdir %s)", c->verb, path,
                                             req->delegation->caller_unit, path);
                if (delegation_caller_can_write(req->delegation, real ?: path) ||
                    (real && !streq(real, path)))
                        return error_message(ret_error, -EPERM, "git %s: %s is one that %s can write, and "
                                             "git would take code or remotes from it: not run for a "
                                             "delegated request", c->verb, path,
                                             req->delegation->caller_unit);
        }
        return 0;
}

int plan_git_remote(Plan *p, const Request *req, char **ret_error) {
        _cleanup_(git_command_done) GitCommand c = {};
        bool delegated = req->delegation != NULL;

        if (!p->git_remote)
                return 0;
        if (!req->exec_path)
                return error_message(ret_error, -EPERM, "network.git_remote: '%s' is not found, and it is "
                                     "what tells the remote: not run", req->argv[0]);
        int r = parse_command(req, &c, ret_error);
        if (r < 0)
                return r;
        if (delegated && c.refused)
                return error_message(ret_error, -EPERM, "git %s: %.*s is refused in a delegated request: it "
                                     "chooses the code git runs or the configuration it reads", c.verb,
                                     (int) strcspn(c.refused, "="), c.refused);
        if (delegated && streq(c.verb, "clone"))
                return error_message(ret_error, -EPERM, "git clone: the URL comes from the command line, "
                                     "which is the caller's: not run for a delegated request (clone "
                                     "outside, or add the remote to a repository and fetch)");

        _cleanup_free_ char *out = malloc(GIT_OUTPUT_MAX);
        if (!out)
                return -ENOMEM;
        if (delegated) {
                r = check_repository(req, &c, out, ret_error);
                if (r < 0)
                        return r;
        }

        _cleanup_strv_free_ char **names = NULL;
        if (c.all && streq(c.verb, "fetch")) {
                r = git_query(req, c.dir, (const char *const[]) { "remote", NULL }, out, GIT_OUTPUT_MAX);
                if (r < 0)
                        return r;
                for (char *s = strtok(out, "\n"); s; s = strtok(NULL, "\n"))
                        if ((r = strv_extend(&names, s)) < 0)
                                return r;
        } else if (c.repo || c.positional) {
                size_t take = c.multiple ? strv_length(c.positional) : 1;
                if (c.repo && (r = strv_extend(&names, c.repo)) < 0)
                        return r;
                for (size_t i = 0; !c.repo && i < take; i++)
                        if ((r = strv_extend(&names, c.positional[i])) < 0)
                                return r;
        } else if (!streq(c.verb, "clone")) {
                char *d = NULL;
                r = default_remote(req, &c, &d);
                if (r < 0)
                        return r;
                r = strv_push(&names, d);
                if (r < 0) {
                        free(d);
                        return r;
                }
        }
        if (strv_length(names) > GIT_REMOTES_MAX)
                return error_message(ret_error, -EPERM, "git %s: more than %d remotes: not run", c.verb,
                                     GIT_REMOTES_MAX);

        bool push = streq(c.verb, "push");
        for (char **n = names; n && *n; n++) {
                const char *const get_url[] = { "remote", "get-url", "--all", push ? "--push" : "--all",
                                                "--", *n, NULL };
                r = streq(c.verb, "clone") ? 2 : git_query(req, c.dir, get_url, out, GIT_OUTPUT_MAX);
                if (r < 0)
                        return r;
                if (r != 0) {
                        /* Not a remote the repository names: a URL (or path) on the command line. */
                        if (delegated)
                                return error_message(ret_error, -EPERM, "git %s: '%s' is no remote of the "
                                                     "repository; a delegated request may use only the "
                                                     "remotes its configuration names: not run", c.verb, *n);
                        r = git_query(req, c.dir, (const char *const[]) { "ls-remote", "--get-url", "--", *n,
                                      NULL }, out, GIT_OUTPUT_MAX);
                        if (r < 0)
                                return r;
                        if (r != 0 && snprintf(out, GIT_OUTPUT_MAX, "%s", *n) < 0)
                                return -EINVAL;
                }
                r = add_urls(p, &c, *n, out, delegated, ret_error);
                if (r < 0)
                        return r;
        }
        p->network_filtered = true;
        return 0;
}
