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

local read_files, new_explain = policy.read_files, policy.new_explain

local M = {}

-- ---- scudo check ----

local VAR_FIXED = { HOME = true, PWD = true, USER = true, UID = true, XDG_CONFIG_HOME = true,
    XDG_CACHE_HOME = true, XDG_DATA_HOME = true, XDG_STATE_HOME = true, XDG_RUNTIME_DIR = true }

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
            xdg = util.join(request.home, ".config")
        end
        local config_dirs = { request.sysconfdir, util.join(xdg, "scudo") }
        for _, p in ipairs(paths) do
            local path = util.join(request.start_dir, p)
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
        for _, def in ipairs(defs) do
            out[#out + 1] = "    defined at " .. def.origin
        end
    end
    for _, n in ipairs(ex.notices) do
        out[#out + 1] = "note: " .. n
    end
    return table.concat(out, "\n") .. "\n"
end

-- ---- scudo trust ----

-- The files `scudo trust` should record: each given path (default: the project files from
-- / down to the start directory), and the hook files a TOML project file names. Returns a
-- list of { path, sha256 }.
function M.trust_targets(request, paths)
    local targets, seen = {}, {}
    local function add(p)
        local real, err = load.trust_key(p)
        if not real then
            util.fail("%s", err)
        end
        if seen[real] then
            return
        end
        seen[real] = true
        local f = load.new(real, "project")
        if not load.read(f) then
            util.fail("%s", f.errors[1])
        end
        targets[#targets + 1] = { path = real, sha256 = f.sha256 }
        if f.kind == "toml" then
            local doc = toml.decode(f.text, f.path)
            for _, p in next, doc or {} do
                if type(p) == "table" and type(p.hook) == "string" then
                    add(util.join(f.dir, p.hook))
                end
            end
        end
    end
    -- The project files in dir (scudo trust DIR, or no PATH: the start directory and above).
    local function add_dir(dir)
        local n0 = #targets
        for _, n in ipairs(discover.PROJECT_NAMES) do
            local p = util.join(dir, n)
            if sys.stat(p) then
                add(p)
            end
        end
        return #targets > n0
    end
    if #paths > 0 then
        for _, p in ipairs(paths) do
            p = util.join(request.start_dir, p)
            local st = sys.stat(p)
            if st and st.type == "directory" then
                if not add_dir(p) then
                    util.fail("no .scudo.toml or .scudo.lua in %s", p)
                end
            else
                add(p)
            end
        end
    else
        for _, dir in ipairs(util.ancestors(request.start_dir)) do
            add_dir(dir)
        end
        if #targets == 0 then
            util.fail("no .scudo.toml or .scudo.lua in %s or above", request.start_dir)
        end
    end
    return targets
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
