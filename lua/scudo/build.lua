-- SPDX-License-Identifier: MIT OR Apache-2.0
-- From the combined profile values to the plan C validates, recording for `scudo explain`
-- where each entry came from and what was dropped.
local util = require("scudo.util")
local text = require("scudo.text")
local expand = require("scudo.expand")
local load = require("scudo.load")
local match = require("scudo.match")
local merge = require("scudo.merge")
local schema = require("scudo.schema")

local M = {}

local ACCESS, KEY = schema.FS_ACCESS, schema.FS_KEY

-- Paths are keyed as written, cleaned: "//" and "/./" collapsed, a trailing "/" or "/."
-- dropped; ".." is left for C, which applies it where the kernel would (after a symlink, not
-- lexically). plan_normalize() canonicalizes, applies the leads-out rule and merges again, in
-- C, for a run and for explain alike: explain shows C's result (explain.lua), so no path is
-- resolved here. Most paths are clean already and come back as they are.

local Builder = {}
Builder.__index = Builder

function M.new(request, values, explain, order)
    local b = setmetatable({
        request = request,
        values = values,
        order_of = order or {},
        vars = expand.new(request, values),
        paths = {},             -- cleaned path -> entry
        order = {},             -- cleaned paths in first-seen order
        props = {},             -- name -> { name, value, origin }
        net_allow = {},
        net_deny = {},
        hook_files = {},        -- project hook files run (policy.lua: plan.config_files)
        explain = explain,
        -- Each path entry keeps what it was written as, and expanded to, for explain and for
        -- the plan hooks see; a run without hooks (explain.lean) has no use for them.
        keep_written = not explain.lean or values.hook ~= nil,
        -- With hooks: the paths (and log target) as hooks see them (Builder:add_path).
        hook_view = values.hook ~= nil and { paths = {}, order = {} } or nil,
    }, Builder)
    if b.hook_view then
        b.withheld_fn = function(name)
            return b:withheld(name)
        end
    end
    return b
end

