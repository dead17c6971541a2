-- SPDX-License-Identifier: MIT OR Apache-2.0
-- Variables in paths and values.
--
--   ~ and ~/...          the caller's home directory
--   ${HOME} ${PWD}       the home directory; the directory the command starts in
--   ${USER} ${UID}       the caller's user name (from $USER) and uid
--   ${XDG_CONFIG_HOME} ${XDG_CACHE_HOME} ${XDG_DATA_HOME} ${XDG_STATE_HOME} ${XDG_RUNTIME_DIR}
--                        from the environment when set to an absolute path, else their
--                        defaults (~/.config, ~/.cache, ~/.local/share, ~/.local/state,
--                        /run/user/UID)
--   ${NAME}              a lookup variable: lookup.NAME = [markers]
--   ${arg_NAME}          from the command's arguments: args.NAME = { options = [...], index = n }
--   ${env:NAME}          the caller's environment variable NAME
-- A variable that has no value (a lookup that found nothing, an argument not given, an unset
-- environment variable, a name nothing defines) makes the whole entry drop out: it never
-- becomes an empty string that would widen the path.
local util = require("scudo.util")
local text = require("scudo.text")
local path = require("scudo.path")
local sys = require("scudo.sys")
local discover = require("scudo.discover")

local M = {}

local XDG = {
    XDG_CONFIG_HOME = ".config",
    XDG_CACHE_HOME = ".cache",
    XDG_DATA_HOME = ".local/share",
    XDG_STATE_HOME = ".local/state",
}

-- The built-in variables' names (the list at the top): the one list of them, which scudo
-- check (admin.lua) also reads to find a misspelt one.
M.BUILT_IN = { HOME = true, PWD = true, USER = true, UID = true, XDG_RUNTIME_DIR = true }
for name in next, XDG do
    M.BUILT_IN[name] = true
end

-- The variables above whose value is an environment variable of the same name when that is set,
-- as ${env:NAME}'s is NAME's. (Not HOME: where the home directory is, scudo knows from the
-- password database as well, and every path in it says.)
local FROM_ENV = { USER = true, XDG_RUNTIME_DIR = true, XDG_CONFIG_HOME = true, XDG_CACHE_HOME = true,
    XDG_DATA_HOME = true, XDG_STATE_HOME = true }

-- The first environment variable that s, as written, takes a value from and for which
-- withheld(name) is true, or nil. By name alone, whatever the values: what this says about s
-- must not depend on them.
function M.reads_withheld(s, withheld)
    if not s:find("${", 1, true) then
        return nil
    end
    for var in s:gmatch("%${([^}]*)}") do
        local name = var:sub(1, 4) == "env:" and var:sub(5) or (FROM_ENV[var] and var)
        if name and withheld(name) then
            return name
        end
    end
    return nil
end

-- Values a path may take from the request; "derived" ones are worked out from what the
-- caller controls (its directory, its arguments), which matters for delegated runs.
function M.new(request, values)
    local self = { request = request, lookup = values.lookup or {}, args = values.args or {}, cache = {} }
    local env = request.env
    local fixed = {
        HOME = request.home,
        UID = tostring(request.uid),
        XDG_RUNTIME_DIR = request.runtime_dir,
    }
    if env.USER and env.USER:match("^[%w_.%-]+$") then
        fixed.USER = env.USER
    end
    for name, default in next, XDG do
        local v = env[name]
        fixed[name] = (v and v:sub(1, 1) == "/") and v or text.join(request.home, default)
    end
    self.fixed = fixed
    return setmetatable(self, { __index = M })
end

-- The home directory as getcwd() would name it (symlinks resolved), to compare with the start
-- directory and with paths found from it. Looked up once per evaluation; without a system call
-- when the start directory is the home directory or below it and its own realpath: then the
-- home directory, a prefix of it, is its own realpath too (discover.start_is_real).
function M:real_home()
    local home = self.real_home_path
    if not home then
        local req = self.request
        local req_home, start = req.home, req.start_dir
        if (start == req_home or start:sub(1, #req_home + 1) == req_home .. "/")
            and discover.start_is_real(req) then
            home = req_home
        else
            home = sys.realpath(req_home) or req_home
        end
        self.real_home_path = home
    end
    return home
end

local function arg_value(request, spec)
    local argv = request.argv
    local value
    if spec.options then
        local j = 2
        while j <= #argv do
            local a = argv[j]
            if a == "--" then
                break
            end
            local v
            for _, o in ipairs(spec.options) do
                if a == o then
                    v = argv[j + 1]
                    j = j + 1
                    break
                elseif o:sub(1, 2) == "--" and a:sub(1, #o + 1) == o .. "=" then
                    v = a:sub(#o + 2)
                    break
                elseif o:sub(1, 2) ~= "--" and #o == 2 and a:sub(1, 2) == o and #a > 2 then
                    v = a:sub(3)
                    break
                end
            end
            if v and v ~= "" then
                -- Repeated options apply one after the other (make -C a -C b: a/b).
                value = text.join(value or request.start_dir, v)
            end
            j = j + 1
        end
    end
    if not value and spec.index then
        local v = argv[spec.index + 1]
        if v and v ~= "" then
            value = text.join(request.start_dir, v)
        end
    end
    return value
end

-- The value of variable `name`, whether it is derived, and why not when it has none.
function M:get(name)
    local c = self.cache[name]
    if c then
        return c.value, c.derived, c.why
    end
    local value, derived, why
    if name == "PWD" then
        value, derived = self.request.start_dir, true
    elseif self.fixed[name] then
        value = self.fixed[name]
    elseif name:sub(1, 4) == "env:" then
        local v = self.request.env[name:sub(5)]
        if v and v ~= "" then
            value = v
        else
            why = ("environment variable %s is not set"):format(name:sub(5))
        end
    elseif name:sub(1, 4) == "arg_" then
        local spec = self.args[name:sub(5)]
        if not spec then
            why = ("no profile defines args.%s"):format(name:sub(5))
        else
            value, derived = arg_value(self.request, spec.value), true
            if not value then
                why = ("the command has no argument for args.%s"):format(name:sub(5))
            end
        end
    elseif self.lookup[name] then
        local start, home = self.request.start_dir, self:real_home()
        value, derived = path.lookup(self.lookup[name].value, start), true
        -- Below the home directory a lookup stops short of it: a dotfiles repository in ~
        -- must not turn the whole home directory into "the project".
        local under_home = home ~= "/" and start:sub(1, #home + 1) == home .. "/"
        if value and under_home and #value <= #home then
            why = ("%s found only at %s, and a lookup never yields the home directory or above")
                :format(table.concat(self.lookup[name].value, " or "), value)
            value = nil
        elseif not value then
            why = ("no %s in %s or above"):format(table.concat(self.lookup[name].value, " or "), start)
        end
    else
        why = ("unknown variable ${%s}"):format(name)
    end
    self.cache[name] = { value = value, derived = derived, why = why }
    return value, derived, why
end

-- Expands s. Returns the result and whether it is derived, or nil and the reason. Each
-- "${NAME}" in turn, left to right, is looked up with M.get; the first variable without a value
-- makes the whole value drop out (text.expand does the scanning, in one call).
function M:expand(s)
    return text.expand(s, self.fixed.HOME, M.get, self)
end

-- Expands a path written in a file whose directory is `base` (nil: built-in or command line,
-- where a relative path is relative to the start directory, and derived): as M:expand, and
-- then an empty path is refused and a relative one joined to that directory (text.join), in
-- the same C call.
function M:path(s, base)
    return text.expand_path(s, self.fixed.HOME, M.get, self, base or self.request.start_dir)
end

return M
