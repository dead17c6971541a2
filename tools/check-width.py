#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The C files' line width, as .editorconfig sets it (max_line_length of [*.{c,h}]).

    check-width.py ROOT

Reads every .c and .h file below ROOT's src, tests, tools and bpf, and fails with file and line
for each line wider than that. Run by `meson test` (suite "style")."""
import os
import sys

DIRS = ("src", "tests", "tools", "bpf")


def max_width(root):
    section = None
    with open(os.path.join(root, ".editorconfig"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line
            elif section == "[*.{c,h}]" and line.replace(" ", "").startswith("max_line_length="):
                return int(line.split("=", 1)[1])
    raise SystemExit(".editorconfig: no max_line_length for [*.{c,h}]")


def overlong(root, width):
    found = {}
    for d in DIRS:
        for base, _, files in os.walk(os.path.join(root, d)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        if len(line.rstrip("\n")) > width:
                            found.setdefault(rel, []).append(n)
    return found


def main():
    if len(sys.argv) != 2:
        print("usage: check-width.py ROOT", file=sys.stderr)
        return 2
    root = sys.argv[1]
    width = max_width(root)
    wrong = 0
    found = overlong(root, width)
    for rel, lines in sorted(found.items()):
        wrong += 1
        print("%s: %d line(s) wider than %d columns (lines %s)"
              % (rel, len(lines), width, ", ".join(map(str, lines))), file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
