-- SPDX-License-Identifier: MIT OR Apache-2.0
-- The built-in policies, checked and read at build time. Only tools/policy-freeze.c loads this
-- module (lua/meson.build embeds it in that tool alone); scudo takes what it returned from
-- the binary (load.thaw).
local util = require("scudo.util")
local load = require("scudo.load")
local schema = require("scudo.schema")

local M = {}

-- Lua source for value v: plain data only (strings, numbers, booleans, tables of them), each
-- table reached once, so that the loaded copy is the same data and nothing in it is shared.
local function freeze_value(v, out, seen, where)
    local t = type(v)
    if t ~= "table" then
        if t ~= "string" and t ~= "number" and t ~= "boolean" then
            util.fail("%s: cannot freeze a %s", where, t)
        end
        out[#out + 1] = ("%q"):format(v)
        return
    end
    if seen[v] then
        util.fail("%s: a table reached twice cannot be frozen", where)
    end
    if getmetatable(v) ~= nil then
        util.fail("%s: a table with a metatable cannot be frozen", where)
    end
    seen[v] = true
    out[#out + 1] = "{"
    local n = rawlen(v)
    for i = 1, n do
        freeze_value(v[i], out, seen, where .. "[" .. i .. "]")
        out[#out + 1] = ","
    end
    for _, k in ipairs(util.sorted_keys(v)) do
        if not (math.type(k) == "integer" and k >= 1 and k <= n) then
            out[#out + 1] = "["
            freeze_value(k, out, seen, where)
            out[#out + 1] = "]="
            freeze_value(v[k], out, seen, where .. "." .. tostring(k))
            out[#out + 1] = ","
        end
    end
    out[#out + 1] = "}\n"
end

-- Reads one built-in policy file as a run would (name: its name in the binary, so that
-- origins read "<built-in>/NAME:LINE"), checks every profile in it completely, and returns
-- the Lua sources that rebuild its definitions, as a list: first { order = { names }, defs =
-- { name = { name, origin, values = { match }, replace } } }, what every run needs of every
-- profile, then for each name in order the rest of its values, which schema.ensure loads
-- when the profile is used (most runs use a few of them). load.parse takes these instead of
-- parsing the text again. Any error or warning fails the build.
function M.freeze(name, data)
    local f = load.new("<built-in>/" .. name, "builtin", "toml")
    f.text = data
    local ok = load.parse(f, {})
    for _, n in ipairs(f.order) do
        ok = schema.ensure(f.defs[n], true) and ok
    end
    if not ok or #f.errors > 0 or #f.warnings > 0 then
        local all = table.move(f.warnings, 1, #f.warnings, #f.errors + 1, table.move(f.errors, 1, #f.errors, 1, {}))
        util.fail("%s", table.concat(all, "\n"))
    end
    local defs, rest = {}, {}
    for i, n in ipairs(f.order) do
        local d = f.defs[n]
        local values = {}
        for key, e in next, d.values do
            if key ~= "match" then
                values[key] = e
            end
        end
        defs[n] = { name = d.name, origin = d.origin, values = { match = d.values.match }, replace = d.replace }
        local out = { "return " }
        freeze_value(values, out, {}, f.path .. ": " .. n)
        rest[i] = table.concat(out)
    end
    local out = { "return " }
    freeze_value({ order = f.order, defs = defs }, out, {}, f.path)
    return { table.concat(out), table.unpack(rest) }
end

return M
