/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The policy engine's C primitives (src/policy/l-*.c and the TOML decoder), called directly in
 * an engine: table-driven cases, each a Lua chunk that calls primitives and renders what they
 * return as text, compared with the expected text. Each case runs with its inputs at every
 * size around LUAL_BUFFERSIZE (where a luaL_Buffer leaves the C frame for a box on the Lua
 * stack) and past 8 KiB and 64 KiB. Then the failure return of every primitive, and the paths
 * an untrusted file and a hook take to them (scudo check, scudo trust, a resolve). */
#include <lauxlib.h>
#include <sys/wait.h>

#include "policy-test.h"
#include "policy/lua-engine.h"
#include "tap.h"

/* Each chunk runs after this, with X, Y, W (texts of the size under test) and T (a scratch
 * directory) as its arguments:
 *   X  letters, "abc..z" over and over;
 *   Y  digits, "0123456789" over and over;
 *   W  "é" (two bytes) over and over, as many bytes as the size rounded down to even;
 * none of them holds '/', '$', '{', '}', a glob character or a space. The chunk returns a
 * string: show(...) renders values as v1|v2|..., a list as [a,b], a table as {k=v,...} by
 * sorted key; try(f, ...) is show(f(...)), or "error: MESSAGE" when f raises. */
static const char prelude[] =
        "local text, tables, toml = require('scudo.text'), require('scudo.tables'), require('scudo.toml')\n"
        "local unit, sys, trust = require('scudo.unit'), require('scudo.sys'), require('scudo.trust')\n"
        "local engine, scudo = require('scudo.engine'), require('scudo')\n"
        "local function render(v)\n"
        "  if type(v) ~= 'table' then return tostring(v) end\n"
        "  local keys, n = {}, rawlen(v)\n"
        "  for k in next, v do keys[#keys + 1] = k end\n"
        "  local parts = {}\n"
        "  if #keys == n and n > 0 then\n"
        "    for i = 1, n do parts[i] = render(v[i]) end\n"
        "    return '[' .. table.concat(parts, ',') .. ']'\n"
        "  end\n"
        "  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)\n"
        "  for i, k in ipairs(keys) do parts[i] = tostring(k) .. '=' .. render(v[k]) end\n"
        "  return '{' .. table.concat(parts, ',') .. '}'\n"
        "end\n"
        "local function show(...)\n"
        "  local parts = {}\n"
        "  for i = 1, select('#', ...) do parts[i] = render((select(i, ...))) end\n"
        "  return table.concat(parts, '|')\n"
        "end\n"
        "local function try(f, ...)\n"
        "  local r = table.pack(pcall(f, ...))\n"
        "  if r[1] then return show(table.unpack(r, 2, r.n)) end\n"
        "  local e = r[2]\n"
        "  if type(e) == 'table' then e = e.message end\n"
        "  return 'error: ' .. tostring(e)\n"
        "end\n"
        /* text.expand's get(obj, name): obj[name] is the value, or { value, derived, why }. */
        "local function get(obj, name)\n"
        "  local v = obj[name]\n"
        "  if type(v) == 'table' then return v[1], v[2], v[3] end\n"
        "  return v, false\n"
        "end\n"
        /* engine.budgeted_call's results, its message cut to the first line less "case:N: " */
        "local function clean(ok, msg, ...)\n"
        "  if not ok and type(msg) == 'string' then msg = msg:match('^[^\\n]*'):gsub('case:%d+: ', '') end\n"
        "  return ok, msg, ...\n"
        "end\n"
        "local KEYS = { l = { kind = 'list' }, m = { kind = 'map' }, s = { kind = 'scalar' } }\n"
        /* Runs f as a hook would, with a context whose edits come back. */
        "local function hook(f)\n"
        "  local ctx = { phase = 'hook', edits = {}, warnings = {}, start_dir = '/' }\n"
        "  local ok, msg = clean(engine.budgeted_call('hook', ctx, f))\n"
        "  local values = {}\n"
        "  for i, e in ipairs(ctx.edits) do values[i] = e.value end\n"
        "  return show(ok, msg, values)\n"
        "end\n"
        "local X, Y, W, T = ...\n";

typedef struct Case {
        const char *name;
        const char *chunk;
        /* The expected text: "$X", "$Y" and "$W" stand for those texts, "$T" for the scratch
         * directory. A leading '~': the result need only contain the rest. */
        const char *expect;
        size_t min, max;        /* the sizes the case applies to (0: no bound) */
        size_t memory;          /* the engine's memory limit (0: the default) */
} Case;

