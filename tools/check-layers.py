#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The layers of src/ point one way: each directory may include only from those below it.

    util                     bounded strings, paths, logging: nothing of scudo's
    net                      network rules and the helper's protocol
    plan                     Request and Plan, validation, the hardening step
    policy, report, unit     the Lua engine; refusal reports; a plan made a unit
    broker                   delegation
    run                      one run: unit, broker, helper session, reports
    cli                      the verbs, and the exit statuses
    bpfd, confine            programs of their own: util and net only

Run at every build (meson.build): an #include "layer/..." that points up, or sideways where
the table does not allow it, fails the build with the file and line. EXCEPTIONS are the arrows
known to point the wrong way, each with why it is still there; one that disappears from the
code must leave this list too."""
import os
import re
import sys

BELOW = {
    "util": set(),
    "net": {"util"},
    "plan": {"util", "net"},
    "policy": {"util", "net", "plan"},
    "report": {"util", "net", "plan"},
    "unit": {"util", "net", "plan", "report"},
    "broker": {"util", "net", "plan", "report", "unit"},
    "run": {"util", "net", "plan", "report", "unit", "broker"},
    "cli": {"util", "net", "plan", "report", "unit", "broker", "run", "policy"},
    "bpfd": {"util", "net"},
    "confine": {"util"},
}

# (file, header): why the arrow is still there. None today.
EXCEPTIONS = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z]+)/[^"]+"')


def main():
    src = sys.argv[1]
    stamp = sys.argv[2] if len(sys.argv) > 2 else None
    wrong, seen = [], set()
    for layer in sorted(os.listdir(src)):
        d = os.path.join(src, layer)
        if not os.path.isdir(d):
            continue
        if layer not in BELOW:
            wrong.append("%s/: a directory in no layer (add it to tools/check-layers.py)" % layer)
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            rel = "%s/%s" % (layer, name)
            with open(os.path.join(d, name), encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1) == layer or m.group(1) in BELOW[layer]:
                        continue
                    header = line.split('"')[1]
                    if (rel, header) in EXCEPTIONS:
                        seen.add((rel, header))
                        continue
                    wrong.append("src/%s:%d: %s includes %s, which %s may not use"
                                 % (rel, n, layer, header, layer))
    for gone in sorted(set(EXCEPTIONS) - seen):
        wrong.append("tools/check-layers.py: the exception %s -> %s is gone from the code: remove it" % gone)
    for w in wrong:
        print(w, file=sys.stderr)
    if wrong:
        return 1
    if stamp:
        with open(stamp, "w") as f:
            f.write("layers checked\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
