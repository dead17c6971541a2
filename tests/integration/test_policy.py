# SPDX-License-Identifier: MIT OR Apache-2.0
"""The policy engine as a user meets it: explain, check, profiles, trust, project files and
hooks, run as dev against the real user manager. What a profile grants is checked by running
the command and looking at the result from outside the sandbox."""
import json
import shlex

from conftest import SCUDO


def write(tb, path, text):
    r = tb.dev("mkdir -p $(dirname %s) && cat > %s" % (shlex.quote(path), shlex.quote(path)), input=text.encode())
    assert r.rc == 0, r


def test_explain_shows_files_profiles_and_origins(tb, work):
    tb.dev("mkdir -p %s/.git" % work)
    r = tb.scudo(["explain", "npm", "install"], cwd=work)
    assert r.rc == 0, r
    assert "<built-in>/default.toml" in r.out, r
    assert "sandbox: matched by regex" in r.out and "npm: matched by name 'npm'" in r.out, r
    assert "extends supply-chain -> git-project -> sandbox" in r.out, r
    assert "write  %s [${PWD}]   <- <built-in>/default.toml:" % work in r.out, r
    assert "allow registry.npmjs.org:443" in r.out, r
    assert "plan: valid" in r.out, r


def test_explain_json_and_dropped_entries(tb, work):
    r = tb.scudo(["explain", "--json", "npm"], cwd=work)   # no .git: ${project} has no value
    assert r.rc == 0, r
    d = json.loads(r.out)
    assert [p["name"] for p in d["profiles"]] == ["sandbox", "npm"], d["profiles"]
    assert d["valid"] is True
    dropped = [x for x in d["dropped"] if x["value"] == "${project}"]
    assert dropped and ".git" in dropped[0]["reason"], d["dropped"]
    home = [f for f in d["filesystem"] if f["path"] == "/home/dev"]
    assert home and home[0]["access"] == "hide" and home[0]["origin"].startswith("<built-in>/default.toml:")


def test_untrusted_project_file_is_named_and_ignored_then_trusted(tb, work):
    write(tb, work + "/.scudo.toml", '[sandbox]\nfilesystem.write = ["~/granted"]\n')
    tb.dev("mkdir -p ~/granted")
    r = tb.scudo(["sh", "-c", "touch ~/granted/x"], cwd=work)
    assert "is not trusted" in r.err and ("scudo trust %s/.scudo.toml" % work) in r.err, r
    assert tb.root("ls /home/dev/granted/x 2>&1").rc != 0, "an untrusted file granted something"

    r = tb.scudo(["trust"], cwd=work)
    assert r.rc == 0 and "trusted %s/.scudo.toml" % work in r.out, r
    r = tb.scudo(["sh", "-c", "touch ~/granted/x"], cwd=work)
    assert r.rc == 0, r
    assert tb.root("ls /home/dev/granted/x").rc == 0

    # edited after trust: not applied any more
    tb.dev("rm -f ~/granted/x; echo '# edited' >> %s/.scudo.toml" % work)
    r = tb.scudo(["sh", "-c", "touch ~/granted/x"], cwd=work)
    assert "is not trusted" in r.err, r
    assert tb.root("ls /home/dev/granted/x 2>&1").rc != 0
    r = tb.scudo(["trusted"], cwd=work)
    assert "CHANGED" in r.out, r
    tb.dev("rm -rf ~/granted")


def test_config_error_exits_125_and_runs_nothing(tb, work):
    write(tb, "/home/dev/.config/scudo/config.toml", '[npm]\nfilesytem.write = ["x"]\n')
    try:
        r = tb.scudo(["sh", "-c", "touch ran"], cwd=work)
        assert r.rc == 125, r
        assert "config.toml:2: unknown key 'filesytem' (did you mean 'filesystem'?)" in r.err, r
        assert tb.root("ls %s/ran 2>&1" % work).rc != 0, "the command ran"
        r = tb.scudo(["check"], cwd=work)
        assert r.rc == 1 and "did you mean 'filesystem'" in r.out, r
    finally:
        tb.dev("rm -f ~/.config/scudo/config.toml")
    r = tb.scudo(["check"], cwd=work)
    assert r.rc == 0, r


