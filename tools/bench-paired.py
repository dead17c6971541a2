#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Times pairs of commands in turn and gives each pair's ratio with a 95 % interval.

    bench-paired.py [--cgroup DIR] ROUNDS OUT.json A=COMMAND B=COMMAND [C=COMMAND D=COMMAND...]

The commands come in pairs (A against B, C against D...). Each round runs every command once,
in an order that turns from round to round (the first round warms up and is not counted), so
a machine whose load comes and goes weighs on both sides of a pair alike. A pair's ratio is
taken per round (A's time in round i over B's in round i): the median of those ratios, and a
95 % bootstrap interval of that median (percentiles of 2,000 resamples of the rounds), say
whether a difference is there or is noise.

Beside the wall time, each run's CPU time (user + system): the command's own and that of
every process it waited for (wait4's rusage), plus, with --cgroup, what the processes of that
cgroup v2 directory used meanwhile (its cpu.stat usage_usec): the units a run starts, the
service manager, a FUSE server. CPU time does not count the waiting for a busy machine, so
it holds where wall time wanders. COMMAND is split as a shell would (shlex) and run without
a shell, its output discarded; a run that fails stops everything. OUT.json holds, per
command, its wall and CPU times in seconds, and the summary printed.
"""
import importlib.util
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import time


# The interval, and a cgroup's CPU time, as tools/bench-interleave.py works them out.
_spec = importlib.util.spec_from_file_location(
    "bench_interleave", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-interleave.py"))
_interleave = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_interleave)
interval = _interleave.interval


def run(argv, cg):
    c0 = _interleave.cgroup_usage(cg) if cg else 0.0
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    cpu = ru.ru_utime + ru.ru_stime + (_interleave.cgroup_usage(cg) - c0 if cg else 0.0)
    return p.returncode, wall, cpu


def main():
    args = sys.argv[1:]
    cg = None
    if args[:1] == ["--cgroup"]:
        cg, args = args[1], args[2:]
    if len(args) < 4 or (len(args) - 2) % 2:
        sys.exit("usage: bench-paired.py [--cgroup DIR] ROUNDS OUT.json A=COMMAND B=COMMAND...")
    rounds, out = int(args[0]), args[1]
    cmds = []
    for a in args[2:]:
        name, _, command = a.partition("=")
        cmds.append((name, shlex.split(command)))
    wall = {name: [] for name, _ in cmds}
    cpu = {name: [] for name, _ in cmds}
    for r in range(rounds + 1):
        k = r % len(cmds)
        for name, argv in cmds[k:] + cmds[:k]:
            rc, w, c = run(argv, cg)
            if rc != 0:
                sys.exit("bench-paired.py: %s exited with %d" % (name, rc))
            if r > 0:       # the first round warms up
                wall[name].append(w)
                cpu[name].append(c)
    rng = random.Random(1)
    summary = []
    for (a, _), (b, _) in zip(cmds[0::2], cmds[1::2]):
        row = {"a": a, "b": b}
        for what, t in (("wall", wall), ("cpu", cpu)):
            ratios = [x / y for x, y in zip(t[a], t[b]) if y > 0]
            row[what] = {"a_ms": statistics.median(t[a]) * 1000, "b_ms": statistics.median(t[b]) * 1000,
                         "ratio": interval(ratios, rng)}
        summary.append(row)
        for what in ("wall", "cpu"):
            x = row[what]
            print("%-12s / %-12s %-4s %9.3f / %9.3f ms  ratio %.3f [%.3f, %.3f]" %
                  (a, b, what, x["a_ms"], x["b_ms"], *x["ratio"]))
    with open(out, "w") as f:
        json.dump({"rounds": rounds, "cgroup": cg, "summary": summary,
                   "results": [{"command": n, "times": wall[n], "cpu": cpu[n]} for n, _ in cmds]}, f)


if __name__ == "__main__":
    main()