/* Text, at every size. */
static const Case cases[] = {
        /* ~ and ${NAME} */
        { "expand: text before a variable",
          "return show(text.expand('/' .. X .. '/${P}/x', '/h', get, { P = Y }))", "/$X/$Y/x|false" },
        { "expand: a long value", "return show(text.expand('${P}:' .. X, '/h', get, { P = Y }))",
          "$Y:$X|false" },
        { "expand: variables and text in turn",
          "return show(text.expand(X .. '${A}' .. X .. '${B}${A}' .. Y, '/h', get, { A = Y, B = X }))",
          "$X$Y$X$X$Y$Y|false" },
        { "expand: ~ and a long home",
          "return show(text.expand('~/' .. X .. '/${P}', '/home/' .. Y, get, { P = 'v' }))",
          "/home/$Y/$X/v|false" },
        { "expand: a derived variable",
          "return show(text.expand(X .. '${P}', '/h', get, { P = { Y, true } }))", "$X$Y|true" },
        { "expand: a variable with neither value nor reason is empty",
          "return show(text.expand(X .. '${P}' .. Y, '/h', get, { P = { nil, false } }))", "$X$Y|false" },
        { "expand: a variable without a value drops the whole",
          "return show(text.expand(X .. '${P}' .. Y, '/h', get, { P = { nil, false, 'no P' } }))",
          "nil|no P" },
        { "expand: an unterminated ${", "return show(text.expand(X .. '${' .. Y, '/h', get, {}))",
          "nil|unterminated ${" },
        { "expand: a value holding ${ is refused",
          "return show(text.expand(X .. '${P}', '/h', get, { P = '${Q}' }))", "nil|unterminated ${" },
        { "expand: no variable", "return show(text.expand(X, '/h', get, {}))", "$X|false" },
        { "expand_path: relative, joined to the base",
          "return show(text.expand_path(X .. '/${P}', '/h', get, { P = Y }, '/base/' .. Y))",
          "/base/$Y/$X/$Y|true" },
        { "expand_path: a base ending in /",
          "return show(text.expand_path(X, '/h', get, {}, '/' .. Y .. '/'))", "/$Y/$X|true" },
        { "expand_path: absolute",
          "return show(text.expand_path('/' .. X .. '${P}', '/h', get, { P = Y }, '/b'))", "/$X$Y|false" },
        { "expand_path: ~", "return show(text.expand_path('~/' .. X, '/' .. Y, get, {}, '/b'))",
          "/$Y/$X|false" },

        /* globs */
        { "fnmatch: literals and '*'",
          "return show(text.fnmatch(X .. '*', X .. Y), text.fnmatch('*' .. Y, X .. Y), "
          "text.fnmatch('*' .. Y .. '*', X .. Y .. X), text.fnmatch(X, X), text.fnmatch(X .. '*', Y), "
          "text.fnmatch(X, X .. 'a'))",
          "true|true|true|true|false|false" },
        { "fnmatch: '?', '[' and stars inside",
          "return show(text.fnmatch(X .. '?' .. Y, X .. '-' .. Y), text.fnmatch('[a-z]*' .. Y, X .. Y), "
          "text.fnmatch(X .. '*' .. Y .. '*' .. X, X .. Y .. Y .. X), text.fnmatch(X .. '?', X))",
          "true|true|true|false" },
        { "match_any: without regard to case",
          "return show(text.match_any({ 'nope', X:upper() .. '*' }, X .. Y, true), "
          "text.match_any({ X:upper() }, X), text.match_any({ Y .. '*' }, Y .. X))",
          "true|false|true" },
        { "matching: names against globs",
          "return show(text.matching({ '*' .. Y, X:upper() }, { X .. Y, X, 'other' }, true), "
          "text.matching({ X:upper() }, { X }))",
          "{$X=2,$X$Y=1}|{}" },
        { "secret_values: the kind, never the value",
          "return show(text.secret_values({ X, Y, 'gone' }, { [X] = 'https://u:pw@' .. Y, [Y] = Y }))",
          "{$X=a URL with a password}" },

        /* paths */
        { "clean_path",
          "return show(text.clean_path('//' .. X .. '/./' .. Y .. '//.'), text.clean_path('/' .. X))",
          "/$X/$Y|/$X" },
        { "clean_path: many components", "return show(text.clean_path(('/' .. X):rep(3) .. '/'))",
          "/$X/$X/$X" },
        { "join", "return show(text.join(X, Y), text.join(X .. '/', Y), text.join(X, '/' .. Y))",
          "$X/$Y|$X/$Y|/$Y" },
        { "ancestors", "return show(text.ancestors('/' .. X .. '//' .. Y .. '/z/'))",
          "[/,/$X,/$X/$Y,/$X/$Y/z]" },
        { "first_related",
          "return show(text.first_related('/' .. X, { { '/' .. Y, true }, { '/' .. X .. '/' .. Y, false } "
          "}), text.first_related('/' .. X .. '/' .. Y, { { '/' .. X, true } }), text.first_related('/' .. "
          "X .. Y, { { '/' .. X, true } }))",
          "2|1|nil" },

        /* command lines */
        { "command_matches: a pattern with words",
          "return show(text.command_matches('tool ' .. X .. ' ' .. Y, 'tool', { 'tool', '-v', X, '--long', "
          "Y }))",
          "true|line" },
        { "command_matches: '--' ends the options",
          "return show(text.command_matches(X .. ' ' .. Y, X, { X, '--', Y }))", "false|line" },
        { "command_matches: a name", "return show(text.command_matches(X, X, { X }))", "true|name" },
        { "command_matches: an option whose value comes next",
          "local p = 'git [-C] [-c] push' return show(text.command_matches(p, 'git', "
          "{ 'git', '-C', 'dir', '-c', 'a=b', 'push' }), "
          "text.command_matches(p, 'git', { 'git', '-C', 'push' }), "
          "text.command_matches(p, 'git', { 'git', '-C', 'push', 'push' }), "
          "text.command_matches('git push', 'git', { 'git', '-C', 'dir', 'push' }))",
          "true|false|true|false|line" },

        /* tables */
        { "tables.merge: lists append, maps set, scalars replace",
          "local acc = { l = { X }, m = { [X] = Y }, s = X }\n"
          "tables.merge(acc, { l = { Y, X .. Y }, m = { [Y] = X }, s = Y }, KEYS, nil, false)\n"
          "return show(acc)",
          "{l=[$X,$Y,$X$Y],m={$Y=$X,$X=$Y},s=$Y}" },
        { "tables.merge: replace",
          "local acc = { l = { X }, m = { [X] = Y }, s = X }\n"
          "tables.merge(acc, { l = { Y } }, KEYS, { l = true, s = true }, false)\n"
          "return show(acc)",
          "{l=[$Y],m={$X=$Y}}" },
        { "tables.sorted_keys", "return show(tables.sorted_keys({ [X] = 1, [Y] = 2, [X .. Y] = 3 }))",
          "[$Y,$X,$X$Y]" },

        /* unit property lists */
        { "unit.text: a list", "return show(unit.text({ X, 'b', Y, 42, true }))", "$X b $Y 42 yes" },
        { "unit.text: long elements", "return show(unit.text({ X, X, Y, X }))", "$X $X $Y $X" },
        { "unit.text: a table after long elements", "return show(unit.text({ X, Y, {} }))",
          "nil|a list may not hold tables" },
        { "unit.check: a list", "return show(unit.check('Description', { X, 'b', Y }))", "$X b $Y", 0,
          2046 },
        { "unit.check: a list too long", "return show(unit.check('Description', { X, 'b', Y }))",
          "nil|unit.Description: value longer than 4096 bytes", 2047 },
        { "unit.set: a list from a hook",
          "return hook(function() scudo.unit.set('Description', { X, 'b', Y, 'd' }) end)",
          "true|nil|[[Description,$X b $Y d]]", 0, 2045 },
        { "unit.set: a list too long from a hook",
          "return hook(function() scudo.unit.set('Description', { X, 'b', Y, 'd' }) end)",
          "nil|hook: scudo.unit.set: unit.Description: value longer than 4096 bytes|{}", 2046 },
        { "unit.check: a value refused quotes it whole", "return show(unit.check('CPUWeight', X))",
          "~nil|bad value '$X' for unit property CPUWeight: expected ", 0, 4096 },

        /* the TOML decoder's strings and keys */
        { "toml: a basic string", "return show(toml.decode('k = \"' .. X .. '\"', 't'))", "{k=$X}" },
        { "toml: a literal string", "return show(toml.decode(\"k = '\" .. X .. Y .. \"'\", 't'))",
          "{k=$X$Y}" },
        { "toml: a multi-line basic string with escapes",
          "return show(toml.decode('k = \"\"\"\\n' .. X .. '\\\\n' .. Y .. '\\\\\\n   ' .. X .. '\"\"\"', "
          "'t'))",
          "{k=$X\n$Y$X}" },
        { "toml: a multi-line literal string",
          "return show(toml.decode(\"k = '''\\n\" .. X .. '\\n' .. Y .. \"'''\", 't'))", "{k=$X\n$Y}" },
        { "toml: \\u escapes",
          "return show(toml.decode('k = \"' .. ('\\\\u00E9'):rep(#W // 2) .. '\"', 't'))", "{k=$W}" },
        { "toml: UTF-8 as written", "return show(toml.decode('k = \"' .. W .. '\"', 't'))", "{k=$W}" },
        { "toml: a bare key", "return show(toml.decode(X .. Y .. ' = 1', 't'))", "{$X$Y=1}" },
        { "toml: a quoted key", "return show(toml.decode('\"' .. X .. ' ' .. Y .. '\" = \"v\"', 't'))",
          "{$X $Y=v}" },
        { "toml: a dotted key", "return show(toml.decode(X .. '.' .. Y .. ' = true', 't'))",
          "{$X={$Y=true}}" },
        { "toml: a table header", "return show(toml.decode('[' .. X .. ']\\n' .. Y .. \" = 'v'\", 't'))",
          "{$X={$Y=v}}" },
        { "toml: arrays of tables",
          "return show(toml.decode('[[' .. X .. ']]\\nk = 1\\n[[' .. X .. ']]\\nk = 2', 't'))",
          "{$X=[{k=1},{k=2}]}" },
        { "toml: an array of long strings",
          "return show(toml.decode('a = [\"' .. X .. '\", \"' .. Y .. '\"]', 't'))", "{a=[$X,$Y]}" },
        { "toml: a duplicate long key", "return show(toml.decode(X .. ' = 1\\n' .. X .. ' = 2', 't'))",
          "nil|t:2:1: duplicate key '$X' (first defined at line 1)" },
        { "toml: the line of a long key",
          "return show(toml.lines(toml.decode('\\n' .. X .. ' = 1', 't'))[X])", "2" },
};

