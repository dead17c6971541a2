# SPDX-License-Identifier: MIT OR Apache-2.0
"""The policy engine as a user meets it: explain, check, profiles, trust, project files and
hooks, run as dev against the real user manager. What a profile grants is checked by running
the command and looking at the result from outside the sandbox."""
import json
import os
import re
import shlex

from conftest import SCUDO, helper

Q = shlex.quote(SCUDO)
PTYRUN = helper("ptyrun.py")


def write(tb, path, text):
    r = tb.dev("mkdir -p $(dirname %s) && cat > %s" % (shlex.quote(path), shlex.quote(path)), input=text.encode())
    assert r.rc == 0, r


def trust_on_terminal(tb, cwd, args="", answer="y"):
    """`scudo trust ARGS` on a terminal, answering its question; ptyrun's report."""
    r = tb.dev("cd %s && python3 %s --send-after '[y/N]' '%s\\r' -- %s trust %s" % (cwd, PTYRUN, answer, Q, args))
    return json.loads(r.out)


def trusted_paths(tb):
    return tb.scudo(["trusted"]).out


def test_explain_shows_files_profiles_and_origins(tb, work):
    tb.dev("mkdir -p %s/.git" % work)
    r = tb.scudo(["explain", "npm", "install"], cwd=work)
    assert r.rc == 0, r
    assert "<built-in>/default.toml" in r.out, r
    assert "sandbox: matched by regex" in r.out and "npm: matched by name 'npm'" in r.out, r
    assert "extends javascript -> supply-chain -> git-project -> sandbox" in r.out, r
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

    r = tb.scudo(["trust", "--yes"], cwd=work)
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
    tb.scudo(["trust", "--yes", ".scudo.lua"], cwd=work)
    r = tb.scudo(["sh", "-c", "echo hi > out/f"], cwd=work)
    assert r.rc == 0 and "hook ran for sh" in r.err, r
    assert tb.root("cat %s/out/f" % work).out == "hi\n"


def test_hostile_hook_is_stopped_and_command_not_run(tb, work):
    write(tb, work + "/.scudo.lua",
          "return { sandbox = { hook = function()\n"
          "  while true do pcall(function() while true do end end) end\n"
          "end } }\n")
    tb.scudo(["trust", "--yes", ".scudo.lua"], cwd=work)
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
    assert tb.scudo(["trust", "--yes"], cwd=work).rc == 0
    for _ in range(8):
        r = tb.scudo(["sh", "-c", "cat box/secret; echo changed > box/secret"], cwd=work)
        assert r.rc != 0 and "original" not in r.out, r
        assert tb.root("cat %s/box/secret" % work).out.strip() == "original"


def test_trust_and_untrust_a_directory(tb, work):
    write(tb, work + "/.scudo.toml", '[sandbox]\nfilesystem.write = ["~/granted-dir"]\n')
    tb.dev("mkdir -p %s/sub ~/granted-dir" % work)
    r = tb.scudo(["trust", "--yes", ".."], cwd=work + "/sub")
    assert r.rc == 0 and "trusted %s/.scudo.toml" % work in r.out, r
    r = tb.scudo(["sh", "-c", "touch ~/granted-dir/x"], cwd=work)
    assert r.rc == 0, r
    assert tb.root("ls /home/dev/granted-dir/x").rc == 0
    r = tb.scudo(["trust", "--yes", "."], cwd=work + "/sub")      # nothing to trust there
    assert r.rc == 125 and "no .scudo.toml or .scudo.lua in" in r.err, r
    r = tb.scudo(["untrust", ".."], cwd=work + "/sub")
    assert r.rc == 0 and "untrusted %s/.scudo.toml" % work in r.out, r
    tb.dev("rm -f ~/granted-dir/x")
    r = tb.scudo(["sh", "-c", "touch ~/granted-dir/x"], cwd=work)
    assert "is not trusted" in r.err, r
    assert tb.root("ls /home/dev/granted-dir/x 2>&1").rc != 0
    tb.dev("rm -rf ~/granted-dir")


