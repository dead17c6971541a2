/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The shim's filesystem (libfuse3, low-level API, multi-threaded loop). Inode 1 is the
 * directory; each name ever listed gets an inode of its own, a symlink to scudo. */
#define FUSE_USE_VERSION 312
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shim/shim-caller.h"
#include "shim/shim-names.h"
#include "shim/shim-path.h"
#include "shim/shim-watch.h"
#include "shim/shim.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/path-util.h"
#include "util/strv.h"

/* How long the kernel keeps an answer (docs/shim.md, "Caching"). A name the global
 * configuration lists is the same for every caller: its entry is kept ENTRY_TTL. A name only a
 * project lists must not be seen from elsewhere, and a name not listed may be listed for the
 * next caller (another project): neither is kept. */
#define ENTRY_TTL 1.0
/* The directory's own attributes never change: kept, or the kernel (default_permissions) asks
 * for them again at the first PATH search past the shim after each ENTRY_TTL. */
#define ROOT_ATTR_TTL 3600.0
/* A name no caller can be given (shim_names_never_listed()) is "not found" for everyone: the
 * kernel keeps that answer NEGATIVE_TTL, and each such name is remembered (NEGATIVE_MAX of them)
 * so that a change to the configuration or the trust store drops them all at once. Nothing but
 * such a change can make the name listed (an edited project file is not trusted any more), so
 * the time only bounds what a lost drop would cost: as long as a directory's list lives. */
#define NEGATIVE_TTL ((double) SHIM_LIST_TTL_USEC / 1e6)
#define NEGATIVE_MAX 8192
#define NEGATIVE_SLOTS (2 * NEGATIVE_MAX)

/* Names get inodes 2, 3, ... in the order they are first listed; never reused. */
#define INODES_MAX 65536
#define HASH_SLOTS (2 * INODES_MAX)

typedef struct Shim {
        char *mount;
        char *scudo;
        size_t scudo_len;
        dev_t scudo_dev;
        ino_t scudo_ino;
        ShimNames *names;
        struct fuse_session *session;
        int fallback_fd;        /* the mount point's own directory, under the mount */

        pthread_mutex_t lock;
        char **inames;          /* inode - 2 -> name, INODES_MAX of them */
        size_t n_inames;
        uint32_t *hash;         /* name -> index + 1 into inames, open addressing */

        bool watching;          /* changes are seen: negative answers may be kept */
        pthread_t refresher;    /* refresh_loop(): remakes the names any caller could be given */
        pthread_cond_t refresh_wanted;
        bool refresh_pending, refresh_stop, refresher_started;
        char **negatives;       /* names answered "not found" with NEGATIVE_TTL */
        size_t n_negatives;
        uint32_t *negative_hash;
} Shim;

static Shim *shim_of(fuse_req_t req) {
        return fuse_req_userdata(req);
}

static size_t name_hash(const char *name) {
        size_t h = 14695981039346656037ULL;
        for (const unsigned char *p = (const unsigned char *) name; *p; p++)
                h = (h ^ *p) * 1099511628211ULL;
        return h;
}

/* The inode of `name`, given one at first use when `add`. 0 when unknown, or the table is full.
 * *ret_added says whether it was given now. */
static fuse_ino_t find_inode(Shim *s, const char *name, bool add, bool *ret_added) {
        fuse_ino_t ino = 0;
        size_t slot = name_hash(name) & (HASH_SLOTS - 1);

        *ret_added = false;
        pthread_mutex_lock(&s->lock);
        for (size_t probe = 0; probe < HASH_SLOTS; probe++, slot = (slot + 1) & (HASH_SLOTS - 1)) {
                uint32_t i = s->hash[slot];
                if (i == 0) {
                        if (!add || s->n_inames >= INODES_MAX)
                                break;
                        char *c = strdup(name);
                        if (!c)
                                break;
                        s->inames[s->n_inames++] = c;
                        s->hash[slot] = (uint32_t) s->n_inames;
                        ino = s->n_inames + 1;
                        *ret_added = true;
                        break;
                }
                if (streq(s->inames[i - 1], name)) {
                        ino = i + 1;
                        break;
                }
        }
        pthread_mutex_unlock(&s->lock);
        return ino;
}

/* The inode of a name listed now. A name listed for the first time also gets its link to scudo
 * in the mount point's own directory (sync_fallback()): a name only a project lists runs
 * through scudo there too, should the shim die. */