/* The failure return of every primitive (and a few successes beside them): once, with small
 * texts (X is "abc"). */
static const Case failures[] = {
        /* scudo.text */
        { "text.expand: a value that is not text",
          "return try(text.expand, '${P}', '/h', get, { P = { {} } })",
          "error: text.expand: the value of a variable is not text" },
        { "text.expand: ~user", "return show(text.expand('~root/x', '/h', get, {}))",
          "nil|~user is not supported: write the path out" },
        { "text.expand_path: empty", "return show(text.expand_path('${P}', '/h', get, { P = '' }, '/b'))",
          "nil|empty path" },
        { "text.expand_path: a variable without a value",
          "return show(text.expand_path('${P}', '/h', get, { P = { nil, false, 'why' } }, '/b'))",
          "nil|why" },
        { "text.matching: a glob that is not a string", "return try(text.matching, { 1 }, { 'a' })",
          "error: text.matching: glob 1 is not a string" },
        { "text.matching: a name that is not a string", "return try(text.matching, { 'a' }, { 'a', 2 })",
          "error: text.matching: name 2 is not a string" },
        { "text.matching: a name with a NUL byte", "return try(text.matching, { '*' }, { 'a\\0b' })",
          "error: text.matching: name 1 holds a NUL byte" },
        { "text.first_related: an entry that is not a table", "return try(text.first_related, '/a', { 1 })",
          "error: text.first_related: entry 1 is not a table" },
        { "text.first_related: an entry without a directory", "return try(text.first_related, '/a', { {} })",
          "error: text.first_related: entry 1 has no directory" },
        { "text.command_matches: an argument that is not a string",
          "return try(text.command_matches, 'a b', 'a', { 'a', 5 })",
          "error: text.command_matches: argument 2 is not a string" },
        { "text.regex: a pattern that does not compile",
          "local ok, msg = text.regex('(', 'x') return show(ok, type(msg))", "nil|string" },
        { "text.command_matches: a pattern that does not compile",
          "local ok, kind, msg = text.command_matches('re:(', 'x', {}) return show(ok, kind, type(msg))",
          "nil|regex|string" },
        { "text.fnmatch: not a string", "return try(text.fnmatch, {}, 'x')", "~bad argument #1" },
        { "text.match_any: not a list", "return try(text.match_any, 'x', 'x')", "~bad argument #1" },
        { "text.clean_path: not a string", "return try(text.clean_path, {})", "~bad argument #1" },
        { "text.join: not a string", "return try(text.join, '/a', {})", "~bad argument #2" },
        { "text.ancestors: not a string", "return try(text.ancestors, nil)", "~bad argument #1" },
        { "text.first_related: not a list", "return try(text.first_related, '/a', 'x')",
          "~bad argument #2" },
        { "text.sha256: not a string", "return try(text.sha256, {})", "~bad argument #1" },
        { "text.sha256", "return show(text.sha256('abc'))",
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
        { "text.distance: not a string", "return try(text.distance, 'a', {})", "~bad argument #2" },
        { "text.distance", "return show(text.distance('kitten', 'sitting'))", "3" },

        /* scudo.tables */
        { "tables.sorted_keys: a key that is not a string", "return show(tables.sorted_keys({ 1, x = 2 }))",
          "nil" },
        /* the order of Lua's own <, NUL bytes, prefixes and bytes over 127 included */
        { "tables.sorted_keys: as table.sort with <",
          "local t = { ['a\\0b'] = 1, a = 1, ['a\\1'] = 1, A1 = 1, A = 1, ['A='] = 1, ['\\255'] = 1, [''] = "
          "1, b = 1 }\nlocal mine, lua = tables.sorted_keys(t), {}\nfor k in pairs(t) do lua[#lua + 1] = k "
          "end\ntable.sort(lua)\nfor i = 1, #lua do if mine[i] ~= lua[i] then return 'differs at ' .. i end "
          "end\nreturn #mine == #lua and 'same' or 'not as many'",
          "same" },
        { "tables.merge: a key the schema lacks", "return try(tables.merge, {}, { zz = 1 }, KEYS)",
          "error: tables.merge: no such key 'zz'" },
        { "tables.merge: onto a list that is not one",
          "return try(tables.merge, { l = 1 }, { l = { 1 } }, KEYS)",
          "error: tables.merge: 'l' is not a list" },
        { "tables.merge: onto a map that is not one",
          "return try(tables.merge, { m = 1 }, { m = { a = 1 } }, KEYS)",
          "error: tables.merge: 'm' is not a map" },
        { "tables.is_list and is_table",
          "return show(tables.is_list(1), tables.is_table({ 1 }), tables.is_table({}))",
          "false|false|true" },

        /* scudo.toml */
        { "toml.decode: a syntax error", "return show(toml.decode('a = ', 't'))",
          "nil|t:1:5: expected a value, found end of file" },
        { "toml.decode: not UTF-8", "return show(toml.decode('a = \"\\255\"', 't'))", "~nil|t:1:" },
        { "toml.line_tables: before the first decode", "return show(toml.line_tables())", "nil" },
        { "toml.lines: a table the decoder did not make", "return show(toml.lines({}))", "nil" },
        { "toml.decode: not a string", "return try(toml.decode, {}, 't')", "~bad argument #1" },
        { "toml.is_array and is_datetime", "return show(toml.is_array({}), toml.is_datetime(1))",
          "false|false" },

        /* scudo.sys */
        { "sys.readfile: missing", "return show(sys.readfile(T .. '/none', 10))",
          "nil|$T/none: No such file or directory|2" },
        { "sys.readfile: missing, missing_ok", "return show(sys.readfile(T .. '/none', 10, true))", "nil" },
        { "sys.readfile: a directory", "return show(sys.readfile(T, 10))", "nil|$T: Is a directory|21" },
        { "sys.readfile: too large", "return show(sys.readfile(T .. '/file', 3))",
          "nil|$T/file: too large (the limit is 3 bytes)|27" },
        { "sys.readfile: a file", "return show(sys.readfile(T .. '/file', 100))", "contents\n" },
        { "sys.readfile: a NUL byte", "return try(sys.readfile, T .. '\\0x', 10)",
          "~path contains a NUL byte" },
        { "sys.listdir: missing", "return show(sys.listdir(T .. '/none'))",
          "nil|$T/none: No such file or directory|2" },
        { "sys.listdir: missing, missing_ok", "return show(sys.listdir(T .. '/none', true))", "nil" },
        { "sys.listdir: a file", "return show(sys.listdir(T .. '/file'))",
          "nil|$T/file: Not a directory|20" },
        { "sys.listdir", "return show(sys.listdir(T))", "[42,dir,file]" },
        { "sys.stat: missing", "return show(sys.stat(T .. '/none'))",
          "nil|$T/none: No such file or directory|2" },
        { "sys.lstat: missing", "return show(sys.lstat(T .. '/none'))",
          "nil|$T/none: No such file or directory|2" },
        { "sys.realpath: missing", "return show(sys.realpath(T .. '/none'))",
          "nil|$T/none: No such file or directory|2" },
        { "sys.canonical: relative", "return show(sys.canonical('rel'))",
          "nil|'rel' is not an absolute path (or holds control characters)|22" },
        { "sys.canonical: too long",
          "return show(select(3, sys.canonical(('/' .. ('x'):rep(200)):rep(30))))", "36" },

        /* scudo.trust */
        { "trust.check: a store that is a directory", "return show(trust.check(T, '/x', ('0'):rep(64)))",
          "nil|$T: Is a directory" },
        { "trust.check: a store that is not there",
          "return show(trust.check(T .. '/none', '/x', ('0'):rep(64)))", "false" },
        { "trust.entries: a store that is a directory", "return show(trust.entries(T))",
          "nil|$T: Is a directory" },
        { "trust.store", "return show(type(trust.store()))", "string" },

        /* scudo.engine */
        { "engine.load: a syntax error", "return show(engine.load('x = ', '=chunk', {}))",
          "nil|chunk:1: unexpected symbol near <eof>" },
        { "engine.load: binary chunks are refused", "return show(engine.load('\\27Lua', '=chunk', {}))",
          "~nil|attempt to load a binary chunk" },
        { "engine.budgeted_call: an error",
          "return show(clean(engine.budgeted_call('lbl', {}, function() error('boom', 0) end)))",
          "nil|lbl: boom" },
        { "engine.budgeted_call: a configuration error",
          "return show(clean(engine.budgeted_call('lbl', {}, function() engine.raise('bad') end)))",
          "nil|lbl: bad" },
        { "engine.budgeted_call: the results",
          "return show(engine.budgeted_call('lbl', {}, function() return 1, X end))", "true|1|$X" },
        { "engine.budgeted_call: user code may not start user code",
          "return show(clean(engine.budgeted_call('a', {}, "
          "function() return engine.budgeted_call('b', {}, function() end) end)))",
          "nil|a: engine.budgeted_call: user code may not start user code" },
        { "engine.raise", "return try(engine.raise, 'configuration error')", "error: configuration error" },
        { "engine.funcinfo: not a function", "return try(engine.funcinfo, 1)", "~bad argument #1" },

        /* scudo, scudo.fs, scudo.net, scudo.unit, scudo.path */
        { "scudo.warn: outside user code", "return try(scudo.warn, 'x')",
          "error: scudo.warn: only available while a profile file or a hook runs" },
        { "scudo.warn: empty", "return hook(function() scudo.warn('') end)",
          "nil|hook: bad argument #1 to 'warn' (empty or too long)|{}" },
        { "scudo.warn", "return hook(function() scudo.warn(X) end)", "true|nil|{}" },
        { "scudo.fs.write: from a hook", "return hook(function() scudo.fs.write(X) end)", "true|nil|[$X]" },
        { "scudo.fs.write: not in a hook",
          "return show(clean(engine.budgeted_call('file', { phase = 'load', edits = {}, warnings = {} }, "
          "function() scudo.fs.write('/x') end)))",
          "nil|file: scudo.fs.write: only a hook can change the plan; a profile file states it in the "
          "profile's keys" },
        { "scudo.fs.read, hide, deny: a NUL byte", "return hook(function() scudo.fs.deny('a\\0b') end)",
          "nil|hook: bad argument #1 to 'deny' (holds a NUL byte)|{}" },
        { "scudo.net.check: a bad rule", "return show(scudo.net.check('not a rule'))",
          "~nil|bad network rule 'not a rule': " },
        { "scudo.net.check", "return show(scudo.net.check('example.com:443'))", "true" },
        { "scudo.net.allow: a bad rule", "return hook(function() scudo.net.allow('not a rule') end)",
          "~nil|hook: scudo.net.allow: bad network rule 'not a rule': " },
        { "scudo.net.deny: a bad rule", "return hook(function() scudo.net.deny('not a rule') end)",
          "~nil|hook: scudo.net.deny: bad network rule 'not a rule': " },
        { "scudo.net.allow: from a hook", "return hook(function() scudo.net.allow('example.com:443') end)",
          "true|nil|[example.com:443]" },
        { "scudo.unit.check: not a finite number", "return show(scudo.unit.check('Description', 0/0))",
          "nil|unit.Description: not a finite number" },
        { "scudo.unit.check: a nested list",
          "return show(scudo.unit.check('Description', { 'a', { 'x' } }))",
          "nil|unit.Description: a list may not hold tables" },
        { "scudo.unit.check: a NUL byte", "return show(scudo.unit.check('Description', 'a\\0b'))",
          "nil|unit.Description: holds a NUL byte" },
        { "scudo.unit.check: a function", "return show(scudo.unit.check('Description', function() end))",
          "nil|unit.Description: must be a boolean, a number, a string or a list of those" },
        { "scudo.unit.check: an unknown property", "return show(scudo.unit.check('MemoryMaks', '1G'))",
          "nil|unknown unit property 'MemoryMaks' (did you mean 'MemoryMax'?)" },
        { "scudo.unit.check: a bad name", "return try(scudo.unit.check, '', 'x')", "~bad argument #1" },
        { "scudo.unit.check: values",
          "return show(scudo.unit.check('PrivateTmp', false), "
          "scudo.unit.check('CPUWeight', 50), scudo.unit.check('Description', { 'a', 1.5, true }))",
          "no|50|a 1.5 yes" },
        { "scudo.unit.text: a function", "return show(scudo.unit.text(function() end))",
          "nil|must be a boolean, a number, a string or a list of those" },
        { "scudo.unit.text: infinity in a list", "return show(scudo.unit.text({ 1, 1/0 }))",
          "nil|not a finite number" },
        { "scudo.unit.set: not a finite number",
          "return hook(function() scudo.unit.set('Description', 0/0) end)",
          "nil|hook: scudo.unit.set: unit.Description: not a finite number|{}" },
        { "scudo.path.lookup: no markers", "return try(scudo.path.lookup, {}, '/')",
          "~needs 1 to 64 marker names" },
        { "scudo.path.lookup: '..'", "return try(scudo.path.lookup, { '../x' }, '/')",
          "~a marker is a relative name without '..'" },
        { "scudo.path.lookup: an empty marker in a list", "return try(scudo.path.lookup, { 'a', '' }, '/')",
          "error: scudo.path.lookup: marker 2 is not a name of 1 to 255 bytes without NUL" },
        { "scudo.path.lookup: a relative start", "return try(scudo.path.lookup, 'x', 'rel')",
          "~must be absolute" },
        { "scudo.path.lookup: nothing found", "return show(scudo.path.lookup({ 'no-such-marker' }, T))",
          "nil" },
        { "scudo.path.lookup: a marker that is a number", "return show(scudo.path.lookup(42, T .. '/dir'))",
          "$T" },
        { "scudo.path.lookup: a marker that is a number, in a list",
          "return try(scudo.path.lookup, { 'x', 42 }, T .. '/dir')",
          "error: scudo.path.lookup: marker 2 is not a string" },
        /* Memory full but for g bytes of garbage: converting markers that are numbers makes
         * the collector run (in an emergency), which may free what is used next. The answer
         * is the directory holding "42", or an error, never another. */
        { "scudo.path.lookup: markers that are numbers, converted with the memory full",
          "local bad, start, lookup, tostring = {}, T .. '/dir', scudo.path.lookup, tostring\n"
          "local keep, step\n"
          "local function add() keep[#keep + 1] = ('y'):rep(step - 1) .. '' end\n"
          "for g = 0, 2048, 32 do\n"
          "  local m = { 42 }\n"
          "  for i = 2, 64 do m[i] = 1000000 * (g + 1) + i end\n"
          "  keep, step = {}, 1 << 16\n"
          "  while step >= 8 do\n"
          "    if not pcall(add) then step = step // 2 end\n"
          "  end\n"
          "  local dropped = 0\n"
          "  while dropped < g and #keep > 0 do dropped = dropped + #keep[#keep]; keep[#keep] = nil end\n"
          "  local ok, r = pcall(lookup, m, start)\n"
          "  keep = nil\n"
          "  if ok and r ~= T then\n"
          "    bad[#bad + 1] = g .. ':' .. tostring(r)\n"
          "  end\n"
          "end\n"
          "return show(#bad, bad[1])",
          "0|nil", .memory = 2 << 20 },
        { "scudo.path.lookup: outside user code, without a start", "return try(scudo.path.lookup, 'x')",
          "error: scudo.path.lookup: only available while a profile file or a hook runs" },
        { "scudo.path.exists",
          "return show(scudo.path.exists(T .. '/file'), scudo.path.exists(T .. '/none'))", "true|false" },
};

static char scratch[256];

/* A text of n bytes: the letters, the digits, or "é" (n rounded down to even). */
static char *make_text(size_t n, int kind) {
        char *s = malloc(n + 1);
        if (!s)
                abort();
        if (kind == 'W') {
                n -= n % 2;
                for (size_t i = 0; i < n; i += 2)
                        memcpy(s + i, "\xc3\xa9", 2);
        } else
                for (size_t i = 0; i < n; i++)
                        s[i] = kind == 'X' ? (char) ('a' + i % 26) : (char) ('0' + i % 10);
        s[n] = 0;
        return s;
}

typedef struct Run {
        const Case *c;
        const char *text[4];    /* X Y W T */
} Run;

static int run_chunk(lua_State *L) {
        Run *run = lua_touserdata(L, 1);
        luaL_Buffer b;

        luaL_buffinit(L, &b);
        luaL_addstring(&b, prelude);
        luaL_addstring(&b, run->c->chunk);
        luaL_pushresult(&b);                                                    /* stack: ud source */
        size_t len;
        const char *source = lua_tolstring(L, -1, &len);
        if (luaL_loadbufferx(L, source, len, "=case", "t") != LUA_OK)
                return lua_error(L);
        for (int i = 0; i < 4; i++)
                lua_pushstring(L, run->text[i]);
        lua_call(L, 4, 1);                                                      /* stack: ud source result */
        if (lua_type(L, -1) != LUA_TSTRING)
                return luaL_error(L, "the case returned no text");
        return 1;
}

/* The template with $X, $Y, $W and $T replaced. */
static char *expand_template(const char *t, const char *const text[4], size_t *ret_len) {
        size_t cap = strlen(t) + 1, n = 0;
        for (int i = 0; i < 4; i++)
                cap += strlen(text[i]) * 8;
        char *out = malloc(cap);
        if (!out)
                abort();
        for (const char *p = t; *p; p++) {
                const char *v = NULL;
                if (p[0] == '$' && p[1]) {
                        const char *k = strchr("XYWT", p[1]);
                        if (k)
                                v = text[k - "XYWT"];
                }
                if (v) {
                        size_t l = strlen(v);
                        if (n + l >= cap)
                                abort();
                        memcpy(out + n, v, l);
                        n += l;
                        p++;
                } else {
                        if (n + 1 >= cap)
                                abort();
                        out[n++] = *p;
                }
        }
        out[n] = 0;
        *ret_len = n;
        return out;
}

/* Checks run in child processes, so that one that crashes (what these tests are for) is
 * reported as failing and the others still run. A child says why on stdout ("#" lines); under
 * ASan, its report and exit status do. */
static bool expect_failed;
static size_t expect_size;

/* Says why a check failed, each line a TAP comment (a report or a traceback quoted is
 * several). */
_printf_(1, 2) static void expect_why(const char *fmt, ...) {
        char *m = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&m, fmt, ap) < 0)
                m = NULL;
        va_end(ap);
        printf("#   not so (%zu bytes):\n", expect_size);
        for (char *l = m, *e; l && *l; l = e ? e + 1 : l + strlen(l)) {
                e = strchr(l, '\n');
                printf("#     %.*s\n", (int) (e ? e - l : (ptrdiff_t) strlen(l)), l);
        }
        free(m);
}

