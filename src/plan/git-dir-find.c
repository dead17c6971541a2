/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The walk for the git directories below a project (git-dir-find.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plan/git-dir-cache.h"
#include "plan/git-dir-find.h"
#include "util/macro.h"
#include "util/path-util.h"

typedef struct Walk {
        GitDirFound found;
        void *userdata;
        const GitDirCache *old;         /* the last walk's, or NULL */
        GitDirCacheWriter *new;         /* this one's, or NULL */
        GitDirFindStats stats;
        char path[PATH_MAX];
        _Alignas(struct dirent64) char buf[32768];     /* getdents64's, one directory at a time */
} Walk;

/* The type of `name` in the directory `dfd`, from getdents' d_type or else lstat. */
static unsigned char entry_type(int dfd, const char *name, unsigned char type) {
        if (type != DT_UNKNOWN)
                return type;
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return DT_UNKNOWN;
        return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK :
                DT_UNKNOWN;
}

static bool is_dot_or_dotdot(const char *n) {
        return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* One more directory: within the bounds, or -E2BIG. */
static int count_dir(Walk *w, unsigned depth) {
        if (w->stats.n_dirs >= GIT_DIR_FIND_MAX_DIRS || depth > GIT_DIR_FIND_MAX_DEPTH)
                return -E2BIG;
        w->stats.n_dirs++;
        return 0;
}

/* What the directory w->path (of `kind`: 0, or GitDirKind + 1) is to the caller. */
static int report(Walk *w, uint8_t kind) {
        return kind ? w->found(w->path, (GitDirKind) (kind - 1), w->userdata) : 0;
}

static int walk_child(Walk *w, int parent, const char *name, size_t len, unsigned depth);

/* Each of the n subdirectories (names, NUL-ended) of the directory open at dfd (w->path, len
 * bytes), gone into. */
static int walk_children(Walk *w, int dfd, const char *names, size_t n, size_t len, unsigned depth) {
        int r = 0;
        for (const char *name = names; r >= 0 && n > 0; name += strlen(name) + 1, n--) {
                size_t l = strlen(name);
                if (len + 1 + l >= sizeof(w->path))
                        continue;       /* past PATH_MAX: no one opens it by its path either */
                w->path[len] = '/';
                memcpy(w->path + len + 1, name, l + 1);
                r = walk_child(w, dfd, name, len + 1 + l, depth + 1);
                w->path[len] = 0;
        }
        return r;
}

/* The directory open at `fd` (taken over, readable), named w->path (len bytes), `depth` below
 * the root, read. One pass over its entries: what makes it a git directory, or holds one, and
 * the names of its subdirectories, gone into afterwards (the directory stays open: its
 * children are looked at from it). Its identity is taken before it is read: a change after
 * that moves its ctime on, and the next run reads it again. */
static int read_dir(Walk *w, int fd, size_t len, unsigned depth) {
        _cleanup_close_ int dfd = fd;
        int r = count_dir(w, depth);
        if (r < 0)
                return r;
        struct stat st = {};
        if (w->new && fstat(dfd, &st) < 0)
                return 0;       /* unreadable: what was read is what there is */
        w->stats.n_read++;
        bool head = false, objects = false, refs = false;
        unsigned char git_type = DT_UNKNOWN;
        _cleanup_free_ char *names = NULL;      /* the subdirectories' names, each NUL-ended */
        size_t used = 0, size = 0, n = 0;
        for (;;) {
                /* getdents64 into the walk's one buffer: no DIR to allocate, fstat and fcntl */
                ssize_t got = syscall(SYS_getdents64, dfd, w->buf, sizeof(w->buf));
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0)
                        break;          /* the end, or unreadable: what was read is what there is */
                for (ssize_t at = 0; r >= 0 && at < got;) {
                        struct dirent64 *e = (struct dirent64 *) (w->buf + at);
                        at += e->d_reclen;
                        if (is_dot_or_dotdot(e->d_name))
                                continue;
                        unsigned char t = entry_type(dfd, e->d_name, e->d_type);
                        if (streq(e->d_name, ".git")) {
                                git_type = t;
                                continue;       /* its submodules and worktrees are the caller's */
                        }
                        if (streq(e->d_name, "HEAD"))
                                head = t == DT_REG || t == DT_LNK;
                        else if (streq(e->d_name, "objects"))
                                objects = t == DT_DIR;
                        else if (streq(e->d_name, "refs"))
                                refs = t == DT_DIR;
                        if (t != DT_DIR)
                                continue;
                        size_t l = strlen(e->d_name) + 1;
                        if (used + l > size) {
                                size_t m = MAX(2 * size, used + l + 256);
                                char *p = realloc(names, m);
                                if (!p) {
                                        r = -ENOMEM;
                                        break;
                                }
                                names = p;
                                size = m;
                        }
                        memcpy(names + used, e->d_name, l);
                        used += l;
                        n++;
                }
                if (r < 0)
                        return r;
        }
        uint8_t kind = 0;
        if (head && objects && refs) {
                /* A git directory (bare): nothing below it is a repository of its own. */
                kind = GIT_DIR_BARE + 1;
                used = n = 0;
        } else if (git_type == DT_DIR || git_type == DT_LNK || git_type == DT_REG)
                kind = (git_type == DT_REG ? GIT_DIR_GIT_FILE : GIT_DIR_DOT_GIT) + 1;
        if (w->new)
                r = git_dir_cache_add(w->new, &st, kind, names, used, n);
        if (r >= 0)
                r = report(w, kind);
        return r < 0 ? r : walk_children(w, dfd, names, n, len, depth);
}

/* A directory the last walk read, unchanged since (its record `c`, its stat `st`, `name` in
 * `parent`): what it was then, and its subdirectories looked at from it, opened O_PATH only to
 * look at them from (a leaf is not opened at all). Returns 1 when it was changed in between
 * (to be read then). */
static int reuse_dir(Walk *w, int parent, const char *name, const GitDirRecord *c, size_t len,
                     unsigned depth) {
        _cleanup_close_ int dfd = -EBADF;
        if (c->n_names > 0) {
                struct stat st;
                dfd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dfd < 0)
                        return errno == ENOMEM ? -ENOMEM : 0;
                /* the one looked up, still (not moved away, another put in its place) */
                if (fstat(dfd, &st) < 0 || git_dir_cache_lookup(w->old, &st) != c)
                        return 1;
        }
        int r = count_dir(w, depth);
        if (r >= 0)
                r = git_dir_cache_add_record(w->new, c);
        if (r >= 0)
                r = report(w, c->kind);
        return r < 0 ? r : walk_children(w, dfd, git_dir_record_names(c), c->n_names, len, depth);
}