def test_profiles_lists_where_each_is_defined(tb, work):
    r = tb.scudo(["profiles"], cwd=work)
    assert r.rc == 0, r
    assert "cargo-install" in r.out and "delegable: false" in r.out, r
    assert "defined at <built-in>/default.toml:" in r.out, r


def test_trusted_lua_hook_grants_through_primitives(tb, work):
    write(tb, work + "/.scudo.lua",
          "return { sandbox = { hook = function(ctx, plan)\n"
          "  scudo.fs.write('out')\n"
          "  scudo.warn('hook ran for ' .. ctx.command)\n"
          "end } }\n")
    tb.dev("mkdir -p %s/out" % work)
    tb.scudo(["trust", ".scudo.lua"], cwd=work)
    r = tb.scudo(["sh", "-c", "echo hi > out/f"], cwd=work)
    assert r.rc == 0 and "hook ran for sh" in r.err, r
    assert tb.root("cat %s/out/f" % work).out == "hi\n"


def test_hostile_hook_is_stopped_and_command_not_run(tb, work):
    write(tb, work + "/.scudo.lua",
          "return { sandbox = { hook = function()\n"
          "  while true do pcall(function() while true do end end) end\n"
          "end } }\n")
    tb.scudo(["trust", ".scudo.lua"], cwd=work)
    r = tb.scudo(["sh", "-c", "touch ran"], cwd=work, timeout=30)
    assert r.rc == 125 and "instruction budget" in r.err, r
    assert tb.root("ls %s/ran 2>&1" % work).rc != 0, "the command ran"


def test_one_run_overrides_reach_the_plan(tb, work):
    tb.dev("mkdir -p ~/extra")
    r = tb.scudo(["--fs-write", "/home/dev/extra", "--property", "MemoryMax=1G", "--dry-run", "true"], cwd=work)
    assert r.rc == 0, r
    assert "filesystem.write: /home/dev/extra   (--fs-write)" in r.out, r
    assert "unit.MemoryMax = 1G   (--property)" in r.out, r
    r = tb.scudo(["--property", "MemoryMaks=1G", "true"], cwd=work)
    assert r.rc == 125 and "did you mean 'MemoryMax'" in r.err, r


def test_one_profile_naming_a_path_twice_gets_the_stricter_access_every_run(tb, work):
    # The order of a Lua table's keys changes from process to process: each run here is a new
    # scudo, and every one must deny, never write (it once went either way).
    tb.dev("mkdir -p %s/box && echo original > %s/box/secret" % (work, work))
    write(tb, work + "/.scudo.toml",
          '[sandbox]\nfilesystem.write = ["box"]\nfilesystem.deny = ["box"]\n')
    assert tb.scudo(["trust"], cwd=work).rc == 0
    for _ in range(8):
        r = tb.scudo(["sh", "-c", "cat box/secret; echo changed > box/secret"], cwd=work)
        assert r.rc != 0 and "original" not in r.out, r
        assert tb.root("cat %s/box/secret" % work).out.strip() == "original"


def test_trust_and_untrust_a_directory(tb, work):
    write(tb, work + "/.scudo.toml", '[sandbox]\nfilesystem.write = ["~/granted-dir"]\n')
    tb.dev("mkdir -p %s/sub ~/granted-dir" % work)
    r = tb.scudo(["trust", ".."], cwd=work + "/sub")
    assert r.rc == 0 and "trusted %s/.scudo.toml" % work in r.out, r
    r = tb.scudo(["sh", "-c", "touch ~/granted-dir/x"], cwd=work)
    assert r.rc == 0, r
    assert tb.root("ls /home/dev/granted-dir/x").rc == 0
    r = tb.scudo(["trust", "."], cwd=work + "/sub")      # nothing to trust there
    assert r.rc == 125 and "no .scudo.toml or .scudo.lua in" in r.err, r
    r = tb.scudo(["untrust", ".."], cwd=work + "/sub")
    assert r.rc == 0 and "untrusted %s/.scudo.toml" % work in r.out, r
    tb.dev("rm -f ~/granted-dir/x")
    r = tb.scudo(["sh", "-c", "touch ~/granted-dir/x"], cwd=work)
    assert "is not trusted" in r.err, r
    assert tb.root("ls /home/dev/granted-dir/x 2>&1").rc != 0
    tb.dev("rm -rf ~/granted-dir")
