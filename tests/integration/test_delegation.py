# SPDX-License-Identifier: MIT OR Apache-2.0
"""Delegation: a stand-in agent (a shell under a profile that delegates) runs a stand-in tool by
name, and the tool runs beside the agent's sandbox under its own profile, through the broker of
the scudo that runs the agent. Everything is checked from outside: the files each one could or
could not touch, the units and cgroups, what is left afterwards (docs/delegation.md)."""
import json
import os
import re
import shlex
import time
import uuid

import pytest

from conftest import BPFD, SCUDO, built, helper, installed, start_bpfd, stop_bpfd, wait_for

Q = shlex.quote(SCUDO)
HERE = os.path.dirname(os.path.abspath(__file__))

AGENT = """#!/bin/sh
# the stand-in agent: runs what it is given
exec "$@"
"""

TOOL = """#!/bin/sh
# the stand-in tool: says what it can reach
[ "$1" = -C ] && { cd "$2" || exit 99; shift 2; }
case "$1" in
exit) exit "$2" ;;
sig) kill -"$2" $$ ;;
probe)
  cat ~/deleg-agent-secret 2>/dev/null && echo tool-read-agent-secret
  touch ~/deleg-agent-area/by-tool 2>/dev/null && echo tool-wrote-agent-area
  touch ~/deleg-tool-area/by-tool 2>/dev/null && echo tool-wrote-tool-area
  grep ^0:: /proc/self/cgroup | sed 's/^/tool-cgroup=/' ;;
env) echo "FOO=$FOO" ;;
trap) trap 'echo got-int; exit 3' INT; echo ready; sleep 100 & wait; exit 4 ;;
sleep) exec sleep 100 ;;
publish) echo published ;;
repl) echo tool-ready; while read -r l; do echo "tool-got-$l"; done ;;
net)
  echo tool-net-output >&2
  python3 -c 'if 1:
    import socket
    for a in ("127.0.0.4", "127.0.0.9"):
        s = socket.socket(); s.settimeout(2)
        try: s.connect((a, 7))
        except OSError as e: print(a, e.errno)
    try: socket.getaddrinfo("refused.example", 80, socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e: print("resolve", e.errno)' ;;
here) touch by-tool-here && echo "tool-cwd=$(pwd -P) tool-PWD=$PWD" ;;
esac
"""

# The stand-in tool is installed as npm is: in a directory of its own, linked from the PATH.
TOOL_PATH = "/usr/local/lib/deleg-tool/tool.sh"
TOOL2_PATH = "/usr/local/lib/deleg-tool/tool-cli"

# The agent delegates the tool by name; the tool's profile grants what the agent's does not,
# and the other way round. `tool.sh publish` is never delegable.
PROFILES = """
[agent]
match = ["agent.sh"]
delegate = ["tool", "tool3-probe"]
filesystem.write = ["~/deleg-agent-area"]
filesystem.read = ["~/deleg-agent-secret", "${PWD}/ro"]

[tool]
match = ["tool.sh", "tool2.sh"]
delegable = true
args.directory = { options = ["-C"] }
filesystem.write = ["~/deleg-tool-area", "${arg_directory}"]

# a name delegated for one use only (as `git push` is): its other uses run in place
[tool3-probe]
match = ["tool3.sh probe"]
delegable = true
filesystem.write = ["~/deleg-tool-area"]

[tool-publish]
extend = "tool"
match = ["tool.sh publish"]
delegable = false

[tool-net]
extend = "tool"
match = ["tool.sh net"]
network.allow = ["127.0.0.4"]
log.target = "journald"    # a delegated run's reports are its caller's all the same

# a tool run whose profile says something of its own (a hook's warning), and an agent whose
# reports go to a file: the warning is the broker's to report there, not the tool's output
[tool-warn]
extend = "tool"
match = ["tool.sh warn"]
hook = "deleg-hooks/warn.lua"

[quiet-agent]
extend = "agent"
match = ["quiet-agent.sh"]
log.target = "/home/dev/deleg-agent-log"

# an agent that cannot run the real tool by its path: it keeps delegating it by name
[narrow-agent]
extend = "agent"
match = ["narrow-agent.sh"]
filesystem.deny = ["%s"]
""" % os.path.dirname(TOOL_PATH)


def install(tb, path, text):
    r = tb.root("cat > %s && chmod 755 %s" % (path, path), input=text.encode())
    assert r.rc == 0, r


