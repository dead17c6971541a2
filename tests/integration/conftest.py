# SPDX-License-Identifier: MIT OR Apache-2.0
"""Fixtures for the integration tests.

Every test runs scudo as the unprivileged user 'dev' inside tools/testbed: a real systemd as
PID 1, dev's real user manager and D-Bus, the real kernel. Results are checked from outside
the sandbox (as root in the testbed, or from the host through the testbed's overlay).

Nothing runs from the checkout. The testbed's root is a throw-away overlay of /, and the
session's first step installs into it what the tests run: `tools/testbed install BUILD`
(`meson install`) puts scudo, scudo-confine, scudo-route, scudo-bpfd and its unit files where an
installation does (the build's prefix, /usr/local by default; `meson introspect --installed`
says where each went), and the helpers the tests run (tests/unit/test-net-client, the
scripts beside this file) are copied to HELPERS. A checkout under /tmp (which every sandbox
and scudo-bpfd's service replace with a private one) or /home (which ProtectHome= hides)
passes as one anywhere else does.

Tests hold on any machine of our kind or skip with the reason: what differs from one to
the next (the kernel's 32-bit system calls, Landlock's ABI, keyrings, TIOCSTI, io_uring,
dev's uid) is probed outside the sandbox first, never assumed; and a test waits for what it
needs (a listener, a unit, a pid file) rather than sleeping a guess of a busy machine's speed.

Environment:
  SCUDO_BUILD   the meson build directory holding the binaries to test (default: build)
  TESTBED_NAME  the testbed instance to use (default: scudo-it)
"""
import glob
import json
import os
import shlex
import subprocess
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.abspath(os.environ.get("SCUDO_BUILD", os.path.join(ROOT, "build")))
TESTBED = os.path.join(ROOT, "tools", "testbed")
NAME = os.environ.get("TESTBED_NAME", "scudo-it")
# Where the test helpers go inside the testbed: visible in every sandbox (read-only).
HELPERS = "/usr/local/libexec/scudo-tests"


def _installed():
    """{path in the build tree: path it is installed at}, from meson."""
    try:
        p = subprocess.run(["meson", "introspect", "--installed", BUILD], capture_output=True, timeout=60)
        found = json.loads(p.stdout) if p.returncode == 0 else {}
    except (OSError, ValueError, subprocess.SubprocessError):
        found = {}
    return {os.path.realpath(k): v for k, v in found.items()}


INSTALLED = _installed()


def built(rel):
    """The build tree's file REL (a path below BUILD), to check from the host that it exists."""
    return os.path.join(BUILD, rel)


def installed(rel):
    """Where the build's file REL is inside the testbed once installed (None: not installed)."""
    return INSTALLED.get(os.path.realpath(built(rel)))


def helper(name):
    """Where a test helper (a program of tests/unit, a script of this directory) is inside."""
    return os.path.join(HELPERS, name)


SCUDO = installed("scudo") or "/usr/local/bin/scudo"
CONFINE = installed("scudo-confine")
BPFD = installed("src/bpfd/scudo-bpfd")
BPFD_DROPIN = "/run/systemd/system/scudo-bpfd.service.d/tests.conf"
# the programs of tests/unit the tests run, and the scripts here that are not tests
HELPER_PROGRAMS = ["tests/unit/test-net-client"]
HELPER_SCRIPTS = sorted(f for f in glob.glob(os.path.join(HERE, "*.py"))
                        if not os.path.basename(f).startswith(("test_", "conftest")))


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    def __repr__(self):
        return "rc=%r out=%r err=%r" % (self.rc, self.out[-2000:], self.err[-2000:])


