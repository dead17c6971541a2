# SPDX-License-Identifier: MIT OR Apache-2.0
"""Fixtures for the integration tests.

Every test runs scudo as the unprivileged user 'dev' inside tools/testbed: a real systemd as
PID 1, dev's real user manager and D-Bus, the real kernel. Results are checked from outside
the sandbox (as root in the testbed, or from the host through the testbed's overlay).

Environment:
  SCUDO_BUILD   the meson build directory holding the binaries to test (default: build)
  TESTBED_NAME  the testbed instance to use (default: scudo-it)
"""
import os
import shlex
import subprocess
import time
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("SCUDO_BUILD", os.path.join(ROOT, "build")))
TESTBED = os.path.join(ROOT, "tools", "testbed")
NAME = os.environ.get("TESTBED_NAME", "scudo-it")
SCUDO = os.path.join(BUILD, "scudo")


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

    def _run(self, mode, script, input=None, timeout=60, env=None):
        e = dict(self.env)
        if env:
            e.update(env)
        p = subprocess.run([TESTBED, mode, "bash", "-c", script], input=input,
                           capture_output=True, timeout=timeout, env=e)
        return Result(p.returncode, p.stdout.decode(errors="replace"),
                      p.stderr.decode(errors="replace"))

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
        r = self.dev("systemctl --user list-units --all --plain --no-legend %s | awk '{print $1}'"
                     % shlex.quote(pattern))
        return [u for u in r.out.split() if u]

    def scudo_cgroups(self):
        r = self.root("find /sys/fs/cgroup -type d -name '*scudo*' 2>/dev/null")
        return [c for c in r.out.split() if c]


@pytest.fixture(scope="session")
def tb():
    if os.geteuid() != 0:
        pytest.skip("the testbed needs root")
    if not os.path.exists(SCUDO):
        pytest.fail("no scudo binary at %s: build first" % SCUDO)
    env = dict(os.environ, TESTBED_NAME=NAME)
    up = subprocess.run([TESTBED, "up"], capture_output=True, env=env, timeout=120)
    if up.returncode != 0:
        pytest.fail("testbed did not start: %s" % up.stderr.decode(errors="replace"))
    t = Testbed(NAME)
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
