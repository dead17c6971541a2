/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* Shared by the public primitives (l-scudo.c, l-fs.c, l-net.c, l-unit.c, l-path.c). */

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>

/* Appends { op, value = the value at value_idx, origin } to the running user code's context:
 * to its plan edits (hook_only; raises outside a hook) or to its warnings. */
void lua_push_edit(lua_State *L, const char *what, const char *op, int value_idx, bool hook_only);

/* luaL_checklstring that also refuses NUL bytes, empty strings and strings over max bytes. */
const char *lua_check_text(lua_State *L, int idx, size_t max);