#define EXPECT(cond, ...)                                                       \
        do {                                                                    \
                if (!(cond)) {                                                  \
                        expect_failed = true;                                   \
                        expect_why(__VA_ARGS__);                                \
                }                                                               \
        } while (0)

/* Runs f(arg, sizes[i]) for each of the n sizes in one child, and fills ok[i]: whether each
 * held. A size the child did not get to (it died) did not. Returns whether the child ended
 * well after them (exit status 0: no leak, no sanitizer report). */
static bool isolated(void (*f)(const void *, size_t), const void *arg, const size_t *sizes, size_t n,
                     bool *ok) {
        int fds[2];

        fflush(stdout);
        if (pipe(fds) < 0)
                abort();
        pid_t pid = fork();
        if (pid < 0)
                abort();
        if (pid == 0) {
                close(fds[0]);
                for (size_t i = 0; i < n; i++) {
                        expect_failed = false;
                        expect_size = sizes[i];
                        f(arg, sizes[i]);
                        fflush(stdout);
                        char c = expect_failed ? '0' : '1';
                        if (write(fds[1], &c, 1) != 1)
                                abort();
                }
                exit(0);        /* exit(): LeakSanitizer looks at the child too */
        }
        close(fds[1]);
        for (size_t i = 0; i < n; i++) {
                char c = 0;
                ok[i] = read(fds[0], &c, 1) == 1 && c == '1';
        }
        close(fds[0]);
        int status;
        if (waitpid(pid, &status, 0) < 0)
                abort();
        if (WIFSIGNALED(status))
                printf("#   the child was killed by signal %d\n", WTERMSIG(status));
        else if (WEXITSTATUS(status) != 0)
                printf("#   the child exited with status %d\n", WEXITSTATUS(status));
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* One check in a child of its own. */
static bool isolated1(void (*f)(const void *, size_t), const void *arg, size_t size) {
        bool ok;
        return isolated(f, arg, &size, 1, &ok) && ok;
}

/* Runs one case at size n (X, Y and W of n bytes) and checks what it returns. */
static void check_case(const void *arg, size_t n) {
        const Case *c = arg;
        _cleanup_(lua_engine_freep) LuaEngine *e = NULL;
        char *x = make_text(n, 'X'), *y = make_text(n, 'Y'), *w = make_text(n, 'W');
        Run run = { .c = c, .text = { x, y, w, scratch } };
        char *err = NULL;

        LuaLimits limits = LUA_LIMITS_DEFAULT;
        if (c->memory > 0)
                limits.memory_max = c->memory;
        if (lua_engine_new(&limits, &e) < 0)
                abort();
        int r = lua_engine_cpcall(e, run_chunk, &run, 0, 1, &err);
        EXPECT(r >= 0, "the case ran: %s", err ?: "");
        if (r >= 0) {
                lua_State *L = lua_engine_state(e);
                size_t gl, el;
                const char *got = lua_tolstring(L, -1, &gl);
                bool contains = c->expect[0] == '~';
                char *want = expand_template(c->expect + contains, run.text, &el);
                bool ok = contains ? memmem(got, gl, want, el) != NULL :
                                     gl == el && memcmp(got, want, gl) == 0;
                size_t d = 0;
                while (d < gl && d < el && got[d] == want[d])
                        d++;
                EXPECT(ok,
                       "got %zu bytes, expected %zu%s; they differ at byte %zu: got '%.80s', expected "
                       "'%.80s'",
                       gl, el, contains ? " within" : "", d, got + d, want + d);
                free(want);
                lua_pop(L, 1);
        }
        free(err);
        free(x);
        free(y);
        free(w);
}

/* failures[i], with texts of 3 bytes. */
static void check_failure(const void *arg, size_t i) {
        expect_size = 3;
        check_case(&failures[i], 3);
}

static void test_cases(void) {
        const size_t B = LUAL_BUFFERSIZE;
        /* At every size around the buffer's own (where it moves to a box on the stack) and
         * twice it, then past 8 KiB and 64 KiB. */
        const size_t sizes[] = { 1, B - 2, B - 1, B, B + 1, B + 2, 2 * B - 1, 2 * B, 2 * B + 1,
                                 8192 - 1, 8192 + 1, 65536 + 1 };

        /* One child per case, at all its sizes. */
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const Case *c = &cases[i];
                size_t these[ELEMENTSOF(sizes)], n = 0;
                bool ok[ELEMENTSOF(sizes)];
                for (size_t j = 0; j < ELEMENTSOF(sizes); j++)
                        if (sizes[j] >= c->min && (c->max == 0 || sizes[j] <= c->max))
                                these[n++] = sizes[j];
                bool clean = isolated(check_case, c, these, n, ok);
                for (size_t j = 0; j < n; j++)
                        TAP_CHECK(ok[j] && (clean || j + 1 < n), "%s (%zu bytes)", c->name, these[j]);
        }
        /* The failure returns, one child for them all: should one die, it and those after it
         * fail. */
        size_t index[ELEMENTSOF(failures)];
        bool ok[ELEMENTSOF(failures)];
        for (size_t i = 0; i < ELEMENTSOF(failures); i++)
                index[i] = i;
        bool clean = isolated(check_failure, NULL, index, ELEMENTSOF(failures), ok);
        for (size_t i = 0; i < ELEMENTSOF(failures); i++)
                TAP_CHECK(ok[i] && (clean || i + 1 < ELEMENTSOF(failures)), "%s", failures[i].name);
}