class Testbed:
    """Runs commands in the testbed, as root or as dev."""

    def __init__(self, name):
        self.name = name
        self.env = dict(os.environ, TESTBED_NAME=name)
        self.uid = None          # dev's, set once up: useradd picks the first free one
        self._landlock_abi = None

    def _run(self, mode, script, input=None, timeout=60, env=None):
        e = dict(self.env)
        if env:
            e.update(env)
        try:
            p = subprocess.run([TESTBED, mode, "bash", "-c", script], input=input,
                               capture_output=True, timeout=timeout, env=e)
        except subprocess.TimeoutExpired:
            # still a failure, but one that says what the testbed was busy with
            raise TimeoutError("%s: %r did not end within %d s; the testbed's jobs and journal then:\n%s"
                               % (mode, script[-300:], timeout, self.snapshot())) from None
        return Result(p.returncode, p.stdout.decode(errors="replace"),
                      p.stderr.decode(errors="replace"))

    def snapshot(self):
        """The jobs systemd is waiting on and the journal's last lines, for a report."""
        try:
            p = subprocess.run([TESTBED, "root", "bash", "-c",
                                "systemctl list-jobs --no-pager; journalctl -q --no-pager -o short-monotonic -n 80"],
                               capture_output=True, timeout=30, env=self.env)
            return p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            return "(no answer in 30 s either)"

    def root(self, script, **kw):
        return self._run("root", script, **kw)

    def dev(self, script, **kw):
        # For the ASan build: leaks are the unit tests' business; here a report would only
        # change the exit status the tests compare.
        return self._run("dev", "export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1; " + script, **kw)

    def scudo(self, args, cwd="~", input=None, timeout=60, extra_env=""):
        """Runs `scudo ARGS` as dev from `cwd`; args is a list (quoted here) or a string."""
        if not isinstance(args, str):
            args = " ".join(shlex.quote(a) for a in args)
        script = "cd %s && %s %s %s" % (cwd, extra_env, shlex.quote(SCUDO), args)
        return self.dev(script, input=input, timeout=timeout)

    def user_units(self, pattern="scudo-*"):
        """dev's units whose names match: the sandboxes and what runs for them, never the shim's
        own user unit (scudo-shim.service), which is no run's and lives as long as the session."""
        r = self.dev("systemctl --user list-units --all --plain --no-legend %s | awk '{print $1}'"
                     % shlex.quote(pattern))
        return [u for u in r.out.split() if u and u != "scudo-shim.service"]

    def scudo_cgroups(self):
        r = self.root("find /sys/fs/cgroup -type d -name '*scudo*' 2>/dev/null")
        return [c for c in r.out.split() if c]

    def landlock_abi(self):
        """The kernel's Landlock ABI as dev sees it outside any sandbox (< 1: none)."""
        if self._landlock_abi is None:
            # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
            r = self.dev("python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))'")
            self._landlock_abi = int(r.out.strip()) if r.rc == 0 and r.out.strip().lstrip("-").isdigit() else -1
        return self._landlock_abi

    def needs_landlock_scopes(self):
        """Skips a test of what scudo-confine's Landlock scope refuses (abstract unix sockets,
        signals to processes outside) on a kernel without it: scudo runs without the scope
        there (docs/internals.md), and a test of it would only show the kernel's age."""
        abi = self.landlock_abi()
        if abi < 6:
            pytest.skip("the kernel's Landlock has no scopes (ABI %d, scopes need 6, Linux 6.12)" % abi)


def start_bpfd(t, options):
    """(Re)starts the scudo-bpfd.socket meson installed, its service running `scudo-bpfd
    OPTIONS` through a drop-in: the installed unit's sandboxing (PrivateTmp= and the rest) is
    what the tests meet, as a user's would be."""
    r = t.root("""set -e
mkdir -p %(dir)s
printf '[Service]\\nExecStart=\\nExecStart=%%s\\n' %(cmd)s > %(dropin)s
systemctl daemon-reload
# the service first: one still running from the test before (its idle time not over) would make
# the socket refuse to start ("Socket service scudo-bpfd.service already active, refusing")
systemctl stop scudo-bpfd.socket scudo-bpfd.service
systemctl reset-failed scudo-bpfd.socket scudo-bpfd.service 2>/dev/null || true
systemctl start scudo-bpfd.socket
""" % {"dir": os.path.dirname(BPFD_DROPIN), "dropin": BPFD_DROPIN,
           "cmd": shlex.quote("%s %s" % (BPFD, options))})
    assert r.rc == 0, r


def stop_bpfd(t):
    t.root("systemctl stop scudo-bpfd.socket scudo-bpfd.service 2>/dev/null")


def install(t):
    """Installs the build and the test helpers into the testbed's own root."""
    up = subprocess.run([TESTBED, "install", BUILD], capture_output=True, env=t.env, timeout=300)
    if up.returncode != 0:
        pytest.fail("installing %s into the testbed failed: %s" % (BUILD, up.stderr.decode(errors="replace")))
    files = [built(p) for p in HELPER_PROGRAMS if os.path.exists(built(p))] + HELPER_SCRIPTS
    r = t.root("install -D -m 755 -t %s %s" % (HELPERS, " ".join(shlex.quote(f) for f in files)))
    if r.rc != 0:
        pytest.fail("installing the test helpers into the testbed failed: %r" % r)
    for path in (SCUDO, CONFINE):
        if not path or t.root("test -x %s" % shlex.quote(path)).rc != 0:
            pytest.fail("%s is not installed in the testbed (meson introspect --installed %s)" % (path, BUILD))


@pytest.fixture(scope="session")
def tb():
    if os.geteuid() != 0:
        pytest.skip("the testbed needs root")
    if not os.path.exists(built("scudo")):
        pytest.fail("no scudo binary at %s: build first" % built("scudo"))
    env = dict(os.environ, TESTBED_NAME=NAME)
    up = subprocess.run([TESTBED, "up"], capture_output=True, env=env, timeout=120)
    if up.returncode != 0:
        pytest.fail("testbed did not start: %s" % up.stderr.decode(errors="replace"))
    t = Testbed(NAME)
    install(t)
    t.uid = t.dev("id -u").out.strip()
    assert t.uid.isdigit(), "no uid for dev"
    yield t
    subprocess.run([TESTBED, "down"], capture_output=True, env=env, timeout=60)


@pytest.fixture
def work(tb):
    """A fresh project directory in dev's home, removed afterwards: ~/w-<id>."""
    d = "/home/dev/w-" + uuid.uuid4().hex[:8]
    tb.dev("mkdir -p %s" % d)
    yield d
    tb.root("rm -rf %s" % d)


def wait_for(pred, timeout=5.0, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()
