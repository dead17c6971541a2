# SPDX-License-Identifier: MIT OR Apache-2.0
"""The FUSE shim on PATH (docs/shim.md): mounted by dev's user unit scudo-shim.service with the
real kernel's FUSE and fusermount3, looked up and run through as a shell does. What runs
through it is checked from outside: a file in dev's home that the command cannot read, and
that is unchanged afterwards."""
import json
import shlex
import uuid

import pytest

from conftest import SCUDO, start_bpfd, wait_for

Q = shlex.quote(SCUDO)

# A stand-in tool, outside dev's home, as a package manager installs one: it says what it can
# reach of dev's home.
TOOL = """#!/bin/sh
cat "$HOME/shim-secret-%(id)s" 2>/dev/null && echo TOOL-READ-SECRET
echo tampered >> "$HOME/shim-secret-%(id)s" 2>/dev/null && echo TOOL-WROTE-SECRET
echo tool-ran "$@"
"""


@pytest.fixture(scope="module")
def shim(tb):
    """The shim mounted by its user unit; its directory."""
    r = tb.dev("test -c /dev/fuse && test -r /dev/fuse && command -v fusermount3")
    if r.rc != 0:
        pytest.skip("no usable /dev/fuse or fusermount3 for dev in the testbed: %r" % r)
    path = tb.dev("%s shim --print-path" % Q).out.strip()
    assert path.endswith("/scudo/shim"), path
    r = tb.dev("systemctl --user daemon-reload && systemctl --user restart scudo-shim")
    assert r.rc == 0, r
    assert wait_for(lambda: tb.dev("grep -q ' %s fuse' /proc/mounts" % path).rc == 0, timeout=10), \
        tb.dev("systemctl --user status scudo-shim --no-pager; journalctl --user -u scudo-shim --no-pager | tail")
    yield path
    tb.dev("systemctl --user stop scudo-shim")


@pytest.fixture
def tool(tb):
    """A matched command: /opt/shimtest-ID/bin/shimtool-ID, its profile in ~/.config/scudo, and
    dev's secret beside it. Yields (name, bindir, id)."""
    i = uuid.uuid4().hex[:8]
    name, bindir = "shimtool-" + i, "/opt/shimtest-%s/bin" % i
    r = tb.root("mkdir -p %(b)s && cat > %(b)s/%(n)s && chmod 755 %(b)s/%(n)s" % {"b": bindir, "n": name},
                input=(TOOL % {"id": i}).encode())
    assert r.rc == 0, r
    r = tb.dev("mkdir -p ~/.config/scudo/config.d && echo secret-%s > ~/shim-secret-%s" % (i, i))
    assert r.rc == 0, r
    yield name, bindir, i
    tb.dev("rm -f ~/.config/scudo/config.d/shim-%s.toml ~/shim-secret-%s" % (i, i))
    tb.root("rm -rf /opt/shimtest-%s" % i)


def add_profile(tb, i, name):
    r = tb.dev("printf '[%s]\\nmatch = [\"%s\"]\\n' > ~/.config/scudo/config.d/shim-%s.toml" % (name, name, i))
    assert r.rc == 0, r


def listed(tb, shim, name, cwd="~", path=None):
    path = path or "%s:/usr/local/bin:/usr/bin:/bin" % shim
    return tb.dev("cd %s && PATH=%s bash -c 'command -v %s'" % (cwd, shlex.quote(path), name)).out.strip()


def secret_intact(tb, i):
    return tb.dev("cat ~/shim-secret-%s" % i).out == "secret-%s\n" % i


def test_profile_added_appears_at_once_and_unlisted_falls_through(tb, shim, tool):
    name, bindir, i = tool
    path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, bindir)
    assert listed(tb, shim, name, path=path) == "%s/%s" % (bindir, name)
    add_profile(tb, i, name)
    assert wait_for(lambda: listed(tb, shim, name, path=path) == "%s/%s" % (shim, name), timeout=2.0)
    r = tb.dev("PATH=%s ls %s" % (shlex.quote(path), shim))
    assert name in r.out.split(), r
    # a name that resolves nowhere after the shim is not listed: command -v does not lie (once
    # the kernel's entry for the last caller's lookup has expired: docs/shim.md, "Caching")
    assert wait_for(lambda: listed(tb, shim, name) == "", timeout=5.0), listed(tb, shim, name)
    # a shell that puts the shim first itself still shows its old PATH in /proc: listed
    r = tb.dev("PATH=/usr/bin:/bin bash -c 'export PATH=%s; command -v %s'" % (path, name))
    assert r.out.strip() == "%s/%s" % (shim, name), r
    # an unlisted name falls through to the next PATH directory
    assert listed(tb, shim, "ls", path=path) == "/usr/bin/ls"
    assert tb.dev("test -e %s/ls" % shim).rc != 0
    # and the profile removed, the entry goes
    tb.dev("rm ~/.config/scudo/config.d/shim-%s.toml" % i)
    assert wait_for(lambda: listed(tb, shim, name, path=path) == "%s/%s" % (bindir, name), timeout=3.0)


