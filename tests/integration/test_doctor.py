# SPDX-License-Identifier: MIT OR Apache-2.0
"""scudo doctor: the host checks and the live probe, and the faults it must name.

The faults are real: a drop-in on user@.service takes from dev's user manager what a
restricted host takes (mounting, making user namespaces), the manager is restarted with it, and
both a run and doctor are checked against it; the drop-in is removed and the manager restarted
again afterwards."""
import json
import shlex

import pytest

from conftest import BPFD_DROPIN, SCUDO, start_bpfd, stop_bpfd, wait_for

DROPIN_DIR = "/run/systemd/system/user@.service.d"


def doctor(tb, args="--json", cwd="~"):
    r = tb.dev("cd %s && %s doctor %s" % (cwd, shlex.quote(SCUDO), args), timeout=120)
    report = json.loads(r.out) if args.startswith("--json") and r.out.strip().startswith("{") else None
    return r, report


def check(report, name):
    found = [c for c in report["checks"] if c["name"] == name]
    return found[0] if found else None


def leftovers(tb):
    return tb.dev("ls -d ~/scudo-doctor-* /tmp/scudo-doctor-* 2>/dev/null").out.split()


def restart_user_manager(tb):
    assert tb.root("systemctl daemon-reload && systemctl restart user@%s.service" % tb.uid).rc == 0
    assert wait_for(lambda: tb.dev("systemctl --user is-system-running").out.strip() in ("running", "degraded"),
                    timeout=30), "dev's user manager did not come back"


@pytest.fixture
def bpfd(tb):
    start_bpfd(tb, "--exit-idle-time=2")
    yield
    stop_bpfd(tb)


@pytest.fixture
def restricted_manager(tb):
    """Yields a function that puts a [Service] drop-in on dev's user manager and restarts it."""
    def restrict(lines):
        r = tb.root("mkdir -p %s && printf '%%s\\n' '[Service]' %s > %s/scudo-test.conf"
                    % (DROPIN_DIR, " ".join(shlex.quote(l) for l in lines), DROPIN_DIR))
        assert r.rc == 0, r
        restart_user_manager(tb)
    yield restrict
    tb.root("rm -f %s/scudo-test.conf" % DROPIN_DIR)
    restart_user_manager(tb)


def test_doctor_probe_holds_on_the_testbed(tb, bpfd):
    r, report = doctor(tb)
    assert report, r
    # the testbed's user manager has no controllers: degraded, never "cannot confine"
    assert r.rc in (0, 1), r
    assert report["status"] == r.rc
    for name in ("probe: hidden file", "probe: read-only path", "probe: private /tmp", "probe: network"):
        c = check(report, name)
        assert c and c["state"] == "ok", (name, report)
    assert check(report, "user manager")["state"] == "ok"
    assert check(report, "network helper")["state"] == "ok"
    # no shim mounted and none on PATH: not in use, which is no fault
    assert check(report, "shim")["state"] == "ok", report
    # the probe cleans up after itself: its directory, its /tmp file, its unit
    assert leftovers(tb) == []
    assert wait_for(lambda: tb.user_units() == [], timeout=10), tb.user_units()


def test_doctor_text_names_each_state(tb, bpfd):
    r, _ = doctor(tb, args="")
    assert r.rc in (0, 1), r
    assert "probe: hidden file" in r.out and "refused" in r.out
    assert r.out.rstrip().splitlines()[-1] in ("can confine", "can confine, degraded")


def test_doctor_names_a_missing_controller(tb, bpfd):
    if "memory" in tb.root("cat /sys/fs/cgroup/user.slice/user-%s.slice/user@%s.service/cgroup.controllers"
                           % (tb.uid, tb.uid)).out.split():
        pytest.skip("this host delegates the memory controller to the user manager")
    tb.dev("mkdir -p ~/.config/scudo/config.d && cat > ~/.config/scudo/config.d/doctor-test.toml",
           input=b'[hungry]\nmatch = ["hungry"]\nunit.MemoryMax = "1G"\n')
    try:
        r, report = doctor(tb)
    finally:
        tb.dev("rm -f ~/.config/scudo/config.d/doctor-test.toml")
    c = check(report, "cgroup controllers")
    assert c["state"] == "degraded" and "memory" in c["detail"] and "MemoryMax=" in c["meaning"], report
    # the profiles in use that set such a limit are named
    assert "hungry" in c["meaning"], c
    assert r.rc == 1, r
    # and a run that asks for the limit is refused rather than run without it
    run = tb.scudo(["--property", "MemoryMax=1G", "true"])
    assert run.rc == 125 and "memory" in run.err, run