-- Puts entry e under key in view (a table of paths and their order): a later entry for a key
-- replaces one of another access; one of the same access changes nothing (two profiles
-- extending one base). Returns whether e was placed, and the entry it replaced.
local function place(view, key, e)
    local old = view.paths[key]
    if old then
        if old.access == e.access then
            return false
        end
    else
        view.order[#view.order + 1] = key
    end
    view.paths[key] = e
    return true, old
end

function Builder:drop(key, value, origin, why)
    local d = self.explain.dropped
    d[#d + 1] = { key = key, value = value, origin = origin, reason = why }
end

-- p below the directory whose path with a "/" appended is dir_slash (no new strings).
local function below(p, dir_slash)
    return #p > #dir_slash and p:find(dir_slash, 1, true) == 1 or dir_slash == "/"
end

-- Why a write grant worked out from the request (${PWD}, a lookup, an argument) may not be
-- given at c, or nil. Such a grant is not given on the home directory or above it (a command
-- started in ~ would write the shell's startup files), nor in a dot-directory of the home
-- (where programs find their configuration: ~/.vim, ~/.config/tmux, ~/.ssh). One written out
-- (--fs-write, a profile's "~/.local/bin") is given. On, above or below the other places whose
-- contents run later (a $PATH directory, ~/bin) the hardening step refuses it, in C
-- (src/plan/harden-persistence.c), where the list of them is.
function Builder:derived_write_refused(c)
    local home = self.vars:real_home()
    local c_slash = c == "/" and "/" or c .. "/"
    if c == "/" or c == home or below(home, c_slash) then
        return "would make the home directory writable (the command starts in it, or above it): code "
            .. "left in ~/.bashrc, ~/.profile or ~/.local/bin would run later, outside the sandbox; "
            .. "--fs-write grants it for one run"
    end
    if below(c, home .. "/") and c:byte(#home + 2) == 46 then      -- "."
        return ("would make %s writable, which lies in %s, a dot-directory of the home directory: "
            .. "programs read their configuration there, and run what it says later, outside the "
            .. "sandbox; --fs-write grants it for one run"):format(c, home .. "/" .. c:sub(#home + 2):match("^[^/]+"))
    end
    return nil
end

-- Adds a path entry; a later entry for the same path replaces the earlier one. create: "dir",
-- "file" or "json" for a grant made when missing (plan-create.c checks where).
--
-- Hooks see the plan without the value of any variable the command does not get (a path
-- written "/x/${env:SECRET}", SECRET denied): such an entry is in their view as written,
-- whether or not it applies, and every other entry as if it were not there at all, so that
-- nothing they see (not even which entry another one replaced) depends on its value.
function Builder:add_path(access, raw, origin, base, create)
    local key = KEY[access] or "filesystem." .. access
    local view, withheld = self.hook_view, nil
    if view then
        withheld = expand.reads_withheld(raw, self.withheld_fn)
        if withheld and place(view, "\0" .. raw, { access = access, path = raw, written = raw, origin = origin,
                withheld = withheld }) then
            local w = self.explain.withheld
            w[#w + 1] = { key = key, value = raw, origin = origin, variable = withheld }
        end
    end
    local p, derived = self.vars:path(raw, base)
    if not p then
        self:drop(key, raw, origin, derived)
        return
    end
    local c = text.clean_path(p)
    local e
    if self.keep_written then
        e = { access = access, path = c, origin = origin, written = raw, expanded = p, derived = derived or nil }
    else
        e = { access = access, path = c, origin = origin, derived = derived or nil }
    end
    local refused = access == "write" and derived and self:derived_write_refused(c)
    if view and not withheld and not refused then
        place(view, c, e)
    end
    if refused then
        self:drop(key, raw, origin, refused)
        local w = self.explain.warnings
        w[#w + 1] = ("%s: %s: %s not made writable: %s"):format(origin, key, c, refused)
        return
    end
    local old = self.paths[c]
    -- One path made as a directory by one entry and as a file by another (or empty by one and
    -- holding "{}" by another): neither can be right, and which came later says nothing about
    -- which is.
    if old and create and old.create and old.create ~= create then
        util.fail("%s: %s: %s is to be created as %s, but %s creates it as %s", origin, key, c,
            "a " .. schema.CREATE_WORDS[create], old.create_origin, "a " .. schema.CREATE_WORDS[old.create])
    end
    -- The same entry again (two profiles extending one base) keeps either's create; a later
    -- entry of another kind replaces the earlier one, its create with it.
    if old and old.access == access then
        if create and not old.create then
            old.create, old.create_origin = create, origin
        end
        return
    end
    e.create, e.create_origin = create, create and origin or nil
    local placed
    placed, old = place(self, c, e)
    -- A derived entry in a deny's place says where the deny was: the hardening step
    -- (src/plan/plan-harden.c) puts it back, as a grant worked out from the request never
    -- overrides a deny.
    if placed and old and derived and access ~= "deny" then
        e.over_deny = old.access == "deny" and old.origin or old.over_deny
    end
    -- And a derived write says what it replaced: refused by the hardening step (a place whose
    -- contents run later), the entry it replaced is what the path gets.
    if placed and old and derived and access == "write" and old.access ~= "deny" then
        e.over_access, e.over_origin = old.access, old.origin
    end
    if placed and old then
        local o = self.explain.overridden
        o[#o + 1] = { path = c, access = old.access, origin = old.origin, by = origin, new = access }
    end
end

function Builder:add_rule(list, rule, origin)
    for i = 1, #list do
        if list[i].value == rule then
            return
        end
    end
    list[#list + 1] = { value = rule, origin = origin }
end

function Builder:set_property(name, value, origin)
    local old = self.props[name]
    if old and old.value ~= value then
        local o = self.explain.overridden
        o[#o + 1] = { property = name, value = old.value, origin = old.origin, by = origin, new = value }
    end
    self.props[name] = { name = name, value = value, origin = origin }
end

local function list_values(v, key)
    return v[key] or {}
end

local function strings(list)
    local r = {}
    for i = 1, #list do
        r[i] = list[i].value
    end
    return r
end

-- Where each entry of a list of { value, origin } was written, in the same order.
local function origins(list)
    local r = {}
    for i = 1, #list do
        r[i] = list[i].origin
    end
    return r
end

-- deny_env and allow_env (globs: the profiles' and then the command line's, each once, in
-- order) and the names env.copy and --env give back, as a set. Also where each deny_env glob
-- was written (for explain), and where each allow_env entry that is a plain name (no wildcard)
-- was, by its name in lower case: such an entry, like env.copy, is an explicit grant.
function Builder:env_lists()
    if self.env_deny then
        return self.env_deny, self.env_allow, self.env_copy
    end
    local v, req = self.values, self.request
    -- The values of a list key's entries and then the command line's, each once, in order, and
    -- where each was first written.
    local function unique(entries, extra, flag)
        local seen, r, from = {}, {}, {}
        for i = 1, #entries do
            local g = entries[i].value
            if not seen[g] then
                seen[g] = true
                r[#r + 1] = g
                from[g] = entries[i].origin
            end
        end
        for i = 1, #extra do
            local g = extra[i]
            if not seen[g] then
                seen[g] = true
                r[#r + 1] = g
                from[g] = flag
            end
        end
        return r, from
    end
    local deny, deny_from = unique(list_values(v, "deny_env"), req.deny_env, "--deny-env")
    local allow, allow_from = unique(list_values(v, "allow_env"), req.allow_env, "--allow-env")
    -- A profile's plain name is a grant only for a name another deny_env glob than '*' catches
    -- (claude's ANTHROPIC_API_KEY, npm-publish's NPM_TOKEN): a tool's allow-list (deny_env '*')
    -- names what the tool reads, and their values are still looked at.
    local copy, exact, listed = {}, {}, {}
    for _, g in ipairs(allow) do
        if not g:find("[%*%?%[\\]") then
            local t = allow_from[g] == "--allow-env" and exact or listed
            t[g:lower()] = t[g:lower()] or ("allow_env, " .. allow_from[g])
        end
    end
    for _, e in ipairs(list_values(v, "env.copy")) do
        copy[e.value] = true
        exact[e.value:lower()] = exact[e.value:lower()] or ("env, " .. e.origin)
    end
    for _, n in ipairs(req.env_copy) do
        copy[n] = true
        exact[n:lower()] = exact[n:lower()] or "--env"
    end
    local specific = {}
    for _, g in ipairs(deny) do
        if g ~= "*" then
            specific[#specific + 1] = g
        end
    end
    self.env_deny, self.env_allow, self.env_copy = deny, allow, copy
    self.env_deny_from, self.env_exact, self.env_listed, self.env_deny_specific = deny_from, exact, listed, specific
    return deny, allow, copy
end

-- The names among `names` that the command does not get by their name: a deny_env glob matches
-- them (without regard to case: tools read npm_config__authToken as well as NPM_TOKEN) and
-- neither allow_env nor env.copy gives them back, each with the glob that matched. Each glob
-- is looked at once for all the names (one call per list).
function Builder:withheld_names(names)
    local deny, allow, copy = self:env_lists()
    local denied, allowed = text.matching(deny, names, true), text.matching(allow, names, true)
    local r = {}
    for i = 1, #names do
        local name = names[i]
        local d = denied[name]
        if d and not allowed[name] and not copy[name] then
            r[name] = deny[d]
        end
    end
    return r
end

-- Whether the command does not get variable `name`, set or not, by its name (remembered per
-- name). The values are not looked at: what hooks see must not depend on them.
function Builder:withheld(name)
    local cache = self.withheld_cache or {}
    self.withheld_cache = cache
    local w = cache[name]
    if w == nil then
        w = self:withheld_names({ name })[name] ~= nil
        cache[name] = w
    end
    return w
end

-- Whether an explicit grant names `name` (its value then passes whatever it is), and which:
-- env, --env, --allow-env NAME, or a profile's allow_env NAME for a name another deny_env glob
-- than '*' catches.
function Builder:env_grant(name)
    local l = name:lower()
    local g = self.env_exact[l]
    if g or not self.env_listed[l] then
        return g
    end
    if #self.env_deny_specific > 0 and text.matching(self.env_deny_specific, { name }, true)[name] then
        return self.env_listed[l]
    end
    return nil
end

-- The environment the command gets: the caller's, less what Builder:withheld_names removes by
-- name and less every variable whose value is a credential by its shape (a URL with a password,
-- a token of a well-known format: util/secret-value.c), whatever its name, unless an explicit
-- grant names it (an allow_env entry without wildcard, env, --env, --allow-env NAME); plus
-- env's values. Returns the names it has, in order, the table of their values (policy.c joins
-- each name to its value), and the names to unset. Explain gets each name removed with the
-- rule that removed it, and each value kept by an explicit grant, never a value.
function Builder:environment()
    local v, req = self.values, self.request
    local deny, allow, copy = self:env_lists()
    -- The caller's names in order (policy.c sorts them).
    local caller, names = req.env, req.env_names or util.sorted_keys(req.env)
    local withheld = self:withheld_names(names)
    -- Only the values of the names that pass are judged: one withheld by its name is gone
    -- whatever its value (under an allow-list, most of them).
    local judged = {}
    for i = 1, #names do
        if not withheld[names[i]] then
            judged[#judged + 1] = names[i]
        end
    end
    local secret = text.secret_values(judged, caller)
    local set = v["env.set"]
    -- Without env values to add, the values are the caller's, and the list is made as the names
    -- go, already in order.
    local list, unset, removed, why, kept, env = {}, {}, {}, {}, {}, set and {} or nil
    local passed = {}
    for i = 1, #names do
        local name = names[i]
        local glob, kind = withheld[name], secret[name]
        local grant = kind and self:env_grant(name)
        if glob or (kind and not grant) then
            removed[#removed + 1] = name
            unset[#unset + 1] = name
            why[#why + 1] = glob and { name = name, rule = "name", glob = glob, origin = self.env_deny_from[glob] }
                or { name = name, rule = "value", kind = kind }
        else
            if grant then
                kept[#kept + 1] = { name = name, kind = kind, grant = grant }
            end
            passed[#passed + 1] = name
            if env then
                env[name] = caller[name]
            else
                list[#list + 1] = name
            end
        end
    end
    -- Names denied outright (no wildcard) are also removed from what the service manager
    -- would add on its own; those the caller has are removed above already, or kept.
    -- (The allow globs are looked at once for all of them: a tool's allow-list is long.)
    local outright = {}
    for i = 1, #deny do
        local g = deny[i]
        if caller[g] == nil and not copy[g] and not g:find("*", 1, true) and g:match("^[%a_][%w_]*$") then
            outright[#outright + 1] = g
        end
    end
    local given_back = #outright > 0 and text.matching(allow, outright, true) or {}
    for i = 1, #outright do
        if not given_back[outright[i]] then
            unset[#unset + 1] = outright[i]
        end
    end
    if set then
        for _, name in ipairs(util.sorted_keys(set)) do
            local e = set[name]
            local val, why_not = self.vars:expand(e.value)
            if val then
                env[name] = val
            else
                self:drop("env." .. name, e.value, e.origin, why_not)
            end
        end
        list = util.sorted_keys(env)
    end
    self.explain.env_removed, self.explain.env_why, self.explain.env_kept = removed, why, kept
    self.explain.env_passed = passed
    return list, env or caller, unset
end

-- The profiles this sandbox delegates, by name. `index`: all profiles.
function Builder:delegate(index)
    local v, req = self.values, self.request
    if req.delegate < 0 then
        return {}
    end
    local all = (v["delegate.all"] and v["delegate.all"].value) or req.delegate > 0
    local names, seen = {}, {}
    local function delegable(name)
        local r = merge.resolve(index, name)
        return r.values.delegable and r.values.delegable.value == true
    end
    if all then
        for _, name in ipairs(index.names) do
            if match.has_match(index, name) and delegable(name) then
                seen[name] = true
                names[#names + 1] = name
            end
        end
    end
    for _, e in ipairs(list_values(v, "delegate.names")) do
        local name = e.value
        if not index.defs[name] then
            util.fail("%s: delegate: unknown profile '%s'%s", e.origin, name, util.suggest(name, index.names))
        elseif not match.has_match(index, name) then
            util.fail("%s: delegate: profile '%s' has no match, so nothing would be delegated to it",
                e.origin, name)
        elseif not delegable(name) then
            util.fail("%s: delegate: profile '%s' is not delegable (it needs delegable = true)", e.origin, name)
        end
        if not seen[name] then
            seen[name] = true
            names[#names + 1] = name
        end
    end
    return names
end

-- Applies what a hook asked for through the primitives.
function Builder:apply_edits(edits, base)
    for _, e in ipairs(edits) do
        local op = e.op
        local access = op:match("^filesystem%.(%a+)$")
        if access then
            self:add_path(access, e.value, e.origin, base)
        elseif op == "network.allow" then
            self.network = true
            self:add_rule(self.net_allow, e.value, e.origin)
        elseif op == "network.deny" then
            self.network = true
            self:add_rule(self.net_deny, e.value, e.origin)
        elseif op == "unit" then
            self:set_property(e.value[1], e.value[2], e.origin)
        end
    end
end

-- The plan as C reads it (src/policy/policy.c); with view = self.hook_view, as hooks see it.
function Builder:plan(applied, view)
    view = view or self
    local paths, order = {}, view.order
    for i = 1, #order do
        paths[#paths + 1] = view.paths[order[i]]
    end
    local props = {}
    for _, name in ipairs(util.sorted_keys(self.props)) do
        props[#props + 1] = self.props[name]
    end
    local allow, allow_origin = strings(self.net_allow), origins(self.net_allow)
    if self.request.no_network then
        allow, allow_origin = {}, {}
    end
    local v = self.values
    return {
        paths = paths,
        properties = props,
        network_filtered = self.network or false,
        git_remote = v["network.git_remote"] and v["network.git_remote"].value or false,
        net_allow = allow,
        net_deny = strings(self.net_deny),
        net_allow_origin = allow_origin,
        net_deny_origin = origins(self.net_deny),
        dns = v["network.dns"] and v["network.dns"].value or "filtered",
        dbus = v["dbus.session"] and v["dbus.session"].value or "none",
        dbus_talk = strings(list_values(v, "dbus.talk")),
        dbus_own = strings(list_values(v, "dbus.own")),
        dbus_see = strings(list_values(v, "dbus.see")),
        dbus_system = v["dbus.system"] and v["dbus.system"].value or "none",
        dbus_system_talk = strings(list_values(v, "dbus.system_talk")),
        confirm = v.confirm and v.confirm.value or false,
        confirm_origin = v.confirm and v.confirm.value and v.confirm.origin or nil,
        log_target = view.log_target or self.log_target or "stderr",
        log_report = self.log_report,
        profiles = applied,
    }
end

-- Everything but hooks and delegation: paths, network, unit, log.
function Builder:build()
    local v, req = self.values, self.request
    -- In merge order across the four keys: for one path, the later entry wins. An item may
    -- appear twice in order_of and in its list (two profiles extending one base): its last
    -- place in order_of counts, and it is added as often as its list holds it. Items that
    -- order_of does not hold (none, as merge.lua builds it) come first, by their index.
    -- (Numeric loops: in the hot parts of the library ipairs, a C call per element, is avoided.)
    local order, last, access_of, count, lists, unordered = self.order_of, {}, {}, {}, {}, 0
    for i = 1, #order do
        last[order[i]] = i
    end
    for k = 1, #ACCESS do
        local access = ACCESS[k]
        local list = list_values(v, KEY[access])
        lists[k] = list
        for i = 1, #list do
            local e = list[i]
            access_of[e] = access
            count[e] = (count[e] or 0) + 1
            if not last[e] and i > unordered then
                unordered = i
            end
        end
    end
    for i = 1, unordered do
        for k = 1, #ACCESS do
            local e = lists[k][i]
            if e and not last[e] then
                self:add_path(ACCESS[k], e.value, e.origin, e.base, e.create)
            end
        end
    end
    for i = 1, #order do
        local e = order[i]
        local access = last[e] == i and access_of[e]
        if access then
            for _ = 1, count[e] do
                self:add_path(access, e.value, e.origin, e.base, e.create)
            end
        end
    end
    for _, access in ipairs(ACCESS) do
        for _, p in ipairs(req["fs_" .. access]) do
            -- On the command line a path is written out: relative would be a guess.
            if p:sub(1, 1) ~= "/" and p:sub(1, 1) ~= "~" and p:sub(1, 2) ~= "${" then
                util.fail("--fs-%s: '%s' is not an absolute path", access, p)
            end
            self:add_path(access, p, "--fs-" .. access, nil)
        end
    end

    self.network = (v["network.filter"] and v["network.filter"].value) or false
    for _, e in ipairs(list_values(v, "network.allow")) do
        self:add_rule(self.net_allow, e.value, e.origin)
    end
    for _, e in ipairs(list_values(v, "network.deny")) do
        self:add_rule(self.net_deny, e.value, e.origin)
    end
    for _, r in ipairs(req.net_allow) do
        self.network = true
        self:add_rule(self.net_allow, r, "--net-allow")
    end
    for _, r in ipairs(req.net_deny) do
        self.network = true
        self:add_rule(self.net_deny, r, "--net-deny")
    end
    if req.no_network then
        self.network = true
    end

    for name, e in next, v.unit or {} do
        self:set_property(name, e.value, e.origin)
    end
    for _, kv in ipairs(req.properties) do
        local name, value = kv:match("^([^=]+)=(.*)$")
        if not name then
            util.fail("--property: '%s' is not NAME=VALUE", kv)
        end
        self:set_property(name, value, "--property")
    end

    if v["log.target"] then
        local t = v["log.target"]
        if t.value == "stderr" or t.value == "journald" then
            self.log_target = t.value
        else
            local p, why = self.vars:path(t.value, nil)
            local withheld = self.hook_view and expand.reads_withheld(t.value, self.withheld_fn)
            if withheld then
                -- as for paths (Builder:add_path): hooks see it as written
                self.hook_view.log_target = t.value
                local w = self.explain.withheld
                w[#w + 1] = { key = "log.target", value = t.value, origin = t.origin, variable = withheld }
            end
            if not p then
                self:drop("log.target", t.value, t.origin, why)
            else
                self.log_target = p
            end
        end
    end
    local report = {}
    for _, e in ipairs(list_values(v, "log.report")) do
        local dup = false
        for _, x in ipairs(report) do
            dup = dup or x == e.value
        end
        if not dup then
            report[#report + 1] = e.value
        end
    end
    self.log_report = #report > 0 and report or { "file", "net", "dns" }
end

-- Runs the hooks, in the order they were merged. A hook is a function (in a .lua file) or
-- the name of a Lua file run as a chunk with (context, plan) as its `...`.
function Builder:hooks(applied, context, trust_store)
    local results = self.explain.hooks
    for _, h in ipairs(list_values(self.values, "hook")) do
        local f, base = h.value, h.base
        local label = "hook " .. h.origin
        if type(f) == "string" then
            local p = f:sub(1, 1) == "/" and f or text.join(base or "/", f)
            local hf = load.new(p, h.project and "project" or "hook", "lua")
            if not load.read(hf) then
                util.fail("%s: hook file: %s", h.origin, hf.errors[1])
            end
            if h.project and not load.check_trust(hf, trust_store) then
                results[#results + 1] = { origin = h.origin, file = p, status = "untrusted" }
                local key = load.trust_key(p) or p
                util.fail("%s: hook file %s is not trusted; to use it: scudo trust %s", h.origin, key, key)
            end
            if h.project then
                self.hook_files[#self.hook_files + 1] = p
            end
            local chunk, err = require("scudo.userenv").compile(hf.text, p)
            if not chunk then
                util.fail("%s", err)
            end
            f = chunk
            base = util.dirname(p)
            label = "hook " .. p
        end
        local ctx = {
            phase = "hook",
            start_dir = self.request.start_dir,
            edits = {},
            warnings = {},
        }
        local ok, err = require("scudo.userenv").run(label, ctx, f, util.plain(context, label),
            util.plain(self:plan(applied, self.hook_view), label))
        if not ok then
            util.fail("%s", err)
        end
        self:apply_edits(ctx.edits, base)
        for _, w in ipairs(ctx.warnings) do
            self.explain.warnings[#self.explain.warnings + 1] = w.origin .. ": " .. w.value
        end
        results[#results + 1] = { origin = h.origin, status = "ran", edits = #ctx.edits }
    end
end

return M
