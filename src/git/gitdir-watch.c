/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/gitdir-names.h"
#include "git/gitdir-watch.h"
#include "util/log.h"
#include "util/path-util.h"
#include "util/strv.h"
#include "util/text-escape.h"

/* How deep below a .git's modules/ a submodule's git directory is looked for (its name may
 * hold slashes): what lies deeper is judged when the run ends (persist-check.h). */
#define MODULES_DEPTH 4

typedef enum DirKind {
        DIR_TOP,                /* a git directory: only the names git makes there */
        DIR_OBJECTS,            /* its objects/: anything, but a new info/ is watched too */
        DIR_OBJECTS_INFO,       /* objects/info: no alternates */
        DIR_NO_NEW,             /* modules/, worktrees/ and what leads to a submodule: nothing new */
        DIR_PIN,                /* holds a .git symlink, put back if it changes */
} DirKind;

typedef struct Watched {
        int wd;
        DirKind kind;
        char *path;
        char **before;          /* the names it held when the run started */
        char *pin_target;       /* DIR_PIN: what its .git led to */
} Watched;

struct GitdirWatch {
        int fd;
        sd_event_source *source;
        Watched *dirs;
        size_t n_dirs;
        char **tops;
        GitdirRefused cb;
        void *userdata;
        bool refused;
};

static bool refused_in(DirKind kind, const char *name) {
        switch (kind) {
        case DIR_TOP:
                return !gitdir_top_name_allowed(name);
        case DIR_OBJECTS_INFO:
                return !gitdir_objects_info_name_allowed(name);
        case DIR_NO_NEW:
                return true;
        default:
                return false;
        }
}

/* The names in `path` (a directory reached without symlinks); -ENOENT when it is not
 * there. */
