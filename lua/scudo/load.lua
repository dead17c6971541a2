-- SPDX-License-Identifier: MIT OR Apache-2.0
-- Reading one configuration file: its text (size-capped), its hash, its trust, its parse
-- (TOML, or Lua run as user code) and its profiles.
--
-- A file record:
--   { path, kind = "toml"|"lua", layer = "builtin"|"system"|"user"|"project"|"check",
--     dir (for relative paths), text, sha256,
--     status = "applied" | "untrusted" | "changed" | "error" | "skipped",
--     defs = { name = def }, order = { names }, errors = { "file:line: message" },
--     warnings = { ... } }
local util = require("scudo.util")
local sys = require("scudo.sys")
local text = require("scudo.text")
local toml = require("scudo.toml")
local trust = require("scudo.trust")
local schema = require("scudo.schema")
-- scudo.userenv (and the public API behind it) is loaded only when there is user code.
local function userenv()
    return require("scudo.userenv")
end

local M = {}

-- Larger files are refused: TOML's own limit, and plenty for a Lua profile or hook.
M.MAX_SIZE = 1024 * 1024

function M.new(path, layer, kind)
    return {
        path = path,
        layer = layer,
        kind = kind or (path:sub(-4) == ".lua" and "lua" or "toml"),
        dir = layer ~= "builtin" and util.dirname(path) or nil,
        errors = {},
        warnings = {},
        defs = {},
        order = {},
    }
end

local function file_error(f, msg)
    f.status = "error"
    f.errors[#f.errors + 1] = msg
end

-- Puts what sys.readfile gave into f: its text and hash, or status "error" and the message.
local function take(f, data, err)
    if not data then
        file_error(f, err)
        return false
    end
    f.text, f.sha256 = data, text.sha256(data)
    return true
end

-- Reads the file's text and hash; false (status "error") when it cannot be read.
function M.read(f)
    if f.text then
        return true
    end
    return take(f, sys.readfile(f.path, M.MAX_SIZE))
end

-- The record of the file at path, read at once (M.read then has nothing to do), or nil when
-- there is no such file: opening it is what tells whether it is there, so a stat first would
-- only cost a system call more. A file that is there but cannot be read is an "error" record.
function M.open(path, layer)
    local data, err = sys.readfile(path, M.MAX_SIZE, true)
    if not data and not err then        -- ENOENT, ENOTDIR: simply not there
        return nil
    end
    local f = M.new(path, layer)
    take(f, data, err)
    return f
end

-- The path trust is recorded under: the file's directory resolved, its own name as it is (a
-- symlink named .scudo.toml is trusted as that name, with the content it leads to).
function M.trust_key(path)
    -- M.discovered (set by discover.files): the project files it found in the start directory
    -- and its ancestors, once it made sure those are their own realpath; see there. Their
    -- directory is taken as it is; every other path (hook files, `scudo trust PATH`) resolved.
    -- (Such a path is its directory joined with its name already: it is its own key.)
    if M.discovered and M.discovered[path] then
        return path
    end
    local dir, err = sys.realpath(util.dirname(path))
    if not dir then
        return nil, err
    end
    return text.join(dir, util.basename(path))
end

-- Project files (and hook files they name) apply only when trusted with this very content.
function M.check_trust(f, store)
    if not store then
        f.trusted = false
        return false
    end
    -- The store is read once per evaluation.
    if not M.trusted or M.trusted_store ~= store then
        local entries, err = trust.entries(store)
        if not entries then
            f.warnings[#f.warnings + 1] = err
            entries = {}
        end
        M.trusted, M.trusted_store = entries, store
    end
    local key = M.trust_key(f.path)
    local ok = key ~= nil and M.trusted[key] == f.sha256
    f.trusted = ok
    return ok
end

local function parse_toml(f)
    local doc, err = toml.decode(f.text, f.path)
    if not doc then
        file_error(f, err)
        return nil
    end
    return doc
end

-- Runs a `.lua` profile file as user code; it must return a table of profiles.
local function parse_lua(f, request)
    local chunk, err = userenv().compile(f.text, f.path)
    if not chunk then
        file_error(f, err)
        return nil
    end
    local context = { phase = "load", start_dir = request.start_dir, warnings = f.warnings }
    local res = table.pack(userenv().run(f.path, context, chunk))
    if not res[1] then
        file_error(f, res[2])
        return nil
    end
    local doc = res[2]
    if type(doc) ~= "table" then
        file_error(f, ("%s: must return a table of profiles, not %s"):format(f.path, util.describe(doc)))
        return nil
    end
    return util.plain(doc, f.path)
end

-- Parses and reads the profiles. The file must have been read (and, for a project file,
-- found trusted) first: this is the point where a Lua file's code runs.
function M.parse(f, request)
    if f.frozen then
        -- nil should the frozen form not fit this binary: then the text is parsed.
        local frozen = f.frozen
        f.frozen = nil
        local t = frozen()
        if t then
            return M.thaw(f, t, frozen)
        end
    end
    local doc
    if f.kind == "lua" then
        doc = parse_lua(f, request)
    else
        doc = parse_toml(f)
    end
    if not doc then
        return false
    end
    local r = schema.reader(f)
    f.defs, f.order = schema.file(r, doc)
    for _, e in ipairs(r.errors) do
        f.errors[#f.errors + 1] = e
    end
    if #f.errors > 0 then
        f.status = "error"
        return false
    end
    f.status = f.status or "applied"
    return true
end

-- A built-in policy file checked and read at build time (scudo.freeze): its
-- definitions t come ready, checked, and without parsing; each with only its match and
-- replace until schema.ensure asks frozen(i) for the rest of its values.
function M.thaw(f, t, frozen)
    for i, name in ipairs(t.order) do
        local d = t.defs[name]
        d.file, d.frozen, d.frozen_index = f, frozen, i
    end
    f.defs, f.order = t.defs, t.order
    f.status = f.status or "applied"
    return true
end

-- Only checks that a Lua file compiles, without running it (for `scudo check` of a file that
-- is not trusted).
function M.compile_only(f)
    local chunk, err = userenv().compile(f.text, f.path)
    if not chunk then
        file_error(f, err)
        return false
    end
    return true
end

return M