static fuse_ino_t intern(Shim *s, const char *name) {
        bool added;
        fuse_ino_t ino = find_inode(s, name, true, &added);
        if (added && s->fallback_fd >= 0 && symlinkat(s->scudo, s->fallback_fd, name) < 0 && errno != EEXIST)
                log_debug("shim: cannot make the fallback link '%s': %m", name);
        return ino;
}

static bool interned(Shim *s, const char *name) {
        bool added;
        return find_inode(s, name, false, &added) != 0;
}

/* Remembers `name` as kept "not found" by the kernel; false when it cannot be (the table is
 * full until the next change): then the answer is not kept. */
static bool remember_negative(Shim *s, const char *name) {
        bool ok = false;
        size_t slot = name_hash(name) & (NEGATIVE_SLOTS - 1);

        pthread_mutex_lock(&s->lock);
        for (size_t probe = 0; probe < NEGATIVE_SLOTS; probe++, slot = (slot + 1) & (NEGATIVE_SLOTS - 1)) {
                uint32_t i = s->negative_hash[slot];
                if (i != 0 && streq(s->negatives[i - 1], name)) {
                        ok = true;
                        break;
                }
                if (i != 0)
                        continue;
                char *c = s->n_negatives < NEGATIVE_MAX ? strdup(name) : NULL;
                if (c) {
                        s->negatives[s->n_negatives++] = c;
                        s->negative_hash[slot] = (uint32_t) s->n_negatives;
                        ok = true;
                }
                break;
        }
        pthread_mutex_unlock(&s->lock);
        return ok;
}