@pytest.fixture
def deleg(tb, work):
    """The stand-in agent and tool on PATH, their profiles in the project file, trusted."""
    install(tb, "/usr/local/bin/agent.sh", AGENT)
    install(tb, "/usr/local/bin/narrow-agent.sh", AGENT)
    install(tb, "/usr/local/bin/quiet-agent.sh", AGENT)
    r = tb.root("mkdir -p %s && rm -f /usr/local/bin/tool.sh" % os.path.dirname(TOOL_PATH))
    assert r.rc == 0, r
    install(tb, TOOL_PATH, TOOL)
    r = tb.root("ln -s %s /usr/local/bin/tool.sh" % TOOL_PATH)
    assert r.rc == 0, r
    # a second name, whose executable is named otherwise (as npm's is npm-cli.js)
    install(tb, TOOL2_PATH, TOOL)
    install(tb, "/usr/local/bin/tool3.sh", TOOL)
    r = tb.root("ln -sfn %s /usr/local/bin/tool2.sh" % TOOL2_PATH)
    assert r.rc == 0, r
    tb.dev("rm -rf ~/deleg-*; mkdir -p ~/deleg-agent-area ~/deleg-tool-area ~/deleg-other %s/ro && "
           "echo agent-only-secret > ~/deleg-agent-secret" % work)
    r = tb.dev("mkdir -p %s/deleg-hooks && echo \"scudo.warn('tool-hook-warning')\" > %s/deleg-hooks/warn.lua"
               % (work, work))
    assert r.rc == 0, r
    r = tb.dev("cat > %s/.scudo.toml && cd %s && %s trust --yes" % (work, work, Q), input=PROFILES.encode())
    assert r.rc == 0, r
    yield work
    tb.dev("rm -rf ~/deleg-*")
    assert wait_for(lambda: not tb.user_units("scudo-*"), 10), tb.user_units("scudo-*")


def agent(tb, cwd, script, timeout=60, background="", name="agent.sh"):
    """The agent (under its profile, from `cwd`) runs `script` in sh; tools by name only."""
    return tb.dev("cd %s || exit 1; %s %s sh -c %s </dev/null %s"
                  % (cwd, Q, name, shlex.quote(script), background), timeout=timeout)


def services(tb):
    return [u for u in tb.user_units("scudo-*") if u.endswith(".service")]


def test_tool_gets_its_own_profile_not_the_agents(tb, deleg):
    r = agent(tb, deleg, "cat ~/deleg-agent-secret; touch ~/deleg-agent-area/by-agent && echo agent-wrote;"
              "touch ~/deleg-tool-area/by-agent 2>/dev/null || echo agent-cannot-write-tool-area;"
              "grep ^0:: /proc/self/cgroup | sed 's/^/agent-cgroup=/'; tool.sh probe; echo rc=$?")
    assert "rc=0" in r.out, r
    # the agent's own view
    assert "agent-only-secret" in r.out and "agent-wrote" in r.out and "agent-cannot-write-tool-area" in r.out, r
    # the tool's: what its profile grants, not what the agent's does
    assert "tool-wrote-tool-area" in r.out, r
    assert "tool-read-agent-secret" not in r.out and "tool-wrote-agent-area" not in r.out, r
    # from outside
    assert tb.root("test -e /home/dev/deleg-tool-area/by-tool").rc == 0
    assert tb.root("test -e /home/dev/deleg-agent-area/by-tool").rc != 0
    assert tb.root("test -e /home/dev/deleg-tool-area/by-agent").rc != 0
    assert tb.root("test -e /home/dev/deleg-agent-area/by-agent").rc == 0
    # a unit of its own, beside the agent's and not below it
    cg = dict(l.split("=", 1) for l in r.out.splitlines() if l.startswith(("agent-cgroup=", "tool-cgroup=")))
    assert cg["agent-cgroup"].endswith(".service") and cg["tool-cgroup"].endswith(".service"), r
    assert "/scudo-" in cg["tool-cgroup"] and cg["tool-cgroup"] != cg["agent-cgroup"], r
    assert not cg["tool-cgroup"].startswith(cg["agent-cgroup"]), r


