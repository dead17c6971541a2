#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""systemd-run arguments for the very unit a running scudo started (tools/bench).

    systemctl --user show UNIT | bench-unit-args.py EXECUTABLE [ARG...]
    bench-unit-args.py --reference FIXTURE BUILD_DIR TOOLS_DIR EXECUTABLE [ARG...]

Reads the unit's properties as `systemctl show` prints them and writes, shell-quoted, a
`systemd-run --user --wait --pipe -q` command line that starts the same sandbox: the same
mounts (including those scudo adds when it builds the unit), environment, properties and
scudo-confine step with its checks, running EXECUTABLE ARG... instead of the command. So the
benchmark compares scudo with systemd-run doing exactly the same work. Values are taken as
systemctl prints them, split on spaces: fine for the benchmark's own directory and
environment, not for paths with spaces.

With --reference, the command line is made from a fixture instead (one argument per line, `#`
comments): a unit kept as it was at one commit, so that tools/bench compares scudo with a
reference that does not change as scudo's unit does. @BUILD@, @TOOLS@, @HOME@ and @UID@ are
filled in, and @ID@ (in a scudo-confine check) by the DEV:INO of the path that follows it.
"""
import os
import re
import shlex
import sys

# Properties passed on as they are (systemctl show name -> systemd-run name).
SCALARS = {
    "Type": "Type", "KeyringMode": "KeyringMode", "PrivateTmp": "PrivateTmp",
    "PrivateDevices": "PrivateDevices", "ProtectControlGroups": "ProtectControlGroups",
    "PrivateUsers": "PrivateUsers", "PrivateIPC": "PrivateIPC", "ProtectHome": "ProtectHome",
    "ProtectSystem": "ProtectSystem", "NoNewPrivileges": "NoNewPrivileges",
    "CapabilityBoundingSet": "CapabilityBoundingSet", "WorkingDirectory": "WorkingDirectory",
    "TimeoutStopUSec": "TimeoutStopSec", "UnsetEnvironment": "UnsetEnvironment",
}
# Lists of space-separated entries, one -p each.
LISTS = ("Environment", "BindPaths", "BindReadOnlyPaths", "InaccessiblePaths", "TemporaryFileSystem")


def reference(fixture, build, tools, command):
    """The fixture's command line, run in this testbed."""
    import os
    fill = {"@BUILD@": build, "@TOOLS@": tools, "@HOME@": os.environ["HOME"], "@UID@": str(os.getuid())}
    args = []
    for line in open(fixture):
        line = line.rstrip("\n")
        if line.startswith("#") or not line:
            continue
        for k, v in fill.items():
            line = line.replace(k, v)
        m = re.match(r"(--check=[=t]:)@ID@:(/.*)$", line)
        if m:
            st = os.lstat(m.group(2))
            line = "%s%d:%d:%s" % (m.group(1), st.st_dev, st.st_ino, m.group(2))
        args.append(line)
    return args + command


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "--reference":
        args = reference(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
        print(" ".join(shlex.quote(a) for a in args))
        return
    if len(sys.argv) < 2:
        sys.exit("usage: systemctl --user show UNIT | bench-unit-args.py EXECUTABLE [ARG...]")
    props = {}
    for line in sys.stdin:
        key, sep, value = line.rstrip("\n").partition("=")
        if sep:
            props[key] = value
    args = ["systemd-run", "--user", "--wait", "--pipe", "-q", "-p", "CollectMode=inactive-or-failed"]
    for key, name in SCALARS.items():
        if key in props:
            args += ["-p", "%s=%s" % (name, props[key])]
    for key in LISTS:
        for entry in props.get(key, "").split():
            args += ["-p", "%s=%s" % (key, entry)]
    # ExecStart={ path=P ; argv[]=scudo-confine --check=... [--private-ptys] EXE ARGV0 ARG... ; ... }
    m = re.search(r"path=(\S+) ; argv\[\]=(.*?) ; ignore_errors", props.get("ExecStart", ""))
    if not m:
        sys.exit("bench-unit-args.py: no ExecStart in the unit's properties")
    confine, argv = m.group(1), m.group(2).split()
    opts = []
    for a in argv[1:]:
        if not a.startswith("--"):
            break       # the executable: the options of scudo-confine are before it
        if a.startswith("--notify-stop="):
            continue    # the scudo that started the unit read off, gone by now
        if a.startswith("--exec-identity="):
            # what scudo checked is the executable of that unit's command: this one's instead
            st = os.stat(sys.argv[1])
            a = "--exec-identity=%d:%d" % (st.st_dev, st.st_ino)
        opts.append(a)
    args += [confine] + opts + sys.argv[1:]
    print(" ".join(shlex.quote(a) for a in args))


if __name__ == "__main__":
    main()