/* Drops every negative answer the kernel keeps, and forgets them. */
static void drop_negatives(Shim *s) {
        pthread_mutex_lock(&s->lock);
        char **names = s->negatives;
        size_t n = s->n_negatives;
        char **fresh = calloc(NEGATIVE_MAX, sizeof(char *));
        if (fresh) {
                s->negatives = fresh;
                s->n_negatives = 0;
                memset(s->negative_hash, 0, NEGATIVE_SLOTS * sizeof(uint32_t));
        }
        pthread_mutex_unlock(&s->lock);
        for (size_t i = 0; i < n; i++)
                (void) fuse_lowlevel_notify_inval_entry(s->session, FUSE_ROOT_ID, names[i],
                                                        strlen(names[i]));
        if (!fresh)
                return;         /* kept, and dropped again at the next change */
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* "Not found", kept by the kernel only where no caller could be given the name: `never_listed`
 * was decided in generation `gen`. A change meanwhile may have dropped the negative answers
 * before this one reached the kernel: then it is dropped here, once the kernel has it (the
 * kernel's lookup holds the directory, which the drop waits for). */
static void reply_not_found(fuse_req_t req, Shim *s, const char *name, uint64_t gen, bool never_listed) {
        struct fuse_entry_param e = {};
        if (never_listed && s->watching && remember_negative(s, name))
                e.entry_timeout = NEGATIVE_TTL;
        fuse_reply_entry(req, &e);
        if (e.entry_timeout > 0 && shim_names_generation(s->names) != gen)
                (void) fuse_lowlevel_notify_inval_entry(s->session, FUSE_ROOT_ID, name, strlen(name));
}

static bool inode_known(Shim *s, fuse_ino_t ino) {
        pthread_mutex_lock(&s->lock);
        bool k = ino >= 2 && ino - 2 < s->n_inames;
        pthread_mutex_unlock(&s->lock);
        return k;
}

static void fill_attr(Shim *s, fuse_ino_t ino, struct stat *st) {
        *st = (struct stat) {
                .st_ino = ino,
                .st_uid = getuid(),
                .st_gid = getgid(),
        };
        if (ino == FUSE_ROOT_ID) {
                st->st_mode = S_IFDIR | 0555;
                st->st_nlink = 2;
        } else {
                st->st_mode = S_IFLNK | 0777;
                st->st_nlink = 1;
                st->st_size = (off_t) s->scudo_len;
        }
}

/* The caller's lists: the ones for its working directory and the global one. A caller whose
 * working directory cannot be read gets the global one alone. */
static void caller_lists(Shim *s, pid_t pid, ShimList **ret_list, ShimList **ret_global) {
        _cleanup_free_ char *cwd = NULL;
        if (shim_caller_cwd(pid, &cwd) < 0)
                cwd = NULL;
        shim_names_get(s->names, cwd, ret_list, ret_global);
}

static bool in_list(const ShimList *l, const char *name) {
        return l && l->names && shim_names_contain(l->names, name);
}

/* Whether the caller's PATH holds `name` after the shim: a listed name must run something
 * (`command -v` must not lie). The lookup skips scudo itself, so the shim twice on PATH, or a
 * `scudo link` after it, is no real command. A caller whose PATH in /proc does not hold the
 * shim (a shell that put it first from its rc file: /proc shows the PATH it started with) gets
 * every name listed: confined rather than accurate; the run says "command not found" (127)
 * where nothing is behind a name. */
typedef struct CallerSearch {
        int state;      /* 1: search below, 0: every name resolves, < 0: none does */
        char *search;   /* the caller's PATH after the shim */
} CallerSearch;

/* Read once per request: a listing asks for every name, and /proc/PID/environ is not free. */
static CallerSearch caller_search(Shim *s, pid_t pid) {
        _cleanup_free_ char *path = NULL;
        CallerSearch c = {};
        if (shim_caller_path(pid, &path) < 0)
                path = NULL;
        c.state = shim_search_path(path, s->mount, &c.search);
        if (c.state > 0 && !*c.search)
                c.state = -ENOENT;
        return c;
}

static bool resolves_in(Shim *s, const CallerSearch *c, const char *name) {
        _cleanup_free_ char *found = NULL;
        if (c->state <= 0)
                return c->state == 0;
        const FileId self = { s->scudo_dev, s->scudo_ino };
        return path_find_executable(name, c->search, &self, 1, &found) >= 0;
}

static bool resolves_for(Shim *s, pid_t pid, const char *name) {
        CallerSearch c = caller_search(s, pid);
        bool r = resolves_in(s, &c, name);
        free(c.search);
        return r;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
        Shim *s = shim_of(req);
        const struct fuse_ctx *ctx = fuse_req_ctx(req);
        struct fuse_entry_param e = {};

        if (parent != FUSE_ROOT_ID || shim_caller_is_self(ctx->pid)) {
                fuse_reply_entry(req, &e);
                return;
        }
        uint64_t gen = shim_names_generation(s->names);
        if (!shim_name_is_listable(name)) {
                reply_not_found(req, s, name, gen, true);
                return;
        }
        /* "Not found" for every caller: answered before the caller's directory is read, or its
         * names made (the policy engine, the first time in a directory). */
        if (shim_names_never_listed(s->names, name)) {
                reply_not_found(req, s, name, gen, true);
                return;
        }
        ShimList *list = NULL, *global = NULL;
        caller_lists(s, ctx->pid, &list, &global);
        bool listed = in_list(list, name), everywhere = in_list(global, name);
        shim_list_unref(list);
        shim_list_unref(global);
        if (!listed || !resolves_for(s, ctx->pid, name)) {
                reply_not_found(req, s, name, gen, !listed && shim_names_never_listed(s->names, name));
                return;
        }
        e.ino = intern(s, name);
        if (e.ino == 0) {
                fuse_reply_err(req, ENOSPC);
                return;
        }
        fill_attr(s, e.ino, &e.attr);
        e.attr_timeout = e.entry_timeout = everywhere ? ENTRY_TTL : 0;
        fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        Shim *s = shim_of(req);
        struct stat st;
        if (ino != FUSE_ROOT_ID && !inode_known(s, ino)) {
                fuse_reply_err(req, ENOENT);
                return;
        }
        fill_attr(s, ino, &st);
        fuse_reply_attr(req, &st, ino == FUSE_ROOT_ID ? ROOT_ATTR_TTL : 0);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino) {
        Shim *s = shim_of(req);
        if (!inode_known(s, ino)) {
                fuse_reply_err(req, ENOENT);
                return;
        }
        fuse_reply_readlink(req, s->scudo);
}

typedef struct Listing {
        char **names;
        fuse_ino_t *inos;
        size_t n;
} Listing;

static void listing_free(Listing *l) {
        if (!l)
                return;
        strv_free(l->names);
        free(l->inos);
        free(l);
}

/* The listing is made once, at opendir, for the caller that opens the directory; readdir's
 * offset is an index into it ("." and ".." are 0 and 1). */
static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        Shim *s = shim_of(req);
        const struct fuse_ctx *ctx = fuse_req_ctx(req);
        if (ino != FUSE_ROOT_ID) {
                fuse_reply_err(req, ENOTDIR);
                return;
        }
        Listing *l = calloc(1, sizeof(*l));
        if (!l || !(l->names = calloc(1, sizeof(char *)))) {
                listing_free(l);
                fuse_reply_err(req, ENOMEM);
                return;
        }
        if (!shim_caller_is_self(ctx->pid)) {
                ShimList *list = NULL, *global = NULL;
                caller_lists(s, ctx->pid, &list, &global);
                size_t max = strv_length(list ? list->names : NULL);
                CallerSearch c = caller_search(s, ctx->pid);
                l->inos = calloc(max + 1, sizeof(fuse_ino_t));
                STRV_FOREACH(n, l->inos ? list->names : NULL) {
                        if (!resolves_in(s, &c, *n))
                                continue;
                        fuse_ino_t i = intern(s, *n);
                        if (i == 0 || strv_extend(&l->names, *n) < 0)
                                break;
                        l->inos[l->n++] = i;
                }
                free(c.search);
                shim_list_unref(list);
                shim_list_unref(global);
        }
        fi->fh = (uint64_t) (uintptr_t) l;
        fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
        Listing *l = (Listing *) (uintptr_t) fi->fh;
        _cleanup_free_ char *buf = malloc(size);
        size_t used = 0;
        if (!buf) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        for (size_t i = off < 0 ? 0 : (size_t) off; i < l->n + 2; i++) {
                const char *name = i == 0 ? "." : i == 1 ? ".." : l->names[i - 2];
                struct stat st = {
                        .st_ino = i < 2 ? FUSE_ROOT_ID : l->inos[i - 2],
                        .st_mode = i < 2 ? S_IFDIR : S_IFLNK,
                };
                size_t need = fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t) i + 1);
                if (need > size - used)
                        break;
                used += need;
        }
        fuse_reply_buf(req, buf, used);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
        listing_free((Listing *) (uintptr_t) fi->fh);
        fuse_reply_err(req, 0);
}