def test_trust_without_path_takes_the_start_directory_alone_shows_and_asks(tb, work):
    # A sandbox started in `work` could have written work/.scudo.toml (here: granting a secret);
    # a plain `scudo trust` in work/foo must neither trust it along nor trust without showing.
    tb.dev("mkdir -p %s/foo/out && echo planted-secret > ~/.planted-secret" % work)
    write(tb, work + "/.scudo.toml", '[sandbox]\nfilesystem.read = ["~/.planted-secret"]\n')
    write(tb, work + "/foo/.scudo.toml", '[sandbox]\nfilesystem.write = ["out"]\n')
    try:
        r = tb.scudo(["trust"], cwd=work + "/foo")      # no terminal: nothing trusted
        assert r.rc == 125 and "no terminal to ask on" in r.err and "filesystem.write: out" in r.out, r
        assert work not in trusted_paths(tb)
        res = trust_on_terminal(tb, work + "/foo", answer="n")
        assert "[sandbox]" in res["out"] and "filesystem.write: out" in res["out"], res
        assert "Trust this file? [y/N]" in res["out"] and res["rc"] == 1, res
        assert work not in trusted_paths(tb)
        res = trust_on_terminal(tb, work + "/foo")
        assert res["rc"] == 0 and "trusted %s/foo/.scudo.toml" % work in res["out"], res
        assert "%s/.scudo.toml" % work not in res["out"] and "planted" not in res["out"], res
        assert "%s/.scudo.toml" % work not in trusted_paths(tb)
        r = tb.scudo(["sh", "-c", "cat ~/.planted-secret; touch out/made"], cwd=work + "/foo")
        assert "planted-secret" not in r.out and "%s/.scudo.toml is not trusted" % work in r.err, r
        assert tb.root("test -e %s/foo/out/made" % work).rc == 0, "foo's own file did not apply"
        # the one above, by its path
        r = tb.scudo(["trust", "--yes", "../.scudo.toml"], cwd=work + "/foo")
        assert r.rc == 0 and "filesystem.read: ~/.planted-secret" in r.out, r
    finally:
        tb.dev("rm -f ~/.planted-secret; %s untrust %s %s/foo" % (Q, work, work))


def test_trust_takes_the_hooks_of_the_file_tree_as_lists_and_no_other_file(tb, work):
    outside = "/home/dev/outside-" + work[-8:]
    write(tb, work + "/.scudo.toml", '[sandbox]\nhook = ["hooks/a.lua", "hooks/b.lua"]\n'
          '[evil]\nmatch = ["cat"]\nhook = "%s/evil.lua"\n' % outside)
    write(tb, work + "/hooks/a.lua", "scudo.warn('hook a ran')\n")
    write(tb, work + "/hooks/b.lua", "scudo.warn('hook b ran')\n")
    write(tb, outside + "/evil.lua", "scudo.warn('evil ran')\n")
    try:
        res = trust_on_terminal(tb, work)
        assert res["rc"] == 0 and "trusted %s/hooks/a.lua" % work in res["out"], res
        assert "trusted %s/hooks/b.lua" % work in res["out"], res
        assert "NOT trusted with it: hook %s/evil.lua" % outside in res["out"], res
        assert "scudo trust %s/evil.lua" % outside in res["out"], res
        r = tb.scudo(["true"], cwd=work)
        assert r.rc == 0 and "hook a ran" in r.err and "hook b ran" in r.err, r
        r = tb.scudo(["cat", "/dev/null"], cwd=work)
        assert r.rc == 125 and "evil ran" not in r.err and "is not trusted" in r.err, r
        res = trust_on_terminal(tb, work, outside + "/evil.lua")
        assert res["rc"] == 0 and "trusted %s/evil.lua" % outside in res["out"], res
        r = tb.scudo(["cat", "/dev/null"], cwd=work)
        assert r.rc == 0 and "evil ran" in r.err, r
        # only project and hook files: not a shell's start-up file, not a FIFO named like a hook
        tb.dev("mkfifo %s/f.lua" % work)
        for bad in ["/home/dev/.bashrc", "f.lua"]:
            r = tb.scudo(["trust", "--yes", bad], cwd=work)
            assert r.rc == 125 and "trusted" not in r.out, (bad, r)
    finally:
        tb.dev("%s untrust %s %s/hooks/a.lua %s/hooks/b.lua %s/evil.lua; rm -rf %s"
               % (Q, work, work, work, outside, outside))


