#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Times commands in turn, one run of each per round, for the benchmarks of tools/ on a loaded machine.

    bench-interleave.py [OPTIONS] ROUNDS OUT.json NAME=COMMAND...

Why in turns: hyperfine runs every run of one command before the next command, so a machine
whose load comes and goes (other builds, other testbeds) weighs on one command more than on
another. Here each round runs every command once, in an order that turns from round to round,
after WARMUP rounds that are not kept. ROUNDS is a number of rounds, or a time such as `90s`:
rounds until that much time went by (at least 5). Many short rounds beat a few long ones.

Why ratios per round: the runs of one round are close in time and meet much the same load, so
the ratio of each command to the base (the first, or --base) is taken within each round, and
their median is the figure, with a 95 % interval from a bootstrap over the rounds (the rounds
drawn again with replacement 2,000 times, a fixed seed; the 2.5th and 97.5th percentiles of the
medians). An interval that holds 1.02 does not show "at most 1.02x"; one whose top is under it
does. A ratio of medians is also given: far from the median of ratios, the load moved a lot.

Why CPU time: wall time counts the time a run waited for a core that another program held; CPU
time (user + system) counts the work the run did, and moves far less with the rest of the load
on a 2-core machine (it still moves: caches, frequency). It is taken from the wait4() rusage of
the command and of the descendants it waited for; with --cgroup DIR the growth of DIR/cpu.stat's
usage_usec around the run is added: the way to count the work a run has others do, such as the
sandbox's unit that a service manager starts. DIR must not hold the command itself (it would
count twice): in tools/testbed, `--cgroup /sys/fs/cgroup` is the testbed's systemd and what it
runs (the user manager, the unit, scudo-bpfd, the BPF programs run in their processes, and
whatever else runs there), while `tools/testbed dev` runs its command outside it.

Options:
  --base NAME        the command the ratios are taken against (default: the first)
  --warmup N         rounds run first and not kept (default 1)
  --cwd DIR          where the commands run
  --cgroup DIR       add the CPU time of the cgroup DIR (its cpu.stat), as above
  --pin CPUS         run here and in the commands on these CPUs only (`1`, `0-1`): less noise
                     from migrations, for commands that run on one core. It does not reach what
                     a service manager starts for them (for scudo: `--property CPUAffinity=`)
  --before NAME=CMD  a shell command run before each run of NAME, not timed (`rm -f *.o`; a
                     program left running in the background, stopped by --after); NAME `*`: all
                     those without one of their own
  --after NAME=CMD   the same, after each run of NAME
  --inner            the command prints a time in microseconds as its last line (the work alone,
                     timed inside a sandbox): those are kept and compared too, as "inner"
  --summary          print a table of medians and ratios