def test_command_not_delegated_runs_in_place(tb, deleg):
    # a nested scudo for a command no delegated profile matches: inside the agent's sandbox
    r = agent(tb, deleg, "grep ^0:: /proc/self/cgroup; "
              "%s sh -c 'cat ~/deleg-agent-secret; grep ^0:: /proc/self/cgroup'; echo rc=$?" % Q)
    assert "rc=0" in r.out and "agent-only-secret" in r.out, r
    lines = [l for l in r.out.splitlines() if l.startswith("0::")]
    assert len(lines) == 2 and lines[0] == lines[1], r
    # the broker was asked, and said so (its report, on the agent run's stderr)
    assert "' runs in place" in r.err and "delegation for scudo-" in r.err, r


def test_exit_status_and_signals_pass(tb, deleg):
    r = agent(tb, deleg, "for c in 0 1 42; do tool.sh exit $c; echo rc=$?; done; tool.sh sig KILL; echo rc=$?;"
              "tool.sh trap & p=$!; sleep 2; kill -INT $p; wait $p; echo rc=$?")
    codes = [l for l in r.out.splitlines() if l.startswith("rc=")]
    assert codes == ["rc=0", "rc=1", "rc=42", "rc=137", "rc=3"], r
    # the tool's handler ran: the signal reached the tool, not just its caller
    assert "ready" in r.out and "got-int" in r.out, r


def test_environment_is_the_brokers_not_the_agents(tb, deleg):
    r = tb.dev("cd %s && FOO=outside %s agent.sh sh -c 'FOO=agent tool.sh env; FOO=agent sh -c \"echo in=\\$FOO\"'"
               " </dev/null" % (deleg, Q))
    assert "FOO=outside" in r.out and "in=agent" in r.out, r


def test_refused_requests_say_why(tb, deleg):
    tb.dev("mkdir -p %s/untrusted && echo '[x]' > %s/untrusted/.scudo.toml" % (deleg, deleg))
    r = agent(tb, deleg, "tool.sh publish; echo rc=$?;"
              "cd /tmp && tool.sh exit 0; echo rc=$?;"
              "cd %s/ro && tool.sh exit 0; echo rc=$?;"
              "cd %s/untrusted && tool.sh exit 0; echo rc=$?;"
              "cd %s && %s --fs-write ~ tool.sh exit 0; echo rc=$?;"
              "tool.sh -C ~/deleg-other exit 0; echo rc=$?;"
              "tool.sh -C ~/deleg-agent-area exit 0; echo rc=$?" % (deleg, deleg, deleg, Q))
    codes = [l for l in r.out.splitlines() if l.startswith("rc=")]
    # the last one: a directory worked out from the request that the agent may write
    assert codes == ["rc=125"] * 6 + ["rc=0"], r
    assert "published" not in r.out, r
    assert "which is not delegable (delegable = false)" in r.err, r
    assert "the working directory /tmp is not the very same directory outside" in r.err, r
    assert "the working directory %s/ro is not one that" % deleg in r.err, r
    assert "untrusted/.scudo.toml is not trusted, and a delegated command cannot ask" in r.err, r
    assert "--fs-* is refused inside a scudo sandbox" in r.err, r
    # `make -C ~`: a path the profile works out from the arguments stays inside the agent's reach
    assert "write access to /home/dev/deleg-other, worked out from the request, lies outside what" in r.err, r


def test_hostile_requests_on_the_socket(tb, deleg):
    install(tb, "/usr/local/bin/deleg-hostile.py", open(os.path.join(HERE, "broker_hostile.py")).read())
    r = agent(tb, deleg, "python3 /usr/local/bin/deleg-hostile.py")
    got = dict(l.split(" ", 1) for l in r.out.splitlines() if " " in l)
    assert got.get("good") == "EXIT 7", r
    for case in ("no-fds", "four-fds", "bad-magic", "bad-version", "bad-count", "huge", "not-nul-terminated",
                 "bad-utf8", "signal-first", "silent"):
        assert got.get(case) == "EXIT 125", (case, r)
    assert "bad magic" in r.err and "number of arguments does not match" in r.err, r


def test_caller_killed_stops_the_tools_unit(tb, deleg):
    agent(tb, deleg, "tool.sh sleep & p=$!; while [ ! -e ~/deleg-agent-area/go ]; do sleep 0.1; done;"
          "kill -KILL $p; sleep 30", background="&>/dev/null &")
    try:
        assert wait_for(lambda: len(services(tb)) == 2, 20), services(tb)
        tb.dev("touch ~/deleg-agent-area/go")
        t0 = time.time()
        assert wait_for(lambda: len(services(tb)) == 1, 5), services(tb)
        assert time.time() - t0 < 2.5
    finally:
        tb.dev("pkill -KILL -o -u dev -f '^%s agent.sh'" % SCUDO)


