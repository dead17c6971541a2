#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The built-in policies are checked and frozen into bytecode at build time
(tools/policy-freeze.c); a run takes their definitions from it instead of parsing the text.
This compares, for commands that select every built-in profile, `scudo explain --json` of the
binary against the same program linked with the text alone (parsed at run time): the plans,
origins and explanations must be the same.

  test-frozen-policies.py SCUDO SCUDO_WITH_TEXT_POLICIES"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_table import fake_machine  # noqa: E402

COMMANDS = [
    ["npm", "install"], ["npm", "publish"], ["pip", "install", "x"], ["cargo", "build"],
    ["cargo", "install", "x"], ["git", "status"], ["claude"], ["make", "-C", "sub"], ["true"],
    ["npm", "login"], ["go", "install", "x"], ["yarn"], ["uv", "tool", "install", "x"], ["mvn"], ["code"],
    ["profiles"], ["check"],
]


def explain(binary, argv, cwd, env):
    args = argv if argv[0] in ("profiles", "check") else ["explain", "--json"] + argv
    r = subprocess.run([binary] + args, cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # a sandbox that delegates is given scudo, and scudo-route beside it, at their own paths:
    # the two binaries' paths differ
    own = os.path.realpath(binary)
    route = os.path.join(os.path.dirname(own), "scudo-route")
    out, err = r.stdout.replace(route, "<scudo-route>"), r.stderr.replace(route, "<scudo-route>")
    return r.returncode, out.replace(own, "<scudo>"), err.replace(own, "<scudo>")


def main():
    frozen, text = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as root:
        home, proj, env = fake_machine(root, ("npm", "pip", "cargo", "claude", "make", "go", "yarn", "uv",
                                              "mvn", "code"))
        env.update({"XDG_STATE_HOME": os.path.join(home, ".local", "state"), "GITHUB_TOKEN": "x"})
        print("1..%d" % (2 * len(COMMANDS)))
        n = 0
        for argv in COMMANDS:
            a, b = explain(frozen, argv, proj, env), explain(text, argv, proj, env)
            n += 1
            ok = a[0] == 0 and (a[1].startswith("{") or argv[0] in ("profiles", "check"))
            print("%s %d - %s: the frozen policies resolve%s" % ("ok" if ok else "not ok", n, " ".join(argv),
                                                                 "" if ok else " (%r)" % (a,)))
            n += 1
            same = ok and a == b and (not a[1].startswith("{") or json.loads(a[1]) == json.loads(b[1]))
            print("%s %d - %s: same as the text parsed at run time" % ("ok" if same else "not ok", n, " ".join(argv)))
            if not same and ok:
                print("# frozen: %s\n# text:   %s" % (a[1][:2000], b[1][:2000]))


if __name__ == "__main__":
    main()
