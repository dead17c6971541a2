-- SPDX-License-Identifier: MIT OR Apache-2.0
-- The configuration verbs: scudo check, scudo profiles, scudo trust; and the fuzzer's entry
-- point. Called through scudo.policy, which loads this only when one of them runs.
local util = require("scudo.util")
local discover = require("scudo.discover")
local load = require("scudo.load")
local merge = require("scudo.merge")
local match = require("scudo.match")
local build = require("scudo.build")
local trust = require("scudo.trust")
local sys = require("scudo.sys")
local text = require("scudo.text")
local toml = require("scudo.toml")
local schema = require("scudo.schema")
local policy = require("scudo.policy")
local tables = require("scudo.tables")
local expand = require("scudo.expand")

local read_files, new_explain = policy.read_files, policy.new_explain

local M = {}

-- ---- scudo check ----

local VAR_FIXED = expand.BUILT_IN

-- Variables named in paths that nothing defines: a typo would silently drop the entry.
local function check_variables(index, report)
    local lookups, args = {}, {}
    for _, name in ipairs(index.names) do
        for _, d in ipairs(index.defs[name]) do
            for k in next, d.values.lookup or {} do
                lookups[k] = true
            end
            for k in next, d.values.args or {} do
                args[k] = true
            end
        end
    end
    local known = util.sorted_keys(VAR_FIXED)
    for k in next, lookups do
        known[#known + 1] = k
    end
    for k in next, args do
        known[#known + 1] = "arg_" .. k
    end
    for _, name in ipairs(index.names) do
        for _, d in ipairs(index.defs[name]) do
            for key, e in next, d.values do
                if schema.KEYS[key].kind == "list" and key:match("^filesystem%.") then
                    for _, item in ipairs(e) do
                        for var in item.value:gmatch("%${([^}]*)}") do
                            local ok = VAR_FIXED[var] or var:match("^env:[%a_][%w_]*$")
                                or lookups[var] or (var:match("^arg_") and args[var:sub(5)])
                            if not ok then
                                report.errors[#report.errors + 1] = ("%s: unknown variable ${%s}%s")
                                    :format(item.origin, var, util.suggest(var, known))
                            end
                        end
                    end
                end
            end
        end
    end
end

-- Checks the given files (or, with none, everything that would be read from the start
-- directory). Returns the report text and the number of errors.
function M.check(request, paths)
    local report = { errors = {}, lines = {} }
    local files
    if #paths > 0 then
        files = {}
        -- A file under /etc/scudo or ~/.config/scudo is configuration, trusted by where it
        -- is; any other is treated like a project file (a .lua one is only compiled unless
        -- it is trusted).
        local xdg = request.env.XDG_CONFIG_HOME
        if not xdg or xdg:sub(1, 1) ~= "/" then
            xdg = text.join(request.home, ".config")
        end
        local config_dirs = { request.sysconfdir, text.join(xdg, "scudo") }
        for _, p in ipairs(paths) do
            local path = text.join(request.start_dir, p)
            local layer = "check"
            for _, d in ipairs(config_dirs) do
                if path:sub(1, #d + 1) == d .. "/" then
                    layer = "user"
                end
            end
            files[#files + 1] = load.new(path, layer)
        end
    else
        files = discover.files(request)
    end
    local store = trust.store()
    for i, f in ipairs(files) do
        f.position = i
        local state = "ok"
        if f.status ~= "error" and load.read(f) then
            local trusted = f.layer ~= "project" and f.layer ~= "check" or load.check_trust(f, store)
            if f.kind == "lua" and not trusted then
                -- Never run code that is not trusted, not even to check it.
                if load.compile_only(f) then
                    state = "compiles; not run (not trusted)"
                end
            elseif load.parse(f, request) then
                f.status = "applied"
                if not trusted then
                    state = "not trusted"
                end
                -- Every profile in full, not only what a run would use. A profile with
                -- errors is left out of the whole-configuration checks below.
                local good = {}
                for _, name in ipairs(f.order) do
                    if schema.ensure(f.defs[name], true) then
                        good[#good + 1] = name
                    else
                        state = "error"
                    end
                end
                f.order = good
            end
        end
        if f.status == "error" or state == "error" then
            state = "error"
            for _, e in ipairs(f.errors) do
                report.errors[#report.errors + 1] = e
            end
        end
        report.lines[#report.lines + 1] = ("%-8s %s"):format(state == "error" and "ERROR" or "ok", f.path)
            .. (state ~= "ok" and state ~= "error" and ("  (" .. state .. ")") or "")
    end

    -- Whole-configuration checks on what parsed: extend chains and variables.
    local index = merge.index(files)
    for _, name in ipairs(index.names) do
        local ok, err = pcall(merge.resolve, index, name)
        if not ok then
            report.errors[#report.errors + 1] = type(err) == "table" and err.message or tostring(err)
        end
    end
    check_variables(index, report)

    local out = {}
    for _, l in ipairs(report.lines) do
        out[#out + 1] = l
    end
    if #report.errors > 0 then
        out[#out + 1] = ""
        for _, e in ipairs(report.errors) do
            out[#out + 1] = e
        end
    end
    out[#out + 1] = ("%d file(s) checked, %d error(s)"):format(#files, #report.errors)
    return table.concat(out, "\n") .. "\n", #report.errors
end

-- ---- scudo profiles ----

function M.profiles(request)
    local ex = new_explain()
    local files = read_files(request, ex)
    local index = merge.index(files)
    local out = {}
    for _, name in ipairs(index.names) do
        local r = merge.resolve(index, name)
        local defs = index.defs[name]
        local desc
        for _, d in ipairs(defs) do
            schema.ensure(d)
            desc = d.values.description and d.values.description.value or desc
        end
        local pats = {}
        for _, m in ipairs(match.patterns(defs)) do
            pats[#pats + 1] = m.value
        end
        out[#out + 1] = name .. (desc and ("  " .. desc) or "")
        if #pats > 0 then
            out[#out + 1] = "    match: " .. table.concat(pats, ", ")
        end
        if #r.chain > 1 then
            out[#out + 1] = "    extends: " .. table.concat(r.chain, " -> ", 2)
        end
        local d = r.values.delegable
        if d then
            out[#out + 1] = "    delegable: " .. tostring(d.value)
        end
        -- the unit properties its own definitions set (what it extends says them itself)
        local props = {}
        for _, def in ipairs(defs) do
            local unit = def.values.unit
            if type(unit) == "table" then
                for _, k in ipairs(util.sorted_keys(unit)) do
                    local e = unit[k]
                    props[#props + 1] = k .. "=" .. tostring(type(e) == "table" and e.value or e)
                end
            end
        end
        if #props > 0 then
            out[#out + 1] = "    unit: " .. table.concat(props, ", ")
        end
        for _, def in ipairs(defs) do
            out[#out + 1] = "    defined at " .. def.origin
        end
    end
    for _, n in ipairs(ex.notices) do
        out[#out + 1] = "note: " .. n
    end
    return table.concat(out, "\n") .. "\n"
end

-- ---- the FUSE shim's names (src/shim/, docs/shim.md) ----

-- The command names some profile selects by name, as seen from the request's start directory
-- (the same files and trust as `scudo profiles`), one a line, sorted: a name pattern's name and
-- a command-line pattern's first word (the run decides on the rest). A "re:" pattern lists no
-- name: `sandbox` matches every command, and a shim that listed the whole PATH would put
-- every command through scudo. Returns the text and the number of names.
function M.command_names(request)
    local ex = new_explain()
    local index = merge.index(read_files(request, ex))
    local names = match.commands(index, index.names, nil)
    if #names == 0 then
        return "", 0
    end
    return table.concat(names, "\n") .. "\n", #names
end

-- ---- scudo trust ----

-- Text from a file or a path, fit for the terminal: each control character (newlines too, which
-- could fake a line of the summary) shown as "?".
local function shown(s)
    return (tostring(s):gsub("%c", "?"))
end

-- A value of a profile key as written: a list joined, a table as { k = v }.
local function show_value(v)
    if type(v) ~= "table" then
        return shown(v)
    end
    local parts = {}
    if tables.is_list(v) then
        for i = 1, #v do
            parts[i] = show_value(v[i])
        end
        return "[" .. table.concat(parts, ", ") .. "]"
    end
    for _, k in ipairs(util.sorted_keys(v)) do
        parts[#parts + 1] = shown(k) .. " = " .. show_value(v[k])
    end
    return "{ " .. table.concat(parts, ", ") .. " }"
end

-- Every key of one profile definition, as written, one line each: what trusting it grants.
local function show_profile(def, out)
    out[#out + 1] = ("  [%s]"):format(shown(def.name))
    for _, key in ipairs(util.sorted_keys(def.values)) do
        local e, kind = def.values[key], schema.KEYS[key].kind
        local items = {}
        if kind == "list" then
            for i, item in ipairs(e) do
                items[i] = type(item.value) == "function" and "(a function)" or show_value(item.value)
            end
        elseif kind == "map" then
            for _, k in ipairs(util.sorted_keys(e)) do
                items[#items + 1] = shown(k) .. " = " .. show_value(e[k].value)
            end
        else
            items[1] = show_value(e.value)
        end
        out[#out + 1] = ("    %s: %s"):format(key, table.concat(items, ", "))
    end
    for _, key in ipairs(util.sorted_keys(def.replace or {})) do
        out[#out + 1] = ("    replace: %s"):format(shown(key))
    end
end

-- Whether `real` (a resolved path) lies in the directory `dir` (resolved) or below it.
local function in_tree(real, dir)
    return dir == "/" or real:sub(1, #dir + 1) == dir .. "/"
end

-- The only files trust means anything for: project files and hook files (which are Lua).
local function trustable_name(p)
    local b = util.basename(p)
    return b == ".scudo.toml" or (#b > 4 and b:sub(-4) == ".lua")
end

-- The files `scudo trust` records, and what they grant. One rule for all of them:
--   * with no PATH, the project files of the start directory (.scudo.toml, .scudo.lua in it),
--     never those of a directory above it: a sandbox that could write there could have left
--     one; each of those needs its path named;
--   * PATH names a file, or a directory for its project files; a file must be a regular file
--     named .scudo.toml, or *.lua (a .scudo.lua or a hook file);
--   * a TOML project file brings the hook files it names (`hook`, one name or a list) that lie
--     in its own directory or below it, symlinks resolved; a hook file elsewhere, or one named
--     by a .lua file (known only by running it), needs a `scudo trust PATH` of its own.
-- Returns a list of { path, sha256 } and the summary to show before trusting: every profile
-- of each TOML file with its keys as written, and what each Lua file is.
function M.trust_targets(request, paths)
    local targets, seen, out = {}, {}, {}
    local add
    -- The hook files a parsed TOML file names: those in its tree are added with it, the others
    -- named with the command that would trust them.
    local function add_hooks(f)
        local dir = sys.realpath(f.dir) or f.dir
        local with = {}
        for _, name in ipairs(f.order) do
            for _, h in ipairs(f.defs[name].values.hook or {}) do
                local p = h.value:sub(1, 1) == "/" and h.value or text.join(h.base or f.dir, h.value)
                local real, err = sys.realpath(p)
                if not real then
                    util.fail("%s: hook file %s", h.origin, err)
                end
                if in_tree(real, dir) then
                    with[#with + 1] = { path = p, origin = h.origin }
                else
                    out[#out + 1] = ("  NOT trusted with it: hook %s (%s), which lies outside %s; read it, then, "
                        .. "to trust it: scudo trust %s"):format(shown(h.value), shown(h.origin), shown(dir),
                        shown(real))
                end
            end
        end
        for _, h in ipairs(with) do
            add(h.path, h.origin)
        end
    end
    function add(p, named_at)
        if not trustable_name(p) then
            util.fail("%s: only project files (.scudo.toml, .scudo.lua) and hook files (*.lua) can be trusted",
                p)
        end
        local key, err = load.trust_key(p)
        if not key then
            util.fail("%s: %s", p, err)
        end
        if seen[key] then
            return
        end
        seen[key] = true
        local f = load.new(key, "project")
        if not load.read(f) then
            util.fail("%s", f.errors[1])
        end
        targets[#targets + 1] = { path = key, sha256 = f.sha256 }
        out[#out + 1] = ""
        if f.kind == "lua" then
            local lines = select(2, f.text:gsub("\n", "")) + ((f.text ~= "" and f.text:sub(-1) ~= "\n") and 1 or 0)
            out[#out + 1] = ("%s (sha256 %s..., Lua, %d line%s)%s"):format(shown(key), f.sha256:sub(1, 16), lines,
                lines == 1 and "" or "s", named_at and (", the hook named at " .. shown(named_at)) or "")
            out[#out + 1] = "  code: what it grants is what it does when it runs, which may be anything a"
                .. " profile or a hook can do; read it first"
            if util.basename(key) == ".scudo.lua" then
                out[#out + 1] = "  the hook files it names are not trusted with it: each needs a scudo trust PATH"
                    .. " of its own"
            end
            return
        end
        out[#out + 1] = ("%s (sha256 %s...)"):format(shown(key), f.sha256:sub(1, 16))
        -- What it grants: each profile as written (parsing TOML runs nothing).
        local ok = load.parse(f, request)
        for _, name in ipairs(ok and f.order or {}) do
            ok = schema.ensure(f.defs[name], true) and ok
        end
        if not ok then
            util.fail("%s has errors, fix them first (scudo check %s):\n%s", key, key, table.concat(f.errors, "\n"))
        end
        if #f.order == 0 then
            out[#out + 1] = "  (no profiles)"
        end
        for _, name in ipairs(f.order) do
            show_profile(f.defs[name], out)
        end
        add_hooks(f)
    end
    -- The project files in dir (scudo trust DIR, or no PATH: the start directory).
    local function add_dir(dir)
        local n0 = #targets
        for _, n in ipairs(discover.PROJECT_NAMES) do
            local p = text.join(dir, n)
            if sys.stat(p) then
                add(p)
            end
        end
        return #targets > n0
    end
    if #paths > 0 then
        for _, p in ipairs(paths) do
            p = text.join(request.start_dir, p)
            local st = sys.stat(p)
            if st and st.type == "directory" then
                if not add_dir(p) then
                    util.fail("no .scudo.toml or .scudo.lua in %s", p)
                end
            else
                add(p)
            end
        end
    elseif not add_dir(request.start_dir) then
        local above = {}
        local ancestors = text.ancestors(request.start_dir)
        for i = 1, #ancestors - 1 do
            for _, n in ipairs(discover.PROJECT_NAMES) do
                local p = text.join(ancestors[i], n)
                if sys.stat(p) then
                    above[#above + 1] = p
                end
            end
        end
        util.fail("no .scudo.toml or .scudo.lua in %s%s", request.start_dir, #above == 0 and " (a project file "
            .. "above it needs its path named)" or ("; a project file above it needs its path named, after "
            .. "reading it: scudo trust %s"):format(table.concat(above, " ")))
    end
    return targets, table.concat(out, "\n", 2) .. "\n"
end

-- For the fuzzer (tests/fuzz/fuzz-profile.c): reads `text` as a profile file of `kind`, and
-- if it is valid, resolves every profile in it and builds a plan for each profile that has
-- a match, hooks included. Returns the number of errors.
function M.check_text(kind, text)
    local request = { argv = { "tool", "-C", "x" }, command_name = "tool", exec_path = "/bin/true",
        start_dir = "/", home = "/nonexistent", runtime_dir = "/run/user/0", uid = 0, env = { X = "y" },
        profiles = {}, fs_write = {}, fs_read = {}, fs_hide = {}, fs_deny = {}, net_allow = {},
        net_deny = {}, env_copy = {}, deny_env = {}, allow_env = {}, properties = {}, delegate = 0 }
    local f = load.new("/fuzz/input." .. kind, "check", kind)
    f.text = text
    f.sha256 = text and require("scudo.text").sha256(text)
    if not load.parse(f, request) then
        return #f.errors
    end
    local index = merge.index({ f })
    local errors = 0
    for _, name in ipairs(index.names) do
        local ok = pcall(function()
            local r = merge.resolve(index, name)
            local ex = new_explain()
            local values, order = merge.combine({ r })
            local b = build.new(request, values, ex, order)
            b:build()
            b:hooks({ name }, { command = "tool", argv = request.argv, start_dir = "/", profiles = { name },
                env_names = { "X" } }, nil)
            local plan = b:plan({ name })
            plan.environment, plan.environment_values, plan.unset_environment = b:environment()
            plan.delegate = b:delegate(index)
            ex.files, ex.applied, ex.plan, ex.net_allow, ex.net_deny = { f }, {}, plan, b.net_allow, b.net_deny
            require("scudo.explain").render(request, ex, true, nil)
        end)
        if not ok then
            errors = errors + 1
        end
    end
    return errors
end

-- The hash of one file, for `scudo untrust`/`scudo trusted`.
function M.hash(path)
    local data, err = sys.readfile(path, load.MAX_SIZE)
    if not data then
        return nil, err
    end
    return text.sha256(data)
end

return M
