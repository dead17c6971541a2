/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* What the parts of the policy engine's entry points (policy.h) share. policy.c holds the
 * verbs, request-to-lua.c makes a Request the library's request table, plan-from-lua.c reads
 * the plan table back into a Plan, explain-hardening.c hands explain what the hardening step
 * did. */

#include <lua.h>
#include <stdbool.h>

#include "plan/plan.h"
#include "plan/request.h"
#include "policy/lua-engine.h"

/* Pushes the request table of req (and the table of paths, for check and trust, if
 * with_paths) onto the engine's stack. */
int request_to_lua(LuaEngine *e, const Request *req, const char *const *paths, bool with_paths,
                   char **ret_error);

/* Reads the plan table on top of the stack (popped) into a new Plan for req, and its warnings
 * (ret_warnings NULL: dropped). */
int plan_from_lua(LuaEngine *e, const Request *req, Plan **ret, char ***ret_warnings,
                  char **ret_error);

/* Through lua_engine_cpcall, with the Plan (NULL: the hardening step did not run) as the
 * light userdata: pushes the table of what the hardening step added and dropped. */
/* The list l as a Lua array, set as `field` of the table on top (request-to-lua.c). */
void push_strv(lua_State *L, char * const *l, const char *field);

int push_hardening(lua_State *L);

/* Through lua_engine_cpcall, with the Plan (or NULL) as the light userdata and explain's own
 * account as the argument: adds what the plan refused before delegation to its `dropped`. */
int push_refused(lua_State *L);

/* Through lua_engine_cpcall, with a string (NULL: none) as the light userdata: pushes it, or
 * nil. */
int push_message(lua_State *L);
