#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The C files' line width, as .editorconfig sets it (max_line_length of [*.{c,h}]).

    check-width.py ROOT

Reads every .c and .h file below ROOT's src, tests, tools and bpf, and fails with file and line
for each line wider than that. WAITING lists the files that still have such lines, each with
how many: a file may not have more, and a line made shorter must leave the list (the check
says when a figure can come down). Run by `meson test` (suite "style")."""
import os
import sys

DIRS = ("src", "tests", "tools", "bpf")

# file: lines over the width it still has. To shrink to nothing.
WAITING = {
    "bpf/scudo-net.bpf.c": 1,
    "src/bpfd/bpfd.c": 2,
    "src/bpfd/dns-packet.c": 1,
    "src/bpfd/dns-upstream.c": 1,
    "src/bpfd/filter.c": 1,
    "src/bpfd/filter.h": 1,
    "src/bpfd/filtered-cgroup.c": 2,
    "src/broker/client.c": 5,
    "src/broker/context.c": 1,
    "src/broker/peer.c": 1,
    "src/broker/server.c": 6,
    "src/cli/run-confirm.c": 1,
    "src/cli/verb-delegated.c": 5,
    "src/cli/verb-explain.c": 1,
    "src/cli/verb-link.c": 1,
    "src/cli/verb-run.c": 8,
    "src/cli/verb-suggest.c": 1,
    "src/cli/verb-trust.c": 3,
    "src/confine/pid-init.c": 4,
    "src/confine/scudo-confine.c": 8,
    "src/confine/seccomp.c": 2,
    "src/git/git-guard.c": 2,
    "src/git/git-guard.h": 1,
    "src/git/gitdir-watch.c": 6,
    "src/net/net-session.c": 2,
    "src/net/net-session.h": 1,
    "src/net/usage.c": 1,
    "src/net/usage.h": 1,
    "src/plan/harden-git.c": 6,
    "src/plan/harden-leads-out.c": 4,
    "src/plan/harden-leads-out.h": 1,
    "src/plan/harden-persistence.c": 1,
    "src/plan/harden-sockets.c": 9,
    "src/plan/persistence.c": 1,
    "src/plan/plan-create.c": 1,
    "src/plan/plan-delegate.c": 1,
    "src/plan/plan-harden.c": 7,
    "src/plan/plan-validate.c": 4,
    "src/plan/unit-properties.c": 9,
    "src/policy/l-path.c": 2,
    "src/policy/l-tables.c": 3,
    "src/policy/l-text.c": 3,
    "src/policy/lua-arena.c": 1,
    "src/policy/lua-engine.c": 2,
    "src/policy/plan-from-lua.c": 2,
    "src/policy/policy.c": 1,
    "src/policy/regex.c": 7,
    "src/policy/regex.h": 1,
    "src/policy/request-to-lua.c": 3,
    "src/policy/toml-scan.c": 6,
    "src/policy/toml.c": 5,
    "src/report/file-judge.c": 2,
    "src/report/net-judge.c": 3,
    "src/report/refusals.c": 6,
    "src/report/report-format.c": 5,
    "src/report/run-record.c": 1,
    "src/report/suggest.c": 5,
    "src/term/pty-relay.c": 1,
    "src/term/tui.c": 5,
    "src/util/sandbox-unit.h": 1,
    "tests/fuzz/fuzz-primitives.c": 6,
    "tests/unit/test-bpf-load.c": 1,
    "tests/unit/test-broker-context.c": 2,
    "tests/unit/test-broker-wire.c": 1,
    "tests/unit/test-confine-seccomp.c": 8,
    "tests/unit/test-git-config-filter.c": 6,
    "tests/unit/test-git-guard.c": 5,
    "tests/unit/test-lua-primitives.c": 50,
    "tests/unit/test-lua-userenv.c": 28,
    "tests/unit/test-net-dns.c": 16,
    "tests/unit/test-net-protocol.c": 18,
    "tests/unit/test-net-rule.c": 3,
    "tests/unit/test-plan-create.c": 14,
    "tests/unit/test-plan-delegate.c": 11,
    "tests/unit/test-plan-validate.c": 14,
    "tests/unit/test-policy-merge.c": 29,
    "tests/unit/test-policy-trust.c": 13,
    "tests/unit/test-properties.c": 5,
    "tests/unit/test-regex.c": 13,
    "tests/unit/test-toml.c": 30,
    "tests/unit/test-util.c": 20,
    "tools/bench-policy.c": 2,
    "tools/policy-freeze.c": 1,
    "tools/toml-decode.c": 1,
}


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
    for rel in sorted(set(WAITING) - set(found)):
        print("%s: no line over any more: remove it from WAITING" % rel)
    for rel, lines in sorted(found.items()):
        allowed = WAITING.get(rel, 0)
        if len(lines) > allowed:
            wrong += 1
            print("%s: %d line(s) wider than %d columns (lines %s)%s"
                  % (rel, len(lines), width, ", ".join(map(str, lines)),
                     "; at most %d allowed until it is fixed" % allowed if allowed else ""), file=sys.stderr)
        elif len(lines) < allowed:
            print("%s: %d line(s) over, WAITING says %d: lower it" % (rel, len(lines), allowed))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
