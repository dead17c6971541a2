/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* A TOML 1.0.0 parser that builds Lua 5.4 values directly.
 *
 * Value mapping:
 *   string          -> Lua string (may contain NUL bytes, always valid UTF-8)
 *   integer         -> Lua integer (64-bit; values out of range are a syntax error)
 *   float           -> Lua float (inf, -inf and nan included)
 *   boolean         -> Lua boolean
 *   table           -> plain Lua table without a metatable (headers, dotted keys, inline tables
 *                      and the elements of arrays of tables alike)
 *   array           -> Lua sequence t[1..n] whose metatable is the one registered as
 *                      TOML_ARRAY_METATABLE ("scudo.toml.array"), so an empty array can be told
 *                      apart from an empty table. Arrays of tables get it too.
 *   offset datetime -> { kind = "datetime",       value = "1979-05-27T07:32:00Z" }
 *   local datetime  -> { kind = "datetime-local", value = "1979-05-27T07:32:00" }
 *   local date      -> { kind = "date-local",     value = "1979-05-27" }
 *   local time      -> { kind = "time-local",     value = "07:32:00.999" }
 *                      with the metatable TOML_DATETIME_METATABLE ("scudo.toml.datetime"), whose
 *                      __tostring returns `value`. The text is RFC 3339, normalized to a 'T'
 *                      separator and an upper-case 'Z'; offsets and fractions are kept as written.
 *
 * Line origins: the registry holds a weak-keyed table under TOML_LINES_KEY ("scudo.toml.lines")
 * that maps every table and array the parser produced to a table { [key or index] = line },
 * the 1-based line on which that key or element was defined (for a table defined by a header,
 * the line of the header that defined it). toml_push_lines() fetches it.
 *
 * Errors are "NAME:LINE:COLUMN: message". Lines and columns are 1-based; columns count
 * characters (Unicode code points), a tab counting as one. */

#include <stdbool.h>

#include <lua.h>
#include <stddef.h>

#define TOML_MAX_SIZE (1024U * 1024U)
/* Arrays and inline tables may nest this deep, and a key may have this many dotted parts. */
#define TOML_MAX_DEPTH 128U

#define TOML_ARRAY_METATABLE "scudo.toml.array"
#define TOML_DATETIME_METATABLE "scudo.toml.datetime"
#define TOML_LINES_KEY "scudo.toml.lines"

/* Parses a TOML 1.0.0 document of `size` bytes (need not be NUL-terminated; a UTF-8 byte order
 * mark at the start is skipped) and pushes it on L as a Lua table. `name` is used in messages
 * (a file path; NULL means "<input>").
 *
 * Returns 0 with one table pushed, or a negative errno with nothing pushed:
 *   -EINVAL  syntax or semantic error; *ret_error is set to "NAME:LINE:COLUMN: message";
 *   -EFBIG   document larger than TOML_MAX_SIZE; *ret_error is set to "NAME: message";
 *   -ENOMEM  allocation failure, in C or in Lua (e.g. a capped allocator); *ret_error = NULL;
 *   -EIO     any other error raised by Lua; *ret_error holds its message when available.
 * *ret_error (may be NULL if the caller does not want it) is malloc'd and only written on failure.
 *
 * Lua errors never leak C memory: all Lua work runs inside lua_pcall() and the C buffers are
 * owned by this function's frame. Needs up to 3 free Lua stack slots on entry. */
int toml_parse(lua_State *L, const char *data, size_t size, const char *name, char **ret_error);

/* Whether the value at idx is a TOML array, or a date-time, as toml_parse() makes them (by
 * their metatables: both are Lua tables). The stack is left as it was. */
bool toml_is_array(lua_State *L, int idx);
bool toml_is_datetime(lua_State *L, int idx);

/* Pushes the line-origin table { [key or index] = line } of the parsed table or array at idx, or
 * nil when the value at idx was not produced by toml_parse(). May raise a Lua memory error. */
void toml_push_lines(lua_State *L, int idx);
