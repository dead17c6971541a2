-- SPDX-License-Identifier: MIT OR Apache-2.0
-- Definitions → resolved profiles.
--
-- A profile may be defined in several files (the built-in policies, /etc, ~/.config, project
-- files); its definitions apply in that order, each one adding to the last. A resolved profile
-- is the merge, left to right, of: the profiles it extends (each resolved the same way), then
-- each of its own definitions. Lists concatenate, scalars and the entries of maps (unit, env,
-- lookup, args) are overridden by the later value, and a key named in a definition's
-- `replace` starts over from that definition's value (or from nothing, when it sets none).
-- `match` and `description` belong to the profile that states them and are not inherited.
local util = require("scudo.util")
local schema = require("scudo.schema")
local tables = require("scudo.tables")

local KEYS = schema.KEYS
-- Within one definition, a path named under two keys gets the more restrictive: the keys are
-- taken from least to most restrictive (schema.FS_ACCESS) and the later entry wins. (In a
-- fixed order: the order of a table's keys is not one, it changes from run to run.)
local FS_ACCESS, FS_KEY = schema.FS_ACCESS, schema.FS_KEY

local M = {}

-- All definitions by profile name, in file order. files: the applied file records.
function M.index(files)
    local index = { defs = {}, names = {} }
    for i = 1, #files do
        local f = files[i]
        if f.status == "applied" then
            for j = 1, #f.order do
                local name = f.order[j]
                local list = index.defs[name]
                if not list then
                    list = {}
                    index.defs[name] = list
                    index.names[#index.names + 1] = name
                end
                list[#list + 1] = f.defs[name]
            end
        end
    end
    table.sort(index.names)
    index.resolved = {}
    return index
end

-- Lists hold the items themselves (never copies). The order of filesystem items across keys
-- (a child's `filesystem.hide` of a path its parent made writable comes later, and later wins)
-- is kept in one more list per resolved profile, `order`: the parents' orders, then the
-- profile's own items (see FS_ACCESS). build.lua adds filesystem entries in that order.
local function append(dst, src)
    local n = #src
    if n > 0 then
        table.move(src, 1, n, #dst + 1, dst)
    end
    return dst
end

-- Merges `values` (a definition's, or a resolved profile's) into the profile `acc`; replace:
-- a definition's replace set, or nil; inherit: values are a parent's. The rule itself is
-- stated once, beside its code: tables.merge in src/policy/l-tables.c.
local function merge_into(acc, values, replace, inherit)
    tables.merge(acc, values, KEYS, replace, inherit)
end
M.merge_into = merge_into

-- Resolves profile `name`. `via`: what asked for it, for messages ("extended by X at f:l").
-- Returns { name, values, chain = { names, depth-first }, defs = { defs } }.
function M.resolve(index, name, via, stack)
    local done = index.resolved[name]
    if done then
        return done
    end
    stack = stack or {}
    for i, n in ipairs(stack) do
        if n == name then
            local cycle = table.move(stack, i, #stack, 1, {})
            cycle[#cycle + 1] = name
            util.fail("%s: extend cycle: %s", via or name, table.concat(cycle, " -> "))
        end
    end
    local defs = index.defs[name]
    if not defs then
        util.fail("%s: unknown profile '%s'%s", via or "--profile", name, util.suggest(name, index.names))
    end

    for i = 1, #defs do
        schema.ensure(defs[i])
    end
    stack[#stack + 1] = name
    -- The parents: every definition's extend list, honouring replace = ["extend"].
    local parents = {}
    for i = 1, #defs do
        local d = defs[i]
        if d.replace.extend then
            parents = {}
        end
        local extend = d.values.extend
        if extend then
            append(parents, extend)
        end
    end
    local acc, chain, seen, order = {}, { name }, { [name] = true }, {}
    for i = 1, #parents do
        local p = parents[i]
        -- The message naming the edge is only built for a parent not resolved yet.
        local parent = index.resolved[p.value]
            or M.resolve(index, p.value, ("%s (extended by '%s')"):format(p.origin, name), stack)
        merge_into(acc, parent.values, nil, true)
        append(order, parent.order)
        local pc = parent.chain
        for j = 1, #pc do
            local n = pc[j]
            if not seen[n] then
                seen[n] = true
                chain[#chain + 1] = n
            end
        end
    end
    for i = 1, #defs do
        local d = defs[i]
        local values = d.values
        merge_into(acc, values, d.replace, false)
        for k = 1, #FS_ACCESS do
            local list = values[FS_KEY[FS_ACCESS[k]]]
            if list then
                append(order, list)
            end
        end
    end
    stack[#stack] = nil

    local r = { name = name, values = acc, chain = chain, defs = defs, order = order }
    index.resolved[name] = r
    return r
end

-- The merge of several resolved profiles, in order (the later wins), and the order of all
-- their list items.
function M.combine(profiles)
    local acc, order = {}, {}
    for i = 1, #profiles do
        local p = profiles[i]
        merge_into(acc, p.values, nil, false)
        append(order, p.order)
    end
    return acc, order
end

return M
