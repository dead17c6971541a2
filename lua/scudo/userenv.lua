-- SPDX-License-Identifier: MIT OR Apache-2.0
-- The environment user code runs in: `.lua` profile files and hooks.
--
-- Each chunk gets its own _ENV, a fresh table whose __index is a shared, read-only view of
-- what user code may use: the base functions that cannot reach outside (no load, dofile,
-- require of arbitrary modules, collectgarbage, print, rawset), read-only views of string
-- (without dump), table, math and utf8, and the scudo API. setmetatable refuses __gc, so no
-- finalizer of the user's can run outside its budget. Budgets themselves are C's: see
-- engine.budgeted_call in src/policy/l-engine.c.
local engine = require("scudo.engine")
local api = require("scudo")

local M = {}

-- A read-only view of t: reads go through, writes raise, the metatable is locked, and
-- iteration does not hand out t itself.
local function readonly(t, name)
    local view = {}
    setmetatable(view, {
        __index = t,
        __newindex = function(_, k)
            error(("%s is read-only (cannot set '%s')"):format(name, tostring(k)), 2)
        end,
        __pairs = function()
            local k
            return function()
                local v
                k, v = next(t, k)
                return k, v
            end
        end,
        __len = function()
            return #t
        end,
        __metatable = false,
    })
    return view
end

local function library(t, name, skip)
    local copy = {}
    for k, v in next, t do
        if not (skip and skip[k]) then
            copy[k] = v
        end
    end
    return readonly(copy, name)
end

local function safe_setmetatable(t, mt)
    if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
        error("setmetatable: __gc is not available here", 2)
    end
    return setmetatable(t, mt)
end

-- xpcall whose handler runs after the error has unwound, not as a message handler: a
-- handler that fails again (as everything does once a budget has run out) would otherwise be
-- re-entered for its own error, over and over.
local function safe_xpcall(f, handler, ...)
    local r = table.pack(pcall(f, ...))
    if r[1] then
        return table.unpack(r, 1, r.n)
    end
    return false, handler(r[2])
end

local SAFE = {
    _VERSION = _VERSION,
    assert = assert,
    error = error,
    getmetatable = getmetatable,
    ipairs = ipairs,
    next = next,
    pairs = pairs,
    pcall = pcall,
    rawequal = rawequal,
    rawget = rawget,
    rawlen = rawlen,
    select = select,
    setmetatable = safe_setmetatable,
    tonumber = tonumber,
    tostring = tostring,
    type = type,
    xpcall = safe_xpcall,
    string = library(string, "string", { dump = true }),
    table = library(table, "table"),
    math = library(math, "math"),
    utf8 = library(utf8, "utf8"),
}

local public = {
    ["scudo"] = readonly({
        warn = api.warn,
        fs = library(api.fs, "scudo.fs"),
        net = library(api.net, "scudo.net"),
        unit = library(api.unit, "scudo.unit"),
        path = library(api.path, "scudo.path"),
    }, "scudo"),
}
for _, sub in ipairs({ "fs", "net", "unit", "path" }) do
    public["scudo." .. sub] = public.scudo[sub]
end
SAFE.scudo = public.scudo
SAFE.require = function(name)
    local m = public[name]
    if m == nil then
        error(("require: module '%s' is not available here (only scudo, scudo.fs, scudo.net, "
            .. "scudo.unit, scudo.path)"):format(tostring(name)), 2)
    end
    return m
end

local SAFE_VIEW = readonly(SAFE, "the global environment")

-- A fresh _ENV for one chunk: its own globals, falling back on the safe view.
function M.env()
    return setmetatable({}, { __index = SAFE_VIEW, __metatable = false })
end

-- Compiles text (never binary) as a chunk with its own environment.
-- Returns the function, or nil and a message.
function M.compile(source, chunkname)
    return engine.load(source, "@" .. chunkname, M.env())
end

-- Runs f(...) as user code. Returns true, results... or nil, message.
function M.run(label, context, f, ...)
    return engine.budgeted_call(label, context, f, ...)
end

return M
