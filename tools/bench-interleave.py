#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Times commands in turn, one run of each per round, for tools/bench on a loaded machine.

    bench-interleave.py ROUNDS OUT.json NAME=COMMAND...

hyperfine runs every run of one command before the next command, so a machine whose load
comes and goes (other builds, other testbeds) weighs on one command more than another. Here
each round runs every command once, in an order that turns from round to round, and the
medians are taken over the rounds. COMMAND is split as a shell would (shlex) and run without a
shell, its output discarded; a run that fails stops everything. OUT.json holds what hyperfine's
--export-json would: {"results": [{"command": NAME, "times": [seconds...]}]}.
"""
import json
import shlex
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: bench-interleave.py ROUNDS OUT.json NAME=COMMAND...")
    rounds, out = int(sys.argv[1]), sys.argv[2]
    cmds = []
    for a in sys.argv[3:]:
        name, _, command = a.partition("=")
        cmds.append((name, shlex.split(command)))
    times = {name: [] for name, _ in cmds}
    for r in range(rounds + 1):
        k = r % len(cmds)
        for name, argv in cmds[k:] + cmds[:k]:
            t0 = time.perf_counter()
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            t = time.perf_counter() - t0
            if p.returncode != 0:
                sys.exit("bench-interleave.py: %s exited with %d" % (name, p.returncode))
            if r > 0:       # the first round warms up
                times[name].append(t)
    with open(out, "w") as f:
        json.dump({"results": [{"command": n, "times": t} for n, t in times.items()]}, f)


if __name__ == "__main__":
    main()