/* ---- through the verbs: an untrusted file, a hook, a long path ---- */

/* Writes proj/.scudo.toml: with fill, a profile whose list of 30,000 empty tables fills the
 * engine's arena, so that buffers after it come from malloc() (where ASan sees a misuse), and
 * an error on line 3; then the profile `t` for the command `tool` with
 * `unit.Description = list` (on line 7 with fill). */
static void write_project(const char *list, bool fill) {
        FILE *f = fopen(pt_path("proj/.scudo.toml"), "we");
        if (!f)
                abort();
        if (fill) {
                fputs("[fill]\nmatch = [\"nothing-matches-this\"]\nunit.Description = [", f);
                for (int i = 0; i < 30000; i++)
                        fputs(i ? ",{}" : "{}", f);
                fputs("]\n\n", f);
        }
        fprintf(f, "[t]\nmatch = [\"tool\"]\nunit.Description = %s\n", list);
        fclose(f);
}

/* scudo check, then scudo trust, of an untrusted file whose list has two elements of n bytes
 * before its separators: after the fill, both name line 3 alone (scudo trust refuses a file
 * with errors, once it has checked all of it); without it, scudo trust shows the list joined.
 * Trusted, a resolve after the fill gives the list joined. */
static void check_untrusted_file(const void *arg, size_t n) {
        char *x = make_text(n, 'X'), *y = make_text(n, 'Y');
        size_t ll = 2 * n + 64;
        char *list = malloc(ll), *want = malloc(ll);
        snprintf(list, ll, "[\"%s\", \"b\", \"%s\", \"d\"]", x, y);
        snprintf(want, ll, "%s b %s d", x, y);
        write_project(list, true);

        Request req;
        pt_request(&req, "proj", ARGV("tool"), NULL);
        char *report = NULL, *err = NULL;
        int errors = -1;
        int r = policy_check(&req, NULL, &report, &errors, &err);
        EXPECT(r >= 0 && errors == 1 && report &&
               strstr(report, "proj/.scudo.toml:3: unit.Description: a list may not hold tables") &&
               !strstr(report, ".scudo.toml:7"),
               "scudo check refuses only the list of tables: r=%d errors=%d error: %s\n%.400s", r, errors,
               err ?: "", report ?: "");
        free(report);
        free(err);
        err = NULL;

        char **paths = NULL, **hashes = NULL, *summary = NULL, *sha = NULL;
        r = policy_trust_targets(&req, NULL, &paths, &hashes, &summary, &err);
        EXPECT(r < 0 && err && strstr(err, "has errors, fix them first") &&
               strstr(err, "proj/.scudo.toml:3: unit.Description: a list may not hold tables") &&
               !strstr(err, ".scudo.toml:7"),
               "scudo trust refuses the file for its line 3 alone: r=%d error: %.400s", r, err ?: "");
        strv_free(paths);
        strv_free(hashes);
        free(summary);
        free(err);
        paths = hashes = NULL;
        summary = err = NULL;

        /* What scudo trust shows of the list: the text it becomes, the elements joined. */
        write_project(list, false);
        char *shown = malloc(ll + 64);
        snprintf(shown, ll + 64, "unit: Description = %s\n", want);
        r = policy_trust_targets(&req, NULL, &paths, &hashes, &summary, &err);
        (void) trust_hash_file(pt_path("proj/.scudo.toml"), 1 << 20, &sha);
        EXPECT(r >= 0 && strv_length(paths) == 1 && streq(paths[0], pt_path("proj/.scudo.toml")) && sha &&
               hashes && streq(hashes[0], sha) && summary && strstr(summary, shown),
               "scudo trust shows the file, its hash and the list: r=%d error: %s\n%.400s", r, err ?: "",
               summary ?: "");
        strv_free(paths);
        strv_free(hashes);
        free(summary);
        free(sha);
        free(shown);
        free(err);
        err = NULL;
        request_done(&req);

        write_project(list, true);

        pt_trust("proj/.scudo.toml");
        Plan *p = NULL;
        r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        EXPECT(r >= 0, "trusted, it resolves: %s", err ?: "");
        const char *got = r >= 0 ? pt_property(p, "Description") : NULL;
        EXPECT(got && streq(got, want), "Description is the list joined whole: got %zu bytes '%.60s...'",
               got ? strlen(got) : 0, got ?: "(none)");
        plan_free(p);
        free(err);
        free(list);
        free(want);
        free(x);
        free(y);
}

