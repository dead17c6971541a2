# SPDX-License-Identifier: MIT OR Apache-2.0
"""A refused name answered so that every stub resolver takes it as final (docs/network.md,
"Refused names"): a getaddrinfo() client linked with glibc and one linked statically with musl
(which ignores REFUSED and waits out its timeout, 5 s) each give up on it at once, and the
report still says refused. Runs through scudo against the testbed's DNS server."""
import os
import shutil
import subprocess

import pytest

from conftest import HELPERS, SCUDO, built
from test_network import bpfd, ntb  # noqa: F401  (the helper and the test DNS server)

HERE = os.path.dirname(os.path.abspath(__file__))


def build_client(compiler, name, static):
    if not shutil.which(compiler):
        return None
    out = built("tests/integration/" + name)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = [compiler, "-O2", "-o", out, os.path.join(HERE, "dns_lookup.c")] + (["-static"] if static else [])
    r = subprocess.run(cmd, capture_output=True, timeout=120)
    assert r.returncode == 0, r
    return out


@pytest.mark.parametrize("libc", ["glibc", "musl"])
def test_refused_name_is_final_at_once(bpfd, libc):
    t = bpfd
    compiler = {"glibc": "gcc", "musl": "musl-gcc"}[libc]
    client = build_client(compiler, "dns-lookup-" + libc, static=libc == "musl")
    if client is None:
        pytest.skip("no %s here (tools/install-deps installs musl-tools)" % compiler)
    r = t.root("install -D -m 755 -t %s %s" % (HELPERS, client))
    assert r.rc == 0, r
    inside = os.path.join(HELPERS, os.path.basename(client))
    r = t.scudo(["--net-allow", "allowed.test", "--", inside, "blocked.test"])
    assert r.rc == 0, r
    # EAI_NONAME (NXDOMAIN); glibc may stop even earlier, at send(), on the fast path
    assert "lookup=EAI_NONAME" in r.out or (libc == "glibc" and "lookup=" in r.out and "lookup=ok" not in r.out), r
    ms = int(r.out.rpartition("ms=")[2].split()[0])
    assert ms <= 100, r
    assert "dns: refused name 'blocked.test'" in r.err, r
