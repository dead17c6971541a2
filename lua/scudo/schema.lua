-- SPDX-License-Identifier: MIT OR Apache-2.0
-- The profile language: which keys exist, what type each takes, and how a profile table
-- from a file (TOML or Lua) becomes a definition the merger works with.
--
-- A definition is { name, file, origin, values = { [key] = entry }, replace = { [key] = origin } }
-- where key is a flat key path ("filesystem.write", "unit", "delegate.all") and entry is
--   list:   { { value = v, origin = "file:line", base = dir }, ... }
--   scalar: { value = v, origin = ... }
--   map:    { [name] = { value = v, origin = ... } }
local util = require("scudo.util")
local toml = require("scudo.toml")
local text = require("scudo.text")
local unit = require("scudo.unit")
local net = require("scudo.net")
local engine = require("scudo.engine")
local tables = require("scudo.tables")

local M = {}

-- Every key of a profile, in one list: its path, its kind, and for lists and scalars the
-- check of one value. `noinherit`: not taken over by a profile that extends this one (what
-- selects a profile, and its description, are its own). `implied`: set by scudo, never
-- written (network.filter: a profile with a network section filters). What a profile table
-- may hold, what each section may hold, and what `replace` may name are all read off it.
local KEY_LIST = {
    { "extend", kind = "list", check = "name", single = true },
    { "match", kind = "list", check = "match", noinherit = true },
    { "description", kind = "scalar", check = "string", noinherit = true },
    { "delegable", kind = "scalar", check = "boolean" },
    { "delegate.all", kind = "scalar", check = "boolean" },
    { "delegate.names", kind = "list", check = "name" },
    { "confirm", kind = "scalar", check = "boolean" },
    -- `grant`: an item may also be { path = "...", create = "dir" | "file" } (M.grant_item).
    -- In FS_ACCESS's order, least to most restrictive.
    { "filesystem.write", kind = "list", check = "path", grant = true },
    { "filesystem.read", kind = "list", check = "path", grant = true },
    { "filesystem.hide", kind = "list", check = "path" },
    { "filesystem.deny", kind = "list", check = "path" },
    { "network.allow", kind = "list", check = "netrule" },
    { "network.deny", kind = "list", check = "netrule" },
    { "network.dns", kind = "scalar", check = { "filtered", "open" } },
    { "network.git_remote", kind = "scalar", check = "boolean" },
    { "network.filter", kind = "scalar", check = "boolean", implied = true },
    { "dbus.session", kind = "scalar", check = { "none", "filtered", "allow" } },
    { "dbus.talk", kind = "list", check = "busname" },
    { "dbus.own", kind = "list", check = "busname" },
    { "dbus.see", kind = "list", check = "busname" },
    { "dbus.system", kind = "scalar", check = { "none", "filtered", "allow" } },
    { "dbus.system_talk", kind = "list", check = "busname" },
    { "deny_env", kind = "list", check = "glob", single = true },
    { "allow_env", kind = "list", check = "glob", single = true },
    { "env.copy", kind = "list", check = "envname" },
    { "env.set", kind = "map" },
    { "unit", kind = "map" },
    { "log.target", kind = "scalar", check = "string" },
    { "log.report", kind = "list", check = { "file", "net", "dns" } },
    { "lookup", kind = "map" },
    { "args", kind = "map" },
    { "hook", kind = "list", check = "hook" },
}
local KEYS = {}
for _, k in ipairs(KEY_LIST) do
    KEYS[k[1]] = k
end
M.KEYS = KEYS

-- The filesystem accesses, least to most restrictive, and the key of each.
M.FS_ACCESS = { "write", "read", "hide", "deny" }
M.FS_KEY = {}
for _, a in ipairs(M.FS_ACCESS) do
    M.FS_KEY[a] = "filesystem." .. a
end

-- The sections read key by key (a table of keys with values); env and delegate have readers
-- of their own.
local SECTION_NAMES = { "filesystem", "network", "dbus", "log" }
local SECTION_PREFIX, SECTIONS = {}, {}
for _, sec in ipairs(SECTION_NAMES) do
    SECTION_PREFIX[sec] = sec .. "."
    SECTIONS[sec] = {}
