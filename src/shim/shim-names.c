/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim/shim-names.h"
#include "shim/shim-path.h"
#include "policy/trust.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/strv.h"

/* Directories remembered at once; the oldest goes first. */
#define CACHE_MAX 64
/* What one evaluation may print: 5,000 profiles' names fit many times over. */
#define OUTPUT_MAX (4U << 20)

typedef struct Entry {
        char *cwd;
        ShimList *list;
        uint64_t generation;
        uint64_t signature;
        uint64_t made_usec;
} Entry;

struct ShimNames {
        char *scudo;
        pthread_mutex_t lock;
        atomic_uint_fast64_t generation;
        ShimList *global;
        uint64_t global_generation, global_made_usec;
        ShimList *listable;     /* every name any caller could be given; NULL: not known */
        uint64_t listable_generation;
        Entry cache[CACHE_MAX];
};

static uint64_t now_usec(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

static ShimList *list_new(char **names) {
        ShimList *l = calloc(1, sizeof(*l));
        if (!l)
                return NULL;
        atomic_init(&l->ref, 1);
        l->names = names;
        return l;
}

static ShimList *list_ref(ShimList *l) {
        if (l)
                atomic_fetch_add(&l->ref, 1);
        return l;
}

void shim_list_unref(ShimList *l) {
        if (!l || atomic_fetch_sub(&l->ref, 1) != 1)
                return;
        strv_free(l->names);
        free(l);
}

int shim_names_new(const char *scudo_path, ShimNames **ret) {
        ShimNames *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->scudo = strdup(scudo_path);
        if (!s->scudo) {
                free(s);
                return -ENOMEM;
        }
        pthread_mutex_init(&s->lock, NULL);
        atomic_init(&s->generation, 1);
        *ret = s;
        return 0;
}

void shim_names_free(ShimNames *s) {
        if (!s)
                return;
        for (size_t i = 0; i < CACHE_MAX; i++) {
                free(s->cache[i].cwd);
                shim_list_unref(s->cache[i].list);
        }
        shim_list_unref(s->global);
        shim_list_unref(s->listable);
        pthread_mutex_destroy(&s->lock);
        free(s->scudo);
        free(s);
}

void shim_names_changed(ShimNames *s) {
        atomic_fetch_add(&s->generation, 1);
}

uint64_t shim_names_generation(ShimNames *s) {
        return atomic_load(&s->generation);
}

/* Reads the child's output until EOF, OUTPUT_MAX or the deadline. */
static int read_output(int fd, uint64_t deadline, char **ret) {
        size_t size = 0, cap = 4096;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                uint64_t now = now_usec();
                if (now >= deadline)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int r = poll(&p, 1, (int) ((deadline - now) / 1000) + 1);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return negative_errno();
                if (r == 0)
                        continue;
                if (size + 1 >= cap) {
                        if (cap >= OUTPUT_MAX)
                                return -EFBIG;
                        cap *= 2;
                        char *n = realloc(buf, cap);
                        if (!n)
                                return -ENOMEM;
                        buf = n;
                }
                ssize_t n = read(fd, buf + size, cap - 1 - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

int shim_names_evaluate(const char *scudo_path, const char *dir, char ***ret) {
        int pipefd[2];
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int r;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        r = -posix_spawn_file_actions_init(&fa);
        if (r < 0) {
                safe_close(pipefd[0]);
                safe_close(pipefd[1]);
                return r;
        }
        (void) posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        (void) posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
        (void) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        char *argv[] = { (char *) "scudo", (char *) "__shim-names", (char *) dir, NULL };
        extern char **environ;
        r = -posix_spawn(&pid, scudo_path, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        safe_close(pipefd[1]);
        if (r < 0) {
                safe_close(pipefd[0]);
                return r;
        }

        _cleanup_free_ char *out = NULL;
        r = read_output(pipefd[0], now_usec() + SHIM_EVAL_TIMEOUT_USEC, &out);
        safe_close(pipefd[0]);
        if (r < 0)
                (void) kill(pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EBADMSG;
        return shim_names_parse(out, ret);
}

static ShimList *evaluate_list(const char *scudo, const char *dir) {
        char **names = NULL;
        int r = shim_names_evaluate(scudo, dir, &names);
        if (r < 0) {
                log_debug("shim: the names for '%s' could not be made: %s", dir, strerror(-r));
                return NULL;
        }
        log_debug("shim: %zu name(s) for '%s'", strv_length(names), dir);
        ShimList *l = list_new(names);
        if (!l)
                strv_free(names);
        return l;
}

static ShimList *global_list(ShimNames *s, uint64_t gen) {
        ShimList *l;

        uint64_t now = now_usec();
        pthread_mutex_lock(&s->lock);
        bool fresh =
                s->global && s->global_generation == gen && now - s->global_made_usec < SHIM_LIST_TTL_USEC;
        l = list_ref(s->global);
        pthread_mutex_unlock(&s->lock);
        if (fresh)
                return l;

        ShimList *n = evaluate_list(s->scudo, "/");
        if (!n) {
                /* A global configuration that does not load fails every run anyway; until it
                 * loads again the last list stands, or an empty one. */
                if (l)
                        return l;
                char **empty = calloc(1, sizeof(char *));
                n = empty ? list_new(empty) : NULL;
                if (!n) {
                        free(empty);
                        return NULL;
                }
        }
        shim_list_unref(l);
        pthread_mutex_lock(&s->lock);
        shim_list_unref(s->global);
        s->global = list_ref(n);
        s->global_generation = gen;
        s->global_made_usec = now;
        pthread_mutex_unlock(&s->lock);
        return n;
}

static uint64_t mix(uint64_t h, uint64_t v) {
        for (int i = 0; i < 8; i++, v >>= 8)
                h = (h ^ (v & 0xff)) * 1099511628211ULL;
        return h;
}

/* What the project files a directory's list depends on look like now: the stat of .scudo.toml
 * and .scudo.lua in it and in every directory above it (lua/scudo/discover.lua says which files
 * a start directory reads). A few microseconds against a Lua evaluation: a list is kept while
 * this stays the same. */
static uint64_t project_signature(const char *cwd) {
        static const char * const names[] = { ".scudo.toml", ".scudo.lua" };
        char path[PATH_MAX];
        uint64_t h = 14695981039346656037ULL;
        size_t len = strlen(cwd);

        if (len >= sizeof(path) - 16)
                return 0;
        /* "/", then each directory down to cwd: cwd[0..end) */
        for (size_t end = 1; end <= len; end++) {
                if (end > 1 && end < len && cwd[end] != '/')
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                        struct stat st;
                        (void) snprintf(path, sizeof(path), "%.*s%s%s", (int) end, cwd, end == 1 ? "" : "/",
                                        names[i]);
                        if (stat(path, &st) < 0) {
                                h = mix(h, (uint64_t) errno);
                                continue;
                        }
                        h = mix(h, (uint64_t) st.st_dev);
                        h = mix(h, (uint64_t) st.st_ino);
                        h = mix(h, (uint64_t) st.st_size);
                        h = mix(h, (uint64_t) st.st_mtim.tv_sec);
                        h = mix(h, (uint64_t) st.st_mtim.tv_nsec);
                        h = mix(h, (uint64_t) st.st_ctim.tv_nsec);
                }
        }
        return h;
}

void shim_names_get(ShimNames *s, const char *cwd, ShimList **ret_list, ShimList **ret_global) {
        uint64_t gen = atomic_load(&s->generation);
        ShimList *global = global_list(s, gen), *l = NULL;

        if (!cwd || streq(cwd, "/")) {
                *ret_list = list_ref(global);
                *ret_global = global;
                return;
        }

        uint64_t now = now_usec(), sig = project_signature(cwd);
        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < CACHE_MAX; i++) {
                Entry *e = &s->cache[i];
                if (e->cwd && streq(e->cwd, cwd) && e->generation == gen && e->signature == sig &&
                    now - e->made_usec < SHIM_LIST_TTL_USEC) {
                        l = list_ref(e->list);
                        break;
                }
        }
        pthread_mutex_unlock(&s->lock);
        if (l) {
                *ret_list = l;
                *ret_global = global;
                return;
        }

        l = evaluate_list(s->scudo, cwd);
        if (!l)
                l = list_ref(global);   /* remembered too: a bad project file is not read again at once */
        char *key = strdup(cwd);
        pthread_mutex_lock(&s->lock);
        if (key) {
                Entry *slot = &s->cache[0];
                for (size_t i = 0; i < CACHE_MAX; i++) {
                        Entry *e = &s->cache[i];
                        if (!e->cwd || streq(e->cwd, cwd)) {
                                slot = e;
                                break;
                        }
                        if (e->made_usec < slot->made_usec)
                                slot = e;
                }
                free(slot->cwd);
                shim_list_unref(slot->list);
                slot->cwd = key;
                slot->list = list_ref(l);
                slot->generation = gen;
                slot->signature = sig;
                slot->made_usec = now;
        }
        pthread_mutex_unlock(&s->lock);
        *ret_list = l;
        *ret_global = global;
}

/* The directory of a trusted project file, or NULL for another trusted file (a hook's). */
static char *project_dir(const char *path) {
        const char *slash = strrchr(path, '/');
        if (!slash || slash == path || (!streq(slash + 1, ".scudo.toml") && !streq(slash + 1, ".scudo.lua")))
                return NULL;
        return strndup(path, (size_t) (slash - path));
}

/* Appends each name of `l` to `text`, one a line. */
static int append_names(char **text, size_t *len, char * const *l) {
        STRV_FOREACH(n, l) {
                size_t k = strlen(*n);
                char *t = realloc(*text, *len + k + 2);
                if (!t)
                        return -ENOMEM;
                *text = t;
                memcpy(t + *len, *n, k);
                t[*len + k] = '\n';
                *len += k + 1;
                t[*len] = 0;
        }
        return 0;
}

/* The global names and those of every trusted project file, each evaluated from the file's own
 * directory. A project file that is not trusted adds nothing anywhere, and an edited one is not
 * trusted any more (its hash), so nothing outside this list is listed to any caller until the
 * configuration or the trust store changes. Any evaluation that fails leaves it unknown. */
void shim_names_refresh_listable(ShimNames *s) {
        uint64_t gen = atomic_load(&s->generation);
        _cleanup_free_ char *store = NULL, *text = NULL;
        TrustEntry *entries = NULL;
        size_t n_entries = 0, len = 0;
        ShimList *l = NULL;
        int r;

        ShimList *global = global_list(s, gen);
        r = global ? trust_store_path(&store) : -ENOMEM;
        if (r >= 0)
                r = trust_load(store, &entries, &n_entries);
        if (r >= 0)
                r = append_names(&text, &len, global->names);
        for (size_t i = 0; r >= 0 && i < n_entries; i++) {
                _cleanup_free_ char *dir = project_dir(entries[i].path);
                if (!dir)
                        continue;
                ShimList *p = evaluate_list(s->scudo, dir);
                r = p ? append_names(&text, &len, p->names) : -EBADMSG;
                shim_list_unref(p);
        }
        trust_entries_free(entries, n_entries);
        shim_list_unref(global);
        char **names = NULL;
        if (r >= 0 && shim_names_parse(text, &names) >= 0 && !(l = list_new(names)))
                strv_free(names);
        if (!l)
                log_debug("shim: the names any caller could be given are not known: %s",
                          strerror(r < 0 ? -r : ENOMEM));
        else
                log_debug("shim: %zu name(s) any caller could be given", strv_length(l->names));
        pthread_mutex_lock(&s->lock);
        shim_list_unref(s->listable);
        s->listable = l;
        s->listable_generation = gen;
        pthread_mutex_unlock(&s->lock);
}

bool shim_names_never_listed(ShimNames *s, const char *name) {
        uint64_t gen = atomic_load(&s->generation);
        pthread_mutex_lock(&s->lock);
        bool never = s->listable && s->listable_generation == gen &&
                     !shim_names_contain(s->listable->names, name);
        pthread_mutex_unlock(&s->lock);
        return never;
}
