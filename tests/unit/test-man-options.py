#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The man pages list exactly the options --help does: scudo(1) against `scudo --help` and each
subcommand's `--help`, scudo-bpfd(8) against `scudo-bpfd --help`; and scudo(1)'s synopsis names
every subcommand `scudo --help` does. Fails naming what one lists and the other does not.

Usage: test-man-options.py SCUDO MANDIR [SCUDO_BPFD]"""
import re
import subprocess
import sys

OPTION = re.compile(r"--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def help_text(argv):
    p = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise SystemExit("not ok - %s --help exited with %d: %s" % (" ".join(argv), p.returncode, p.stderr))
    return p.stdout


def man_text(path):
    with open(path) as f:
        text = f.read()
    # "\-\-fs\-*" stands for a family of options, each of which is listed on its own
    text = re.sub(r"(\\-)+[a-z]+\\-\*", "", text)
    text = text.replace("\\-", "-")
    # other programs' command lines quoted in the text are not our options
    return re.sub(r"systemctl [^\n]*", "", text)


def options(text):
    return set(OPTION.findall(text))


def compare(name, helped, manned):
    missing, extra = sorted(helped - manned), sorted(manned - helped)
    ok = not missing and not extra
    print("%s - %s%s%s" % ("ok" if ok else "not ok", name,
                          "; not in the man page: " + ", ".join(missing) if missing else "",
                          "; not in --help: " + ", ".join(extra) if extra else ""))
    return ok


def main():
    scudo, mandir = sys.argv[1], sys.argv[2]
    bpfd = sys.argv[3] if len(sys.argv) > 3 else None
    print("1..%d" % (3 if bpfd else 2))
    ok = True

    main_help = help_text([scudo])
    verbs = [v for m in re.findall(r"scudo ([a-z|_-]+) \.\.\.", main_help) for v in m.split("|")]
    man = man_text(mandir + "/scudo.1")
    synopsis = man.split(".SH DESCRIPTION")[0]
    man_verbs = set(re.findall(r"^\.BR? scudo ([a-z]+)", synopsis, re.M))
    ok &= compare("scudo(1) synopsis names the subcommands of scudo --help",
                  set(verbs), man_verbs | {v for v in verbs if v in ("untrust", "trusted") and "trust" in man_verbs})

    helped = options(main_help)
    for v in verbs:
        helped |= options(help_text([scudo, v]))
    ok &= compare("scudo(1) lists the options of scudo --help and its subcommands", helped, options(man))

    if bpfd:
        ok &= compare("scudo-bpfd(8) lists the options of scudo-bpfd --help",
                      options(help_text([bpfd])), options(man_text(mandir + "/scudo-bpfd.8")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
