/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* fuzz-profile: a configuration file (TOML, or Lua run as user code) through the whole
 * policy library: parse, check keys and types, resolve every profile, expand, build a plan,
 * run hooks, render the explanation as JSON. The first byte picks the kind (odd: Lua).
 * Budgets are small and there is no wall-clock deadline, so that runs are reproducible:
 * what is fuzzed is that nothing crashes, leaks or escapes the budgets, whatever the file. */
#include <lauxlib.h>
#include <stdint.h>
#include <stdlib.h>

#include "policy/lua-engine.h"

typedef struct Input {
        const char *kind;
        const uint8_t *data;
        size_t size;
} Input;

static int push_input(lua_State *L) {
        Input *in = lua_touserdata(L, 1);
        lua_pushstring(L, in->kind);
        lua_pushlstring(L, (const char *) in->data, in->size);
        return 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        LuaEngine *e = NULL;
        char *err = NULL;

        if (size < 1 || size > 65536)
                return 0;
        LuaLimits l = LUA_LIMITS_DEFAULT;
        l.memory_max = 32U << 20;
        l.user_code_memory = 4U << 20;
        l.instructions_max = 5000000;
        l.user_code_instructions = 200000;
        l.usec_max = 0;
        l.user_code_usec = 0;
        if (lua_engine_new(&l, &e) < 0)
                return 0;
        Input in = { .kind = (data[0] & 1) ? "lua" : "toml", .data = data + 1, .size = size - 1 };
        if (lua_engine_cpcall(e, push_input, &in, 0, 2, &err) >= 0) {
                free(err);
                err = NULL;
                if (lua_engine_call(e, "scudo.policy", "check_text", 2, 1, &err) >= 0)
                        lua_pop(lua_engine_state(e), 1);
        }
        free(err);
        lua_engine_free(e);
        return 0;
}