static int list_names(const char *path, char ***ret) {
        _cleanup_close_ int fd = path_open_no_symlinks(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        _cleanup_strv_free_ char **names = NULL;
        if (fd < 0)
                return fd == -ENOTDIR ? -ENOENT : fd;
        DIR *d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF;
        struct dirent *e;
        int r = 0;
        while (r >= 0 && (e = readdir(d)))
                if (!streq(e->d_name, ".") && !streq(e->d_name, ".."))
                        r = strv_extend(&names, e->d_name);
        (void) closedir(d);
        if (r < 0)
                return r;
        if (!names) {
                names = calloc(1, sizeof(char *));
                if (!names)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(names);
        return 0;
}

/* Watches `path` as `kind`, if it is a directory; what it holds now is not new. */
static int add_dir(GitdirWatch *w, const char *path, DirKind kind) {
        _cleanup_strv_free_ char **names = NULL;
        int r = list_names(path, &names);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK;
        if (kind == DIR_PIN)
                mask |= IN_DELETE | IN_MOVED_FROM;
        /* IN_DONT_FOLLOW: a symlink put where a watched directory was is not watched through */
        int wd = inotify_add_watch(w->fd, path, mask);
        if (wd < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        Watched *dirs = reallocarray(w->dirs, w->n_dirs + 1, sizeof(Watched));
        if (!dirs)
                return -ENOMEM;
        w->dirs = dirs;
        char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        w->dirs[w->n_dirs++] = (Watched) { .wd = wd, .kind = kind, .path = p, .before = TAKE_PTR(names) };
        return 0;
}

static int add_joined(GitdirWatch *w, const char *dir, const char *name, DirKind kind) {
        _cleanup_free_ char *p = path_join(dir, name);
        return p ? add_dir(w, p, kind) : -ENOMEM;
}

/* What leads from modules/ to a submodule's git directory (a name with slashes): nothing new. */
static int add_module_paths(GitdirWatch *w, const char *dir, unsigned depth) {
        _cleanup_strv_free_ char **names = NULL;
        int r = list_names(dir, &names);
        if (r == -ENOENT)
                return 0;
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *sub = path_join(dir, *n);
                struct stat st;
                if (!sub)
                        return -ENOMEM;
                if (lstat(sub, &st) < 0 || !S_ISDIR(st.st_mode) || strv_contains(w->tops, sub))
                        continue;
                r = add_dir(w, sub, DIR_NO_NEW);
                if (r >= 0 && depth > 1)
                        r = add_module_paths(w, sub, depth - 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

typedef struct Level {
        char *name;             /* of the directory below, in this one */
        dev_t dev;              /* this directory's identity: what ".." must lead back to */
        ino_t ino;
} Level;

/* The first name in the directory open at fd, other than "." and ".."; with the files among
 * its entries removed on the way. 1 with *ret a subdirectory's name, 0 when it is empty. */
static int first_subdir(int fd, char **ret) {
        int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0)
                return -errno;
        DIR *d = fdopendir(dup_fd);
        if (!d) {
                (void) close(dup_fd);
                return -errno;
        }
        int r = 0;
        for (bool again = true; r == 0 && again;) {
                /* names removed as it is read may hide others from this pass: then one more */
                again = false;
                rewinddir(d);
                struct dirent *e;
                while (r == 0 && (e = readdir(d))) {
                        if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                                continue;
                        if (unlinkat(fd, e->d_name, 0) >= 0) {
                                again = true;
                                continue;
                        }
                        if (errno == ENOENT)
                                continue;
                        if (errno != EISDIR && errno != EPERM)
                                r = -errno;
                        else if (!(*ret = strdup(e->d_name)))
                                r = -ENOMEM;
                        else
                                r = 1;
                }
        }
        (void) closedir(d);
        return r;
}

/* Removes `name` in the directory open at dfd, whatever it is and however deep, following no
 * symlink: down by name, one directory open at a time, and back up by "..", which must lead to
 * the directory it left (else something moved it: nothing more is removed). */
static int remove_at(int dfd, const char *name) {
        if (unlinkat(dfd, name, 0) >= 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return -errno;
        struct stat st;
        if (fstat(dfd, &st) < 0)
                return -errno;
        Level *levels = malloc(sizeof(Level));
        size_t n = 1, alloc = 1;
        if (!levels)
                return -ENOMEM;
        levels[0] = (Level) { .name = strdup(name), .dev = st.st_dev, .ino = st.st_ino };
        int fd = levels[0].name ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        int r = levels[0].name ? (fd < 0 ? -errno : 0) : -ENOMEM;
        while (r >= 0 && n > 0) {
                char *sub = NULL;
                r = first_subdir(fd, &sub);
                if (r > 0) {
                        /* down into it */
                        if (n == alloc) {
                                Level *l = reallocarray(levels, alloc * 2, sizeof(Level));
                                if (!l) {
                                        r = -ENOMEM;
                                        free(sub);
                                        break;
                                }
                                levels = l;
                                alloc *= 2;
                        }
                        int child = fstat(fd, &st) < 0 ? -1 :
                                    openat(fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (child < 0) {
                                r = -errno;
                                free(sub);
                                break;
                        }
                        levels[n++] = (Level) { .name = sub, .dev = st.st_dev, .ino = st.st_ino };
                        (void) close(fd);
                        fd = child;
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                /* empty: up, and removed from there */
                Level *up = &levels[n - 1];
                int parent = n == 1 ? fcntl(dfd, F_DUPFD_CLOEXEC, 3)
                                    : openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (parent < 0 || fstat(parent, &st) < 0 || st.st_dev != up->dev || st.st_ino != up->ino) {
                        r = parent < 0 ? -errno : -ESTALE;
                        if (parent >= 0)
                                (void) close(parent);
                        break;
                }
                (void) close(fd);
                fd = parent;
                if (unlinkat(fd, up->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                        r = -errno;
                free(up->name);
                n--;
        }
        if (fd >= 0)
                (void) close(fd);
        for (size_t i = 0; i < n; i++)
                free(levels[i].name);
        free(levels);
        return r;
}

/* Removes dir/name; whether that worked. */
static bool remove_entry(const char *dir, const char *name) {
        _cleanup_close_ int dfd = path_open_no_symlinks(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (dfd < 0)
                return false;
        return remove_at(dfd, name) >= 0;
}

static void refuse(GitdirWatch *w, const Watched *d, const char *name) {
        _cleanup_free_ char *path = path_join(d->path, name);
        bool removed = remove_entry(d->path, name);
        char shown[PATH_MAX];   /* the name is the command's: escaped (util/text-escape.h) */
        (void) text_escape(path ?: name, shown, sizeof(shown));
        if (!w->refused || !removed)
                log_error("%s was made in a .git the command may commit to: git does not make it, and "
                          "could read code to run or another place to read from in it; %s",
                          shown,
                          removed ? "removed" :
                                    "it could not be removed: remove it before running git there");
        if (!w->refused && w->cb) {
                w->refused = true;
                w->cb(path ?: name, removed, w->userdata);
        }
}

/* Puts the .git symlink in d back as it was; whether it is. */
static bool restore_pin(const Watched *d) {
        _cleanup_close_ int dfd = path_open_no_symlinks(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        char buf[PATH_MAX];
        if (dfd < 0)
                return false;
        ssize_t n = readlinkat(dfd, ".git", buf, sizeof(buf) - 1);
        if (n >= 0) {
                buf[n] = 0;
                if (streq(buf, d->pin_target))
                        return true;
        }
        if (remove_at(dfd, ".git") < 0)
                return false;
        return symlinkat(d->pin_target, dfd, ".git") >= 0;
}

/* The .git symlink in d changed: back as it was, and the run stopped. */
static void pin_changed(GitdirWatch *w, const Watched *d) {
        _cleanup_free_ char *path = path_join(d->path, ".git");
        bool restored = restore_pin(d);
        if (!w->refused || !restored)
                log_error("%s, a symlink to %s, was removed or replaced in the run: a repository put in its "
                          "place would be the one git finds there outside; %s",
                          path ?: ".git", d->pin_target,
                          restored ? "put back" :
                                     "it could not be put back: look at it before running git there");
        if (!w->refused && w->cb) {
                w->refused = true;
                w->cb(path ?: ".git", restored, w->userdata);
        }
}

/* Compares d with what it held when the run started; refuses what is new and refused there. */
static int check_dir(GitdirWatch *w, size_t i, unsigned *removed, bool warn) {
        _cleanup_strv_free_ char **names = NULL;
        if (w->dirs[i].kind == DIR_PIN) {
                char buf[PATH_MAX];
                _cleanup_free_ char *git = path_join(w->dirs[i].path, ".git");
                ssize_t n = git ? readlink(git, buf, sizeof(buf) - 1) : -1;
                if (n < 0 || (buf[n] = 0, !streq(buf, w->dirs[i].pin_target))) {
                        pin_changed(w, &w->dirs[i]);
                        if (removed)
                                (*removed)++;
                }
                return 0;
        }
        int r = list_names(w->dirs[i].path, &names);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        STRV_FOREACH(n, names) {
                const Watched *d = &w->dirs[i];
                if (strv_contains(d->before, *n))
                        continue;
                if (warn && d->kind == DIR_TOP && gitdir_name_is_sequence(*n))
                        log_warning("%s/%s: a rebase, cherry-pick or am the command started is still in "
                                    "progress; its list of steps to come can run commands when continued: "
                                    "look at it (git status) before going on, or abort it",
                                    d->path, *n);
                if (refused_in(d->kind, *n)) {
                        refuse(w, d, *n);
                        if (removed)
                                (*removed)++;
                }
        }
        return 0;
}

static const Watched *find_wd(GitdirWatch *w, int wd) {
        for (size_t i = 0; i < w->n_dirs; i++)
                if (w->dirs[i].wd == wd)
                        return &w->dirs[i];
        return NULL;
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        GitdirWatch *w = userdata;
        union {
                struct inotify_event ev;
                char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)];
        } u;

        for (;;) {
                ssize_t n = read(fd, &u, sizeof(u));
                if (n <= 0)
                        return 0;
                for (char *p = u.buf; p < u.buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) p;
                        p += sizeof(*ev) + ev->len;
                        if (ev->mask & IN_Q_OVERFLOW) {
                                /* what was missed: every directory against its start */
                                for (size_t i = 0; i < w->n_dirs; i++)
                                        (void) check_dir(w, i, NULL, false);
                                continue;
                        }
                        const Watched *d = find_wd(w, ev->wd);
                        if (!d || ev->len == 0)
                                continue;
                        if (d->kind == DIR_PIN) {
                                if (streq(ev->name, ".git"))
                                        pin_changed(w, d);
                                continue;
                        }
                        if (d->kind == DIR_OBJECTS && streq(ev->name, "info")) {
                                /* a new objects/info: watched from now on, and looked in */
                                size_t before = w->n_dirs;
                                if (add_joined(w, d->path, "info", DIR_OBJECTS_INFO) >= 0 &&
                                    w->n_dirs > before) {
                                        strv_free(w->dirs[before].before);
                                        w->dirs[before].before = calloc(1, sizeof(char *));
                                        (void) check_dir(w, before, NULL, false);
                                }
                                continue;
                        }
                        if (refused_in(d->kind, ev->name))
                                refuse(w, d, ev->name);
                }
        }
}

/* Watches the directory holding the .git symlink `git`, with what it leads to now. */
static int add_pin(GitdirWatch *w, const char *git) {
        char buf[PATH_MAX];
        ssize_t n = readlink(git, buf, sizeof(buf) - 1);
        if (n < 0)
                return errno == ENOENT || errno == EINVAL ? 0 : -errno; /* gone, or no longer a link */
        buf[n] = 0;
        const char *slash = strrchr(git, '/');
        if (!slash)
                return -EINVAL;
        _cleanup_free_ char *dir = slash == git ? strdup("/") : strndup(git, (size_t) (slash - git));
        char *target = strdup(buf);
        if (!dir || !target) {
                free(target);
                return -ENOMEM;
        }
        size_t before = w->n_dirs;
        int r = add_dir(w, dir, DIR_PIN);
        if (r < 0 || w->n_dirs == before) {
                free(target);
                return r;
        }
        w->dirs[before].pin_target = target;
        return 0;
}

int gitdir_watch_new(char * const *tops, char * const *pins, sd_event *e, GitdirRefused cb, void *userdata,
                     GitdirWatch **ret) {
        _cleanup_(gitdir_watch_freep) GitdirWatch *w = calloc(1, sizeof(GitdirWatch));
        int r;

        if (!w)
                return -ENOMEM;
        w->fd = -EBADF;
        w->cb = cb;
        w->userdata = userdata;
        w->tops = strv_copy(tops);
        if (tops && !w->tops)
                return -ENOMEM;
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0)
                return -errno;
        STRV_FOREACH(t, tops) {
                r = add_dir(w, *t, DIR_TOP);
                if (r >= 0)
                        r = add_joined(w, *t, "objects", DIR_OBJECTS);
                if (r >= 0)
                        r = add_joined(w, *t, "objects/info", DIR_OBJECTS_INFO);
                if (r >= 0)
                        r = add_joined(w, *t, "worktrees", DIR_NO_NEW);
                if (r >= 0)
                        r = add_joined(w, *t, "modules", DIR_NO_NEW);
                if (r >= 0) {
                        _cleanup_free_ char *m = path_join(*t, "modules");
                        r = m ? add_module_paths(w, m, MODULES_DEPTH) : -ENOMEM;
                }
                if (r < 0)
                        return r;
        }
        STRV_FOREACH(g, pins) {
                r = add_pin(w, *g);
                if (r < 0)
                        return r;
        }
        r = sd_event_add_io(e, &w->source, w->fd, EPOLLIN, on_inotify, w);
        if (r < 0)
                return r;
        /* ahead of the service's own events: the sooner a planted name goes, the better */
        (void) sd_event_source_set_priority(w->source, SD_EVENT_PRIORITY_IMPORTANT);
        *ret = TAKE_PTR(w);
        return 0;
}

int gitdir_watch_sweep(GitdirWatch *w) {
        unsigned removed = 0;
        if (!w)
                return 0;
        for (size_t i = 0; i < w->n_dirs; i++)
                (void) check_dir(w, i, &removed, true);
        return (int) removed;
}

GitdirWatch *gitdir_watch_free(GitdirWatch *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->source);
        for (size_t i = 0; i < w->n_dirs; i++) {
                free(w->dirs[i].path);
                free(w->dirs[i].pin_target);
                strv_free(w->dirs[i].before);
        }
        free(w->dirs);
        strv_free(w->tops);
        if (w->fd >= 0)
                (void) close(w->fd);
        free(w);
        return NULL;
}
