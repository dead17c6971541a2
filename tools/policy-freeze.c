/* SPDX-License-Identifier: MIT OR Apache-2.0 */

/* policy-freeze: checks one built-in policy file at build time and writes its definitions as
 * Lua bytecode, which the binary embeds beside the text (policies/meson.build).
 *
 *   policy-freeze NAME INPUT.toml OUTPUT
 *
 * Every run of scudo reads the built-in policies; parsing and checking them each time cost a
 * quarter of a resolve. Here the engine reads INPUT exactly as a run would (named
 * "<built-in>/NAME" so that origins are the same), checks every profile in it, and
 * scudo.freeze (lua/scudo/freeze.lua, embedded in this tool alone) returns Lua sources that
 * rebuild the definitions: what every run needs of every profile, then the rest of each
 * profile's values, which a run loads only for the profiles it uses. Each is compiled and
 * dumped without debug information (the origins are data), one after the other in OUTPUT
 * (see write_frozen). An error in the file fails the build, with the file and line. This tool
 * links the engine without any frozen policies: the ones it is given are the only ones it
 * reads. */

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/embedded.h"
#include "policy/frozen-format.h"
#include "policy/lua-engine.h"
#include "util/macro.h"

#define INPUT_MAX (1U << 20)

static void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static void lua_closep(lua_State **L) {
        if (*L)
                lua_close(*L);
}

static int read_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *buf = malloc(INPUT_MAX + 1);
        if (!f || !buf)
                return -errno;
        size_t n = fread(buf, 1, INPUT_MAX + 1, f);
        if (ferror(f))
                return -EIO;
        if (n > INPUT_MAX)
                return -EFBIG;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

static int write_chunk(lua_State *L, const void *p, size_t size, void *ud) {
        (void) L;
        return fwrite(p, 1, size, ud) == size ? 0 : 1;
}

static int write_u32(FILE *f, uint32_t v) {
        unsigned char b[4];

        frozen_put_u32(b, v);
        return fwrite(b, 1, 4, f) == 4 ? 0 : -EIO;
}

/* Lua source -> stripped bytecode, appended to f after its size (made in a temporary file). */
static int compile_chunk(const char *source, size_t size, FILE *f) {
        _cleanup_(lua_closep) lua_State *L = luaL_newstate();
        _cleanup_fclose_ FILE *tmp = tmpfile();
        if (!L || !tmp)
                return -ENOMEM;
        if (luaL_loadbufferx(L, source, size, "=[built-in policies]", "t") != LUA_OK) {
                fprintf(stderr, "policy-freeze: generated source does not compile: %s\n",
                        lua_tostring(L, -1));
                return -EINVAL;
        }
        if (lua_dump(L, write_chunk, tmp, 1) != 0 || fflush(tmp) != 0)
                return -EIO;
        long n = ftell(tmp);
        if (n < 0 || n > INT32_MAX || fseek(tmp, 0, SEEK_SET) < 0 || write_u32(f, (uint32_t) n) < 0)
                return -EIO;
        char buf[4096];
        size_t k;
        while ((k = fread(buf, 1, sizeof(buf), tmp)) > 0)
                if (fwrite(buf, 1, k, f) != k)
                        return -EIO;
        return ferror(tmp) ? -EIO : 0;
}

/* The sources in the list on top of the stack -> `path`, in the frozen form (frozen-format.h;
 * src/policy/frozen.c reads it). */
static int write_frozen(lua_State *L, const char *path) {
        if (!lua_istable(L, -1))
                return -EINVAL;
        _cleanup_fclose_ FILE *out = fopen(path, "we");
        if (!out)
                return -errno;
        lua_Integer n = (lua_Integer) lua_rawlen(L, -1);
        if (fputs(FROZEN_MAGIC, out) < 0 || write_u32(out, (uint32_t) n) < 0)
                return -EIO;
        for (lua_Integer i = 1; i <= n; i++) {
                size_t size;
                lua_rawgeti(L, -1, i);
                const char *source = lua_tolstring(L, -1, &size);
                int r = source ? compile_chunk(source, size, out) : -EINVAL;
                lua_pop(L, 1);
                if (r < 0)
                        return r;
        }
        return fflush(out) != 0 ? -EIO : 0;
}

int main(int argc, char **argv) {
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;
        _cleanup_free_ char *text = NULL, *error = NULL;
        size_t size = 0;
        int r;

        if (argc != 4) {
                fprintf(stderr, "usage: policy-freeze NAME INPUT.toml OUTPUT\n");
                return 2;
        }
        r = read_file(argv[2], &text, &size);
        if (r < 0) {
                fprintf(stderr, "policy-freeze: %s: %s\n", argv[2], strerror(-r));
                return 1;
        }
        r = lua_engine_new(NULL, &e);
        if (r < 0) {
                fprintf(stderr, "policy-freeze: cannot create the Lua engine: %s\n", strerror(-r));
                return 1;
        }
        r = lua_engine_preload(e, embedded_freeze_modules, &error);
        if (r < 0) {
                fprintf(stderr, "policy-freeze: %s\n", error ?: strerror(-r));
                return 1;
        }
        lua_State *L = lua_engine_state(e);
        lua_pushstring(L, argv[1]);
        lua_pushlstring(L, text, size);
        r = lua_engine_call(e, "scudo.freeze", "freeze", 2, 1, &error);
        if (r < 0) {
                fprintf(stderr, "policy-freeze: %s\n", error ?: strerror(-r));
                return 1;
        }
        r = write_frozen(L, argv[3]);
        if (r < 0) {
                fprintf(stderr, "policy-freeze: %s: %s\n", argv[3], strerror(-r));
                (void) remove(argv[3]);
                return 1;
        }
        return 0;
}