COMMAND is split as a shell would (shlex) and run without a shell, its output discarded (but
the last line with --inner); a run that fails stops everything. OUT.json holds what hyperfine's
--export-json would, {"results": [{"command": NAME, "times": [seconds...]}]}, with beside
"times" the CPU seconds of each run ("cpu") and with --inner "inner" (seconds), and "ratios":
for each command but the base, {"command", "base", "rounds", and per measure ("wall", "cpu",
"inner") {"median", "low", "high", "ratio_of_medians"}}.
"""
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import time

USAGE = "usage: bench-interleave.py [OPTIONS] ROUNDS OUT.json NAME=COMMAND... (see its header)"
BOOTSTRAP = 2000


def fail(msg):
    sys.exit("bench-interleave.py: " + msg)


def parse(argv):
    o = {"base": None, "warmup": 1, "cwd": None, "cgroup": None, "pin": None, "before": {},
         "after": {}, "inner": False, "summary": False}
    i = 0
    while i < len(argv) and argv[i].startswith("--"):
        opt = argv[i]
        if opt in ("--inner", "--summary"):
            o[opt[2:]] = True
            i += 1
            continue
        if i + 1 >= len(argv) or opt[2:] not in o:
            fail("unknown option or missing value: %s\n%s" % (opt, USAGE))
        val = argv[i + 1]
        if opt in ("--before", "--after"):
            name, _, cmd = val.partition("=")
            o[opt[2:]][name] = cmd
        elif opt == "--warmup":
            o["warmup"] = int(val)
        else:
            o[opt[2:]] = val
        i += 2
    rest = argv[i:]
    if len(rest) < 3:
        fail(USAGE)
    cmds = []
    for a in rest[2:]:
        name, sep, command = a.partition("=")
        if not sep or not name:
            fail("not NAME=COMMAND: " + a)
        cmds.append((name, shlex.split(command)))
    return o, rest[0], rest[1], cmds


def cpus(spec):
    out = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def cgroup_usage(d):
    with open(os.path.join(d, "cpu.stat")) as f:
        for line in f:
            k, v = line.split()
            if k == "usage_usec":
                return int(v) / 1e6
    fail("no usage_usec in %s/cpu.stat" % d)


def shell(cmd, cwd):
    if cmd and subprocess.run(cmd, shell=True, cwd=cwd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL).returncode != 0:
        fail("failed: " + cmd)


def run_once(name, argv, o):
    """One run: (wall seconds, CPU seconds, inner seconds or None)."""
    shell(o["before"].get(name, o["before"].get("*")), o["cwd"])
    c0 = cgroup_usage(o["cgroup"]) if o["cgroup"] else 0
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=o["cwd"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE if o["inner"] else subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    out = p.stdout.read() if o["inner"] else b""
    _, status, ru = os.wait4(p.pid, 0)
    t = time.perf_counter() - t0
    cpu = ru.ru_utime + ru.ru_stime + (cgroup_usage(o["cgroup"]) - c0 if o["cgroup"] else 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.stdout:
        p.stdout.close()
    if p.returncode != 0:
        fail("%s exited with %d" % (name, p.returncode))
    shell(o["after"].get(name, o["after"].get("*")), o["cwd"])
    inner = None
    if o["inner"]:
        try:
            inner = int(out.split()[-1]) / 1e6
        except (IndexError, ValueError):
            fail("%s printed no time in microseconds last" % name)
    return t, cpu, inner


def interval(ratios, rng):
    """The median and the bootstrap 95 % interval of the median."""
    n = len(ratios)
    meds = sorted(statistics.median(rng.choices(ratios, k=n)) for _ in range(BOOTSTRAP))
    return statistics.median(ratios), meds[int(0.025 * BOOTSTRAP)], meds[int(0.975 * BOOTSTRAP) - 1]


def compare(res, base, o):
    rng = random.Random(0)
    out = []
    kinds = ["wall", "cpu"] + (["inner"] if o["inner"] else [])
    key = {"wall": "times", "cpu": "cpu", "inner": "inner"}
    for name, r in res.items():
        if name == base:
            continue
        entry = {"command": name, "base": base, "rounds": len(r["times"])}
        for kind in kinds:
            a, b = r[key[kind]], res[base][key[kind]]
            ratios = [x / y for x, y in zip(a, b) if y > 0]
            if not ratios:
                continue
            med, lo, hi = interval(ratios, rng)
            entry[kind] = {"median": med, "low": lo, "high": hi,
                           "ratio_of_medians": statistics.median(a) / statistics.median(b)}
        out.append(entry)
    return out


def summary(res, ratios, o):
    kinds = ["wall", "cpu"] + (["inner"] if o["inner"] else [])
    key = {"wall": "times", "cpu": "cpu", "inner": "inner"}
    print("medians of %d rounds (ms): %s" % (len(next(iter(res.values()))["times"]),
                                             ", ".join(kinds)))
    for name, r in res.items():
        print("  %-16s %s" % (name, "  ".join("%10.1f" % (statistics.median(r[key[k]]) * 1000)
                                             for k in kinds)))
    for e in ratios:
        print("  %s / %s, median of the rounds' ratios [95 %% interval]:" % (e["command"], e["base"]))
        for k in kinds:
            if k in e:
                print("    %-5s %.3fx [%.3f, %.3f] (ratio of medians %.3fx)" % (
                    k, e[k]["median"], e[k]["low"], e[k]["high"], e[k]["ratio_of_medians"]))
    sys.stdout.flush()


def main():
    o, rounds, out, cmds = parse(sys.argv[1:])
    names = [n for n, _ in cmds]
    base = o["base"] or names[0]
    if base not in names or len(set(names)) != len(names):
        fail("--base names no command, or two commands have one name")
    budget = float(rounds[:-1]) if rounds.endswith("s") else None
    rounds = None if budget is not None else int(rounds)
    if o["pin"]:
        os.sched_setaffinity(0, cpus(o["pin"]))
    res = {n: {"command": n, "times": [], "cpu": []} for n in names}
    if o["inner"]:
        for r in res.values():
            r["inner"] = []
    start = None
    r = 0
    while True:
        kept = r - o["warmup"]
        if kept == 0:
            start = time.monotonic()
        if rounds is not None and kept >= rounds:
            break
        if budget is not None and kept >= 5 and time.monotonic() - start >= budget:
            break
        k = r % len(cmds)
        for name, argv in cmds[k:] + cmds[:k]:
            t, cpu, inner = run_once(name, argv, o)
            if kept >= 0:
                res[name]["times"].append(t)
                res[name]["cpu"].append(cpu)
                if o["inner"]:
                    res[name]["inner"].append(inner)
        r += 1
    ratios = compare(res, base, o)
    with open(out, "w") as f:
        json.dump({"results": list(res.values()), "ratios": ratios}, f)
    if o["summary"]:
        summary(res, ratios, o)


if __name__ == "__main__":
    main()