def broker_root_entries(tb):
    """What /run/user/UID/scudo holds, less the project walk's cache (git-dirs), which stays
    from run to run on purpose (plan/git-dir-cache.h)."""
    return [e for e in tb.dev("ls -A /run/user/$(id -u)/scudo").out.split() if e != "git-dirs"]


def test_scudo_killed_leaves_nothing(tb, deleg):
    agent(tb, deleg, "tool.sh sleep; sleep 30", background="&>/dev/null &")
    assert wait_for(lambda: len(services(tb)) == 2, 20), services(tb)
    broker_dirs = broker_root_entries(tb)
    assert len(broker_dirs) == 1, broker_dirs
    tb.dev("pkill -KILL -o -u dev -f '^%s agent.sh'" % SCUDO)
    assert wait_for(lambda: not tb.user_units("scudo-*"), 10), tb.user_units("scudo-*")
    assert wait_for(lambda: broker_root_entries(tb) == [], 5)
    assert not tb.scudo_cgroups()
    # the request's scudo the broker had started ahead ends with it, having served nothing
    spare = lambda: tb.root("pgrep -a -u dev -f __broker-request").out.strip()
    assert wait_for(lambda: spare() == "", 5), spare()


def test_nothing_left_after_100_delegated_runs(tb, deleg):
    # about 0.5 s a run on a loaded machine with the ASan build
    r = agent(tb, deleg, "i=0; while [ $i -lt 100 ]; do tool.sh exit 0 || echo fail; i=$((i+1)); done; echo done",
              timeout=240)
    assert "done" in r.out and "fail" not in r.out, r
    # each one went through the broker and ran outside, none in place
    assert r.err.count("' delegated, exit status 0") == 100, r
    # no unit, no cgroup, no broker directory or socket, no process of scudo's (a broker,
    # a request's scudo, a proxy) once the agent's run has ended
    assert wait_for(lambda: not tb.user_units("scudo-*"), 10), tb.user_units("scudo-*")
    assert wait_for(lambda: not tb.scudo_cgroups(), 5), tb.scudo_cgroups()
    assert broker_root_entries(tb) == []
    left = tb.root("ps -u dev -o pid=,args= | grep -E 'scudo|proxy|tool\\.sh' | grep -v grep").out
    assert left.strip() == "", left


def test_other_sandboxes_do_not_see_a_broker(tb, deleg):
    # while an agent's broker serves, a sandbox that delegates nothing finds none
    agent(tb, deleg, "sleep 30", background="&>/dev/null &")
    try:
        assert wait_for(lambda: len(services(tb)) == 1, 20)
        r = tb.scudo(["sh", "-c", "ls /run/user/$(id -u)/scudo/broker; echo rc=$?"], cwd=deleg)
        assert "rc=0" not in r.out, r
        # nor can a profile grant it
        r = tb.dev("cd %s && %s --fs-read /run/user/$(id -u)/scudo sh -c 'ls /run/user/$(id -u)/scudo'"
                   % (deleg, Q))
        assert r.rc == 125 and "where the delegation brokers' sockets are" in r.err, r
        r = tb.dev("cd %s && %s sh -c 'tool.sh exit 0; echo rc=$?'" % (deleg, Q))
        assert "rc=0" in r.out, r  # in place, no broker asked: it runs in this sandbox
    finally:
        tb.dev("pkill -KILL -o -u dev -f '^%s agent.sh'" % SCUDO)


def test_ctrl_c_on_a_terminal_reaches_the_tool(tb, deleg):
    # the agent on a terminal, the tool run by name in its foreground: ^C ends the tool's
    # handler, and the status comes back through the agent
    ptyrun = helper("ptyrun.py")
    r = tb.dev("cd %s && python3 %s --send-after ready '\\x03' -- %s agent.sh sh -c "
               "'tool.sh trap; echo tool-rc=$?; test -t 0 && echo agent-tty'" % (deleg, ptyrun, Q))
    res = json.loads(r.out)
    assert "got-int" in res["out"] and "tool-rc=3" in res["out"], res
    assert "agent-tty" in res["out"] and res["rc"] == 0, res