/* The directory `name` in the one open at `parent` (w->path, len bytes): as the last walk
 * found it where unchanged, read otherwise. */
static int walk_child(Walk *w, int parent, const char *name, size_t len, unsigned depth) {
        if (w->old) {
                struct stat st;
                if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return errno == ENOMEM ? -ENOMEM : 0;   /* gone by now */
                if (!S_ISDIR(st.st_mode))
                        return 0;                               /* a symlink by now */
                const GitDirRecord *c = git_dir_cache_lookup(w->old, &st);
                int r = c ? reuse_dir(w, parent, name, c, len, depth) : 1;
                if (r <= 0)
                        return r;
        }
        int sub = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
                return errno == ENOMEM ? -ENOMEM : 0;   /* unreadable, gone or a symlink by now */
        return read_dir(w, sub, len, depth);
}

/* The root, open at fd (taken over): as the last walk found it where unchanged. */
static int walk_root(Walk *w, int fd, size_t len) {
        _cleanup_close_ int dfd = fd;
        struct stat st;
        const GitDirRecord *c = NULL;
        if (w->old && fstat(dfd, &st) >= 0)
                c = git_dir_cache_lookup(w->old, &st);
        if (!c)
                return read_dir(w, TAKE_FD(dfd), len, 0);
        int r = count_dir(w, 0);
        if (r >= 0)
                r = git_dir_cache_add_record(w->new, c);
        if (r >= 0)
                r = report(w, c->kind);
        return r < 0 ? r : walk_children(w, dfd, git_dir_record_names(c), c->n_names, len, 0);
}

int git_dirs_find(const char *root, const char *cache_dir, GitDirFound found, void *userdata,
                  GitDirFindStats *stats) {
        _cleanup_free_ Walk *w = calloc(1, sizeof(Walk));
        if (!w)
                return -ENOMEM;
        size_t len = strlen(root);
        if (!path_is_absolute(root) || len >= sizeof(w->path))
                return -EINVAL;
        _cleanup_(git_dir_cache_freep) GitDirCache *old = NULL;
        GitDirCacheWriter new;
        git_dir_cache_writer_init(&new);
        int r = cache_dir ? git_dir_cache_load(cache_dir, root, &old) : -ENOENT;
        if (r == -ENOMEM)
                return r;
        *w = (Walk) { .found = found, .userdata = userdata, .old = old, .new = cache_dir ? &new : NULL,
                      .stats.cache_read = !!old };
        memcpy(w->path, root, len + 1);
        r = 0;
        int fd = path_open_no_symlinks(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd >= 0)
                r = walk_root(w, fd, len);
        else if (fd == -ENOMEM)
                r = fd;
        /* Kept for the next run when anything was read (a walk cut short is not kept: what it
         * did not reach would count as gone). A cache that cannot be written costs the next run
         * a full walk, nothing else. */
        if (r >= 0 && cache_dir && w->stats.n_read > 0)
                w->stats.cache_written = git_dir_cache_save(cache_dir, root, &new) >= 0;
        git_dir_cache_writer_done(&new);
        if (stats)
                *stats = w->stats;
        return r;
}
