# SPDX-License-Identifier: MIT OR Apache-2.0
"""--tui, driven in tmux (as dev in the testbed): what a user sees is read with capture-pane,
keys are typed with send-keys, and the terminal's state after scudo (raw or not, alternate
screen or not) from tmux and stty. The command's own view of its window comes from the
command itself."""
import os
import re
import shlex
import time
import uuid

import pytest

from conftest import SCUDO, built, start_bpfd, stop_bpfd, wait_for
# the stand-in agent and tool of the delegation tests, their profiles trusted in `work`
from test_delegation import deleg  # noqa: F401


@pytest.fixture(scope="module")
def helper(tb):
    if tb.dev("command -v tmux").rc != 0:
        pytest.skip("no tmux in the testbed (tools/install-deps installs it)")
    if os.path.exists(built("src/bpfd/scudo-bpfd")):
        start_bpfd(tb, "--exit-idle-time=5")
    yield tb
    stop_bpfd(tb)


class Pane:
    """A shell in a tmux session of its own, 100 columns by 30 rows."""

    def __init__(self, tb, cwd):
        self.tb = tb
        self.sock = "scudo-tui-" + uuid.uuid4().hex[:8]
        r = tb.dev("cd %s && tmux -L %s new-session -d -x 100 -y 30 -s t "
                   "'env PS1=\"$ \" TERM=xterm-256color bash --norc --noprofile -i'" % (cwd, self.sock))
        assert r.rc == 0, r
        assert wait_for(lambda: "$" in self.screen(), timeout=10), self.screen()

    def tmux(self, *args):
        return self.tb.dev("tmux -L %s %s" % (self.sock, " ".join(shlex.quote(a) for a in args)))

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "t").out

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "t", *keys)

    def type(self, line):
        self.keys("-l", line)
        self.keys("Enter")

    def alternate(self):
        return self.tmux("display", "-p", "-t", "t", "#{alternate_on}").out.strip() == "1"

    def shell_pid(self):
        return self.tmux("display", "-p", "-t", "t", "#{pane_pid}").out.strip()

    def wait(self, pattern, timeout=15):
        ok = wait_for(lambda: re.search(pattern, self.screen(), re.M) is not None, timeout=timeout, step=0.1)
        assert ok, "%r not on screen:\n%s" % (pattern, self.screen())

    def terminal_sane(self):
        """The shell's terminal is back in its usual mode (line editing, echo)."""
        marker = uuid.uuid4().hex[:6]
        self.type("stty -a | tr ' ' '\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' '; echo; echo %s" % marker)
        self.wait(r"^%s$" % marker)
        lines = self.screen().splitlines()
        i = max(k for k, l in enumerate(lines) if l.strip() == marker)
        return lines[i - 1].split() == ["icanon", "echo"]

    def close(self):
        self.tmux("kill-server")


@pytest.fixture
def pane(helper, work):
    helper.dev("echo 'hello from the file' > %s/x.txt" % work)
    p = Pane(helper, work)
    yield p
    p.close()


def scudo_cmd(args):
    return "%s --tui -- %s; echo EXIT=$?" % (SCUDO, args)


def test_vim_renders_and_quits(pane):
    pane.type(scudo_cmd("vim -u NONE -N x.txt"))
    pane.wait(r"^hello from the file")
    pane.wait(r'"x.txt" 1L')
    assert pane.alternate()
    screen = pane.screen().splitlines()
    assert screen[1].startswith("~"), screen              # vim's empty lines in the main area
    assert any("scudo: refusals" in l for l in screen), screen
    pane.keys("Escape")
    pane.type(":q!")
    pane.wait(r"^EXIT=0$")
    assert not pane.alternate()
    assert pane.terminal_sane()


def test_context_area_shows_reports_and_toggles(pane):
    probe = "cat ~/.bashrc 2>/dev/null; while :; do stty size; sleep 0.2; done"
    pane.type(scudo_cmd("sh -c %s" % shlex.quote(probe)))
    pane.wait(r"file: refused read of '/home/dev/\.bashrc' \(ENOENT\)")
    pane.wait(r"^22 100$")                         # 30 rows, 8 of them for the reports
    pane.keys("C-a", "s")
    pane.wait(r"^30 100$")
    assert "scudo: refusals" not in pane.screen()
    pane.keys("C-a", "s")
    pane.wait(r"scudo: refusals \(1\)")
    pane.tmux("resize-window", "-t", "t", "-x", "90", "-y", "24")
    pane.wait(r"^16 90$")
    pane.keys("C-c")
    pane.wait(r"^EXIT=130$")
    assert pane.terminal_sane()
    # the reports stay on the terminal after the run
    pane.wait(r"^scudo: file: refused read of '/home/dev/\.bashrc'")