/* The list of the report that found the crash: too long, and said so. */
static void check_reported_list(const void *arg, size_t n) {
        char *a = make_text(1024, 'X'), *c = make_text(3000, 'Y'), *e = make_text(9000, 'X');
        size_t ll = 13100;
        char *list = malloc(ll);
        snprintf(list, ll, "[\"%s\", \"b\", \"%s\", \"d\", \"%s\"]", a, c, e);
        write_project(list, true);
        Request req;
        pt_request(&req, "proj", ARGV("tool"), NULL);
        char *report = NULL, *err = NULL;
        int errors = -1;
        int r = policy_check(&req, NULL, &report, &errors, &err);
        EXPECT(r >= 0 && errors == 2 && report &&
               strstr(report, "proj/.scudo.toml:7: unit.Description: value longer than 4096 bytes"),
               "r=%d errors=%d error: %s\n%.400s", r, errors, err ?: "", report ?: "");
        free(report);
        free(err);
        request_done(&req);
        free(list);
        free(a);
        free(c);
        free(e);
}

static void test_untrusted_file(void) {
        const size_t B = LUAL_BUFFERSIZE;

        pt_mkdir("proj");
        for (size_t n = B - 3; n <= B + 3; n++)
                TAP_CHECK(isolated1(check_untrusted_file, NULL, n),
                          "scudo check and scudo trust of an untrusted file, then a resolve once trusted: "
                          "a list with elements of %zu bytes", n);
        TAP_CHECK(isolated1(check_reported_list, NULL, 0),
                  "scudo check: elements of 1,024, 3,000 and 9,000 bytes make a value too long, said so");
        unlink(pt_path("proj/.scudo.toml"));
}