def test_run_through_shim_is_confined(tb, shim, tool, work):
    name, bindir, i = tool
    add_profile(tb, i, name)
    path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, bindir)
    assert wait_for(lambda: listed(tb, shim, name, path=path) == "%s/%s" % (shim, name), timeout=2.0)
    r = tb.dev("cd %s && PATH=%s %s a1 'a 2'" % (work, shlex.quote(path), name), timeout=120)
    assert r.rc == 0, r
    assert "tool-ran a1 a 2" in r.out, r
    # (what it appends to the file goes to the empty home directory the sandbox gives it)
    assert "TOOL-READ-SECRET" not in r.out and "secret-" not in r.out, r
    assert secret_intact(tb, i)
    # the same tool run directly reads it: the test can fail
    r = tb.dev("cd %s && %s/%s" % (work, bindir, name))
    assert "TOOL-READ-SECRET" in r.out, r
    tb.dev("echo secret-%s > ~/shim-secret-%s" % (i, i))


def test_no_recursion(tb, shim, tool, work):
    """The shim twice on PATH, and a profile that matches scudo itself: one run, confined."""
    name, bindir, i = tool
    r = tb.dev("printf '[%s]\\nmatch = [\"%s\", \"scudo\"]\\n' > ~/.config/scudo/config.d/shim-%s.toml"
               % (name, name, i))
    assert r.rc == 0, r
    path = "%s:%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, shim, bindir)
    assert wait_for(lambda: listed(tb, shim, name, path=path) == "%s/%s" % (shim, name), timeout=2.0)
    assert tb.dev("test -e %s/scudo" % shim).rc != 0
    r = tb.dev("cd %s && PATH=%s timeout 60 %s x" % (work, shlex.quote(path), name), timeout=90)
    assert r.rc == 0, r
    assert r.out.count("tool-ran x") == 1, r
    assert "TOOL-READ-SECRET" not in r.out and secret_intact(tb, i), r


def test_project_file_lists_only_in_its_project(tb, shim, tool, work):
    name, bindir, i = tool
    path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, bindir)
    r = tb.dev("cd %s && printf '[%s]\\nmatch = [\"%s\"]\\n' > .scudo.toml && mkdir -p sub other"
               % (work, name, name))
    assert r.rc == 0, r
    # untrusted: adds nothing
    assert listed(tb, shim, name, cwd=work, path=path) == "%s/%s" % (bindir, name)
    r = tb.scudo(["trust", "--yes", work + "/.scudo.toml"], cwd=work)
    assert r.rc == 0, r
    assert wait_for(lambda: listed(tb, shim, name, cwd=work, path=path) == "%s/%s" % (shim, name), timeout=4.0)
    assert listed(tb, shim, name, cwd=work + "/sub", path=path) == "%s/%s" % (shim, name)
    # outside the project: not listed
    assert listed(tb, shim, name, cwd="/tmp", path=path) == "%s/%s" % (bindir, name)
    assert listed(tb, shim, name, cwd="~", path=path) == "%s/%s" % (bindir, name)
    # and run from the project, confined
    r = tb.dev("cd %s && PATH=%s %s p" % (work, shlex.quote(path), name), timeout=120)
    assert "tool-ran p" in r.out and "TOOL-READ-SECRET" not in r.out and secret_intact(tb, i), r


