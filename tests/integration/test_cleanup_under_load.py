# SPDX-License-Identifier: MIT OR Apache-2.0
"""Nothing left behind on a loaded machine: scudo killed (SIGKILL), or sent SIGTERM, at random
moments of a run, with every core busy, leaves no unit, no cgroup, no bus proxy, no socket, no
watcher; after a SIGTERM scudo ends promptly, wherever it was.

The moments are drawn between 0 and a little past the time a run takes to reach its command on
this machine under the same load (measured first), so that each phase is hit: the policy's
resolution, the bus calls (the slice, the proxy, StartTransientUnit), the start, the command.
The seed is printed with any failure, to replay it (SCUDO_CLEANUP_SEED).

Bounded: at most ROUNDS kills (ROUNDS_TERM SIGTERMs), no new one after BUDGET_S (BUDGET_TERM_S)
seconds, each checked within CHECK_S seconds; the load ends with the test (and by itself after LOAD_S seconds should the test be
killed)."""
import json
import os
import random
import shlex
import time

import pytest

from conftest import BPFD, SCUDO, helper, start_bpfd, stop_bpfd, wait_for

Q = shlex.quote(SCUDO)
HELD = helper("held_start.py")
ROUNDS = 15
BUDGET_S = 150
ROUNDS_TERM = 9
BUDGET_TERM_S = 90
CHECK_S = 20.0
LOAD_S = 300
BUS_PROFILE = '[bus-none]\\ndbus.session = "filtered"\\n'
# Each long enough that a unit left behind would still be there when checked.
COMMAND = "sh -c 'echo $$ > started; exec sleep 120'"


def leftovers(tb):
    """What a run may leave, as one list: units, cgroups, proxy sockets and directories,
    processes (the watcher, the proxy, the command)."""
    left = ["unit " + u for u in tb.user_units("scudo-*")]
    left += ["unit " + u for u in tb.user_units("app-scudo_*")]
    left += ["cgroup " + c for c in tb.scudo_cgroups()]
    left += ["runtime " + f for f in tb.dev("ls -A $XDG_RUNTIME_DIR | grep '^scudo-' || true").out.split()]
    procs = tb.root("pgrep -a -u dev -x 'scudo|scudo-watch'; pgrep -a -u dev -f 'xdg-dbus-proxy|sleep 120'; true")
    left += ["process " + p for p in procs.out.strip().split("\n") if p]
    return left


@pytest.fixture
def load(tb):
    """Every core busy, at the priority the tests run at, for the length of the test."""
    n = int(tb.root("nproc").out.strip() or "2")
    r = tb.root("for i in $(seq %d); do setsid timeout %d sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &"
                " echo $!; done" % (n, LOAD_S))
    pids = r.out.split()
    yield n
    tb.root("kill %s 2>/dev/null; pkill -f 'while :; do :; done' 2>/dev/null; true" % " ".join(pids))


def variants(tb, work):
    """The kinds of run, each with the helpers it starts: (name, scudo options)."""
    found = [("plain", "")]
    if tb.root("command -v xdg-dbus-proxy").rc == 0:
        tb.dev("cd %s && printf '%s' > .scudo.toml && %s trust --yes .scudo.toml" % (work, BUS_PROFILE, Q))
        found.append(("bus proxy", "-p bus-none"))
    if BPFD:
        found.append(("slice", "--net-allow 127.0.0.1"))
    return found


def time_to_command(tb, work, options):
    """Seconds from scudo's start to its command's, on this machine now (the longer of 2)."""
    times = []
    for _ in range(2):
        r = tb.dev("cd %s && rm -f started; S=$(date +%%s%%N); { %s %s %s </dev/null >/dev/null 2>&1 & P=$!; };"
                   " for i in $(seq 600); do test -s started && break; sleep 0.02; done;"
                   " E=$(date +%%s%%N); kill -INT $P; wait $P; echo $(( (E - S) / 1000000 ))"
                   % (work, Q, options, COMMAND), timeout=90)
        times.append(int(r.out.split()[-1]) / 1000.0)
        assert wait_for(lambda: leftovers(tb) == [], timeout=CHECK_S), leftovers(tb)
    return max(times)


@pytest.mark.parametrize("sig", ["KILL", "TERM"])
def test_signal_at_random_moments_under_load_leaves_nothing(tb, work, load, sig):
    # SIGKILL: the watcher stops what the run started. SIGTERM (caught): scudo itself ends the
    # run, promptly wherever it was, the command's 120 s included.
    seed = int(os.environ.get("SCUDO_CLEANUP_SEED", "0")) or random.randrange(1, 1 << 30)
    rnd = random.Random(seed)
    rounds, budget = (ROUNDS, BUDGET_S) if sig == "KILL" else (ROUNDS_TERM, BUDGET_TERM_S)
    with_bpfd = bool(BPFD)
    if with_bpfd:
        start_bpfd(tb, "-v --exit-idle-time=2")
    try:
        kinds = variants(tb, work)
        assert leftovers(tb) == [], "left before the test: %s" % leftovers(tb)
        spans = {name: time_to_command(tb, work, options) for name, options in kinds}
        end = time.time() + budget
        for i in range(rounds):
            if i >= len(kinds) and time.time() > end:
                break
            name, options = kinds[i % len(kinds)]
            delay = rnd.uniform(0, spans[name] * 1.2)
            # sleep then the signal, from the shell that started it: nothing else is told. A
            # scudo still there CHECK_S later ran on past it (then it is killed, and says so).
            r = tb.dev("cd %s && rm -f started; { %s %s %s </dev/null >/dev/null 2>&1 & P=$!; };"
                       " sleep %.3f; kill -%s $P; for i in $(seq %d); do kill -0 $P 2>/dev/null || break;"
                       " sleep 0.1; done; kill -0 $P 2>/dev/null && echo RAN-ON && kill -KILL $P; wait $P"
                       % (work, Q, options, COMMAND, delay, sig, int(CHECK_S * 10)), timeout=90)
            what = "seed %d, round %d (%s, SIG%s after %.3f s of ~%.3f s to the command)" % (
                seed, i, name, sig, delay, spans[name])
            assert "RAN-ON" not in r.out, "%s: scudo ran on" % what
            ok = wait_for(lambda: leftovers(tb) == [], timeout=CHECK_S, step=0.2)
            assert ok, "%s: left %s" % (what, leftovers(tb))
    finally:
        if with_bpfd:
            stop_bpfd(tb)
        tb.dev("cd %s && %s untrust .scudo.toml 2>/dev/null; true" % (work, Q))


@pytest.mark.parametrize("sig,rc", [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_before_the_start_starts_nothing(tb, work, sig, rc):
    # A SIGTERM (`timeout`, a logout) or Ctrl-C while a run gets ready, held where it sets its
    # terminal raw, just before the unit's start: the command does not start, scudo ends at once
    # with 128+N, and nothing is left. (It used to be passed on to a unit not started yet, the
    # KillUnit failed, and the command then ran to its end with nobody to stop it.)
    r = tb.dev("cd %s && rm -f ran && python3 %s %s -- %s sh -c 'touch ran; exec sleep 60';"
               " test -e ran && echo RAN" % (work, HELD, sig, Q), timeout=90)
    res = json.loads(r.out.splitlines()[0])
    assert res["held"] and res["units_while_held"] == [], r
    assert res["rc"] == rc and "RAN" not in r.out, r
    assert wait_for(lambda: leftovers(tb) == [], timeout=CHECK_S), leftovers(tb)
