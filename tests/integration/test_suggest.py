# SPDX-License-Identifier: MIT OR Apache-2.0
"""scudo suggest: a run refused a write and a host; the snippet it prints, put in a trusted
project file, lets the same run succeed. Unused grants are listed, nothing is applied."""
import json
import os
import shlex
import uuid

import pytest

from conftest import SCUDO, built, start_bpfd, stop_bpfd, wait_for
# the helper with the test DNS server (127.0.0.153, the resolver of /etc/resolv.conf), and the
# listeners, of the network tests
from test_network import PROBE, RESOLVER, bpfd, clear_dns_log, dns_peers, listen, ntb  # noqa: F401

pytestmark = pytest.mark.skipif(not os.path.exists(built("src/bpfd/scudo-bpfd"))
                                or not os.path.exists(built("bpf/scudo-files.skel.h")),
                                reason="scudo-bpfd or its file reporter not built (-Dbpf=enabled, x86-64)")


@pytest.fixture(scope="module")
def helper(tb):
    start_bpfd(tb, "--exit-idle-time=5")
    yield tb
    stop_bpfd(tb)


def test_suggestion_lets_the_same_run_succeed(helper, work):
    t = helper
    other = "/home/dev/out-" + uuid.uuid4().hex[:6]     # outside the project: hidden by the default
    port = 8300 + int(uuid.uuid4().hex[:2], 16)
    t.dev("mkdir -p %s %s/cache" % (other, work))
    listener = t.dev("setsid python3 -c 'import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, "
                     "socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.3\", %d)); s.listen(); time.sleep(60)' "
                     ">/dev/null 2>&1 </dev/null & echo $!" % port).out.strip()
    assert wait_for(lambda: t.root("ss -Hltn src 127.0.0.3:%d" % port).out.strip() != "", timeout=30)
    probe = ("(echo data > %s/file); w=$?; python3 -c 'import socket; socket.create_connection((\"127.0.0.3\", %d), 2)'; "
             "n=$?; [ $w = 0 ] && [ $n = 0 ] && echo all-ok" % (other, port))
    args = ["--net-allow", "127.0.0.2:9", "--fs-write", work + "/cache", "--", "sh", "-c", probe]
    report = "/tmp/suggest-%s.json" % uuid.uuid4().hex[:6]
    try:
        r = t.scudo(["--report-json", report] + args, cwd=work)
        assert r.rc != 0 and "all-ok" not in r.out, r
        s = t.scudo(["suggest", report], cwd=work)
        assert s.rc == 0, s
        assert "[sandbox]" in s.out and "%s/.scudo.toml" % work in s.out, s
        assert '"~/%s",' % os.path.basename(other) in s.out, s
        assert '"127.0.0.3:%d",' % port in s.out, s
        assert 'filesystem.write "~/%s/cache" at --fs-write: nothing written there' % os.path.basename(work) in s.out, s
        assert t.dev("test -e %s/.scudo.toml" % work).rc != 0, "suggest applied something"

        # the snippet as it is, in a project file, trusted
        snippet = "\n".join(line for line in s.out.splitlines() if not line.startswith("# Granted")
                            and not line.startswith("#   "))
        r = t.dev("cat > %s/.scudo.toml" % work, input=snippet.encode())
        assert r.rc == 0, r
        r = t.dev("cd %s && %s trust --yes %s/.scudo.toml" % (work, shlex.quote(SCUDO), work))
        assert r.rc == 0, r
        r = t.scudo(args, cwd=work)
        assert r.rc == 0 and "all-ok" in r.out, r
        assert t.dev("cat %s/file" % other).out.strip() == "data"
    finally:
        t.dev("kill %s 2>/dev/null; rm -rf %s %s" % (listener, other, report))


def test_suggest_refuses_what_is_not_a_report(helper, work):
    t = helper
    t.dev("echo 'not json' > %s/bad.json" % work)
    r = t.scudo(["suggest", work + "/bad.json"], cwd=work)
    assert r.rc == 1 and "bad.json:1: not a record of 'scudo --report-json'" in r.err, r


def test_suggest_names_the_allow_rules_never_reached(bpfd, listen, work):
    t = bpfd
    ln = listen("tcp:127.0.0.2:7501", "tcp:127.0.0.4:7502", "tcp:127.0.0.5:7503")
    allow = ["127.0.0.2:7501",          # connected to by address
             "127.0.0.3:7501",          # never
             "allowed.test:7502",       # looked up (a loopback resolver: the fast path, in the kernel), connected
             "other.test:7503",         # looked up over TCP (through the helper's proxy), connected
             "blocked.test"]            # never looked up
    actions = ["tcp:127.0.0.2:7501", "dnsvia:%s:allowed.test" % RESOLVER, "tcp:127.0.0.4:7502",
               "dnstcp:%s:other.test" % RESOLVER, "tcp:127.0.0.5:7503"]
    args = []
    for a in allow:
        args += ["--net-allow", a]
    report = "/tmp/suggest-%s.json" % uuid.uuid4().hex[:6]
    clear_dns_log(t)
    try:
        r = t.scudo(["--report-json", report] + args + ["--", "python3", PROBE] + actions, cwd=work)
        results = dict(line.split(" ", 1) for line in r.out.splitlines() if " " in line)
        for a in actions:
            assert results.get(a, "").startswith("ok"), r
        # allowed.test went the fast path: from the sandbox's own socket, not the proxy's
        via = results["dnsvia:%s:allowed.test" % RESOLVER]
        assert via.rpartition("port=")[2] in dns_peers(t, "allowed.test"), (via, r)
        assert ln.arrived() == ["tcp 127.0.0.2 7501", "tcp 127.0.0.4 7502", "tcp 127.0.0.5 7503"], r
        usage = [json.loads(line) for line in t.dev("cat %s" % report).out.splitlines()
                 if '"kind":"usage"' in line]
        assert len(usage) == 1 and sorted(usage[0].get("reached", [])) == sorted(
            ["127.0.0.2:7501", "allowed.test:7502", "other.test:7503"]), usage

        s = t.scudo(["suggest", report], cwd=work)
        assert s.rc == 0, s
        never = [line for line in s.out.splitlines() if line.startswith("#   network.allow ")]
        assert never == ['#   network.allow "127.0.0.3:7501" at --net-allow',
                         '#   network.allow "blocked.test" at --net-allow'], s
        assert "not recorded" not in s.out, s
    finally:
        t.dev("rm -f %s" % report)