def test_project_name_confined_right_after_another_callers_miss(tb, shim, tool, work):
    """The kernel keeps "not found" only for names no caller is given (docs/shim.md, "Caching"):
    a miss from outside a project must not make the project's command, looked up and run a
    moment later from inside it, fall through to the real binary unconfined."""
    name, bindir, i = tool
    plain = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, bindir)
    path = shlex.quote(plain)
    r = tb.dev("cd %s && printf '[%s]\\nmatch = [\"%s\"]\\n' > .scudo.toml" % (work, name, name))
    assert r.rc == 0, r
    r = tb.scudo(["trust", "--yes", work + "/.scudo.toml"], cwd=work)
    assert r.rc == 0, r
    assert wait_for(lambda: listed(tb, shim, name, cwd=work, path=plain) == "%s/%s" % (shim, name), timeout=4.0)
    # one shell, so that the project's lookup comes well within any time the kernel keeps a miss
    r = tb.dev("cd /tmp && PATH=%(p)s bash -c 'command -v %(n)s' && cd %(w)s && "
               "PATH=%(p)s bash -c 'command -v %(n)s; %(n)s q'" % {"p": path, "n": name, "w": work},
               timeout=120)
    lines = r.out.splitlines()
    assert lines[:2] == ["%s/%s" % (bindir, name), "%s/%s" % (shim, name)], r
    assert "tool-ran q" in r.out and "TOOL-READ-SECRET" not in r.out and secret_intact(tb, i), r


def test_name_no_caller_is_given_answered_without_the_callers_directory(tb, shim, tool, work):
    """A name no caller is given (docs/shim.md, "Caching") is "not found" wherever the caller
    is: answered before the caller's directory is read, so a lookup from a directory the shim
    has not seen makes no list for it (the policy engine, in a process of its own). A shim of
    the test's own says, with -v, whose names it makes. Stopped, it leaves no mount, no process
    and, in its directory, only the links to scudo that stand in for it (docs/shim.md, "When
    the shim dies")."""
    name, bindir, i = tool
    add_profile(tb, i, name)
    mnt = "/run/user/%s/shim-test-%s" % (tb.uid, i)
    log = "%s/shim.log" % work
    r = tb.dev("(setsid %s shim -v --mountpoint %s </dev/null >/dev/null 2>%s & echo $! > %s/shim.pid)"
               % (Q, mnt, log, work))
    assert r.rc == 0, r
    pid = tb.dev("cat %s/shim.pid" % work).out.strip()
    try:
        assert wait_for(lambda: tb.dev("grep -q ' %s fuse' /proc/mounts" % mnt).rc == 0, timeout=10), \
            tb.dev("cat %s" % log)
        # the names any caller could be given are made in a thread of their own, after the mount
        assert wait_for(lambda: tb.dev("grep -q 'any caller could be given$' %s" % log).rc == 0,
                        timeout=30), tb.dev("cat %s" % log)
        path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (mnt, bindir)
        fresh = "%s/fresh" % work
        assert tb.dev("mkdir -p %s" % fresh).rc == 0
        made = "for '%s'" % fresh
        assert listed(tb, mnt, "ls", cwd=fresh, path=path) in ("/usr/bin/ls", "/bin/ls")
        assert made not in tb.dev("cat %s" % log).out, tb.dev("cat %s" % log)
        # a name some caller is given: the caller's directory decides, its names are made
        assert listed(tb, mnt, name, cwd=fresh, path=path) == "%s/%s" % (mnt, name)
        assert made in tb.dev("cat %s" % log).out, tb.dev("cat %s" % log)
    finally:
        tb.dev("kill %s" % pid)
    assert wait_for(lambda: tb.dev("kill -0 %s 2>/dev/null" % pid).rc != 0, timeout=10)
    assert wait_for(lambda: tb.dev("grep -q ' %s fuse' /proc/mounts" % mnt).rc != 0, timeout=10)
    # (its own children only: the user's shim may be making names for a directory of its own
    # at this moment, after the test's profile change)
    assert wait_for(lambda: tb.root("pgrep -u dev -f '__shim-names %s' || true" % work).out.strip() == "",
                    timeout=10)
    links = tb.dev("cd %s && for f in * .[!.]*; do [ -e \"$f\" ] || [ -L \"$f\" ] || continue; "
                   "echo \"$f $(readlink \"$f\")\"; done" % mnt).out.split("\n")
    assert "%s %s" % (name, SCUDO) in links, links
    assert all(ln.split(" ")[1:] == [SCUDO] for ln in links if ln), links
    tb.dev("rm -rf %s" % mnt)


