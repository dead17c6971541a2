#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The layers of src/ point one way: each directory may include only from those below it.

    util                     bounded strings, paths, logging: nothing of scudo's
    net                      network rules and the helper's protocol
    plan                     Request and Plan, validation, the hardening step
    term                     the caller's terminal: the pty relay, the --tui screen
    git                      git around a run: the .git guard and watch, the config copies
    policy, report, unit     the Lua engine; refusal reports; a plan made a unit
    broker                   delegation
    run                      one run: unit, broker, helper session, reports
    shim                     the FUSE shim on PATH (on policy's trust store path)
    cli                      the verbs, and the exit statuses
    bpfd, confine            programs of their own: util and net only
    route                    the program a delegated command leads to inside: the broker's
                             client (util, plan, broker) and cli's exit statuses, no library

The table below is the one statement of it, used twice by meson.build:

    layers.py configure SRC OUT       at configure time: the include trees (below), then each
                                      layer that is a library of scudo's with the layers
                                      below it, one "LAYER:BELOW,..." a line, in an order that
                                      builds the ones below first; meson.build makes the
                                      static libraries from it;
    layers.py include-trees SRC OUT   OUT/LAYER/ holds a link to src/DIR for LAYER and each
                                      DIR below it, and LAYER's static library is compiled
                                      with -I OUT/LAYER alone, so an #include "DIR/..." that
                                      points up finds no file;
    layers.py check SRC [STAMP]       at every build: the same table read off the #include
                                      lines, with file and line, including the system headers
                                      only some layers may use (SYSTEM_HEADERS) and directories
                                      of src/ that belong to no layer.

EXCEPTIONS are the arrows known to point the wrong way, each with why it is still there; one
that disappears from the code must leave this list too."""
import os
import re
import sys

BELOW = {
    "util": set(),
    "net": {"util"},
    "plan": {"util", "net"},
    "policy": {"util", "net", "plan"},
    "report": {"util", "net", "plan"},
    "term": {"util"},
    "git": {"util", "net", "plan"},
    "unit": {"util", "net", "plan", "report", "git"},
    "broker": {"util", "net", "plan", "report", "git", "unit"},
    "run": {"util", "net", "plan", "report", "term", "git", "unit", "broker"},
    "shim": {"util", "net", "plan", "policy"},
    "cli": {"util", "net", "plan", "report", "term", "git", "unit", "broker", "run", "policy", "shim"},
    "bpfd": {"util", "net"},
    "confine": {"util"},
    "route": {"util", "net", "plan", "broker", "cli"},
}

# Programs of their own, not libraries of scudo's.
PROGRAMS = {"bpfd", "confine", "route"}

# System headers that only some layers may include: D-Bus is the runner's business (a plan is
# data, and the policy engine must not reach the bus), Lua the policy engine's alone.
SYSTEM_HEADERS = {
    "systemd/": {"report", "term", "git", "unit", "broker", "run", "cli", "bpfd"},
    "lua.h": {"policy"},
    "lauxlib.h": {"policy"},
    "lualib.h": {"policy"},
    "fuse": {"shim"},
}

# (file, header): why the arrow is still there. None today.
EXCEPTIONS = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z]+)/[^"]+"')
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s+<([^>]+)>')


def wrong_system_header(layer, header):
    for prefix, layers in SYSTEM_HEADERS.items():
        if header.startswith(prefix) and layer not in layers:
            return True
    return False


def check(src, stamp):
    wrong, seen = [], set()
    for layer in sorted(os.listdir(src)):
        d = os.path.join(src, layer)
        if not os.path.isdir(d):
            continue
        if layer not in BELOW:
            wrong.append("%s/: a directory in no layer (add it to tools/layers.py)" % layer)
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            rel = "%s/%s" % (layer, name)
            with open(os.path.join(d, name), encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = SYSTEM_INCLUDE.match(line)
                    if m and wrong_system_header(layer, m.group(1)):
                        wrong.append("src/%s:%d: %s includes <%s>, which %s may not use"
                                     % (rel, n, layer, m.group(1), layer))
                        continue
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
        wrong.append("tools/layers.py: the exception %s -> %s is gone from the code: remove it" % gone)
    for w in wrong:
        print(w, file=sys.stderr)
    if wrong:
        return 1
    if stamp:
        with open(stamp, "w") as f:
            f.write("layers checked\n")
    return 0


def include_trees(src, out):
    """OUT/LAYER/DIR -> SRC/DIR for DIR in LAYER and below; nothing else in OUT/LAYER."""
    src = os.path.abspath(src)
    for layer, below in BELOW.items():
        tree = os.path.join(out, layer)
        os.makedirs(tree, exist_ok=True)
        want = below | {layer}
        for name in os.listdir(tree):
            if name not in want:
                os.unlink(os.path.join(tree, name))
        for d in sorted(want):
            link = os.path.join(tree, d)
            target = os.path.join(src, d)
            if os.path.islink(link) and os.readlink(link) == target:
                continue
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(target, link)
    return 0


def configure(src, out):
    """The include trees, then each layer built as a library of scudo's, in an order where the
    layers below come first: "LAYER:BELOW,BELOW..." a line. bpfd and confine are programs of
    their own (meson.build and src/bpfd/meson.build list what they compile)."""
    include_trees(src, out)
    done = set()
    for layer in [l for l in BELOW if l not in PROGRAMS]:
        below = sorted(BELOW[layer])
        assert set(below) <= done, layer
        print("%s:%s" % (layer, ",".join(below)))
        done.add(layer)
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "configure":
        return configure(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 3 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    if len(sys.argv) == 4 and sys.argv[1] == "include-trees":
        return include_trees(sys.argv[2], sys.argv[3])
    print("usage: layers.py check SRC [STAMP] | include-trees SRC OUT | configure SRC OUT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
