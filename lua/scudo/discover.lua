-- SPDX-License-Identifier: MIT OR Apache-2.0
-- Which configuration files there are, in the order they merge (later wins):
--   1. the built-in policies (policies/*.toml, compiled in);
--   2. SYSCONFDIR/config.toml, then SYSCONFDIR/config.d/*.toml|*.lua in name order;
--   3. $XDG_CONFIG_HOME/scudo/config.toml (default ~/.config), then its config.d;
--   4. .scudo.toml and .scudo.lua in / and every directory down to the start directory.
local util = require("scudo.util")
local sys = require("scudo.sys")
local engine = require("scudo.engine")
local load = require("scudo.load")
local text = require("scudo.text")

local M = {}

M.PROJECT_NAMES = { ".scudo.toml", ".scudo.lua" }

local function add_if_present(list, path, layer)
    local f = load.open(path, layer)
    list[#list + 1] = f
    return f
end

local function add_dir(list, dir, layer)
    local names, err = sys.listdir(dir, true)
    if not names then
        if err then     -- anything but ENOENT or ENOTDIR
            -- A config.d that cannot be read (a symlink loop, no permission) is an error:
            -- silently reading less configuration could mean less confinement.
            local f = load.new(dir, layer)
            f.status = "error"
            f.errors[1] = err
            list[#list + 1] = f
        end
        return
    end
    for _, n in ipairs(names) do
        if (n:match("%.toml$") or n:match("%.lua$")) and n:sub(1, 1) ~= "." then
            add_if_present(list, text.join(dir, n), layer)
        end
    end
end

-- Whether the start directory is its own realpath: getcwd() gives it so, and one realpath
-- makes sure, once per request. Then no prefix of it is a symlink, "." or "..": each directory
-- from / down to it is its own realpath too (see below, and expand.real_home).
local start_real = setmetatable({}, { __mode = "k" })

function M.start_is_real(request)
    local r = start_real[request]
    if r == nil then
        r = sys.realpath(request.start_dir) == request.start_dir
        start_real[request] = r
    end
    return r
end

-- request: the Lua view of the Request (see policy.lua). Returns the list of file records.
function M.files(request)
    local list = {}
    for _, e in ipairs(engine.embedded()) do
        local f = load.new("<built-in>/" .. e.name, "builtin", "toml")
        f.text = e.text
        f.frozen = e.frozen
        list[#list + 1] = f
    end

    local etc = request.sysconfdir
    add_if_present(list, text.join(etc, "config.toml"), "system")
    add_dir(list, text.join(etc, "config.d"), "system")

    local xdg = request.env.XDG_CONFIG_HOME
    if not xdg or xdg:sub(1, 1) ~= "/" then
        xdg = text.join(request.home, ".config")
    end
    local user = text.join(xdg, "scudo")
    add_if_present(list, text.join(user, "config.toml"), "user")
    add_dir(list, text.join(user, "config.d"), "user")

    local found = {}
    for _, dir in ipairs(text.ancestors(request.start_dir)) do
        for _, n in ipairs(M.PROJECT_NAMES) do
            local f = add_if_present(list, text.join(dir, n), "project")
            if f then
                found[#found + 1] = f.path
            end
        end
    end
    -- A project file's trust key is its directory resolved (load.trust_key); these directories
    -- are the start directory and its ancestors. When the start directory is its own realpath
    -- (M.start_is_real), no prefix of it is a symlink, "." or "..", or it would resolve
    -- elsewhere: each of these directories is its own realpath, and load.trust_key takes it as
    -- it is for the files found here. Anything else it is asked about (hook files, paths given
    -- to `scudo trust`) it resolves.
    load.discovered = {}
    if #found > 0 and M.start_is_real(request) then
        for _, p in ipairs(found) do
            load.discovered[p] = true
        end
    end
    return list
end

return M