def test_make_through_shim(tb, shim, tool, work):
    _, _, i = tool
    if tb.dev("command -v make").rc != 0:
        pytest.skip("make is not installed in the testbed")
    start_bpfd(tb, "-v --exit-idle-time=2")  # make's built-in profile has network rules
    r = tb.dev("cd %s && printf 'all:\\n\\t@cat $$HOME/shim-secret-%s || echo no-secret\\n\\t@echo built > out\\n' > "
               "Makefile" % (work, i))
    assert r.rc == 0, r
    path = "%s:/usr/local/bin:/usr/bin:/bin" % shim
    assert listed(tb, shim, "make", cwd=work, path=path) == "%s/make" % shim
    r = tb.dev("cd %s && PATH=%s make" % (work, shlex.quote(path)), timeout=120)
    assert r.rc == 0, r
    assert "no-secret" in r.out and "secret-%s" % i not in r.out, r
    assert tb.dev("cat %s/out" % work).out == "built\n"


def test_shim_hidden_inside_a_sandbox(tb, shim, work):
    r = tb.dev("cd %s && %s -- sh -c 'ls -A %s; test -e %s/make && echo SEES-MAKE; echo done'"
               % (work, Q, shim, shim), timeout=120)
    assert "done" in r.out, r
    assert "SEES-MAKE" not in r.out and "cargo" not in r.out, r


def status(tb, cwd, path, names):
    r = tb.dev("cd %s && PATH=%s %s status --json %s" % (cwd, shlex.quote(path), Q, " ".join(names)))
    assert r.rc == 0, r
    return {c["name"]: c for c in json.loads(r.out)["commands"]}, json.loads(r.out)


def test_status_shim_link_neither(tb, shim, tool, work):
    name, bindir, i = tool
    add_profile(tb, i, name)
    # an installer's link of the same name, on PATH after the shim
    r = tb.dev("mkdir -p %(w)s/inst %(w)s/links && ln -s %(b)s/%(n)s %(w)s/inst/%(n)s && "
               "%(q)s link --dir %(w)s/links %(n)s" % {"w": work, "b": bindir, "n": name, "q": Q})
    assert r.rc == 0, r
    path = "%s:%s/inst:%s:/usr/local/bin:/usr/bin:/bin" % (shim, work, bindir)
    assert wait_for(lambda: listed(tb, shim, name, cwd=work, path=path) == "%s/%s" % (shim, name), timeout=2.0)
    cmds, whole = status(tb, work, path, [name, "ls"])
    assert whole["shim"]["state"] == "running" and whole["shim"]["path_position"] == 0, whole
    assert cmds[name]["how"] == "shim", cmds
    assert cmds[name]["real"] == "%s/inst/%s" % (work, name), cmds
    assert cmds[name]["real_link_to"] == "%s/%s" % (bindir, name), cmds
    assert cmds["ls"]["how"] == "unconfined", cmds
    assert whole["bypasses"], whole
    r = tb.dev("cd %s && PATH=%s %s status %s" % (work, shlex.quote(path), Q, name))
    assert "%s/inst/%s" % (work, name) in r.out and "would win" in r.out, r

    # with a link and no shim
    path = "%s/links:%s:/usr/local/bin:/usr/bin:/bin" % (work, bindir)
    cmds, _ = status(tb, work, path, [name])
    assert cmds[name]["how"] == "link" and cmds[name]["real"] == "%s/%s" % (bindir, name), cmds
    # with neither
    path = "%s:/usr/local/bin:/usr/bin:/bin" % bindir
    cmds, _ = status(tb, work, path, [name])
    assert cmds[name]["how"] == "unconfined" and "not on PATH" in cmds[name]["why"], cmds
    # the shim after the real command: unconfined
    path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (bindir, shim)
    cmds, _ = status(tb, work, path, [name])
    assert cmds[name]["how"] == "unconfined", cmds


def test_shim_killed_fails_closed(tb, shim, tool, work):
    """Killed, the shim's mount goes (ExecStopPost=, or auto_unmount's watcher) and uncovers the
    links to scudo beneath it for the global names: the command still runs through scudo,
    confined, or fails; never unconfined. The unit restarts the shim, cleaning up on the way.
    Between the kill and the unmount (milliseconds: docs/shim.md, "When the shim dies") a
    shell's PATH search steps over the dead mount; the loop starts once it is gone."""
    name, bindir, i = tool
    add_profile(tb, i, name)
    path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, bindir)
    assert wait_for(lambda: listed(tb, shim, name, path=path) == "%s/%s" % (shim, name), timeout=2.0)
    for kill in ("kill -KILL $(systemctl --user show -p MainPID --value scudo-shim)",
                 "systemctl --user kill -s KILL scudo-shim"):
        r = tb.dev("%s; for w in $(seq 100); do stat %s >/dev/null 2>&1 && break; sleep 0.01; done; cd %s; "
                   "for k in 1 2 3 4 5 6; do PATH=%s %s k$k; sleep 0.3; done; %s status %s; true"
                   % (kill, shim, work, shlex.quote(path), name, Q, name), timeout=300)
        assert "TOOL-READ-SECRET" not in r.out and secret_intact(tb, i), r
        assert r.out.count("tool-ran k") >= 1, r
        assert wait_for(lambda: tb.dev("grep -q ' %s fuse' /proc/mounts && test -e %s/make"
                                       % (shim, shim)).rc == 0, timeout=15)


