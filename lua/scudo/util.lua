-- SPDX-License-Identifier: MIT OR Apache-2.0
-- Small helpers shared by the policy library: errors, lists, paths, suggestions.
local engine = require("scudo.engine")
local tables = require("scudo.tables")
local text = require("scudo.text")
local toml = require("scudo.toml")

local M = {}

-- A configuration error: reported as it is, without a traceback, exit 125.
function M.fail(fmt, ...)
    engine.raise(select("#", ...) > 0 and fmt:format(...) or fmt)
end

-- Describes a value's type the way the documentation does.
function M.describe(v)
    if toml.is_datetime(v) then
        return "a date-time"
    elseif tables.is_list(v) then
        return "a list"
    elseif type(v) == "table" then
        return "a table"
    elseif math.type(v) == "integer" then
        return "an integer"
    elseif math.type(v) == "float" then
        return "a float"
    end
    return "a " .. type(v)
end

-- " (did you mean 'x'?)" for the closest candidate, or "".
function M.suggest(name, candidates)
    local best, bestd
    for _, c in ipairs(candidates) do
        local d = text.distance(name, c)
        if not bestd or d < bestd then
            best, bestd = c, d
        end
    end
    if best and bestd <= math.max(2, #name // 3) and bestd < #name then
        return (" (did you mean '%s'?)"):format(best)
    end
    return ""
end

local function by_text(a, b)
    return tostring(a) < tostring(b)
end

-- The keys of t in order: as strings sort with <, or (any other key) by their text. The
-- common case, strings only, in one C call.
function M.sorted_keys(t)
    local keys = tables.sorted_keys(t)
    if keys then
        return keys
    end
    keys = {}
    for k in next, t do
        keys[#keys + 1] = k
    end
    table.sort(keys, by_text)
    return keys
end

function M.copy(t)
    local r = {}
    for k, v in next, t do
        r[k] = v
    end
    return r
end

function M.dirname(p)
    local d = p:match("^(.*)/[^/]*$")
    if d == nil or d == "" then
        return "/"
    end
    return d
end

-- The last component, trailing slashes aside: what p:match("([^/]*)/*$") gives, without
-- that pattern's search from every position (microseconds for a long path).
function M.basename(p)
    if p:byte(-1) == 47 then    -- "/"
        p = p:match("^(.-)/*$")
    end
    local slash = p:match("^.*()/")
    return slash and p:sub(slash + 1) or p
end

-- A copy of user data that holds only plain values: no metatables, no cycles, bounded depth
-- and size. Whatever user code returns is read through this, with raw access only, so no
-- metamethod of the user's runs while the library reads it.
function M.plain(v, where, depth, budget)
    depth = depth or 0
    budget = budget or { n = 0 }
    local t = type(v)
    if t == "string" or t == "number" or t == "boolean" or t == "function" then
        return v
    end
    if t ~= "table" then
        M.fail("%s: a value of type %s cannot be used here", where, t)
    end
    if depth > 16 then
        M.fail("%s: tables nested too deep (or a cycle)", where)
    end
    local r = {}
    for k, x in next, v do
        budget.n = budget.n + 1
        if budget.n > 100000 then
            M.fail("%s: too many values", where)
        end
        local tk = type(k)
        if tk ~= "string" and math.type(k) ~= "integer" then
            M.fail("%s: keys must be strings or integers, not %s", where, tk)
        end
        r[k] = M.plain(x, where, depth + 1, budget)
    end
    return r
end

return M
