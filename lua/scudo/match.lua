-- SPDX-License-Identifier: MIT OR Apache-2.0
-- Which profiles a command selects, and in which order they apply.
--
-- A pattern is a command name ("npm": the basename of argv[0]), a command line ("npm publish":
-- the command, then each further word in order, with options — arguments starting with "-" —
-- allowed in between), or "re:REGEX" (POSIX ERE on the basename, whole match).
-- Profiles apply from the least specific match to the most specific, so the most specific
-- wins where values conflict: regex (1) < name (2) < command line (3); among equals, the
-- profile defined later (a project file after the global configuration) comes last.
local util = require("scudo.util")
local text = require("scudo.text")
local sys = require("scudo.sys")

local M = {}

M.RANK = { regex = 1, name = 2, line = 3 }

local NONE = {}

-- The profile's own match entries (not inherited), across its definitions. To be read only:
-- when one definition holds them all, this is its list.
function M.patterns(defs)
    local list, own = NONE, false
    for i = 1, #defs do
        local d = defs[i]
        if d.replace.match then
            list, own = NONE, false
        end
        local m = d.values.match
        if m and #m > 0 then
            if #list == 0 then
                list = m
            else
                if not own then
                    list, own = table.move(list, 1, #list, 1, {}), true
                end
                table.move(m, 1, #m, #list + 1, list)
            end
        end
    end
    return list
end

-- Does the pattern select the command? name: basename of argv[0]; argv: the full argv. Returns
-- that, and the pattern's kind ("regex", "name", "line", as said at the top), from one C call;
-- nil, "regex" and why, when a regex would need more than its budgets to match this name.
function M.test(pattern, name, argv)
    return text.command_matches(pattern, name, argv)
end

-- All profiles matching the request, least specific first. Each:
-- { name, pattern, origin, kind, rank, position }.
function M.find(index, request, file_position)
    local found, names = {}, index.names
    for i = 1, #names do
        local name = names[i]
        local defs = index.defs[name]
        local best
        local patterns = M.patterns(defs)
        for j = 1, #patterns do
            local m = patterns[j]
            local ok, kind, err = M.test(m.value, request.command_name, request.argv)
            if ok == nil then
                util.fail("%s: match: '%s': %s", m.origin, m.value, err)
            end
            if ok and (not best or M.RANK[kind] > best.rank) then
                best = { name = name, pattern = m.value, origin = m.origin, kind = kind, rank = M.RANK[kind] }
            end
        end
        if best then
            best.position = file_position(defs[#defs].file)
            found[#found + 1] = best
        end
    end
    table.sort(found, function(a, b)
        if a.rank ~= b.rank then
            return a.rank < b.rank
        elseif a.position ~= b.position then
            return a.position < b.position
        end
        return a.name < b.name
    end)
    return found
end

-- The command names the profiles `names` can select, for the links that route them to scudo
-- inside a sandbox that delegates them: a name pattern's name, a command-line pattern's first
-- word, and for a "re:" pattern every name in the directories of `search_path` (":"-separated,
-- absolute ones only) that it matches. Sorted, each once. Second, those of them a profile
-- matches by the name alone, whatever the arguments (not only through a command-line pattern
-- such as "git push"): scudo takes the place of their executables inside (plan-harden.h).
function M.commands(index, names, search_path)
    local set, regexes, by_name = {}, {}, {}
    for i = 1, #names do
        local patterns = M.patterns(index.defs[names[i]])
        for j = 1, #patterns do
            local p = patterns[j].value
            if p:sub(1, 3) == "re:" then
                regexes[#regexes + 1] = p
            else
                local first = p:match("^%s*(%S+)")
                if first then
                    set[first] = true
                    if not p:match("^%s*%S+%s+%S") then
                        by_name[first] = true
                    end
                end
            end
        end
    end
    if #regexes > 0 and search_path then
        for dir in search_path:gmatch("[^:]+") do
            local entries = dir:sub(1, 1) == "/" and sys.listdir(dir, true) or nil
            for k = 1, entries and #entries or 0 do
                local e = entries[k]
                for j = 1, #regexes do
                    if not set[e] and M.test(regexes[j], e, { e }) then
                        set[e] = true
                        by_name[e] = true
                    end
                end
            end
        end
    end
    return util.sorted_keys(set), util.sorted_keys(by_name)
end

function M.has_match(index, name)
    local defs = index.defs[name]
    return defs ~= nil and #M.patterns(defs) > 0
end

return M
