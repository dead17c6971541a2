-- SPDX-License-Identifier: MIT OR Apache-2.0
-- The entry points C calls (src/policy/policy.c): resolve, explain, check, profiles, trust.
--
-- The request comes from C as a table: argv, command_name, exec_path, start_dir, env (name ->
-- value), env_names (env's names, sorted), home, runtime_dir, uid, nested, interactive,
-- sysconfdir, and the one-run overrides profiles, no_match, fs_write/read/hide/deny,
-- net_allow/deny, no_network, env_copy, deny_env, allow_env, properties, delegate (-1, 0, 1).
local util = require("scudo.util")
local discover = require("scudo.discover")
local load = require("scudo.load")
local merge = require("scudo.merge")
local match = require("scudo.match")
local build = require("scudo.build")
local trust = require("scudo.trust")

local M = {}

local function file_failure(f)
    util.fail("%s", table.concat(f.errors, "\n"))
end

local function notice(ex, msg)
    ex.notices[#ex.notices + 1] = msg
end

-- Reads every configuration file that applies. Configuration errors in the built-in,
-- system or user files stop everything; a project file that is not trusted is named once
-- and ignored (the plan lists it: a delegated run, which may ask nothing, is refused in C).
local function read_files(request, ex)
    local files = discover.files(request)
    local store = trust.store()
    for i, f in ipairs(files) do
        f.position = i
        if f.layer == "project" then
            local okr = f.status ~= "error" and load.read(f)
            local okt = okr and load.check_trust(f, store)
            if not okr then
                f.status = "unreadable"
                notice(ex, ("%s: cannot be read, ignored (%s)"):format(f.path, f.errors[1] or "?"))
            elseif not okt then
                f.status = "untrusted"
                notice(ex, ("%s is not trusted and was ignored; to apply it: scudo trust %s")
                    :format(f.path, f.path))
            elseif not load.parse(f, request) then
                file_failure(f)
            end
        else
            if f.status == "error" or not load.read(f) or not load.parse(f, request) then
                file_failure(f)
            end
        end
        for _, w in ipairs(f.warnings) do
            ex.warnings[#ex.warnings + 1] = type(w) == "table" and (w.origin .. ": " .. w.value) or w
        end
    end
    return files, store
end

local function new_explain()
    return { notices = {}, warnings = {}, dropped = {}, overridden = {}, hooks = {}, applied = {}, withheld = {} }
end

-- The profiles that apply, least specific first, each { name, why, resolved }.
local function applied_profiles(request, index, files)
    local list = {}
    if not request.no_match then
        local found = match.find(index, request, function(f)
            return f.position
        end)
        for _, m in ipairs(found) do
            list[#list + 1] = { name = m.name, why = m }
        end
    end
    for _, name in ipairs(request.profiles) do
        for i = #list, 1, -1 do
            if list[i].name == name then
                table.remove(list, i)
            end
        end
        list[#list + 1] = { name = name, why = { kind = "option", pattern = "--profile " .. name } }
    end
    for _, a in ipairs(list) do
        a.resolved = merge.resolve(index, a.name, a.why.origin or "--profile")
    end
    return list
end

-- explain: what explain alone needs is kept (written paths, notices).
local function evaluate(request, explain)
    local ex = new_explain()
    ex.lean = not explain       -- a run: nothing made for explain alone (see build.lua)
    local files, store = read_files(request, ex)
    local index = merge.index(files)
    local applied = applied_profiles(request, index, files)

    local resolved, names = {}, {}
    local delegable_yes, undelegable = false, {}
    for _, a in ipairs(applied) do
        resolved[#resolved + 1] = a.resolved
        names[#names + 1] = a.name
        local d = a.resolved.values.delegable
        if d and d.value == true then
            delegable_yes = true
        elseif d and d.value == false then
            undelegable[#undelegable + 1] = a.name
        end
    end
    local delegable_no = undelegable[1]
    local values, order = merge.combine(resolved)

    local b = build.new(request, values, ex, order)
    b:build()
    local context = {
        command = request.command_name,
        argv = request.argv,
        start_dir = request.start_dir,
        profiles = names,
        -- for hooks only
        env_names = values.hook and (request.env_names or util.sorted_keys(request.env)) or nil,
    }
    b:hooks(names, context, store)

    local plan = b:plan(names)
    plan.environment, plan.environment_values, plan.unset_environment = b:environment()
    plan.delegable = delegable_yes and not delegable_no
    -- Kept as they are inside the sandbox (policy.c): edited there, a trusted file would be
    -- untrusted at the next run, and ignored.
    local config_files, untrusted = {}, {}
    for _, f in ipairs(files) do
        if f.layer == "project" then
            config_files[#config_files + 1] = f.path
            if f.status == "untrusted" then
                untrusted[#untrusted + 1] = f.path
            end
        end
    end
    plan.config_files = config_files
    plan.untrusted_files = untrusted
    plan.hook_files = b.hook_files
    plan.delegate = b:delegate(index)
    -- What a delegated run is checked against, in C: the profiles that say delegable = false.
    plan.undelegable = undelegable
    -- The commands routed to scudo inside this sandbox (src/broker/route.c).
    if #plan.delegate > 0 then
        plan.delegate_commands, plan.delegate_executables =
            match.commands(index, plan.delegate, request.env.PATH)
    end
    plan.warnings = {}
    for _, w in ipairs(ex.notices) do
        plan.warnings[#plan.warnings + 1] = w
    end
    for _, w in ipairs(ex.warnings) do
        plan.warnings[#plan.warnings + 1] = w
    end

    ex.files = files
    ex.applied = applied
    ex.plan = plan
    ex.values = values
    ex.not_delegable_by = delegable_no
    ex.net_allow, ex.net_deny = b.net_allow, b.net_deny
    return plan, ex, index
end

function M.resolve(request)
    local plan = evaluate(request)
    return plan
end

-- The explanation as data; policy.c validates the plan and then calls render().
function M.explain(request)
    local plan, ex = evaluate(request, true)
    return plan, ex
end

-- hardening: what C's hardening step did to the checked plan (policy.c, push_hardening), or
-- nil when the plan did not pass its checks.
function M.render(request, ex, json, validation_error, hardening)
    return require("scudo.explain").render(request, ex, json, validation_error, hardening)
end

-- The hardened plan as --dry-run prints it (policy.c, policy_print_plan).
function M.plan_text(hardening)
    return require("scudo.explain").plan_text(hardening)
end

-- The other verbs (scudo check, profiles, trust, the shim's names) and the fuzzer's entry point live in
-- scudo.admin, loaded only when used.
M.read_files = read_files
M.new_explain = new_explain
for _, name in ipairs({ "check", "profiles", "command_names", "trust_targets", "hash", "check_text" }) do
    M[name] = function(...)
        return require("scudo.admin")[name](...)
    end
end

return M