def test_hostile_project_file_blocks_no_one(tb, shim, tool, work):
    """A trusted project file that loops: its directory's callers get the global names once the
    policy engine's budget ends the evaluation; other callers are answered meanwhile."""
    name, bindir, i = tool
    add_profile(tb, i, name)
    r = tb.dev("cd %s && printf 'while true do end\\n' > .scudo.lua && %s trust --yes %s/.scudo.lua"
               % (work, Q, work))
    assert r.rc == 0, r
    path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, bindir)
    r = tb.dev("cd %s && (PATH=%s bash -c 'command -v %s' > looped.out &) ; sleep 0.2; cd /tmp && "
               "time PATH=%s bash -c 'command -v make; command -v %s'"
               % (work, shlex.quote(path), name, shlex.quote(path), name), timeout=60)
    assert r.out.split() == ["%s/make" % shim, "%s/%s" % (shim, name)], r
    assert wait_for(lambda: tb.dev("cat %s/looped.out" % work).out.strip() == "%s/%s" % (shim, name),
                    timeout=30), tb.dev("cat %s/looped.out" % work)


@pytest.mark.parametrize("kind", ["script", "binary"])
def test_swapped_after_the_check_never_runs(tb, shim, tool, work, kind):
    """scudo executes the file it checked (docs/shim.md, "What runs"): a file swapped in at the
    real command's path after scudo found and checked it, while the sandbox starts, is refused,
    never run. strace holds scudo for 3 s where the policy engine ends (timer_delete), after the
    check and before the unit is built; the swap (a rename over the path, by whoever may write
    its directory) happens then."""
    name, bindir, i = tool
    if tb.dev("command -v strace").rc != 0:
        pytest.skip("strace is not installed in the testbed")
    add_profile(tb, i, name)
    if kind == "binary":
        assert tb.root("cp /bin/echo %s/%s" % (bindir, name)).rc == 0
    # dev may write the directory: it is who swaps
    assert tb.root("chown dev %s" % bindir).rc == 0
    path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, bindir)
    assert wait_for(lambda: listed(tb, shim, name, cwd=work, path=path) == "%s/%s" % (shim, name), timeout=2.0)
    evil = "#!/bin/sh\necho SWAPPED-RAN\ntouch %s/swapped-ran\n" % work
    assert tb.dev("cat > %s/evil && chmod 755 %s/evil" % (work, work), input=evil.encode()).rc == 0

    def held(swap):
        tb.dev("rm -f %s/trace %s/rc" % (work, work))
        then = ("mv %s/evil-copy %s/%s" % (work, bindir, name)) if swap else "true"
        tb.dev("cp %s/evil %s/evil-copy" % (work, work))
        tb.dev("cd %(w)s && (PATH=%(p)s strace -qq -f -o trace -e trace=timer_delete "
               "-e inject=timer_delete:delay_exit=3000000 env PATH=%(p)s %(n)s held-run > out 2> err; "
               "echo $? > rc) </dev/null >/dev/null 2>&1 & "
               "(for k in $(seq 400); do grep -q timer_delete %(w)s/trace 2>/dev/null && break; sleep 0.05; "
               "done; %(then)s) </dev/null >/dev/null 2>&1 &"
               % {"w": work, "p": shlex.quote(path), "n": name, "then": then})
        assert wait_for(lambda: tb.dev("test -s %s/rc" % work).rc == 0, timeout=60)
        return (tb.dev("cat %s/rc" % work).out.strip(), tb.dev("cat %s/out" % work).out,
                tb.dev("cat %s/err" % work).out)

    # held, not swapped: it runs (the hold alone changes nothing)
    rc, out, err = held(False)
    assert rc == "0" and ("tool-ran held-run" if kind == "script" else "held-run") in out, (rc, out, err)
    # swapped while held: refused, and neither file runs
    rc, out, err = held(True)
    assert tb.dev("grep -q SWAPPED-RAN %s/%s" % (bindir, name)).rc == 0, "the swap did not happen"
    assert rc == "125" and "not the file scudo checked" in err, (rc, out, err)
    assert "SWAPPED-RAN" not in out and "held-run" not in out, (rc, out, err)
    assert tb.dev("test -e %s/swapped-ran" % work).rc != 0


