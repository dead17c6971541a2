-- SPDX-License-Identifier: MIT OR Apache-2.0
-- `scudo explain`: how the plan came about, as text for people or JSON for tools.
local util = require("scudo.util")

local M = {}

-- ---- JSON ----

local ARRAY = {}        -- metatable marking tables to encode as arrays, even when empty

local function array(t)
    return setmetatable(t or {}, ARRAY)
end

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
    ["\r"] = "\\r", ["\t"] = "\\t" }

local function encode(v, out)
    local t = type(v)
    if t == "string" then
        out[#out + 1] = '"' .. v:gsub('[%c"\\]', function(c)
            return ESC[c] or ("\\u%04x"):format(c:byte())
        end) .. '"'
    elseif t == "number" then
        out[#out + 1] = math.type(v) == "integer" and tostring(v) or ("%.17g"):format(v)
    elseif t == "boolean" then
        out[#out + 1] = tostring(v)
    elseif t == "nil" then
        out[#out + 1] = "null"
    elseif getmetatable(v) == ARRAY then
        out[#out + 1] = "["
        for i, x in ipairs(v) do
            if i > 1 then
                out[#out + 1] = ","
            end
            encode(x, out)
        end
        out[#out + 1] = "]"
    else
        out[#out + 1] = "{"
        for i, k in ipairs(util.sorted_keys(v)) do
            if i > 1 then
                out[#out + 1] = ","
            end
            encode(tostring(k), out)
            out[#out + 1] = ":"
            encode(v[k], out)
        end
        out[#out + 1] = "}"
    end
end

function M.json(v)
    local out = {}
    encode(v, out)
    return table.concat(out)
end

-- ---- the data ----

local function why_text(w)
    if w.kind == "option" then
        return "asked for with " .. w.pattern
    elseif w.kind == "regex" then
        return ("matched by regex '%s' (%s)"):format(w.pattern:sub(4), w.origin)
    elseif w.kind == "line" then
        return ("matched by command line '%s' (%s)"):format(w.pattern, w.origin)
    end
    return ("matched by name '%s' (%s)"):format(w.pattern, w.origin)
end

local STATUS = {
    applied = "applied",
    untrusted = "NOT TRUSTED, ignored",
    unreadable = "unreadable, ignored",
    error = "ERROR",
}

-- The last PrivatePIDs property of the plan, for where it was written.
local function pids_property(plan)
    local v
    for _, p in ipairs(plan.properties) do
        if p.name == "PrivatePIDs" then
            v = p
        end
    end
    return v
end

local function executable_target(path)
    local real = path and require("scudo.sys").realpath(path)
    if real and real ~= path then
        return real
    end
    return nil
end

local CREATE_NOTE = require("scudo.schema").CREATE_WORDS

-- A grant made when missing: whether a run would make it ("exists" or "would be created"; nil
-- for an entry made for every run, or never). explain and --dry-run make nothing; this is where
-- both learn what a run would.
local function created_state(x)
    if x.create and x.create ~= "placeholder" then
        return require("scudo.sys").lstat(x.path) and "exists" or "would be created"
    end
    return nil
end

local function data(request, ex, validation_error, hardening)
    local plan = ex.plan
    -- Whether the command gets a PID namespace is C's to say (plan_private_pids); before the
    -- plan passed its checks, nothing is said.
    local own_pids = hardening and hardening.private_pids
    local pids = pids_property(plan)
    local d = {
        command = array({ table.unpack(request.argv) }),
        executable = request.exec_path,
        -- the file the run starts, when the path leads elsewhere (an installer's launcher)
        executable_target = executable_target(request.exec_path),
        start_dir = request.start_dir,
        files = array(),
        profiles = array(),
        filesystem = array(),
        dropped = array(),
        git_watch = array(hardening and hardening.git_watch),
        git_pins = array(hardening and hardening.git_pins),
        user_config = array(),
        overridden = array(),
        unit = array(),
        network = { filtered = plan.network_filtered, allow = array(), deny = array(), dns = plan.dns,
            git_remote = plan.git_remote or nil },
        dbus = { session = plan.dbus, talk = array(plan.dbus_talk), own = array(plan.dbus_own),
            see = array(plan.dbus_see), system = plan.dbus_system, system_talk = array(plan.dbus_system_talk) },
        environment = { removed = array(ex.env_removed), why = array(ex.env_why), kept = array(ex.env_kept),
            passed = array(ex.env_passed), unset = array(plan.unset_environment) },
        processes = { private = own_pids, origin = pids and pids.origin or nil },
        delegable = plan.delegable,
        not_delegable_because = ex.not_delegable_by,
        delegate = array(plan.delegate),
        confirm = plan.confirm,
        log = { target = plan.log_target, report = array(plan.log_report) },
        hooks = array(),
        hooks_see_as_written = array(),
        notices = array(ex.notices),
        warnings = array(ex.warnings),
        valid = validation_error == nil,
        validation_error = validation_error,
    }
    for _, f in ipairs(ex.files) do
        d.files[#d.files + 1] = { path = f.path, layer = f.layer, status = f.status or "skipped",
            trusted = f.layer == "project" and f.trusted or nil, sha256 = f.sha256,
            trust_command = f.status == "untrusted" and ("scudo trust " .. f.path) or nil }
    end
    for _, a in ipairs(ex.applied) do
        local w = a.why
        d.profiles[#d.profiles + 1] = { name = a.name, how = w.kind, pattern = w.pattern, origin = w.origin,
            why = why_text(w), extends = array(table.move(a.resolved.chain, 2, #a.resolved.chain, 1, {})) }
    end
    -- The filesystem as a run gets it: C's plan once normalized (canonical paths, the
    -- leads-out rule, one entry per path) and hardened, each entry by what it was written as
    -- (the builder's entry for the path C was given); before the plan got that far, the
    -- builder's entries as they are.
    local function shown(x)
        local created = created_state(x)
        return { access = x.access, path = x.path, written = x.written or x.path, origin = x.origin,
            reason = x.reason, derived = x.derived or false, create = x.create, created = created,
            dropped = x.dropped }
    end
    if hardening then
        local written = {}
        for _, p in ipairs(plan.paths) do
            written[p.path] = p.written
        end
        local function add(x)
            x.written = written[x.given or x.path]
            d.filesystem[#d.filesystem + 1] = shown(x)
        end
        -- the profiles' entries, kept then dropped (with why); then scudo's, dropped as
        -- changing nothing then added, each with its reason
        for _, list in ipairs({ hardening.paths, hardening.dropped }) do
            for _, x in ipairs(list) do
                if not x.reason then
                    add(x)
                end
            end
        end
        for _, list in ipairs({ hardening.dropped, hardening.paths }) do
            for _, x in ipairs(list) do
                if x.reason then
                    add(x)
                end
            end
        end
        -- What is read-only because the user's configuration leads to it (harden-user-config.c):
        -- named again, on its own, with the git directories watched.
        for _, x in ipairs(hardening.paths) do
            if x.reason and x.reason:find("what the user's configuration points at", 1, true) then
                d.user_config[#d.user_config + 1] = x.path
            end
        end
    else
        for _, p in ipairs(plan.paths) do
            d.filesystem[#d.filesystem + 1] = shown(p)
        end
    end
    for _, x in ipairs(ex.dropped) do
        d.dropped[#d.dropped + 1] = { key = x.key, value = x.value, origin = x.origin, reason = x.reason }
    end
    for _, o in ipairs(ex.overridden) do
        d.overridden[#d.overridden + 1] = o
    end
    for _, p in ipairs(plan.properties) do
        d.unit[#d.unit + 1] = { name = p.name, value = p.value, origin = p.origin }
    end
    for _, r in ipairs(ex.net_allow) do
        d.network.allow[#d.network.allow + 1] = { rule = r.value, origin = r.origin }
    end
    for _, r in ipairs(ex.net_deny) do
        d.network.deny[#d.network.deny + 1] = { rule = r.value, origin = r.origin }
    end
    if request.no_network then
        d.network.allow = array()
        d.network.no_network = true
    end
    for _, h in ipairs(ex.hooks) do
        d.hooks[#d.hooks + 1] = h
    end
    for _, x in ipairs(ex.withheld) do
        d.hooks_see_as_written[#d.hooks_see_as_written + 1] = { key = x.key, value = x.value, origin = x.origin,
            variable = x.variable }
    end
    return d
end

-- ---- text ----

local function text(d)
    local o = {}
    local function add(fmt, ...)
        o[#o + 1] = select("#", ...) > 0 and fmt:format(...) or fmt
    end
    add("command: %s", table.concat(d.command, " "))
    add("executable: %s%s", d.executable or "?",
        d.executable_target and (" (leads to " .. d.executable_target .. ", which the run starts)") or "")
    add("starts in: %s", d.start_dir)
    add("")
    add("files, in the order they merge (later wins):")
    for _, f in ipairs(d.files) do
        add("  %-22s %s%s", f.trusted and "applied (trusted)" or STATUS[f.status] or f.status, f.path,
            f.trust_command and ("   (to apply it: " .. f.trust_command .. ")") or "")
    end
    add("")
    add("profiles, least specific first (later wins):")
    if #d.profiles == 0 then
        add("  (none)")
    end
    for _, p in ipairs(d.profiles) do
        add("  %s: %s", p.name, p.why)
        if #p.extends > 0 then
            add("      extends %s", table.concat(p.extends, " -> "))
        end
    end
    add("")
    add("filesystem:")
    if #d.filesystem == 0 then
        add("  (as the caller sees it)")
    end
    local left_out = {}
    for _, p in ipairs(d.filesystem) do
        local note = ""
        if p.written ~= p.path then
            note = " [" .. p.written .. "]"
        end
        if p.create == "placeholder" then
            note = note .. " (an empty directory made for the run, removed after it)"
        elseif p.create then
            note = note .. (" (%s created when missing: %s)"):format(CREATE_NOTE[p.create] or p.create,
                p.created)
        end
        local origin = p.reason and ("%s (%s)"):format(p.origin, p.reason) or p.origin
        if p.dropped and p.reason then
            left_out[#left_out + 1] = p
        elseif p.dropped then
            add("  %-6s %s%s   <- %s   (dropped: %s)", p.access, p.path, note, origin, p.dropped)
        else
            add("  %-6s %s%s   <- %s", p.access, p.path, note, origin)
        end
    end
    if #left_out > 0 then
        add("  left out by scudo, the mount would change nothing:")
        for _, p in ipairs(left_out) do
            add("    %-6s %s: %s", p.access, p.path, p.dropped)
        end
    end
    -- What the runner watches for the hardening step (src/plan/harden-git.c), with why.
    for _, watched in ipairs({
        { d.git_watch, "git directories the command may commit to: a name git does not make there stops the run",
            "code planted in a .git would run at the next git command outside" },
        { d.git_pins, ".git symlinks put back as they were, and the run stopped, if the command replaces them",
            "a repository planted in their place would be git's outside" },
        { d.user_config, "read-only because the user's configuration points at them (each entry above says how)",
            "ssh, vim, tmux, systemd, git and the like follow it outside, and run what they find" },
    }) do
        if #watched[1] > 0 then
            add("  %s", watched[2])
            add("  (scudo: %s):", watched[3])
            for _, w in ipairs(watched[1]) do
                add("    %s", w)
            end
        end
    end
    if #d.dropped > 0 then
        add("")
        add("dropped (never widened):")
        for _, x in ipairs(d.dropped) do
            add("  %s %s   <- %s: %s", x.key, x.value, x.origin, x.reason)
        end
    end
    if #d.overridden > 0 then
        add("")
        add("overridden by a later entry:")
        for _, x in ipairs(d.overridden) do
            if x.path then
                add("  %s %s   <- %s, now %s by %s", x.access, x.path, x.origin, x.new, x.by)
            else
                add("  unit.%s = %s   <- %s, now %s by %s", x.property, x.value, x.origin, x.new, x.by)
            end
        end
    end
    add("")
    add("unit properties:")
    if #d.unit == 0 then
        add("  (none besides scudo's own)")
    end
    for _, p in ipairs(d.unit) do
        add("  %s = %s   <- %s", p.name, p.value, p.origin)
    end
    -- What scudo sets on every unit, whatever the profiles say (src/plan/unit-properties.c).
    add("  always: %s", table.concat(require("scudo.unit").fixed(), " "))
    add("  always: the command started through scudo-confine (Landlock scope: no abstract sockets or")
    add("          signals outside the sandbox; seccomp: no resource limits set on other processes, no")
    add("          priorities set by user or group); /run read-only under ProtectSystem=strict;")
    add("          with network rules, RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK")
    add("  default: KeyringMode=private; TimeoutStopSec=5s; the service manager's own environment unset")
    add("")
    if d.processes.private == nil then
        add("processes: (the plan did not pass its checks)")
    elseif d.processes.private then
        add("processes: a PID namespace and /proc of the sandbox's own (the user's other processes are")
        add("           not visible; KillMode=mixed, scudo-confine's init passes signals on)")
    else
        add("processes: the session's, every process of the user visible (PrivatePIDs = no   <- %s)",
            d.processes.origin)
    end
    if not d.network.filtered then
        add("network: not filtered")
    else
        add("network: filtered, only what is allowed; dns %s%s", d.network.dns,
            d.network.no_network and " (--no-network: nothing is allowed)" or "")
        for _, r in ipairs(d.network.allow) do
            add("  allow %s   <- %s", r.rule, r.origin)
        end
        if d.network.git_remote then
            add("  allow the host and port of the git remote the command uses, worked out when it runs"
                .. " (--dry-run shows them)   <- network.git_remote")
        end
        for _, r in ipairs(d.network.deny) do
            add("  deny  %s   <- %s", r.rule, r.origin)
        end
    end
    add("session bus: %s", d.dbus.session)
    if d.dbus.session == "filtered" then
        for _, k in ipairs({ "see", "talk", "own" }) do
            if #d.dbus[k] > 0 then
                add("  %s: %s", k, table.concat(d.dbus[k], ", "))
            end
        end
    end
    add("system bus: %s", d.dbus.system)
    if d.dbus.system == "filtered" then
        add("  talk: %s", #d.dbus.system_talk > 0 and table.concat(d.dbus.system_talk, ", ") or "(nothing)")
    end
    -- Each variable removed and the rule that removed it, and the names the command keeps; never
    -- a value. Under an allow-list (deny_env '*') the names it drops are one line.
    if #d.environment.removed > 0 then
        add("environment: inherited, less %d variable%s:", #d.environment.removed,
            #d.environment.removed == 1 and "" or "s")
        local by_all, all_origin = {}, nil
        for _, w in ipairs(d.environment.why) do
            if w.rule == "name" and w.glob == "*" then
                by_all[#by_all + 1] = w.name
                all_origin = w.origin
            elseif w.rule == "name" then
                add("  %s: name matches deny_env '%s'   <- %s", w.name, w.glob, w.origin or "?")
            else
                add("  %s: value is %s (whatever the name)", w.name, w.kind)
            end
        end
        if #by_all > 0 then
            add("  not in allow_env (deny_env '*'   <- %s): %s", all_origin or "?", table.concat(by_all, ", "))
        end
    else
        add("environment: inherited")
    end
    if #d.environment.passed > 0 then
        add("  keeps %d: %s", #d.environment.passed, table.concat(d.environment.passed, ", "))
    end
    for _, k in ipairs(d.environment.kept) do
        add("  %s: passed although its value is %s: named by %s", k.name, k.kind, k.grant)
    end
    add("delegable: %s%s", d.delegable and "yes" or "no",
        d.not_delegable_because and (" (profile '" .. d.not_delegable_because .. "' says delegable = false)") or "")
    if #d.delegate > 0 then
        add("delegates: %s (the commands they match run in sandboxes of their own, through a broker)",
            table.concat(d.delegate, ", "))
    end
    if d.confirm then
        add("confirm: asks [y/N] before running")
    end
    if d.log.target ~= "stderr" then
        add("log: %s", d.log.target)
    end
    for _, h in ipairs(d.hooks) do
        add("hook %s: %s", h.origin, h.status)
    end
    if #d.hooks_see_as_written > 0 then
        add("hooks see these as written, not expanded (they read a variable the command does not get):")
        for _, x in ipairs(d.hooks_see_as_written) do
            add("  %s %s   <- %s (%s)", x.key, x.value, x.origin, x.variable)
        end
    end
    for _, n in ipairs(d.notices) do
        add("note: %s", n)
    end
    for _, w in ipairs(d.warnings) do
        add("warning: %s", w)
    end
    add("")
    if d.valid then
        add("plan: valid")
    else
        add("plan: INVALID: %s", d.validation_error)
    end
    return table.concat(o, "\n") .. "\n"
end

-- ---- the plan a run gets (--dry-run) ----

-- h: the hardened plan (policy.c, push_hardening): a line per thing the run gets, in the
-- words of the unit and the profiles (`filesystem.ACCESS: PATH   (ORIGIN)`), for scripts too.
function M.plan_text(h)
    local o = {}
    local function add(fmt, ...)
        o[#o + 1] = select("#", ...) > 0 and fmt:format(...) or fmt
    end
    add("exec: %s", h.exec)
    local argv = {}
    for _, a in ipairs(h.argv) do
        argv[#argv + 1] = " '" .. a .. "'"
    end
    add("argv:%s", table.concat(argv))
    add("working directory: %s", h.working_directory)
    for _, e in ipairs(h.paths) do
        local note = ""
        local created = created_state(e)
        if e.create == "placeholder" then
            note = "   [an empty directory made for the run]"
        elseif created then
            note = ("   [%s: %s]"):format(CREATE_NOTE[e.create] or e.create,
                created == "exists" and "created when missing, exists" or created)
        end
        -- what scudo adds on its own account says why (plan-harden.h)
        add("filesystem.%s: %s   (%s%s)%s", e.access, e.path, e.origin, e.reason and (": " .. e.reason) or "",
            note)
    end
    for _, e in ipairs(h.dropped) do
        add("dropped filesystem.%s: %s   (%s): %s", e.access, e.path, e.origin, e.dropped)
    end
    for _, p in ipairs(h.properties) do
        add("unit.%s = %s   (%s)", p.name, p.value, p.origin)
    end
    for _, f in ipairs(require("scudo.unit").fixed()) do
        local name, value = f:match("^([^=]*)=(.*)$")
        add("unit.%s = %s   (always)", name, value)
    end
    if h.network.filtered then
        for _, r in ipairs(h.network.allow) do
            add("network.allow: %s", r)
        end
        for _, r in ipairs(h.network.deny) do
            add("network.deny: %s", r)
        end
        add("network.dns: %s", h.network.dns)
    else
        add("network: not filtered")
    end
    return table.concat(o, "\n") .. "\n"
end

function M.render(request, ex, json, validation_error, hardening)
    local d = data(request, ex, validation_error, hardening)
    if json then
        return M.json(d) .. "\n"
    end
    return text(d)
end

return M