def test_explain_creates_nothing_and_shows_what_scudo_adds(tb, work):
    # With the home directory writable, scudo keeps its configuration read-only, a directory a
    # run makes first when missing; explain only says so (it once made it). And a deny of a
    # path that does not exist is dropped, saying why.
    tag = work[-8:]
    cfg = "/home/dev/cfg-%s" % tag
    r = tb.scudo(["explain", "--fs-write", "/home/dev", "--fs-deny", "/home/dev/no-such-%s" % tag, "true"],
                 cwd=work, extra_env="XDG_CONFIG_HOME=%s" % cfg)
    assert r.rc == 0 and "plan: valid" in r.out, r
    assert re.search(r"read +%s/scudo \(directory created when missing: would be created\) +<- scudo "
                     r"\(its own configuration stays read-only\)" % cfg, r.out), r
    assert re.search(r"deny +/home/dev/no-such-%s +<- --fs-deny +\(dropped: does not exist" % tag, r.out), r
    assert tb.root("test -e %s" % cfg).rc != 0, "explain created %s" % cfg
    assert tb.root("test -e %s/.git" % work).rc != 0, "explain made a .git placeholder"
    # --dry-run shows the same and makes nothing either
    r = tb.scudo(["--dry-run", "--fs-write", "/home/dev", "true"], cwd=work,
                 extra_env="XDG_CONFIG_HOME=%s" % cfg)
    assert "filesystem.read: %s/scudo   (scudo: its own configuration stays read-only)" % cfg in r.out, r
    assert tb.root("test -e %s" % cfg).rc != 0, "--dry-run created %s" % cfg
    # a run makes it, and keeps it read-only
    r = tb.scudo(["--fs-write", "/home/dev", "sh", "-c", "touch %s/scudo/x; echo t=$?" % cfg], cwd=work,
                 extra_env="XDG_CONFIG_HOME=%s" % cfg)
    assert "t=0" not in r.out and tb.root("test -d %s/scudo" % cfg).rc == 0, r
    tb.root("rm -rf %s" % cfg)


def filesystem_of_dry_run(out):
    """{(access, path)} a run gets, and {(access, path)} it drops, from --dry-run's lines."""
    kept, dropped = set(), set()
    for line in out.splitlines():
        m = re.match(r"(dropped )?filesystem\.(\w+): (\S+)   \(", line)
        if m:
            (dropped if m.group(1) else kept).add((m.group(2), m.group(3)))
    return kept, dropped


def test_explain_shows_the_filesystem_a_run_gets(tb, work):
    # explain's filesystem is the run's plan, entry for entry: C's canonical paths, its
    # leads-out rule and its one entry per path, not a merge of its own. Here a deny and a read
    # that reach one file, the read through a link in the writable start directory: a run drops
    # the read (it leads out) and keeps the deny, and so must explain (it once let the read
    # replace the deny before the read was dropped, and showed neither).
    tag = work[-8:]
    secret = "/var/tmp/secret-%s" % tag
    tb.root("mkdir -p %s && echo s > %s/f && chown -R dev %s" % (secret, secret, secret))
    tb.dev("ln -sfn %s %s/link" % (secret, work))
    try:
        for argv in (["--fs-deny", secret, "--fs-read", "%s/link" % work, "true"],
                     ["--fs-read", "%s/link/f" % work, "--fs-deny", secret, "true"],
                     ["--fs-write", "/home/dev", "git", "status"],
                     ["npm", "install"]):
            run = tb.scudo(["--dry-run"] + argv, cwd=work)
            assert run.rc == 0, run
            kept, dropped = filesystem_of_dry_run(run.out)
            assert kept, run
            ex = tb.scudo(["explain", "--json"] + argv, cwd=work)
            assert ex.rc == 0, ex
            fs = json.loads(ex.out)["filesystem"]
            ex_kept = {(f["access"], f["path"]) for f in fs if "dropped" not in f}
            ex_dropped = {(f["access"], f["path"]) for f in fs if "dropped" in f}
            assert ex_kept == kept, (argv, sorted(ex_kept ^ kept))
            assert ex_dropped == dropped, (argv, sorted(ex_dropped ^ dropped))
            if argv[0] == "--fs-deny":
                assert ("deny", secret) in kept and ("read", secret) not in kept, run.out
    finally:
        tb.root("rm -rf %s %s/link" % (secret, work))
