/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* scudo.net: network rules. scudo.net.allow(rule) and .deny(rule) in a hook; .check(rule)
 * anywhere (the Lua library uses it to validate profile keys with their file:line). Rules are
 * parsed by the same C parser the network helper's client uses (net/net-rule.c). */
#include <lauxlib.h>

#include "net/net-rule.h"
#include "policy/l-common.h"
#include "policy/lua-engine.h"

/* Raises a configuration-style usage error for a bad rule. */
static const char *check_rule(lua_State *L, int idx, const char *what) {
        const char *text = lua_check_text(L, idx, 512);
        const char *reason = NULL;
        NetRule rule;

        if (net_rule_parse_reason(text, &rule, &reason) < 0)
                luaL_error(L, "%s: bad network rule '%s': %s", what, text, reason ?: "does not parse");
        return text;
}

static int l_net_allow(lua_State *L) {
        check_rule(L, 1, "scudo.net.allow");
        lua_settop(L, 1);
        lua_push_edit(L, "scudo.net.allow", "network.allow", 1, true);
        return 0;
}

static int l_net_deny(lua_State *L) {
        check_rule(L, 1, "scudo.net.deny");
        lua_settop(L, 1);
        lua_push_edit(L, "scudo.net.deny", "network.deny", 1, true);
        return 0;
}

/* net.check(rule) -> true | nil, message */
static int l_net_check(lua_State *L) {
        const char *text = luaL_checkstring(L, 1);
        const char *reason = NULL;
        NetRule rule;

        if (net_rule_parse_reason(text, &rule, &reason) < 0) {
                lua_pushnil(L);
                lua_pushfstring(L, "bad network rule '%s': %s", text, reason ?: "does not parse");
                return 2;
        }
        lua_pushboolean(L, true);
        return 1;
}

static const luaL_Reg net_functions[] = {
        { "allow", l_net_allow },
        { "deny", l_net_deny },
        { "check", l_net_check },
        { NULL, NULL },
};

int luaopen_scudo_net(lua_State *L) {
        luaL_newlib(L, net_functions);
        return 1;
}
