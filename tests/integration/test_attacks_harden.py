# SPDX-License-Identifier: MIT OR Apache-2.0
"""Attacks the hardening step (src/plan/plan-harden.c) closes whatever the profiles say: the
system bus, a grant worked out from the request over a deny, a denied file's directory renamed
away between runs. As in test_attacks.py, each is run from inside and judged from outside."""
import shlex

import pytest

from conftest import SCUDO

Q = shlex.quote(SCUDO)


def trust(tb, work, text):
    """Writes WORK/.scudo.toml as dev and trusts it."""
    r = tb.dev("cd %s && cat > .scudo.toml <<'SCUDO_EOF'\n%s\nSCUDO_EOF\n%s trust --yes .scudo.toml"
               % (work, text, Q))
    assert r.rc == 0, r


# ---------------------------------------------------------------------------------------------
# The system bus

SYSTEM_BUS_PROFILES = '''[sysbus-allow]
dbus.system = "allow"
[sysbus-filtered]
dbus.system = "filtered"
dbus.system_talk = ["org.freedesktop.systemd1"]
[sysbus-tool]
match = ["sysbus-tool.sh"]
delegable = true
[sysbus-delegate]
dbus.system = "allow"
delegate = ["sysbus-tool"]
'''

# What answers on the system bus: the bus daemon itself, the system manager (a property any
# user may read), logind (likewise: the service that kills the user's processes and sets
# lingering). dbus-send, not busctl: sd-bus clients and xdg-dbus-proxy do not get along
# ("Invalid message header read"), libdbus ones do.
def _get(dest, iface, prop):
    return ("dbus-send --system --print-reply --dest=org.freedesktop.%s /org/freedesktop/%s "
            "org.freedesktop.DBus.Properties.Get string:org.freedesktop.%s string:%s >/dev/null 2>&1"
            % (dest, dest, iface, prop))


SYSTEM_BUS_PROBE = (
    "dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus "
    "org.freedesktop.DBus.GetId 2>/dev/null | sed 's/^ */DAEMON-ID /'; "
    + _get("systemd1", "systemd1.Manager", "Version") + " && echo SYSTEMD-ANSWERS; "
    + _get("login1", "login1.Manager", "IdleHint") + " && echo LOGIND-ANSWERS; "
    "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"/run/dbus/system_bus_socket\"); "
    "print(\"CONNECTED\")' 2>/dev/null; echo bus=$DBUS_SYSTEM_BUS_ADDRESS; echo done")


def test_system_bus_is_out_of_reach_unless_a_profile_asks(tb, work):
    # Issue 15, item 4: logind's KillUser/TerminateUser/SetUserLinger over the system bus
    # reach outside the sandbox. No system bus by default; "filtered" passes the names listed
    # (through xdg-dbus-proxy, as the session bus), "allow" all of it.
    outside = tb.dev(SYSTEM_BUS_PROBE)
    if not all(w in outside.out for w in ("DAEMON-ID", "SYSTEMD-ANSWERS", "LOGIND-ANSWERS", "CONNECTED")):
        pytest.skip("the testbed has no system bus with systemd and logind on it: %r" % outside)
    daemon_id = [line for line in outside.out.splitlines() if line.startswith("DAEMON-ID")]
    trust(tb, work, SYSTEM_BUS_PROFILES)

    # By default: nothing answers, not even a connection is taken.
    r = tb.scudo(["sh", "-c", SYSTEM_BUS_PROBE], cwd=work)
    assert "done" in r.out, r
    for w in ("DAEMON-ID", "SYSTEMD-ANSWERS", "LOGIND-ANSWERS", "CONNECTED"):
        assert w not in r.out, r

    # "allow": the bus as it is outside (the same daemon answers).
    r = tb.scudo(["-p", "sysbus-allow", "sh", "-c", SYSTEM_BUS_PROBE], cwd=work)
    assert "SYSTEMD-ANSWERS" in r.out and "LOGIND-ANSWERS" in r.out, r
    assert [line for line in r.out.splitlines() if line.startswith("DAEMON-ID")] == daemon_id, r

    # "filtered": the daemon and the name listed answer, logind does not; the proxy goes with
    # the run.
    r = tb.scudo(["-p", "sysbus-filtered", "sh", "-c", SYSTEM_BUS_PROBE], cwd=work)
    assert "SYSTEMD-ANSWERS" in r.out and "CONNECTED" in r.out, r
    assert [line for line in r.out.splitlines() if line.startswith("DAEMON-ID")] == daemon_id, r
    assert "LOGIND-ANSWERS" not in r.out, r
    assert "bus=unix:path=/run/dbus/system_bus_socket" in r.out, r
    assert tb.user_units("scudo-*") == [], tb.user_units("scudo-*")
    assert tb.dev("ls $XDG_RUNTIME_DIR | grep -c '^scudo-'").out.strip() == "0"

    # explain shows the entry and why
    r = tb.scudo(["explain", "true"], cwd=work)
    assert "system bus: none" in r.out, r
    # the deny, left out as changing nothing under the sandbox's empty /run where there is one
    line = [x for x in r.out.splitlines() if "/run/dbus/system_bus_socket" in x]
    assert line and "deny" in line[0] and ("logind" in r.out or "lies under /run" in line[0]), r
    r = tb.scudo(["explain", "-p", "sysbus-filtered", "true"], cwd=work)
    assert "system bus: filtered" in r.out and "org.freedesktop.systemd1" in r.out, r
    assert "filtered system bus" in r.out, r

    # an unknown value, and delegation from a sandbox with the whole system bus, are refused
    r = tb.dev("cd %s && printf '[sysbus-bad]\\ndbus.system = \"open\"\\n' > bad.toml && %s check bad.toml"
               % (work, Q))
    assert r.rc != 0 and "bad.toml:2: dbus.system: 'open' is not one of none, filtered, allow" in r.out + r.err, r
    r = tb.scudo(["-p", "sysbus-delegate", "true"], cwd=work)
    assert r.rc != 0 and "dbus.system = \"allow\"" in r.err, r


