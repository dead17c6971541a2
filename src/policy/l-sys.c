/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.sys: the few system calls the Lua library needs to find and read configuration.
 * Internal: not reachable from user code. Expected failures return nil, message, errno. */
#include <dirent.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/plan-validate.h"
#include "policy/lua-engine.h"
#include "util/file-util.h"
#include "util/path-util.h"

/* A directory with more entries than this is refused rather than read. */
#define LISTDIR_MAX 4096

static int push_failure(lua_State *L, const char *path, int err) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(err));
        lua_pushinteger(L, err);
        return 3;
}

/* Rejects strings with NUL bytes: the kernel would see a different path. */
static const char *check_path(lua_State *L, int idx) {
        size_t len;
        const char *p = luaL_checklstring(L, idx, &len);
        luaL_argcheck(L, strlen(p) == len, idx, "path contains a NUL byte");
        return p;
}

/* A malloc'd block owned by a userdata: freed by the collector if a Lua error unwinds past
 * the C function that allocated it. Held (lua_engine_hold) while it is there. */
static void cbox_clear(lua_State *L, void **b) {
        if (!*b)
                return;
        free(*b);
        *b = NULL;
        lua_engine_release(L);
}

static int cbox_gc(lua_State *L) {
        cbox_clear(L, lua_touserdata(L, 1));
        return 0;
}

/* The metatables are made with the module (luaopen_scudo_sys), so that setting one later
 * allocates nothing (and raises nothing). */
static void **push_cbox(lua_State *L) {
        void **b = lua_newuserdatauv(L, sizeof(void *), 0);                     /* stack: box */
        *b = NULL;
        luaL_setmetatable(L, "scudo.sys.cbox");
        return b;
}

/* Whether a failed open()/opendir() said only that there is no such file, and the caller
 * (argument missing_ok) wants just nil then: no message made for it. */
static bool missing(lua_State *L, int missing_ok, int err) {
        return (err == ENOENT || err == ENOTDIR) && lua_toboolean(L, missing_ok);
}

/* sys.readfile(path, max[, missing_ok]) -> text | nil, message, errno
 * Regular files only: O_NONBLOCK and fstat keep FIFOs and devices from blocking us
 * (read_regular_fd, util/file-util.h). The file is read into C memory with no Lua call while
 * it is open, so an error cannot leak the fd. With missing_ok, a file that is not there
 * (open() says ENOENT, ENOTDIR) gives just nil: it is opened here, so that only open()'s
 * errors count as that. */
static int l_sys_readfile(lua_State *L) {
        const char *path = check_path(L, 1);
        lua_Integer max = luaL_checkinteger(L, 2);
        luaL_argcheck(L, max > 0 && max < INT32_MAX, 2, "out of range");
        lua_settop(L, 3);
        void **box = push_cbox(L);                                              /* stack: p max m box */
        char *data = NULL;
        size_t size = 0;

        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                if (missing(L, 3, errno)) {
                        lua_pushnil(L);
                        return 1;
                }
                return push_failure(L, path, errno);
        }
        int r = read_regular_fd(fd, (size_t) max, &data, &size);
        (void) close(fd);

        if (r == -EBADFD) {
                lua_pushnil(L);
                lua_pushfstring(L, "%s: not a regular file", path);
                lua_pushinteger(L, EINVAL);
                return 3;
        }
        if (r == -EFBIG) {
                lua_pushnil(L);
                lua_pushfstring(L, "%s: too large (the limit is %I bytes)", path, max);
                lua_pushinteger(L, EFBIG);
                return 3;
        }
        if (r < 0)
                return push_failure(L, path, -r);
        /* The box owns the text (held) before anything can raise: read_regular_fd() ran no Lua
         * code, and should lua_pushlstring() run out of memory, the collector frees it. */
        *box = data;
        lua_engine_hold(L);
        lua_pushlstring(L, data, size);                                         /* stack: p max m box s */
        cbox_clear(L, box);
        return 1;
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* The names read from a directory, owned by a userdata so that a Lua error while they are
 * turned into strings cannot leak them. */
typedef struct NameBox {
        char **names;
        size_t n;
} NameBox;

/* Held (lua_engine_hold) from the first name to the clear. */
static void namebox_clear(lua_State *L, NameBox *b) {
        if (!b->names)
                return;
        for (size_t i = 0; i < b->n; i++)
                free(b->names[i]);
        free(b->names);
        *b = (NameBox) {};
        lua_engine_release(L);
}

static int namebox_gc(lua_State *L) {
        namebox_clear(L, lua_touserdata(L, 1));
        return 0;
}

/* sys.listdir(path[, missing_ok]) -> { names, sorted } | nil, message, errno
 * With missing_ok, a directory that is not there (ENOENT, ENOTDIR) gives just nil. */