def test_delegated_command_stops_on_ctrl_z_and_fg_resumes_it(tb, deleg):
    # the agent an interactive shell at a terminal (tmux), the tool delegated in its
    # foreground: ^Z stops the tool (every process of it, seen from outside), the agent's shell
    # gets its prompt and lists the job, and fg resumes the tool where it was
    if tb.dev("command -v tmux").rc != 0:
        pytest.skip("no tmux in the testbed (tools/install-deps installs it)")
    from test_tui import Pane
    pane = Pane(tb, deleg)
    try:
        pane.type("%s quiet-agent.sh env PS1='agent$ ' bash --norc --noprofile -i" % Q)
        pane.wait(r"^agent\$ ?$")
        pane.type("tool.sh repl")
        pane.wait(r"^tool-ready$")
        pane.keys("C-z")
        pane.wait(r"Stopped\s+tool\.sh repl")
        pane.wait(r"^agent\$ ?$")
        # the tool and the agent's scudo that waits for it (scudo-confine's init stays up)
        ps = tb.root("ps -eo stat=,args= | grep '[t]ool.sh repl' | grep -v scudo-confine").out
        states = [l.split()[0] for l in ps.split("\n") if l.strip()]
        assert len(states) == 2 and all(st.startswith("T") for st in states), ps
        pane.type("jobs")
        pane.wait(r"^\[1\]\+\s+Stopped\s+tool\.sh repl")
        pane.type("fg")
        pane.type("hello")
        pane.wait(r"^tool-got-hello$")
        pane.keys("C-d")
        pane.type("echo tool-rc=$?")
        pane.wait(r"^tool-rc=0$")
        pane.type("exit")
        pane.wait(r"^\$ ?$")
    finally:
        pane.close()
    assert wait_for(lambda: not tb.user_units("scudo-*"), 15), tb.user_units("scudo-*")


def test_end_of_the_agent_stops_the_tool(tb, deleg):
    # the agent leaves the tool running in the background and ends: its sandbox goes, with it
    # the tool's caller, and the tool's unit is stopped
    r = agent(tb, deleg, "tool.sh sleep & i=0; while [ $i -lt 100 ] && ! [ -e ~/deleg-agent-area/seen ]; do"
              " sleep 0.1; i=$((i+1)); done; echo agent-done", background="&>/dev/null &")
    assert wait_for(lambda: len(services(tb)) == 2, 20), services(tb)
    tb.dev("touch ~/deleg-agent-area/seen")
    assert wait_for(lambda: not tb.user_units("scudo-*"), 10), tb.user_units("scudo-*")
    assert broker_root_entries(tb) == []


def test_explain_shows_the_broker_entries_and_makes_no_broker(tb, deleg):
    # what the run binds for delegation is on the plan, each with why: explain shows it
    r = tb.dev("cd %s && %s explain agent.sh" % (deleg, Q))
    assert r.rc == 0, r
    lines = r.out.splitlines()
    root = "/run/user/%s/scudo" % tb.dev("id -u").out.strip()
    tb.dev("mkdir -p -m 0700 %s" % root)    # as any run that delegates or copies leaves it
    for path, why in ((root, "an empty directory for its own broker"),
                      (root + "/broker", "the socket of this sandbox's broker"),
                      (root + "/bin", "route the delegated commands to scudo"),
                      (tb.dev("readlink -f $(command -v %s)" % Q).out.strip(), "scudo itself")):
        # the empty directory is left out where it lies under the hidden runtime directory
        # (its socket and links are bound into that one's emptiness all the same)
        left_out = path == root and any(("hide   %s:" % root) in l and "lies under" in l for l in lines)
        assert left_out or any(path in l and why in l for l in lines), (path, why, r.out)
    assert broker_root_entries(tb) == []
    # and a sandbox that delegates nothing has every broker out of reach: here under the
    # runtime directory the command sees empty, so the deny is left out as changing nothing
    r = tb.dev("cd %s && %s explain true" % (deleg, Q))
    assert any(("deny   %s:" % root) in l and "lies under /run/user/" in l for l in r.out.splitlines()), r.out
    r = tb.dev("cd %s && %s explain --fs-read %s true" % (deleg, Q, os.path.dirname(root)))
    assert any(("deny   %s " % root) in l and "every delegation broker's socket" in l
               for l in r.out.splitlines()), r.out


