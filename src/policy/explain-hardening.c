/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* What `scudo explain` is handed besides the library's own account: what the hardening step
 * added to and dropped from the plan, each entry with its reason, and the message of a plan
 * that did not pass. Each runs through lua_engine_cpcall. */
#include <lauxlib.h>
#include <limits.h>

#include "plan/plan.h"
#include "policy/lua-engine.h"
#include "policy/policy-internal.h"
#include "util/strv.h"

static void push_entry(lua_State *L, const PlanPath *e, const char *dropped) {
        lua_createtable(L, 0, 6);
        lua_pushstring(L, path_access_to_string(e->access));
        lua_setfield(L, -2, "access");
        lua_pushstring(L, e->path);
        lua_setfield(L, -2, "path");
        lua_pushstring(L, strempty(e->origin));
        lua_setfield(L, -2, "origin");
        if (e->given && !streq(e->given, e->path)) {
                lua_pushstring(L, e->given);
                lua_setfield(L, -2, "given");
        }
        lua_pushboolean(L, e->derived);
        lua_setfield(L, -2, "derived");
        if (e->reason) {
                lua_pushstring(L, e->reason);
                lua_setfield(L, -2, "reason");
        }
        if (dropped) {
                lua_pushstring(L, dropped);
                lua_setfield(L, -2, "dropped");
        }
        if (e->create != PATH_CREATE_NONE) {
                lua_pushstring(L, path_create_to_string(e->create));
                lua_setfield(L, -2, "create");
        }
}

static void push_string_field(lua_State *L, const char *s, const char *field) {
        lua_pushstring(L, strempty(s));
        lua_setfield(L, -2, field);
}

/* What else a run gets, for --dry-run's printer: exec, argv, working_directory, properties = {
 * { name, value, origin }... }, network = { filtered, allow = {...}, deny = {...}, dns }. */
static void push_run(lua_State *L, const Plan *p) {
        push_string_field(L, p->exec_path, "exec");
        push_strv(L, p->argv, "argv");
        push_string_field(L, p->working_directory, "working_directory");
        lua_createtable(L, (int) MIN(p->n_properties, (size_t) INT_MAX), 0);
        for (size_t i = 0; i < p->n_properties; i++) {
                lua_createtable(L, 0, 3);
                push_string_field(L, p->properties[i].name, "name");
                push_string_field(L, p->properties[i].value, "value");
                push_string_field(L, p->properties[i].origin, "origin");
                lua_rawseti(L, -2, (lua_Integer) i + 1);
        }
        lua_setfield(L, -2, "properties");
        lua_createtable(L, 0, 4);
        lua_pushboolean(L, p->network_filtered);
        lua_setfield(L, -2, "filtered");
        push_strv(L, p->net_allow, "allow");
        push_strv(L, p->net_deny, "deny");
        push_string_field(L, dns_mode_to_string(p->dns), "dns");
        lua_setfield(L, -2, "network");
}

/* The plan as a run gets it, once normalized, checked and hardened (NULL: it did not get that
 * far), for explain and --dry-run: { paths = { entry... } (every entry, in the plan's order), dropped = {
 * entry... }, private_pids = bool, git_watch = { dir... }, git_pins = { path... } }, each entry
 * { access, path (canonical), given (the path before it was made canonical, where it differs),
 * origin, derived, reason (why scudo added it), dropped (why it was taken out), create }, and
 * what push_run() adds. Through lua_engine_cpcall. */
int push_hardening(lua_State *L) {
        const Plan *p = lua_touserdata(L, 1);
        if (!p) {
                lua_pushnil(L);
                return 1;
        }
        lua_createtable(L, 0, 11);
        lua_createtable(L, (int) MIN(p->n_paths, (size_t) INT_MAX), 0);
        for (size_t i = 0; i < p->n_paths; i++) {
                push_entry(L, &p->paths[i], NULL);
                lua_rawseti(L, -2, (lua_Integer) i + 1);
        }
        lua_setfield(L, -2, "paths");
        lua_createtable(L, (int) MIN(p->n_dropped, (size_t) INT_MAX), 0);
        for (size_t i = 0; i < p->n_dropped; i++) {
                push_entry(L, &p->dropped[i].entry, p->dropped[i].reason);
                lua_rawseti(L, -2, (lua_Integer) i + 1);
        }
        lua_setfield(L, -2, "dropped");
        lua_pushboolean(L, plan_private_pids(p));
        lua_setfield(L, -2, "private_pids");
        push_strv(L, p->git_watch, "git_watch");
        push_strv(L, p->git_pins, "git_pins");
        push_run(L, p);
        return 1;
}

/* The string s (a light userdata), or nil for NULL. Through lua_engine_cpcall. */
int push_message(lua_State *L) {
        const char *s = lua_touserdata(L, 1);
        if (s)
                lua_pushstring(L, s);
        else
                lua_pushnil(L);
        return 1;
}

/* Appends to the `dropped` list of explain's own account (the table argument) the writes the
 * plan refused before delegation (p->refused), as the library lists what it drops: { key,
 * value, origin, reason }. Through lua_engine_cpcall. */
int push_refused(lua_State *L) {
        const Plan *p = lua_touserdata(L, 1);
        luaL_checktype(L, 2, LUA_TTABLE);
        if (!p || p->n_refused == 0)
                return 0;
        if (lua_getfield(L, 2, "dropped") != LUA_TTABLE)                        /* stack: ud ex d */
                return luaL_error(L, "explain: no list of what was dropped");
        for (size_t i = 0; i < p->n_refused; i++) {
                const PlanDrop *d = &p->refused[i];
                lua_createtable(L, 0, 4);
                push_string_field(L, "filesystem.write", "key");
                push_string_field(L, d->entry.given ?: d->entry.path, "value");
                push_string_field(L, d->entry.origin, "origin");
                push_string_field(L, d->reason, "reason");
                lua_rawseti(L, -2, (lua_Integer) lua_rawlen(L, -2) + 1);
        }
        return 0;
}