static int l_sys_listdir(lua_State *L) {
        const char *path = check_path(L, 1);

        lua_settop(L, 2);
        NameBox *box = lua_newuserdatauv(L, sizeof(NameBox), 0);                /* stack: p m box */
        *box = (NameBox) {};
        luaL_setmetatable(L, "scudo.sys.namebox");

        /* No Lua call between opendir and closedir. */
        DIR *d = opendir(path);
        if (!d) {
                if (missing(L, 2, errno)) {
                        lua_pushnil(L);
                        return 1;
                }
                return push_failure(L, path, errno);
        }
        int err = 0;
        struct dirent *de;
        while ((errno = 0, de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (box->n >= LISTDIR_MAX) {
                        err = E2BIG;
                        break;
                }
                char **nn = realloc(box->names, sizeof(char *) * (box->n + 1));
                if (!nn) {
                        err = ENOMEM;
                        break;
                }
                if (!box->names)
                        lua_engine_hold(L);
                box->names = nn;
                if (!(box->names[box->n] = strdup(de->d_name))) {
                        err = ENOMEM;
                        break;
                }
                box->n++;
        }
        if (!de && errno != 0 && err == 0)
                err = errno;
        closedir(d);
        if (err != 0)
                namebox_clear(L, box);

        if (err == E2BIG) {
                lua_pushnil(L);
                lua_pushfstring(L, "%s: more than %d entries", path, LISTDIR_MAX);
                lua_pushinteger(L, err);
                return 3;
        }
        if (err != 0)
                return push_failure(L, path, err);

        if (box->n > 0)
                qsort(box->names, box->n, sizeof(char *), cmp_names);
        lua_createtable(L, (int) MIN(box->n, (size_t) INT_MAX), 0);             /* stack: p m box t */
        for (size_t i = 0; i < box->n; i++) {
                lua_pushstring(L, box->names[i]);
                lua_rawseti(L, -2, (lua_Integer) i + 1);
        }
        namebox_clear(L, box);
        return 1;
}

static const char *type_name(mode_t m) {
        if (S_ISREG(m))
                return "file";
        if (S_ISDIR(m))
                return "directory";
        if (S_ISLNK(m))
                return "link";
        return "other";
}

static int do_stat(lua_State *L, bool follow) {
        const char *path = check_path(L, 1);
        struct stat st;

        if ((follow ? stat(path, &st) : lstat(path, &st)) < 0)
                return push_failure(L, path, errno);
        lua_createtable(L, 0, 5);
        lua_pushstring(L, type_name(st.st_mode));
        lua_setfield(L, -2, "type");
        lua_pushinteger(L, (lua_Integer) st.st_size);
        lua_setfield(L, -2, "size");
        lua_pushinteger(L, (lua_Integer) (st.st_mode & 07777));
        lua_setfield(L, -2, "mode");
        lua_pushinteger(L, (lua_Integer) st.st_uid);
        lua_setfield(L, -2, "uid");
        lua_pushinteger(L, (lua_Integer) st.st_mtim.tv_sec);
        lua_setfield(L, -2, "mtime");
        return 1;
}

/* sys.stat(path) / sys.lstat(path) -> { type=, size=, mode=, uid=, mtime= } | nil, message, errno */
static int l_sys_stat(lua_State *L) {
        return do_stat(L, true);
}

static int l_sys_lstat(lua_State *L) {
        return do_stat(L, false);
}

/* sys.realpath(path) -> canonical path | nil, message, errno
 * realpath(), in three system calls however deep the path is, two (one when it is missing) for
 * a path with no symlink, "." or ".." in it (util/path-util.h). When that fails for another
 * reason than a missing component (which realpath() would meet just so, one lstat per
 * component later), realpath() itself has the last word: the kernel may refuse what
 * realpath() does not (a symlink that fs.protected_symlinks keeps from being followed), and
 * the answer and the error stay realpath()'s. */
static int l_sys_realpath(lua_State *L) {
        const char *path = check_path(L, 1);
        char buf[PATH_MAX];

        if (!path_realpath_fast(path, buf) && (errno == ENOENT || errno == ENOTDIR || !realpath(path, buf)))
                return push_failure(L, path, errno);
        lua_pushstring(L, buf);
        return 1;
}

/* sys.canonical(path) -> the canonical form plan_normalize() makes | nil, message, errno */
static int l_sys_canonical(lua_State *L) {
        const char *path = check_path(L, 1);
        char *c = NULL;

        int r = plan_path_canonicalize(path, &c);
        if (r == -EINVAL) {
                lua_pushnil(L);
                lua_pushfstring(L, "'%s' is not an absolute path (or holds control characters)", path);
                lua_pushinteger(L, EINVAL);
                return 3;
        }
        if (r < 0)
                return push_failure(L, path, -r);
        lua_engine_push_free(L, c);
        return 1;
}

/* sys.uid() -> the real uid */
static int l_sys_uid(lua_State *L) {
        lua_pushinteger(L, (lua_Integer) getuid());
        return 1;
}

static const luaL_Reg sys_functions[] = {
        { "readfile", l_sys_readfile },
        { "listdir", l_sys_listdir },
        { "stat", l_sys_stat },
        { "lstat", l_sys_lstat },
        { "realpath", l_sys_realpath },
        { "canonical", l_sys_canonical },
        { "uid", l_sys_uid },
        { NULL, NULL },
};

int luaopen_scudo_sys(lua_State *L) {
        static const struct {
                const char *name;
                lua_CFunction gc;
        } boxes[] = {
                { "scudo.sys.cbox", cbox_gc },
                { "scudo.sys.namebox", namebox_gc },
        };
        for (size_t i = 0; i < ELEMENTSOF(boxes); i++) {
                luaL_newmetatable(L, boxes[i].name);                            /* stack: mt */
                lua_pushcfunction(L, boxes[i].gc);
                lua_setfield(L, -2, "__gc");
                lua_pop(L, 1);
        }
        luaL_newlib(L, sys_functions);
        return 1;
}
