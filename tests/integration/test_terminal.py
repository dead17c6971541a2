# SPDX-License-Identifier: MIT OR Apache-2.0
"""A confined command at the terminal as outside (docs/terminal.md): job control driven in tmux
(as dev in the testbed), what the user sees read with capture-pane, the shell's own word on
the job (`Stopped`, `jobs`) and the terminal's mode after it checked from outside."""
import os
import re
import shlex

import pytest

from conftest import SCUDO, built, start_bpfd, stop_bpfd, wait_for
from test_tui import Pane


@pytest.fixture(scope="module")
def term(tb):
    for tool in ("tmux", "vim", "less", "python3"):
        if tb.dev("command -v %s" % tool).rc != 0:
            pytest.skip("no %s in the testbed (tools/install-deps installs it)" % tool)
    return tb


@pytest.fixture
def bpfd(term):
    if not os.path.exists(built("src/bpfd/scudo-bpfd")):
        pytest.skip("scudo-bpfd not built (meson -Dbpf=enabled)")
    start_bpfd(term, "--exit-idle-time=5")
    yield term
    stop_bpfd(term)


@pytest.fixture
def pane(term, work):
    term.dev("printf 'hello from the file\\nsecond line\\n' > %s/x.txt" % work)
    p = Pane(term, work)
    yield p
    p.close()


def nothing_left(tb):
    return wait_for(lambda: not [u for u in tb.user_units() if u.endswith(".service")], timeout=15)


def run(pane, args, tui=False):
    pane.type("%s %s-- %s; echo EXIT=$?" % (SCUDO, "--tui " if tui else "", args))


def exit_status_after_fg(pane):
    """The job's status, once it ended: the shell leaves the rest of a list whose job stopped
    (our `; echo EXIT=$?` went at the stop), and fg returns the job's status."""
    pane.wait(r"^\$ ?$")
    pane.type("echo EXIT=$?")
    pane.wait(r"^EXIT=\d+$")
    return re.findall(r"^EXIT=(\d+)$", pane.screen(), re.M)[-1]


def suspend_and_come_back(pane, name, shown):
    """^Z: the shell's prompt with its terminal as it was; `jobs` lists the job; fg: the
    command again, its screen redrawn."""
    pane.keys("C-z")
    pane.wait(r"Stopped\s+.*%s" % re.escape(name))
    assert not pane.alternate()
    assert pane.terminal_sane()
    pane.type("jobs")
    pane.wait(r"^\[1\]\+\s+Stopped\s+.*%s" % re.escape(name))
    pane.tmux("clear-history", "-t", "t")
    pane.type("clear; fg")
    pane.wait(shown)


@pytest.mark.parametrize("tui", [False, True], ids=["plain", "tui"])
def test_vim_ctrl_z_fg(pane, term, tui):
    run(pane, "vim -u NONE -N x.txt", tui)
    pane.wait(r'"x.txt" 2L')
    suspend_and_come_back(pane, "vim", r"^hello from the file")
    assert pane.alternate()
    pane.wait(r"^second line")
    pane.keys("Escape")
    pane.type(":q")
    assert exit_status_after_fg(pane) == "0"
    assert not pane.alternate()
    assert pane.terminal_sane()
    assert nothing_left(term)


@pytest.mark.parametrize("tui", [False, True], ids=["plain", "tui"])
def test_less_ctrl_z_fg(pane, term, tui):
    run(pane, "less x.txt", tui)
    pane.wait(r"^second line")
    suspend_and_come_back(pane, "less", r"^hello from the file")
    pane.keys("q")
    assert exit_status_after_fg(pane) == "0"
    assert pane.terminal_sane()
    assert nothing_left(term)


def test_python_repl_ctrl_z_fg(pane, term):
    run(pane, "python3 -q")
    pane.wait(r"^>>>")
    suspend_and_come_back(pane, "python3", r"scudo -- python3 -q$")
    pane.type("print(6 * 7)")
    pane.wait(r"^42$")
    pane.type("raise SystemExit(0)")
    assert exit_status_after_fg(pane) == "0"
    assert pane.terminal_sane()
    assert nothing_left(term)


def command_pid(tb, name):
    pids = tb.dev("pgrep -u dev -x %s" % shlex.quote(name)).out.split()
    return pids[0] if len(pids) == 1 else None


def test_kill_tstp_and_stop_from_outside(pane, term):
    """kill -TSTP to scudo reaches the command, which stops as on ^Z; kill -STOP of the command
    itself stops the job too; fg brings it back either way."""
    run(pane, "vim -u NONE -N x.txt")
    pane.wait(r'"x.txt" 2L')
    scudo = term.dev("pgrep -P %s -x scudo" % pane.shell_pid()).out.split()
    assert len(scudo) == 1, scudo
    term.dev("kill -TSTP %s" % scudo[0])
    pane.wait(r"Stopped\s+.*vim")
    assert pane.terminal_sane()
    pane.type("clear; fg")
    pane.wait(r"^hello from the file")

    assert wait_for(lambda: command_pid(term, "vim") is not None, timeout=10)
    term.dev("kill -STOP %s" % command_pid(term, "vim"))
    pane.wait(r"Stopped\s+.*vim")
    assert pane.terminal_sane()
    pane.type("clear; fg")
    pane.wait(r"scudo -- vim -u NONE -N x.txt$")
    pane.keys("Escape")
    pane.type(":q")
    assert exit_status_after_fg(pane) == "0"
    assert pane.terminal_sane()
    assert nothing_left(term)


AGENT = ("import socket, time; s = socket.socket(); print('connect', s.connect_ex(('127.0.0.3', 9)), flush=True); "
         "time.sleep(120)")


def test_refusals_elsewhere_shown_in_the_title_and_at_the_end(pane, bpfd):
    """An agent stand-in whose profile logs to the journal, its connection refused: within 5 s
    the terminal's title says scudo refuses, nothing of scudo's is in the command's output, and
    at the end one line says how many and the journalctl command that shows them."""
    t = bpfd
    r = t.dev("mkdir -p ~/.config/scudo && printf '[agent]\\nmatch = [\"python3\"]\\n"
              "log.target = \"journald\"\\n' > ~/.config/scudo/config.toml")
    assert r.rc == 0, r
    try:
        pane.type("%s --net-allow 127.0.0.2:1 -- python3 -c %s; echo EXIT=$?" % (SCUDO, shlex.quote(AGENT)))
        pane.wait(r"^connect \d+$")
        assert wait_for(lambda: "scudo: 1 refusal (1 network)" in pane.tmux(
            "display", "-p", "-t", "t", "#{pane_title}").out, timeout=5, step=0.1), pane.tmux(
            "display", "-p", "-t", "t", "#{pane_title}").out
        assert "refused" not in pane.screen()
        pane.keys("C-c")
        pane.wait(r"^EXIT=130$")
        pane.wait(r"^scudo: 1 refusal \(1 network\), not shown here: journalctl -t scudo _PID=\d+$")
        cmd = re.search(r"journalctl -t scudo _PID=\d+", pane.screen()).group(0)
        assert wait_for(lambda: "refused connection to 127.0.0.3:9" in t.root(cmd + " -q --no-pager").out,
                        timeout=10)
        assert pane.terminal_sane()
    finally:
        t.dev("rm -f ~/.config/scudo/config.toml")
