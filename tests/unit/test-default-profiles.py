#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Every profile of the built-in configuration (policies/default.toml), table-driven: for a
command it matches, `scudo explain --json` applies it and shows the grants it is written to
give (access, path as written, whether the run creates it) and exactly the hosts it allows;
its delegation; `scudo check` passes; explain creates nothing. A profile with a match that
the table (profile_table.py) does not cover fails the test, so a new profile comes with its
row.

  test-default-profiles.py SCUDO"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_table import NOT_MATCHED, TABLE, Tap, fake_machine  # noqa: E402


def run(scudo, args, cwd, env):
    r = subprocess.run([scudo] + args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout, r.stderr


def profile_names(text):
    return [line.split()[0] for line in text.splitlines() if line and not line[0].isspace()]


def main():
    scudo = os.path.abspath(sys.argv[1])
    tap = Tap()
    check = tap.check

    with tempfile.TemporaryDirectory() as root:
        home, proj, env = fake_machine(root)
        env.update({"WAYLAND_DISPLAY": "wayland-0", "NPM_TOKEN": "x", "ANTHROPIC_API_KEY": "x",
                    "OPENAI_API_KEY": "x", "GEMINI_API_KEY": "x"})
        before = sorted(os.listdir(home))

        rc, out, err = run(scudo, ["check"], proj, env)
        check(rc == 0 and "0 error(s)" in out, "scudo check passes on the built-in configuration", out + err)
        rc, out, err = run(scudo, ["profiles"], proj, env)
        names = profile_names(out)
        matched = [x for x in names if x not in NOT_MATCHED]
        check(rc == 0 and set(matched) == set(TABLE),
              "every profile with a match has a row (%d profiles)" % len(names),
              "no row: %s; no profile: %s" % (sorted(set(matched) - set(TABLE)), sorted(set(TABLE) - set(matched))))

        for name, (argv, grants, hosts, delegable, extra) in sorted(TABLE.items()):
            rc, out, err = run(scudo, ["explain", "--json"] + argv, proj, env)
            try:
                d = json.loads(out)
            except ValueError:
                check(False, "%s: explain %s" % (name, " ".join(argv)), err)
                continue
            applied = [p["name"] for p in d["profiles"]]
            check(rc == 0 and d["valid"] and applied[-1] == name,
                  "%s: `%s` applies it, the plan valid" % (name, " ".join(argv)), (applied, d.get("validation_error")))
            fs = {f["written"]: f for f in d["filesystem"]}
            bad = []
            for written, want in grants.items():
                f = fs.get(written)
                access = {"w": "write", "r": "read", "d": "deny"}[want[0]]
                create = want.split("+")[1] if "+" in want else None
                if not f or f["access"] != access or f.get("create") != create or \
                        (create and f.get("created") != "would be created"):
                    bad.append((written, want, f))
            check(not bad, "%s: grants %s" % (name, ", ".join("%s %s" % (v, k) for k, v in grants.items())), bad)
            net = d["network"]
            if hosts is None:
                check(not net["filtered"], "%s: the network is left as it is" % name, net)
            else:
                got = [r["rule"] for r in net["allow"]]
                check(net["filtered"] and sorted(got) == sorted(hosts),
                      "%s: only %s" % (name, ", ".join(hosts) or "nothing (no network)"), got)
            check(d["delegable"] == delegable, "%s: %sdelegable" % (name, "" if delegable else "not "), d["delegable"])
            if "delegates" in extra:
                check(extra["delegates"] in d["delegate"] and "npm-publish" not in d["delegate"] and
                      "cargo-install" not in d["delegate"],
                      "%s: delegates the delegable tools (%s), not npm-publish or cargo-install" %
                      (name, extra["delegates"]), d["delegate"])
            if "absent" in extra:
                check(extra["absent"] not in fs, "%s: not %s" % (name, extra["absent"]), fs.get(extra["absent"]))
            if "allow_env" in extra:
                check(extra["allow_env"] not in d["environment"]["removed"],
                      "%s: %s is passed on" % (name, extra["allow_env"]), d["environment"]["removed"])
            if "dbus" in extra:
                check(d["dbus"]["session"] == "filtered" and d["dbus"]["talk"] == [extra["dbus"]],
                      "%s: the session bus filtered, %s only" % (name, extra["dbus"]), d["dbus"])

        check(sorted(os.listdir(home)) == before, "explain created nothing", sorted(os.listdir(home)))
    tap.done()


if __name__ == "__main__":
    main()