def test_doctor_without_the_helper(tb):
    stop_bpfd(tb)
    r, report = doctor(tb)
    c = check(report, "network helper")
    assert c["state"] == "degraded" and "exit 125" in c["meaning"], report
    assert check(report, "probe: network") is None
    assert check(report, "probe: hidden file")["state"] == "ok"
    assert r.rc == 1, r
    # what doctor says is what a run does: a profile with network rules is refused
    run = tb.scudo(["--no-network", "true"])
    assert run.rc == 125, run


@pytest.mark.parametrize("lines,cause", [
    (["SystemCallFilter=~mount move_mount open_tree fsopen fsmount fsconfig mount_setattr",
      "SystemCallErrorNumber=EPERM"], "mount"),
    (["RestrictNamespaces=~user"], "user namespace"),
], ids=["cannot-mount", "no-user-namespaces"])
def test_doctor_on_a_manager_that_cannot_confine(tb, restricted_manager, lines, cause):
    tb.root("echo secret-of-dev > /home/dev/.doctor-secret && chown dev /home/dev/.doctor-secret")
    try:
        restricted_manager(lines)
        # a run fails closed: 125, and the hidden file is not printed
        run = tb.scudo(["cat", "/home/dev/.doctor-secret"])
        assert run.rc == 125, run
        assert "secret-of-dev" not in run.out
        r, report = doctor(tb)
        assert r.rc == 2, r
        assert report["verdict"] == "cannot confine"
        probe = check(report, "probe")
        assert probe and probe["state"] == "missing", report
        assert "exit 125" in probe["detail"], probe
        r, _ = doctor(tb, args="")
        assert r.out.rstrip().splitlines()[-1] == "cannot confine", r
        assert leftovers(tb) == []
    finally:
        tb.root("rm -f /home/dev/.doctor-secret")


def test_doctor_refused_inside_a_sandbox(tb):
    r = tb.scudo(["sh", "-c", SCUDO + " doctor"])
    assert r.rc == 125 and "outside a sandbox" in r.err, r


def test_doctor_with_a_broken_helper(tb):
    """The helper's socket answers but its service cannot start (an edited unit): runs with
    network rules fail closed, and doctor still judges the filesystem and names the helper."""
    r = tb.root("""set -e
mkdir -p %(dir)s
printf '[Service]\\nExecStart=\\nExecStart=/bin/false\\n' > %(dropin)s
systemctl daemon-reload
systemctl reset-failed scudo-bpfd.socket scudo-bpfd.service 2>/dev/null || true
systemctl restart scudo-bpfd.socket
""" % {"dir": BPFD_DROPIN.rsplit("/", 1)[0], "dropin": BPFD_DROPIN})
    assert r.rc == 0, r
    try:
        run = tb.scudo(["--no-network", "true"])
        assert run.rc == 125, run
        r, report = doctor(tb)
        assert check(report, "probe: hidden file")["state"] == "ok", report
        # either the socket still answers and the probe with network rules fails, or the socket
        # gave up after the service failed and the helper does not answer: degraded either way
        net, helper = check(report, "probe: network"), check(report, "network helper")
        assert (net and net["state"] == "degraded" and "125" in net["detail"]) or \
            (helper["state"] == "degraded" and not net), report
        assert r.rc == 1, r
        assert leftovers(tb) == []
    finally:
        stop_bpfd(tb)
        tb.root("rm -f %s; systemctl daemon-reload; systemctl reset-failed 'scudo-bpfd*' 2>/dev/null; true"
                % BPFD_DROPIN)


def test_doctor_and_a_run_without_scudo_confine(tb):
    """A half-installed scudo (scudo-confine gone): a run fails with 125, never runs the command
    unconfined, and doctor names what is missing."""
    confine = tb.root("ls /usr/local/libexec/scudo/scudo-confine /usr/libexec/scudo/scudo-confine "
                      "2>/dev/null | head -1").out.strip()
    if not confine:
        pytest.skip("scudo-confine is not where an installation puts it")
    assert tb.root("mv %s %s.away" % (confine, confine)).rc == 0
    try:
        tb.root("echo secret-of-dev > /home/dev/.doctor-secret && chown dev /home/dev/.doctor-secret")
        run = tb.scudo(["cat", "/home/dev/.doctor-secret"])
        assert run.rc == 125 and "secret-of-dev" not in run.out, run
        r, report = doctor(tb)
        c = check(report, "installation")
        assert c and c["state"] == "missing" and "scudo-confine" in c["detail"], report
        assert r.rc == 2, r
    finally:
        tb.root("mv %s.away %s; rm -f /home/dev/.doctor-secret" % (confine, confine))
