# SPDX-License-Identifier: MIT OR Apache-2.0
"""A run whose scudo is killed (SIGKILL, from outside) is checked all the same: what the
end-of-run check would remove or make inert (docs/persistence.md) does not survive it. The
watcher stops the units, waits until they are gone, then makes the check with the run's plan.
Planted from inside; judged from outside by the programs it aims at, run as dev."""
import shlex
import uuid

from conftest import SCUDO, wait_for
from test_nothing_runs_later import exists, host, is_link, marker


def watchers(tb):
    return tb.root("pgrep -u dev -x scudo-watch; true").out.split()


def kill_scudo_once_planted(tb, work, plant, args=()):
    """Runs `scudo ARGS sh -c 'PLANT; touch ready; sleep'` in the background from `work`,
    SIGKILLs scudo once `ready` is there, and waits (generously: a loaded machine) for its units
    and its watcher to be gone. Returns what scudo and its watcher wrote to standard error."""
    err = "/tmp/killed-%s.err" % uuid.uuid4().hex[:8]
    argv = list(args) + ["sh", "-c", plant + " && touch ready && exec sleep 120"]
    cmd = " ".join(shlex.quote(a) for a in argv)
    r = tb.dev("cd %s && { %s %s </dev/null >/dev/null 2>%s & P=$!; } ; "
               "for i in $(seq 600); do test -e ready && break; sleep 0.1; done; test -e ready || exit 9; "
               "kill -KILL $P; echo killed" % (shlex.quote(work), shlex.quote(SCUDO), cmd, err))
    assert r.rc == 0 and "killed" in r.out, (r, tb.root("cat %s" % err).out)
    assert wait_for(lambda: tb.user_units() == [], timeout=60), tb.user_units()
    assert wait_for(lambda: watchers(tb) == [], timeout=60), watchers(tb)
    out = tb.root("cat %s; rm -f %s" % (err, err)).out
    # the watcher's check is scudo's code too: the sanitizers' reports would land here
    assert "Sanitizer" not in out and "runtime error" not in out, out
    return out


def test_a_killed_run_loses_its_symlink_out_and_its_repository(tb, work):
    # a symlink leading out of the project, to a start-up file, and a repository below the start
    # directory whose fsmonitor names a command: both planted, then scudo is killed
    tb.dev("test -e ~/.bashrc || printf 'echo bashrc\\n' > ~/.bashrc")
    before = tb.root("cat /home/dev/.bashrc").out
    m = marker(tb)
    err = kill_scudo_once_planted(
        tb, work, "ln -s /home/dev/.bashrc link-out && git init -q src && "
                  "git -C src config core.fsmonitor 'touch %s; false'" % m)
    assert not is_link(tb, work + "/link-out"), err
    host(tb, work + "/src", "git status >/dev/null 2>&1; true")
    assert not exists(tb, m), err
    assert tb.root("cat /home/dev/.bashrc").out == before
    # said where scudo's own reports would have gone
    assert "link-out" in err and ".bashrc" in err and "inert" in err, err
    # the project itself stays: what the command made and may keep
    assert exists(tb, work + "/ready"), err


def test_a_killed_agents_run_loses_its_symlink_out_of_the_git_directory(tb, work):
    # under the agents' profile .git is writable: the reflog replaced by a symlink to a start-up
    # file, which the next checkout outside would append a line of the command's choosing to
    r = host(tb, work, "git init -q -b main . && git config user.email t@t && git config user.name t && "
                       "echo one > a && git add a && git commit -q -m one")
    assert r.rc == 0, r
    tb.dev("test -e ~/.bashrc || printf 'echo bashrc\\n' > ~/.bashrc")
    before = tb.root("cat /home/dev/.bashrc").out
    err = kill_scudo_once_planted(tb, work, "rm -f .git/logs/HEAD && ln -s /home/dev/.bashrc .git/logs/HEAD",
                                  args=["--profile", "agents"])
    assert not is_link(tb, work + "/.git/logs/HEAD"), err
    r = host(tb, work, "git checkout -q -b 'x;touch${IFS}/home/dev/pwned;' && git checkout -q main")
    assert r.rc == 0, r
    assert tb.root("cat /home/dev/.bashrc").out == before