/* A hook sets a list with two elements of n bytes, after checking scudo.unit.text of it. */
static void check_hook(const void *arg, size_t n) {
        char *x = make_text(n, 'X'), *y = make_text(n, 'Y');
        size_t bl = 3 * n + 512;
        char *body = malloc(bl), *want = malloc(bl);
        snprintf(body, bl,
                 "return { t = { match = { 'tool' }, hook = function()\n"
                 "  local v = { '%s', 'b', '%s', 'd' }\n"
                 "  assert(scudo.unit.text(v) == table.concat(v, ' '), 'scudo.unit.text')\n"
                 "  scudo.unit.set('Description', v)\n"
                 "end } }\n", x, y);
        snprintf(want, bl, "%s b %s d", x, y);
        pt_write("etc/config.d/h.lua", "%s", body);
        Plan *p = NULL;
        char *err = NULL;
        int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        EXPECT(r >= 0, "it resolves: %s", err ?: "");
        const char *got = r >= 0 ? pt_property(p, "Description") : NULL;
        EXPECT(got && streq(got, want), "Description is the list joined whole: got %zu bytes '%.60s...'",
               got ? strlen(got) : 0, got ?: "(none)");
        plan_free(p);
        free(err);
        free(body);
        free(want);
        free(x);
        free(y);
}