static void op_init(void *userdata, struct fuse_conn_info *conn) {
        /* Symlink bodies cached by the kernel: every exec through the shim reads one. */
        if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
                conn->want |= FUSE_CAP_CACHE_SYMLINKS;
}

static const struct fuse_lowlevel_ops ops = {
        .init = op_init,
        .lookup = op_lookup,
        .getattr = op_getattr,
        .readlink = op_readlink,
        .opendir = op_opendir,
        .readdir = op_readdir,
        .releasedir = op_releasedir,
};

ShimState shim_mount_state(const char *mount) {
        struct stat a, b;
        _cleanup_free_ char *parent = path_join(mount, "..");
        if (stat(mount, &a) < 0)
                return errno == ENOTCONN ? SHIM_STALE : SHIM_ABSENT;
        if (parent && stat(parent, &b) >= 0 && a.st_dev != b.st_dev)
                return SHIM_RUNNING;
        return SHIM_ABSENT;
}

int shim_mount_path(char **ret) {
        const char *rt = getenv("XDG_RUNTIME_DIR");
        char *p = NULL;
        if (rt && path_is_absolute(rt))
                p = path_join(rt, "scudo/shim");
        else if (asprintf(&p, "/run/user/%u/scudo/shim", (unsigned) getuid()) < 0)
                p = NULL;
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/* The mount point's own directory holds a link to scudo for each name the global
 * configuration lists, and each name listed to anyone since the shim started (a project's:
 * intern()): should the shim die, the kernel (auto_unmount) uncovers them, and a command looked
 * up there still runs through scudo, confined, instead of falling through to the next PATH
 * directory. With `prune`, the links of other names go; without (at start), the links a shim
 * before this one made stay: a shell may have hashed those names in the shim's directory. */
static void sync_fallback(Shim *s, char * const *names, bool prune) {
        if (s->fallback_fd < 0)
                return;
        int fd = prune ? openat(s->fallback_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -EBADF;
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d)
                safe_close(fd);
        for (struct dirent *de; d && (de = readdir(d)); )
                if (de->d_type == DT_LNK && !shim_names_contain(names, de->d_name) &&
                    !interned(s, de->d_name))
                        (void) unlinkat(s->fallback_fd, de->d_name, 0);
        if (d)
                closedir(d);
        STRV_FOREACH(n, names)
                if (symlinkat(s->scudo, s->fallback_fd, *n) < 0 && errno != EEXIST)
                        log_debug("shim: cannot make the fallback link '%s': %m", *n);
}

/* Remakes the names any caller could be given, in a thread of its own: it runs the policy
 * engine once per trusted project directory, up to SHIM_EVAL_TIMEOUT_USEC each for a hostile
 * one, and must hold up neither lookups nor the handling of the next change. The negative
 * answers are dropped again once it is made: one a lookup gave just before the change has
 * reached the kernel by then (the evaluations take milliseconds). */
static void *refresh_loop(void *userdata) {
        Shim *s = userdata;
        pthread_mutex_lock(&s->lock);
        for (;;) {
                while (!s->refresh_pending && !s->refresh_stop)
                        pthread_cond_wait(&s->refresh_wanted, &s->lock);
                if (s->refresh_stop)
                        break;
                s->refresh_pending = false;
                pthread_mutex_unlock(&s->lock);
                shim_names_refresh_listable(s->names);
                drop_negatives(s);
                pthread_mutex_lock(&s->lock);
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

static void config_changed(void *userdata) {
        Shim *s = userdata;
        ShimList *list = NULL, *global = NULL;

        shim_names_changed(s->names);
        shim_names_get(s->names, NULL, &list, &global);
        if (global)
                sync_fallback(s, global->names, true);
        shim_list_unref(list);
        shim_list_unref(global);
        /* Dropped at once (no lookup keeps one now: the generation is new), and again once the
         * new list is made (refresh_loop()). */
        drop_negatives(s);
        pthread_mutex_lock(&s->lock);
        s->refresh_pending = true;
        pthread_cond_signal(&s->refresh_wanted);
        pthread_mutex_unlock(&s->lock);

        /* Every answer the kernel keeps is dropped: the names listed before may be gone. */
        pthread_mutex_lock(&s->lock);
        size_t n = s->n_inames;
        pthread_mutex_unlock(&s->lock);
        for (size_t i = 0; i < n; i++)
                (void) fuse_lowlevel_notify_inval_entry(s->session, FUSE_ROOT_ID, s->inames[i],
                                                        strlen(s->inames[i]));
}

/* A mount left by a shim that died without auto_unmount's help answers ENOTCONN: unmounted
 * (lazily) by fusermount3, the one tool allowed to unmount a user's FUSE mount. */
static int clean_stale_mount(const char *mount) {
        struct stat st;
        if (stat(mount, &st) >= 0 || errno != ENOTCONN)
                return 0;
        log_info("shim: removing the stale mount at %s", mount);
        pid_t pid;
        char *argv[] = { (char *) "fusermount3", (char *) "-u", (char *) "-z", (char *) mount, NULL };
        extern char **environ;
        int r = -posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ);
        if (r < 0)
                return log_error_errno(r, "Cannot run fusermount3 to remove the stale mount at %s: %m",
                                       mount);
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        if (stat(mount, &st) < 0)
                return log_error_errno(negative_errno(), "The stale mount at %s is still there: %m", mount);
        return 0;
}

/* Another shim serving there already: the mount point is on a file system of its own. */
static bool mounted_already(const char *mount) {
        struct stat a, b;
        _cleanup_free_ char *parent = path_join(mount, "..");
        return parent && stat(mount, &a) >= 0 && stat(parent, &b) >= 0 && a.st_dev != b.st_dev;
}

static void shim_free(Shim *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_inames; i++)
                free(s->inames[i]);
        free(s->inames);
        free(s->hash);
        for (size_t i = 0; i < s->n_negatives; i++)
                free(s->negatives[i]);
        free(s->negatives);
        free(s->negative_hash);
        shim_names_free(s->names);
        safe_close(s->fallback_fd);
        pthread_cond_destroy(&s->refresh_wanted);
        pthread_mutex_destroy(&s->lock);
        free(s->mount);
        free(s->scudo);
        free(s);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Shim *, shim_free);

int shim_serve(const char *mount, const char *scudo_path) {
        _cleanup_(shim_freep) Shim *s = calloc(1, sizeof(Shim));
        struct stat st;
        int r;

        if (!s)
                return log_oom();
        s->fallback_fd = -EBADF;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->refresh_wanted, NULL);
        s->mount = strdup(mount);
        s->scudo = strdup(scudo_path);
        s->inames = calloc(INODES_MAX, sizeof(char *));
        s->hash = calloc(HASH_SLOTS, sizeof(uint32_t));
        s->negatives = calloc(NEGATIVE_MAX, sizeof(char *));
        s->negative_hash = calloc(NEGATIVE_SLOTS, sizeof(uint32_t));
        if (!s->negatives || !s->negative_hash)
                return log_oom();
        if (!s->mount || !s->scudo || !s->inames || !s->hash || shim_names_new(scudo_path, &s->names) < 0)
                return log_oom();
        s->scudo_len = strlen(s->scudo);
        if (stat(scudo_path, &st) < 0)
                return log_error_errno(negative_errno(), "Cannot find scudo at %s: %m", scudo_path);
        s->scudo_dev = st.st_dev;
        s->scudo_ino = st.st_ino;

        r = mkdir_p(mount, 0700);
        if (r >= 0 && mkdir(mount, 0700) < 0 && errno != EEXIST)
                r = negative_errno();
        if (r < 0 && r != -ENOTCONN)
                return log_error_errno(r, "Cannot create the shim's directory %s: %m", mount);
        r = clean_stale_mount(mount);
        if (r < 0)
                return r;
        if (mounted_already(mount))
                return log_error_errno(SYNTHETIC_ERRNO(EBUSY), "Something is mounted at %s already (another "
                                       "shim?); see 'scudo status'", mount);
        s->fallback_fd = open(mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->fallback_fd < 0)
                return log_error_errno(negative_errno(), "Cannot open %s: %m", mount);
        {
                ShimList *list = NULL, *global = NULL;
                shim_names_get(s->names, NULL, &list, &global);
                if (global)
                        sync_fallback(s, global->names, false);
                shim_list_unref(list);
                shim_list_unref(global);
        }

        char *argv[] = {(char *) "scudo-shim", (char *) "-o",
                        (char *) "ro,auto_unmount,default_permissions,fsname=scudo-shim,subtype=scudo-shim",
                        NULL};
        struct fuse_args args = FUSE_ARGS_INIT(3, argv);
        s->session = fuse_session_new(&args, &ops, sizeof(ops), s);
        if (!s->session)
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "Cannot start the FUSE session");
        if (fuse_set_signal_handlers(s->session) < 0) {
                fuse_session_destroy(s->session);
                return log_error_errno(SYNTHETIC_ERRNO(EIO), "Cannot set the FUSE signal handlers");
        }
        if (fuse_session_mount(s->session, mount) < 0) {
                fuse_remove_signal_handlers(s->session);
                fuse_session_destroy(s->session);
                return log_error_errno(SYNTHETIC_ERRNO(EIO),
                                       "Cannot mount the shim at %s (is /dev/fuse there, "
                                       "and fusermount3 installed?)",
                                       mount);
        }

        ShimWatch *w = NULL;
        r = shim_watch_start(config_changed, s, &w);
        if (r >= 0) {
                /* Watched from now on: a change after this refresh makes another. */
                s->refresh_pending = true;
                s->refresher_started = pthread_create(&s->refresher, NULL, refresh_loop, s) == 0;
                s->watching = s->refresher_started;
        }
        if (r < 0)
                log_warning("shim: cannot watch the configuration (%s): edits show within %llus",
                            strerror(-r), SHIM_LIST_TTL_USEC / 1000000ULL);

        struct fuse_loop_config *cfg = fuse_loop_cfg_create();
        if (cfg) {
                fuse_loop_cfg_set_idle_threads(cfg, 4);
                fuse_loop_cfg_set_max_threads(cfg, 32);
        }
        log_debug("shim: serving %s", mount);
        r = cfg ? fuse_session_loop_mt(s->session, cfg) : -ENOMEM;
        fuse_loop_cfg_destroy(cfg);

        shim_watch_stop(w);
        if (s->refresher_started) {
                pthread_mutex_lock(&s->lock);
                s->refresh_stop = true;
                pthread_cond_signal(&s->refresh_wanted);
                pthread_mutex_unlock(&s->lock);
                (void) pthread_join(s->refresher, NULL);
        }
        fuse_session_unmount(s->session);
        fuse_remove_signal_handlers(s->session);
        fuse_session_destroy(s->session);
        s->session = NULL;
        if (r < 0)
                return log_error_errno(r, "The shim stopped: %m");
        return 0;
}
