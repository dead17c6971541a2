# SPDX-License-Identifier: MIT OR Apache-2.0
"""The Debian package: built from this tree by tools/build-deb (lintian included), installed
with apt-get into a fresh testbed of its own, used from the installed files only, then purged,
and nothing of it left behind."""
import os
import shlex
import subprocess

import pytest

from conftest import NAME, ROOT, TESTBED, wait_for

DEB_DIR = os.path.join(ROOT, "build-deb")


def run(argv, env=None, timeout=900):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)


class Fresh:
    """A testbed of its own, without any scudo in it, and run as root or dev."""

    def __init__(self, name):
        self.env = dict(os.environ, TESTBED_NAME=name)

    def root(self, script):
        return run([TESTBED, "root", "bash", "-c", script], env=self.env, timeout=300)

    def dev(self, script):
        return run([TESTBED, "dev", "bash", "-c", script], env=self.env, timeout=300)


@pytest.fixture(scope="module")
def deb():
    if os.geteuid() != 0:
        pytest.skip("building and installing a package needs root")
    if run(["sh", "-c", "command -v dpkg-buildpackage || command -v apt-get"]).returncode != 0:
        pytest.skip("not a Debian system: no dpkg-buildpackage or apt-get")
    if os.environ.get("SCUDO_DEB"):     # a package built already, to test again
        return os.environ["SCUDO_DEB"]
    p = run([os.path.join(ROOT, "tools", "build-deb"), DEB_DIR], timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    debs = [l for l in p.stdout.splitlines() if l.endswith(".deb")]
    assert debs and os.path.exists(debs[-1]), p.stdout
    return debs[-1]


@pytest.fixture(scope="module")
def fresh(deb):
    t = Fresh(NAME + "-deb")
    up = run([TESTBED, "up"], env=t.env, timeout=180)
    assert up.returncode == 0, up.stderr
    # The testbed is an overlay of this machine: take away any scudo installed here by hand
    # (quickstart's /usr/local), so that only the package's files can answer.
    t.root("rm -rf /usr/local/bin/scudo /usr/local/libexec/scudo /usr/local/libexec/scudo-bpfd "
           "/usr/local/lib/systemd/system/scudo-bpfd.* /usr/local/share/scudo; systemctl daemon-reload")
    # A machine image built for containers may forbid maintainer scripts to start services
    # (policy-rc.d exiting 101); the testbed is a booted system, where they start.
    t.root("rm -f /usr/sbin/policy-rc.d")
    yield t
    run([TESTBED, "down"], env=t.env, timeout=120)


def test_package_installs_confines_and_purges_clean(deb, fresh):
    t = fresh
    r = t.root("DEBIAN_FRONTEND=noninteractive apt-get install -y %s" % shlex.quote(deb))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    files = t.root("dpkg -L scudo").stdout.split()
    for f in ("/usr/bin/scudo", "/usr/libexec/scudo/scudo-confine", "/usr/libexec/scudo/scudo-route",
              "/usr/libexec/scudo-bpfd",
              "/lib/systemd/system/scudo-bpfd.socket", "/usr/share/man/man8/scudo-bpfd.8.gz",
              "/usr/share/bash-completion/completions/scudo", "/usr/share/scudo/policies/default.toml",
              "/usr/share/doc/scudo/copyright"):
        assert f in files, (f, files)

    # the helper's socket is enabled and listening after the install
    assert t.root("systemctl is-enabled scudo-bpfd.socket").stdout.strip() == "enabled"
    assert wait_for(lambda: t.root("systemctl is-active scudo-bpfd.socket").stdout.strip() == "active", 10)

    # a confined command, from the installed files only: a hidden key, and network rules
    t.root("install -d -o dev -m 700 /home/dev/.ssh && echo key-of-dev > /home/dev/.ssh/id_pkg && "
           "chown dev /home/dev/.ssh/id_pkg")
    r = t.dev("/usr/bin/scudo cat /home/dev/.ssh/id_pkg")
    assert r.returncode != 0 and "key-of-dev" not in r.stdout, r
    assert t.root("cat /home/dev/.ssh/id_pkg").stdout.strip() == "key-of-dev"
    r = t.dev("/usr/bin/scudo --no-network true")
    assert r.returncode == 0, r
    r = t.dev("/usr/bin/scudo doctor")
    assert r.returncode in (0, 1), r
    assert "cannot confine" not in r.stdout

    # purge: no file, unit, socket, enablement or pinned object left
    r = t.root("DEBIAN_FRONTEND=noninteractive apt-get purge -y scudo")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    left = t.root("for f in %s; do [ -e \"$f\" ] && [ ! -d \"$f\" ] && echo \"$f\"; done; true"
                  % " ".join(shlex.quote(f) for f in files)).stdout.split()
    assert left == [], left
    assert t.root("systemctl list-unit-files --no-legend 'scudo*'").stdout.strip() == ""
    assert t.root("systemctl list-units --all --no-legend 'scudo*'").stdout.strip() == ""
    assert t.root("ls /run/scudo-bpfd.sock /etc/scudo /etc/apparmor.d/scudo "
                  "/etc/systemd/system/sockets.target.wants/scudo-bpfd.socket 2>/dev/null").stdout == ""
    assert t.root("ls /sys/fs/bpf 2>/dev/null | grep -i scudo").stdout == ""
    assert t.root("dpkg -s scudo 2>&1").returncode != 0