def test_no_delegate_starts_no_broker(tb, deleg):
    r = tb.dev("cd %s && %s --no-delegate agent.sh sh -c 'test -e /run/user/$(id -u)/scudo/broker || echo no-broker;"
               " tool.sh probe' </dev/null" % (deleg, Q))
    assert "no-broker" in r.out, r
    # the tool ran in place, with the agent's view
    assert "tool-read-agent-secret" in r.out and "tool-wrote-tool-area" not in r.out, r
    # while without it, the same run has a broker
    r = tb.dev("cd %s && %s agent.sh sh -c 'test -S /run/user/$(id -u)/scudo/broker && echo broker' </dev/null"
               % (deleg, Q))
    assert "broker" in r.out, r


@pytest.fixture
def bpfd(tb):
    if not os.path.exists(built("src/bpfd/scudo-bpfd")) or not BPFD:
        pytest.skip("scudo-bpfd not built (meson -Dbpf=enabled)")
    start_bpfd(tb, "-v --exit-idle-time=2")
    yield tb
    stop_bpfd(tb)


def test_what_the_tools_sandbox_refuses_reaches_the_agents_stderr(tb, deleg, bpfd):
    # the tool's profile allows 127.0.0.4 only; the agent's allows any network. The tool's
    # stderr is the agent's, here a file the agent writes: the refusal lands there, beside
    # what the tool itself wrote, and not on the stderr of the scudo that runs the agent
    r = agent(tb, deleg, "tool.sh net 2>~/deleg-agent-area/tool-err; echo rc=$?")
    assert "rc=0" in r.out, r
    # the filter's doing: the allowed address reached the kernel (nothing listens: refused),
    # the other one was turned away (EPERM)
    assert "127.0.0.4 111" in r.out and "127.0.0.9 1" in r.out, r
    err = tb.root("cat /home/dev/deleg-agent-area/tool-err").out
    assert "tool-net-output" in err, err
    assert re.search(r"^scudo: network: refused connection to 127\.0\.0\.9:7 \(tcp\) by pid \d+ \(python3\); "
                     r"no rule allows it$", err, re.M), err
    assert "resolve" in r.out, r
    assert re.search(r"^scudo: dns: refused name 'refused\.example' \(A\).*no rule allows it$", err, re.M), err
    assert "127.0.0.9" not in r.err and "refused.example" not in r.err, r


def test_delegated_runs_own_lines_go_where_the_agents_log_target_says(tb, deleg):
    # scudo's own lines in a delegated run (a hook's warning here) are the broker's to report,
    # through the agent run's log.target (a file): the tool's stderr, which the agent reads as
    # the tool's output, gets nothing of scudo's, and neither does the agent's
    r = agent(tb, deleg, "e=$(tool.sh warn 2>&1 >/dev/null); echo \"rc=$? err=[$e]\"", name="quiet-agent.sh")
    assert "rc=0 err=[]" in r.out, r
    assert "tool-hook-warning" not in r.err, r
    log = tb.root("cat /home/dev/deleg-agent-log").out
    assert re.search(r"delegation for scudo-\S+: 'tool\.sh warn' warning: .*tool-hook-warning", log), log
    assert "'tool.sh warn' delegated, exit status 0" in log, log


def test_agent_denied_the_real_tool_still_delegates_it(tb, deleg):
    # `filesystem.deny` of the tool's own directory (as of /usr/lib/node_modules/npm): by its
    # path the agent cannot run it, by its name it is delegated and scudo finds it outside
    r = agent(tb, deleg, "%s probe; echo rc-lib=$?; /usr/local/bin/tool.sh probe; echo rc-bin=$?;"
              " tool.sh probe; echo rc-name=$?" % TOOL_PATH, name="narrow-agent.sh")
    codes = [l for l in r.out.splitlines() if l.startswith("rc-")]
    assert codes == ["rc-lib=126", "rc-bin=126", "rc-name=0"], r
    assert "Permission denied" in r.err, r
    # the run by name was the tool's, under its own profile, and wrote where only it may
    assert r.out.count("tool-wrote-tool-area") == 1 and "tool-read-agent-secret" not in r.out, r
    assert tb.root("test -e /home/dev/deleg-tool-area/by-tool").rc == 0
    # and the deny is the agent's: without it, the same path is delegated all the same
    r = agent(tb, deleg, "%s exit 5; echo rc=$?" % TOOL_PATH)
    assert "rc=5" in r.out and "'tool.sh exit 5' delegated, exit status 5" in r.err, r