def test_broker_reports_go_to_the_context_area(pane, deleg):
    # the agent under --tui delegates the tool: the broker's report of the request is in the
    # context area, below its title, and goes when the area is hidden
    pane.type("%s --tui agent.sh sh -c 'tool.sh exit 3; echo tool-rc=$?; sleep 60'; echo EXIT=$?" % SCUDO)
    pane.wait(r"^tool-rc=3")
    report = r"delegation for scudo-\S+: 'tool\.sh exit 3' delegated, exit status 3"
    pane.wait(report)
    lines = pane.screen().splitlines()
    title = [i for i, l in enumerate(lines) if "scudo: refusals (" in l]
    at = [i for i, l in enumerate(lines) if re.search(report, l)]
    assert len(title) == 1 and len(at) == 1 and at[0] > title[0], lines
    assert not re.search(report, "\n".join(lines[:title[0]])), lines
    pane.keys("C-a", "s")
    assert wait_for(lambda: not re.search(report, pane.screen()), timeout=10), pane.screen()
    pane.keys("C-c")
    pane.wait(r"^EXIT=130$")
    assert pane.terminal_sane()


def test_ctrl_a_twice_sends_ctrl_a(pane):
    pane.type(scudo_cmd("sh -c 'head -c 2 | od -An -c'"))
    pane.wait(r"scudo: refusals")
    pane.keys("C-a", "C-a", "x", "Enter")
    pane.wait(r"^\s+001\s+x$")
    pane.wait(r"^EXIT=0$")


def test_exit_status_and_signals_as_without_tui(pane):
    pane.type(scudo_cmd("sh -c 'exit 7'"))
    pane.wait(r"^EXIT=7$")
    pane.type(scudo_cmd("sh -c 'kill -TERM $$'"))
    pane.wait(r"^EXIT=143$")
    assert pane.terminal_sane()


def unit_main_pid(tb):
    units = [u for u in tb.user_units() if u.endswith(".service") and not u.endswith("-bus.service")]
    if len(units) != 1:
        return None
    pid = tb.dev("systemctl --user show -p MainPID --value %s" % units[0]).out.strip()
    return pid if pid not in ("", "0") else None


def test_command_killed_terminal_restored(pane, helper):
    pane.type(scudo_cmd("sleep 300"))
    pane.wait(r"scudo: refusals")
    assert wait_for(lambda: unit_main_pid(helper) is not None, timeout=10)
    helper.dev("kill -KILL %s" % unit_main_pid(helper))
    pane.wait(r"^EXIT=137$")
    assert not pane.alternate()
    assert pane.terminal_sane()


def test_scudo_crash_terminal_restored_by_the_watcher(pane, helper):
    pane.type(scudo_cmd("sleep 300"))
    pane.wait(r"scudo: refusals")
    assert pane.alternate()
    scudo_pid = helper.dev("pgrep -P %s -x scudo" % pane.shell_pid()).out.split()
    assert len(scudo_pid) == 1, scudo_pid
    helper.dev("kill -ABRT %s" % scudo_pid[0])      # as a crash (abort) would end it
    pane.wait(r"^EXIT=134$")
    assert wait_for(lambda: not pane.alternate(), timeout=5)
    assert pane.terminal_sane()
    assert wait_for(lambda: unit_main_pid(helper) is None, timeout=10), "the watcher did not stop the unit"


def test_scudo_crash_without_tui_gives_the_terminal_back(pane, helper):
    """Without --tui the caller's terminal is raw while the command runs: a crash of scudo
    puts its line editing back before the shell prints the status."""
    pane.type("%s -- sh -c 'echo ready; sleep 300'; echo EXIT=$?" % SCUDO)
    pane.wait(r"^ready")
    scudo_pid = helper.dev("pgrep -P %s -x scudo" % pane.shell_pid()).out.split()
    assert len(scudo_pid) == 1, scudo_pid
    helper.dev("kill -ILL %s" % scudo_pid[0])     # SEGV is a sanitizer's to report
    pane.wait(r"^EXIT=132$")
    assert pane.terminal_sane()
    assert wait_for(lambda: unit_main_pid(helper) is None, timeout=10), "the watcher did not stop the unit"


def test_ctrl_z_suspends_and_fg_resumes(pane):
    """As without --tui: the suspend character of the command's terminal freezes the unit and
    suspends scudo, which gives the terminal back; fg takes it again and redraws."""
    pane.type(scudo_cmd("sh -c 'echo ready; read x; echo got $x'"))
    pane.wait(r"^ready$")
    assert pane.alternate()
    pane.keys("C-z")
    pane.wait(r"Stopped")
    assert not pane.alternate()
    assert pane.terminal_sane()
    pane.type("fg")
    pane.wait(r"^ready$")
    assert pane.alternate()
    pane.type("back")
    pane.wait(r"^got back$")          # (the EXIT line came at the stop: the shell's, not ours)
    assert wait_for(lambda: not pane.alternate(), timeout=5)
    assert pane.terminal_sane()


def test_tui_needs_a_terminal(helper, work):
    r = helper.scudo(["--tui", "--", "true"], cwd=work)
    assert r.rc == 125 and "--tui needs a terminal" in r.err, r