def test_npm_install_through_shim(tb, shim, tool, work):
    """A real `npm install` through the shim, of a package from a local tarball (no registry):
    installed, and its install script confined (it cannot read dev's secret)."""
    _, _, i = tool
    if tb.dev("command -v npm && command -v node").rc != 0:
        pytest.skip("npm or node is not installed in the testbed")
    start_bpfd(tb, "-v --exit-idle-time=2")  # npm's built-in profile has network rules
    pkg = json.dumps({"name": "shimdep", "version": "1.0.0", "main": "index.js", "scripts": {
        "postinstall": "cat $HOME/shim-secret-%s || echo no-secret-in-postinstall" % i}})
    r = tb.dev("mkdir -p %(w)s/dep %(w)s/app && cd %(w)s/dep && cat > package.json && "
               "echo 'module.exports = 42' > index.js && npm pack --silent >/dev/null && "
               "mv shimdep-1.0.0.tgz ../app/ && cd ../app && npm init -y >/dev/null" % {"w": work},
               input=pkg.encode())
    assert r.rc == 0, r
    path = "%s:/usr/local/bin:/usr/bin:/bin" % shim
    assert listed(tb, shim, "npm", cwd=work + "/app", path=path) == "%s/npm" % shim
    r = tb.dev("cd %s/app && PATH=%s npm install --offline --no-audit --no-fund --foreground-scripts "
               "./shimdep-1.0.0.tgz" % (work, shlex.quote(path)), timeout=180)
    assert r.rc == 0, r
    lines = (r.out + r.err).splitlines()
    assert "no-secret-in-postinstall" in lines and "secret-%s" % i not in lines, r
    assert secret_intact(tb, i)
    r = tb.dev("cd %s/app && node -e 'console.log(require(\"shimdep\"))' && grep -c shimdep package.json"
               % work)
    assert r.out.split() == ["42", "1"], r


def test_project_name_still_confined_while_the_shim_restarts(tb, shim, tool, work):
    """A name only a trusted project file lists, looked up once: killed, the shim's mount goes
    and uncovers a link to scudo for it too; the command runs through scudo, confined, until
    the unit has restarted the shim."""
    name, bindir, i = tool
    r = tb.dev("cd %s && printf '[%s]\\nmatch = [\"%s\"]\\n' > .scudo.toml && %s trust --yes %s/.scudo.toml"
               % (work, name, name, Q, work))
    assert r.rc == 0, r
    path = "%s:%s:/usr/local/bin:/usr/bin:/bin" % (shim, bindir)
    assert wait_for(lambda: listed(tb, shim, name, cwd=work, path=path) == "%s/%s" % (shim, name), timeout=4.0)
    r = tb.dev("kill -KILL $(systemctl --user show -p MainPID --value scudo-shim); "
               "for w in $(seq 100); do stat %s >/dev/null 2>&1 && break; sleep 0.01; done; cd %s; "
               "for k in 1 2 3 4 5 6; do PATH=%s %s k$k; sleep 0.3; done; true"
               % (shim, work, shlex.quote(path), name), timeout=300)
    assert "TOOL-READ-SECRET" not in r.out and secret_intact(tb, i), r
    assert r.out.count("tool-ran k") >= 1, r
    assert wait_for(lambda: tb.dev("grep -q ' %s fuse' /proc/mounts && test -e %s/make"
                                   % (shim, shim)).rc == 0, timeout=15)
    tb.dev("%s untrust %s/.scudo.toml" % (Q, work))


def test_command_keeps_its_name(tb, work):
    """Executed from the descriptor scudo checked (or, before Linux 6.14, by its name), the
    command is named as it is everywhere: ps, /proc/PID/comm and the reports say "cat", not
    the descriptor's number."""
    r = tb.scudo(["cat", "/proc/self/comm"], cwd=work)
    assert r.rc == 0 and r.out == "cat\n", r