end
-- The keys a profile table may hold (`replace` is no key of the schema: it says what a
-- profile's own keys start over from), and the sub-keys of its sections; the lists and
-- scalars at the top, read one by one.
local TOP, LIST_KEYS, SCALAR_KEYS = { "replace" }, {}, {}
do
    local seen = { replace = true }
    for _, k in ipairs(KEY_LIST) do
        local name = k[1]
        local top, sub = name:match("^([%w_]+)%.(.+)$")
        top = top or name
        if not seen[top] then
            seen[top] = true
            TOP[#TOP + 1] = top
        end
        if sub and SECTIONS[top] and not k.implied then
            SECTIONS[top][#SECTIONS[top] + 1] = sub
        elseif not sub and k.kind == "list" then
            LIST_KEYS[#LIST_KEYS + 1] = name
        elseif not sub and k.kind == "scalar" then
            SCALAR_KEYS[#SCALAR_KEYS + 1] = name
        end
    end
end

-- What `replace` may name: each key that is written as a whole (at the top, or in a section
-- read key by key), and each section or dotted group for all its keys. Made when a profile
-- first says `replace` (most runs read none).
local REPLACEABLE

local function replaceable()
    if REPLACEABLE then
        return REPLACEABLE
    end
    REPLACEABLE = {}
    for _, k in ipairs(KEY_LIST) do
        local name = k[1]
        local group = name:match("^([%w_]+)%.")
        if group then
            REPLACEABLE[group] = REPLACEABLE[group] or {}
            table.insert(REPLACEABLE[group], name)
        end
        if not k.implied and (not group or SECTIONS[group]) then
            REPLACEABLE[name] = { name }
        end
    end
    return REPLACEABLE
end

local function replaceable_names()
    return util.sorted_keys(replaceable())
end

local ARG_KEYS = { "options", "index" }

-- ---- one file's context while its profiles are read ----

-- Reader: collects errors for one file and knows how to name origins.
local Reader = {}
Reader.__index = Reader

-- line_tables: toml.lines for every table, for a TOML file (its lines are known); at:
-- "path:line" by line, each made once; project: what items of a project file carry.
function M.reader(file)
    return setmetatable({ file = file, errors = {}, line_tables = file.kind == "toml" and toml.line_tables() or nil,
        at = {}, project = file.layer == "project" or nil }, Reader)
end

-- The line key `k` of table `t` is on (TOML), or nil (there are lines only for a table the
-- parser made).
function Reader:line(t, k)
    local tables = self.line_tables
    if not tables or t == nil then
        return nil
    end
    local lines = tables[t]
    return lines and lines[k]
end

-- "path:line" for key `k` of table `t` (TOML), or the best we know.
function Reader:origin(t, k, fallback)
    local line = self:line(t, k)
    if line then
        local o = self.at[line]
        if not o then
            o = self.file.path .. ":" .. line
            self.at[line] = o
        end
        return o
    end
    return fallback or self.file.path
end

function Reader:error(origin, fmt, ...)
    self.errors[#self.errors + 1] = origin .. ": " .. fmt:format(...)
end

-- ---- value checks ----

-- The checks named by a string (KEYS[key].check); any other check is a list of the values
-- allowed.
local NAMED_CHECKS = { boolean = true, hook = true, string = true, name = true, path = true, netrule = true,
    match = true, busname = true, envname = true, glob = true }
local RE = ("r"):byte()

local function check_value(r, check, v, origin, what)
    if not NAMED_CHECKS[check] then
        for _, c in ipairs(check) do
            if v == c then
                return true
            end
        end
        if type(v) ~= "string" then
            r:error(origin, "%s must be one of %s, not %s", what, table.concat(check, ", "), util.describe(v))
        else
            r:error(origin, "%s: '%s' is not one of %s%s", what, v, table.concat(check, ", "),
                util.suggest(v, check))
        end
        return false
    end
    local tv = type(v)
    if check == "boolean" then
        if tv ~= "boolean" then
            r:error(origin, "%s must be true or false, not %s", what, util.describe(v))
            return false
        end
        return true
    end
    if check == "hook" then
        if tv == "function" then
            return true
        end
        if tv ~= "string" or v == "" then
            r:error(origin, "%s must be a Lua file name%s, not %s", what,
                r.file.kind == "lua" and " or a function" or "", util.describe(v))
            return false
        end
        -- Hook files are Lua, and named so: `scudo trust` trusts no other kind of file.
        if #v <= 4 or v:sub(-4) ~= ".lua" or v:sub(-5, -5) == "/" then
            r:error(origin, "%s: '%s' does not name a .lua file", what, v)
            return false
        end
        return true
    end
    if tv ~= "string" then
        r:error(origin, "%s must be a string, not %s", what, util.describe(v))
        return false
    end
    if v:find("\0", 1, true) then
        r:error(origin, "%s holds a NUL byte", what)
        return false
    end
    if check == "string" then
        return true
    elseif check == "name" then
        if v == "" then
            r:error(origin, "%s: empty profile name", what)
            return false
        end
    elseif check == "path" then
        if v == "" then
            r:error(origin, "%s: empty path", what)
            return false
        end
    elseif check == "netrule" then
        local ok, err = net.check(v)
        if not ok then
            r:error(origin, "%s: %s", what, err)
            return false
        end
    elseif check == "match" then
        if v == "" or v:match("^%s") or v:match("%s$") then
            r:error(origin, "%s: '%s' is empty or has spaces around it", what, v)
            return false
        end
        local re = v:byte(1) == RE and v:match("^re:(.*)$")
        if re then
            local ok, err = text.regex(re, "")
            if ok == nil then
                r:error(origin, "%s: %s", what, err)
                return false
            end
        end
    elseif check == "busname" then
        if not v:match("^[%w_%-%.%*]+$") then
            r:error(origin, "%s: '%s' is not a D-Bus name", what, v)
            return false
        end
    elseif check == "envname" then
        if not v:match("^[%a_][%w_]*$") then
            r:error(origin, "%s: '%s' is not a variable name", what, v)
            return false
        end
    elseif check == "glob" then
        if v == "" or v:find("=", 1, true) then
            r:error(origin, "%s: '%s' is not a variable name pattern", what, v)
            return false
        end
    end
    return true
end

-- Checks that every key of table t is in `known`; reports the others with a suggestion.
local SETS = setmetatable({}, { __mode = "k" })

local function known_keys(r, t, known, where, origin)
    local set = SETS[known]
    if not set then
        set = {}
        for _, k in ipairs(known) do
            set[k] = true
        end
        SETS[known] = set
    end
    local unknown = false
    for k in next, t do
        if not set[k] then
            unknown = true
            break
        end
    end
    if not unknown then
        return
    end
    for _, k in ipairs(util.sorted_keys(t)) do
        if not set[k] then
            local hint = type(k) == "string" and util.suggest(k, known) or ""
            if hint == "" then
                hint = " (known: " .. table.concat(known, ", ") .. ")"
            end
            r:error(r:origin(t, k, origin), "unknown key '%s'%s", where .. tostring(k), hint)
            t[k] = nil
        end
    end
end

-- A grant made when missing (filesystem.write and .read): { path = "...", create = "dir",
-- "file" or "json" }. Returns the path and the kind, or nil after reporting what is wrong.
-- Where it may be made is C's to check (plan-create.c); two kinds for one path, build.lua's.
local GRANT_KEYS = { "path", "create" }
local CREATE_KINDS = { "dir", "file", "json" }
-- What each kind makes, in words (build.lua's refusals, explain's notes).
M.CREATE_WORDS = { dir = "directory", file = "file", json = "file holding {}" }

local function grant_item(r, x, origin, what)
    known_keys(r, x, GRANT_KEYS, what .. ".", origin)
    local path, create = x.path, x.create
    if type(path) ~= "string" or path == "" or path:find("\0", 1, true) then
        r:error(origin, "%s: an entry written as a table needs path = \"...\" (a non-empty string)%s", what,
            path == nil and "" or ", not " .. util.describe(path))
        return nil
    end
    if create == nil then
        r:error(origin, "%s: { path = \"%s\" } without create: write the path alone, or add create = \"dir\", "
            .. "\"file\" or \"json\"", what, path)
        return nil
    end
    if not check_value(r, CREATE_KINDS, create, origin, what .. ": create") then
        return nil
    end
    return path, create
end

-- A list key: a list (or, with `single`, a string) of checked values.
local function read_list(r, def, key, t, k, base)
    local spec = KEYS[key]
    local v = t[k]
    local origin = r:origin(t, k, def.origin)
    local items = {}
    if not tables.is_list(v) then
        if spec.single and type(v) == "string" or key == "hook" and (type(v) == "string" or type(v) == "function") then
            v = { v }
        else
            r:error(origin, "%s must be a list%s, not %s", key, spec.single and " or a string" or "",
                util.describe(v))
            return
        end
    end
    local check = spec.check
    for i = 1, rawlen(v) do
        local x = v[i]
        local o = r:origin(v, i, origin)
        if tables.is_table(x) and not spec.grant and check == "path" then
            r:error(o, "%s: only filesystem.write and filesystem.read entries may be written as "
                .. "{ path = ..., create = ... }", key)
        elseif spec.grant and tables.is_table(x) then
            local path, create = grant_item(r, x, o, key)
            if path then
                items[#items + 1] = { value = path, create = create, origin = o, base = base, project = r.project }
            end
        elseif check_value(r, check, x, o, key) then
            local item = { value = x, origin = o, base = base, project = r.project }
            -- (Only a hook can be a function: every other check wants a string or a boolean.)
            if check == "hook" and type(x) == "function" then
                local src, line = engine.funcinfo(x)
                item.origin = (src or r.file.path) .. ":" .. tostring(line or 0)
            end
            items[#items + 1] = item
        end
    end
    def.values[key] = items
end

local function read_scalar(r, def, key, t, k)
    local origin = r:origin(t, k, def.origin)
    if check_value(r, KEYS[key].check, t[k], origin, key) then
        def.values[key] = { value = t[k], origin = origin }
    end
end

local function section(r, def, p, name, origin)
    local t = p[name]
    if not tables.is_table(t) then
        r:error(origin, "%s must be a table, not %s", name, util.describe(t))
        return nil
    end
    known_keys(r, t, SECTIONS[name], SECTION_PREFIX[name], origin)
    return t
end

-- ---- a profile ----

local function read_replace(r, def, p, line_origin)
    if p.replace ~= nil then
        local origin = r:origin(p, "replace", line_origin)
        local v = p.replace
        if type(v) == "string" then
            v = { v }
        end
        if not tables.is_list(v) then
            r:error(origin, "replace must be a list of key paths, not %s", util.describe(p.replace))
        else
            for i = 1, rawlen(v) do
                local kp = v[i]
                local paths = replaceable()
                if type(kp) ~= "string" or not paths[kp] then
                    r:error(r:origin(v, i, origin), "replace: unknown key path '%s'%s", tostring(kp),
                        type(kp) == "string" and util.suggest(kp, replaceable_names()) or "")
                else
                    for _, key in ipairs(paths[kp]) do
                        def.replace[key] = origin
                    end
                end
            end
        end
    end
end

-- A key whose value is a table of named entries (env, unit, lookup, args): entry(r, k, v, o)
-- checks one (reporting what is wrong) and returns its value, or nil to leave it out.
-- Returns { [name] = { value, origin } }, or nil when the key is not a table.
local function read_map(r, p, key, line_origin, shape, entry)
    local origin = r:origin(p, key, line_origin)
    local v = p[key]
    if not tables.is_table(v) then
        r:error(origin, "%s must be %s, not %s", key, shape, util.describe(v))
        return nil
    end
    local map = {}
    for _, k in ipairs(util.sorted_keys(v)) do
        local o = r:origin(v, k, origin)
        local value = entry(r, k, v[k], o)
        if value ~= nil then
            map[k] = { value = value, origin = o }
        end
    end
    return map
end

local function env_entry(r, k, v, o)
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
        r:error(o, "env: '%s' is not a variable name", tostring(k))
    elseif type(v) ~= "string" and math.type(v) ~= "integer" then
        r:error(o, "env.%s must be a string, not %s", k, util.describe(v))
    else
        return tostring(v)
    end
end

local function unit_entry(r, k, v, o)
    if tables.is_list(v) then
        v = { table.unpack(v, 1, rawlen(v)) }
    end
    local txt, err
    if type(k) ~= "string" or #k == 0 or #k > 128 then
        txt, err = nil, ("unit: '%s' is not a property name"):format(tostring(k))
    else
        txt, err = unit.check(k, v)
    end
    if not txt then
        r:error(o, "%s", err)
    end
    return txt
end

local function lookup_entry(r, k, m, o)
    if type(m) == "string" then
        m = { m }
    end
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") or k:match("^arg_") then
        r:error(o, "lookup: '%s' is not a usable variable name", tostring(k))
        return nil
    elseif not tables.is_list(m) or rawlen(m) == 0 then
        r:error(o, "lookup.%s must be a list of marker file names", k)
        return nil
    end
    local markers, ok = {}, true
    for i = 1, rawlen(m) do
        local x = m[i]
        if type(x) ~= "string" or x == "" or x:sub(1, 1) == "/" or x:find("%.%.") then
            r:error(o, "lookup.%s: '%s' is not a relative file name", k, tostring(x))
            ok = false
        else
            markers[#markers + 1] = x
        end
    end
    return ok and markers or nil
end

local function args_entry(r, k, a, o)
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
        r:error(o, "args: '%s' is not a usable variable name", tostring(k))
        return nil
    elseif not tables.is_table(a) then
        r:error(o, "args.%s must be a table such as { options = [\"-C\"] }", k)
        return nil
    end
    known_keys(r, a, ARG_KEYS, "args." .. k .. ".", o)
    local spec, ok = {}, true
    if a.options ~= nil then
        local opts = type(a.options) == "string" and { a.options } or a.options
        if not tables.is_list(opts) then
            r:error(o, "args.%s.options must be a list of options", k)
            ok = false
        else
            spec.options = {}
            for i = 1, rawlen(opts) do
                if type(opts[i]) ~= "string" or not opts[i]:match("^%-") then
                    r:error(o, "args.%s.options: '%s' is not an option", k, tostring(opts[i]))
                    ok = false
                else
                    spec.options[#spec.options + 1] = opts[i]
                end
            end
        end
    end
    if a.index ~= nil then
        if math.type(a.index) ~= "integer" or a.index < 1 then
            r:error(o, "args.%s.index must be a positive integer", k)
            ok = false
        else
            spec.index = a.index
        end
    end
    if ok and not spec.options and not spec.index then
        r:error(o, "args.%s needs options or index", k)
        ok = false
    end
    return ok and spec or nil
end

-- Reads profile `name` (table p) of the file into a definition; errors go to the reader.
-- With `light`, only `match` and `replace` (see M.file). With `done`, the light definition
-- already read (without errors) from this very table: its `match` and `replace` are taken
-- over rather than read again.
function M.profile(r, name, p, line_origin, light, done)
    local file = r.file
    local def = {
        name = name,
        file = file,
        origin = line_origin,
        values = {},
        replace = {},
    }
    local base = file.dir
    if light then
        if p.match ~= nil then
            read_list(r, def, "match", p, "match", base)
        end
        if p.replace ~= nil then
            read_replace(r, def, p, line_origin)
        end
        return def
    end
    -- The light read checked the keys already (M.file).
    if not done then
        known_keys(r, p, TOP, "", line_origin)
    end

    for i = 1, #LIST_KEYS do
        local k = LIST_KEYS[i]
        if p[k] ~= nil then
            if done and k == "match" then
                def.values.match = done.values.match
            else
                read_list(r, def, k, p, k, base)
            end
        end
    end
    for i = 1, #SCALAR_KEYS do
        local k = SCALAR_KEYS[i]
        if p[k] ~= nil then
            read_scalar(r, def, k, p, k)
        end
    end
    if p.hook ~= nil and file.kind ~= "lua" then
        for _, h in ipairs(def.values.hook or {}) do
            if type(h.value) ~= "string" then
                r:error(h.origin, "hook must be a Lua file name")
            end
        end
    end

    if done then
        def.replace = done.replace
    else
        read_replace(r, def, p, line_origin)
    end

    if p.delegate ~= nil then
        local origin = r:origin(p, "delegate", line_origin)
        local v = p.delegate
        if type(v) == "boolean" then
            def.values["delegate.all"] = { value = v, origin = origin }
        elseif type(v) == "string" or tables.is_list(v) then
            read_list(r, def, "delegate.names", p, "delegate", base)
        else
            r:error(origin, "delegate must be true, false, a profile name or a list of names, not %s",
                util.describe(v))
        end
    end

    for s = 1, #SECTION_NAMES do
        local sec = SECTION_NAMES[s]
        local subs = SECTIONS[sec]
        if p[sec] ~= nil then
            local origin = r:origin(p, sec, line_origin)
            local t = section(r, def, p, sec, origin)
            if t then
                if sec == "network" then
                    def.values["network.filter"] = { value = true, origin = origin }
                end
                for i = 1, #subs do
                    local sub = subs[i]
                    if t[sub] ~= nil then
                        local key = sec .. "." .. sub
                        if KEYS[key].kind == "list" then
                            read_list(r, def, key, t, sub, base)
                        else
                            read_scalar(r, def, key, t, sub)
                        end
                    end
                end
            end
        end
    end

    if p.env ~= nil then
        if tables.is_list(p.env) then
            read_list(r, def, "env.copy", p, "env", base)
        else
            def.values["env.set"] = read_map(r, p, "env", line_origin, "a list of names or a table of values", env_entry)
        end
    end
    if p.unit ~= nil then
        def.values.unit = read_map(r, p, "unit", line_origin, "a table", unit_entry)
    end
    if p.lookup ~= nil then
        def.values.lookup = read_map(r, p, "lookup", line_origin, "a table of name = [marker files]", lookup_entry)
    end
    if p.args ~= nil then
        def.values.args = read_map(r, p, "args", line_origin, "a table of name = { options = [...] }", args_entry)
    end
    return def
end

-- Reads a whole file's table of profiles. Returns { name = def }, order.
--
-- What every run needs of every profile is read at once: the profile's name and type, its
-- keys (an unknown one is an error), `match` and `replace`. The rest is read when the profile
-- is first used (M.ensure): a run pays only for the profiles it applies, and `scudo check`
-- reads them all.
function M.file(r, doc)
    local defs, order, names = {}, {}, util.sorted_keys(doc)
    for i = 1, #names do
        local name = names[i]
        local p = doc[name]
        local origin = r:origin(doc, name, r.file.path)
        if type(name) ~= "string" or not name:match("^[%w_][%w_%.%-]*$") then
            r:error(origin, "'%s' is not a usable profile name (letters, digits, '_', '-', '.')", tostring(name))
        elseif not tables.is_table(p) then
            r:error(origin, "top-level key '%s' must be a profile table, not %s", name, util.describe(p))
        else
            known_keys(r, p, TOP, "", origin)
            local def = M.profile(r, name, p, origin, true)
            def.lazy = p
            def.reader = r
            defs[name] = def
            order[#order + 1] = name
        end
    end
    -- In file order where the lines are known (the line of each origin).
    local line = {}
    for i = 1, #order do
        line[order[i]] = r:line(doc, order[i]) or 0
    end
    table.sort(order, function(a, b)
        if line[a] ~= line[b] then
            return line[a] < line[b]
        end
        return a < b
    end)
    return defs, order
end

-- Reads the rest of a profile. On errors: with `collect`, adds them to the file's errors and
-- returns false; otherwise raises them (the run stops).
function M.ensure(def, collect)
    local p = def.lazy
    if not p then
        -- A built-in definition (load.thaw): the rest of its values, checked at build time.
        local frozen = def.frozen
        if frozen then
            def.frozen = nil
            local values = frozen(def.frozen_index)
            values.match = def.values.match
            def.values, def.frozen_index = values, nil
        end
        return true
    end
    def.lazy = nil
    local r = def.reader
    local before = #r.errors
    local full = M.profile(r, def.name, p, def.origin, false, def)
    def.values, def.replace = full.values, full.replace
    if #r.errors > before then
        local errs = table.move(r.errors, before + 1, #r.errors, 1, {})
        if collect then
            for _, e in ipairs(errs) do
                def.file.errors[#def.file.errors + 1] = e
            end
            return false
        end
        util.fail("%s", table.concat(errs, "\n"))
    end
    return true
end

return M