# ---------------------------------------------------------------------------------------------
# A deny inside a writable directory, renamed away

def test_denied_file_cannot_be_renamed_away_for_the_next_run(tb, work):
    # Issue 15, item 3: filesystem.deny = ["${PWD}/config/master.key"] with the start directory
    # writable; run 1 did `mv config cfg`, run 2 read cfg/master.key. Each directory between
    # the writable one and the entry is a mount point now, which cannot be renamed or removed.
    trust(tb, work, '[sandbox]\nfilesystem.deny = ["${PWD}/config/master.key", "${PWD}/a/b/c/secret"]')
    r = tb.dev("cd %s && mkdir -p config a/b/c && echo KEY-1234 > config/master.key && echo S > a/b/c/secret"
               % work)
    assert r.rc == 0, r
    r = tb.scudo(["sh", "-c", "cat config/master.key; mv config cfg && echo MOVED; mv a x && echo MOVED-A; "
                  "mv a/b a/y && echo MOVED-B; rm -rf config 2>/dev/null; touch config/new && echo WRITABLE"],
                 cwd=work)
    assert "KEY-1234" not in r.out and "MOVED" not in r.out, r
    assert "WRITABLE" in r.out, r      # the pinned directory is as writable as before
    # from outside: the key where it was, unchanged, and nothing moved
    r = tb.root("cat %s/config/master.key %s/a/b/c/secret; ls %s" % (work, work, work))
    assert r.out.split()[:2] == ["KEY-1234", "S"], r
    assert "cfg" not in r.out.split() and "x" not in r.out.split(), r
    # explain names the pins and why
    r = tb.scudo(["explain", "true"], cwd=work)
    assert "cannot be renamed" in r.out, r
    pinned = [x for x in r.out.splitlines() if "cannot be renamed" in x]
    assert any(work + "/config" in x for x in pinned) and any(work + "/a/b" in x for x in pinned), r


# ---------------------------------------------------------------------------------------------
# A grant worked out from the request over a deny

@pytest.mark.parametrize("where", ["at", "below"])
def test_project_grant_never_overrides_a_deny(tb, work, where):
    # Issue 15, item 11: with ~/.aws/.git, git-project's ${project} (= ~/.aws) write came after
    # the sandbox's deny of ~/.aws and won: the credentials were read and written. Started in
    # ~/.aws itself ("at"), or in a repository below it ("below"), the deny holds.
    aws = "/home/dev/.aws"
    start = aws if where == "at" else aws + "/sub"
    r = tb.dev("rm -rf %s && mkdir -p %s/.git && echo SECRET-KEY > %s/credentials && cp -r %s/.git %s/ 2>/dev/null; true"
               % (aws, start, aws, start, aws))
    assert r.rc == 0 and tb.root("cat %s/credentials" % aws).out.strip() == "SECRET-KEY", r
    try:
        r = tb.scudo(["-p", "git-project", "sh", "-c", "cat %s/credentials; echo PWNED > %s/credentials; "
                      "echo RAN" % (aws, aws)], cwd=start)
        assert "SECRET-KEY" not in r.out, r
        # from outside: the credentials as they were
        assert tb.root("cat %s/credentials" % aws).out.strip() == "SECRET-KEY", r
        # (~/.aws is a dot-directory of the home: since issue 27 the policy engine grants no
        # derived write there at all, before the deny is looked at; test-plan-harden covers
        # the deny put back)
        r = tb.scudo(["explain", "-p", "git-project", "true"], cwd=start)
        assert "never overrides a deny" in r.out or "a dot-directory of the home directory" in r.out, r
    finally:
        tb.root("rm -rf %s" % aws)