def delegated_probes(tb, r, n):
    """`n` runs of `probe`, each the tool's (under its profile, in a unit of its own), none in
    the agent's sandbox; checked from outside too."""
    assert r.out.count("tool-wrote-tool-area") == n, r
    assert "tool-read-agent-secret" not in r.out and "tool-wrote-agent-area" not in r.out, r
    assert r.err.count("probe' delegated, exit status 0") == n, r
    assert tb.root("test -e /home/dev/deleg-agent-area/by-tool").rc != 0
    assert tb.root("test -e /home/dev/deleg-tool-area/by-tool").rc == 0


def test_delegated_however_the_agent_starts_it(tb, deleg):
    # PATH is not what routes: a login shell that resets it (Debian's /etc/profile), `env -i`,
    # a PATH rebuilt without the routing links, the link's path and the file it leads to
    before = tb.root("sha256sum %s %s" % (TOOL_PATH, TOOL2_PATH)).out
    r = agent(tb, deleg, "bash -lc 'tool.sh probe'; echo rc=$?; env -i /usr/local/bin/tool.sh probe; echo rc=$?;"
              "PATH=/usr/bin:/bin:/usr/local/bin tool.sh probe; echo rc=$?; %s probe; echo rc=$?;"
              "/usr/local/bin/tool2.sh probe; echo rc=$?; env -i %s probe; echo rc=$?"
              % (TOOL_PATH, TOOL2_PATH))
    assert [l for l in r.out.splitlines() if l.startswith("rc=")] == ["rc=0"] * 6, r
    delegated_probes(tb, r, 6)
    # the real file started by its other name stands for its command
    assert "'tool2.sh probe' delegated" in r.err, r
    # outside, the tool is the tool: the routes are binds inside the agent's sandbox only
    assert tb.root("sha256sum %s %s" % (TOOL_PATH, TOOL2_PATH)).out == before
    assert "the stand-in tool" in tb.root("head -3 %s" % TOOL_PATH).out


def test_interpreter_start_of_the_tool_is_not_run_in_place(tb, deleg):
    # handed to its interpreter, the tool's script is scudo's executable inside: never the tool
    r = agent(tb, deleg, "sh %s probe; echo rc=$?; bash %s probe; echo rc=$?" % (TOOL_PATH, TOOL2_PATH))
    codes = [l for l in r.out.splitlines() if l.startswith("rc=")]
    assert len(codes) == 2 and "rc=0" not in codes, r
    assert "tool-wrote" not in r.out and "tool-read" not in r.out, r
    assert tb.root("test -e /home/dev/deleg-agent-area/by-tool").rc != 0


def test_routed_command_not_delegated_from_here_is_refused(tb, deleg):
    # from outside the project its profiles apply to, the broker delegates nothing: the tool's
    # executable inside is scudo's, so it is refused, saying why, rather than run in place
    r = agent(tb, deleg, "cd / && tool.sh probe; echo rc=$?")
    assert "rc=1" in r.out or "rc=126" in r.out or "rc=125" in r.out, r
    assert "tool-wrote" not in r.out and "tool-read" not in r.out, r
    assert "'tool.sh' is delegated by scudo-" in r.err and "it was not run" in r.err, r


def test_real_npm_is_delegated_however_started(tb, deleg, bpfd):
    # npm's profile in the recommended configuration filters the network: scudo-bpfd runs
    if tb.root("test -x /usr/bin/npm && test -x /usr/bin/node").rc != 0:
        pytest.skip("npm and node are not installed (tools/install-deps)")
    tb.dev("cat >> %s/.scudo.toml" % deleg, input=b'\n[npm-agent]\nextend = ["git-project"]\n'
           b'match = ["npm-agent.sh"]\ndelegate = ["npm"]\n')
    assert tb.dev("cd %s && %s trust --yes" % (deleg, Q)).rc == 0
    install(tb, "/usr/local/bin/npm-agent.sh", AGENT)
    assert tb.dev("cd %s && git init -q ." % deleg).rc == 0   # a project, as npm's profile expects
    cli = tb.root("readlink -f /usr/bin/npm").out.strip()
    r = agent(tb, deleg, "bash -lc 'npm --version'; echo rc=$?; env -i /usr/bin/npm --version; echo rc=$?;"
              "%s --version; echo rc=$?; node %s --version; echo rc=$?" % (cli, cli), timeout=180,
              name="npm-agent.sh")
    codes = [l for l in r.out.splitlines() if l.startswith("rc=")]
    assert codes[:3] == ["rc=0"] * 3 and codes[3] != "rc=0", r.err
    assert r.err.count("'npm --version' delegated, exit status 0") == 3, r
    # handed to node, npm's script is scudo's executable inside: node cannot run it
    assert "SyntaxError" in r.err or "Invalid" in r.err, r