static void test_hook(void) {
        const size_t B = LUAL_BUFFERSIZE;

        for (size_t n = B - 2; n <= B + 2; n++)
                TAP_CHECK(isolated1(check_hook, NULL, n),
                          "a hook: scudo.unit.text and scudo.unit.set of a list with elements of %zu bytes",
                          n);
        unlink(pt_path("etc/config.d/h.lua"));
}

/* The report's profile: n bytes of literal text before ${PWD}, in components short enough for
 * a file name, give exactly that path in the plan. */
static void check_long_path(const void *arg, size_t n) {
        char lit[4096] = "", want[8192];

        while (strlen(lit) < n)
                strncat(lit, "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                        sizeof(lit) - strlen(lit) - 1);
        lit[n] = 0;
        if (lit[n - 1] == '/')
                lit[n - 1] = 'a';
        pt_write("etc/config.toml", "[t]\nmatch = [\"tool\"]\nfilesystem.write = [\"%s/${PWD}/x\"]\n", lit);
        snprintf(want, sizeof(want), "%s%s/x", lit, pt_path("proj"));
        Plan *p = NULL;
        char *err = NULL;
        int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        EXPECT(r >= 0, "it resolves: %s", err ?: "");
        const PlanPath *e = NULL;
        for (size_t i = 0; r >= 0 && i < p->n_paths; i++)
                if (streq(p->paths[i].path, want))
                        e = &p->paths[i];
        EXPECT(e && e->access == PATH_ACCESS_WRITE, "a write entry for the path");
        plan_free(p);
        free(err);
}

static void test_long_path(void) {
        const size_t B = LUAL_BUFFERSIZE;

        for (size_t n = B - 2; n <= 2 * B + 2; n += B / 2)
                TAP_CHECK(isolated1(check_long_path, NULL, n),
                          "%zu bytes of text before ${PWD}: the path in the plan is the text and the "
                          "directory",
                          n);
        unlink(pt_path("etc/config.toml"));
}

int main(void) {
        pt_setup();
        /* The scratch directory the failure cases look at: a file of 9 bytes, a directory and
         * a file named 42. */
        snprintf(scratch, sizeof(scratch), "%s", pt_path("scratch"));
        pt_write("scratch/file", "contents\n");
        pt_mkdir("scratch/dir");
        pt_write("scratch/42", "");

        test_cases();
        test_untrusted_file();
        test_hook();
        test_long_path();
        pt_cleanup();
        return tap_done();
}