def test_symlinked_working_directory(tb, deleg):
    # The working directory is the kernel's (/proc/PID/cwd): a symlink the agent went through
    # is resolved already. Both links are in the agent's writable area; one leads to a
    # directory of the project it may write, and the tool runs there; the other to one it
    # may only read, and the request is refused.
    tb.dev("mkdir -p {w}/real && ln -s {w}/real ~/deleg-agent-area/link && "
           "ln -s {w}/ro ~/deleg-agent-area/to-ro".format(w=deleg))
    r = agent(tb, deleg, "cd ~/deleg-agent-area/link && tool.sh here; echo rc=$?;"
              "cd ~/deleg-agent-area/to-ro && tool.sh here; echo rc=$?")
    codes = [l for l in r.out.splitlines() if l.startswith("rc=")]
    assert codes == ["rc=0", "rc=125"], r
    # delegated, not run in place, and in the real directory, whatever $PWD said inside
    assert "'tool.sh here' delegated, exit status 0" in r.err, r
    assert "tool-cwd={w}/real tool-PWD={w}/real".format(w=deleg) in r.out, r
    assert tb.root("test -f %s/real/by-tool-here" % deleg).rc == 0
    assert "the working directory %s/ro is not one that scudo-" % deleg in r.err, r
    assert tb.root("test -e %s/ro/by-tool-here" % deleg).rc != 0


def test_explain_shows_the_executable_and_the_routes(tb, deleg):
    # which file a run starts, when its path on PATH leads elsewhere (an installer's launcher)
    r = tb.dev("cd %s && %s explain tool2.sh" % (deleg, Q))
    assert "executable: /usr/local/bin/tool2.sh (leads to %s, which the run starts)" % TOOL2_PATH in r.out, r
    # and, for the agent, scudo in place of each file a delegated name leads to, with why
    r = tb.dev("cd %s && %s explain agent.sh" % (deleg, Q))
    routes = [l for l in r.out.splitlines() if "a delegated command's executable" in l]
    assert any(TOOL_PATH in l for l in routes) and any(TOOL2_PATH in l for l in routes), r.out


def test_routes_lead_to_scudo_route_and_other_uses_run_in_place(tb, deleg):
    # The routing links and the binds over a delegated name's executables lead to scudo-route,
    # the broker's client alone (a static program: a delegated command's start costs little
    # more than the same command run by scudo outside). What the broker says runs in place
    # (a use of a name no delegated profile matches, as `git status` beside `git push`), runs
    # in place, with the agent's access: scudo-route hands it to scudo, which finds it on PATH
    # past the routing links.
    route = installed("scudo-route")
    assert route, "scudo-route is not installed beside scudo"
    r = agent(tb, deleg, "readlink /run/user/$(id -u)/scudo/bin/tool.sh; stat -L -c id=%%d:%%i %s %s; "
              "tool3.sh probe; echo rc=$?; tool3.sh here; echo rc=$?; cat ~/deleg-agent-secret"
              % (TOOL_PATH, route))
    lines = r.out.splitlines()
    assert lines[0] == route, r
    ids = [l for l in lines if l.startswith("id=")]
    assert len(ids) == 2 and ids[0] == ids[1], r
    assert [l for l in lines if l.startswith("rc=")] == ["rc=0", "rc=0"], r
    # delegated: under its own profile, in a unit of its own
    assert "'tool3.sh probe' delegated, exit status 0" in r.err and "tool-wrote-tool-area" in r.out, r
    assert tb.root("test -e /home/dev/deleg-tool-area/by-tool").rc == 0
    # in place: the broker said so once, and the tool ran in the agent's sandbox, in its cwd
    assert r.err.count("'tool3.sh here' runs in place") == 1, r
    assert "tool-cwd=%s" % deleg in r.out and tb.root("test -e %s/by-tool-here" % deleg).rc == 0, r
    assert "agent-only-secret" in r.out, r
