# SPDX-License-Identifier: MIT OR Apache-2.0
"""Network filtering: scudo-bpfd, its BPF programs and its DNS proxy, in the testbed.

The helper runs as the socket-activated system service `meson install` put in the testbed
(conftest.py), with a drop-in for the options of the tests. A test DNS server runs as root on 127.0.0.153 and /etc/resolv.conf points at it. Each test
restricts a fresh transient slice, runs a probe (net_probe.py) in a service inside it, and
checks from outside: a root listener records which connections and datagrams arrived, the
DNS server logs which names reached it, and the session's reports are read from stderr.

Until scudo's runner drives the helper, the session is opened by tests/unit/test-net-client,
which calls the same net_session_open() the runner will, and the service is started with the
sandbox properties the runner always sets. With SCUDO_NET_VIA_SCUDO=1 the probes run through
`scudo --net-allow ... -- CMD` instead.
"""
import os
import re
import shlex
import time
import uuid

import pytest

from conftest import BPFD, SCUDO, built, helper, start_bpfd, wait_for

# the paths inside the testbed, where conftest.py installed them
CLIENT = helper("test-net-client")
PROBE = helper("net_probe.py")
LISTEN = helper("net_listen.py")
DNS_SERVER = helper("net_dns_server.py")
RESOLVER = "127.0.0.153"
DNS_LOG = "/tmp/net-dns.log"
VIA_SCUDO = os.environ.get("SCUDO_NET_VIA_SCUDO") == "1"
ZONE = [
    "allowed.test=127.0.0.4",
    "other.test=127.0.0.5",
    "blocked.test=127.0.0.6",
    "v6.test=::1",
    "short.test=127.0.0.7/1",
    "alias.test=CNAME:target.test",
    "target.test=127.0.0.8",
    "a.wild.test=127.0.0.9",
    "bad.wild.test=127.0.0.10",
]
SANDBOX_PROPS = ["PrivateUsers=yes", "ProtectControlGroups=yes", "NoNewPrivileges=yes",
                 "InaccessiblePaths=-/run/scudo-bpfd.sock"]


@pytest.fixture(scope="module")
def ntb(request):
    if not os.path.exists(built("src/bpfd/scudo-bpfd")) or not os.path.exists(built("tests/unit/test-net-client")):
        pytest.skip("scudo-bpfd or test-net-client not built (meson -Dbpf=enabled)")
    return request.getfixturevalue("tb")


def install_helper(t, extra=""):
    """The installed service, with the tests' options: verbose, idle after 2 s, no grace
    for expired DNS answers."""
    start_bpfd(t, "-v --exit-idle-time=2 --dns-grace=0 " + extra)


@pytest.fixture(scope="module")
def bpfd(ntb):
    t = ntb
    install_helper(t)
    r = t.root("""set -e
cp -P /etc/resolv.conf /tmp/net-resolv.conf.orig 2>/dev/null || true
rm -f /etc/resolv.conf; echo 'nameserver %(resolver)s' > /etc/resolv.conf
id other >/dev/null 2>&1 || useradd -m other
rm -f %(log)s; touch %(log)s; chmod 666 %(log)s
setsid python3 %(server)s --listen %(resolver)s --log %(log)s --timeout 3600 %(zone)s \
    >/dev/null 2>&1 < /dev/null & echo $! > /tmp/net-dns.pid
""" % {"resolver": RESOLVER, "log": DNS_LOG, "server": DNS_SERVER, "zone": " ".join(ZONE)})
    assert r.rc == 0, r
    assert wait_for(lambda: t.root("ss -lun | grep -q %s:53" % RESOLVER).rc == 0, timeout=10)
    time.sleep(0.5)
    assert t.root("kill -0 $(cat /tmp/net-dns.pid)").rc == 0, "the test DNS server did not start"
    yield t
    t.root("kill $(cat /tmp/net-dns.pid) 2>/dev/null; systemctl stop scudo-bpfd.socket scudo-bpfd.service; "
           "[ -e /tmp/net-resolv.conf.orig ] && rm -f /etc/resolv.conf && mv /tmp/net-resolv.conf.orig /etc/resolv.conf")


class Listener:
    def __init__(self, t, specs):
        self.t = t
        self.dir = "/tmp/nl-" + uuid.uuid4().hex[:8]
        r = t.root("mkdir -p %s; setsid python3 %s --log %s/log --timeout 120 %s >/dev/null 2>&1 "
                   "</dev/null & echo $! > %s/pid" % (self.dir, LISTEN, self.dir, " ".join(specs), self.dir))
        assert r.rc == 0, r
        assert wait_for(lambda: t.root("test -e %s/log.ready" % self.dir).rc == 0, timeout=10)

    def arrived(self, settle=0.3):
        time.sleep(settle)
        r = self.t.root("cat %s/log 2>/dev/null" % self.dir)
        return sorted(set(line for line in r.out.splitlines() if line))

    def stop(self):
        self.t.root("kill $(cat %s/pid) 2>/dev/null; rm -rf %s" % (self.dir, self.dir))


@pytest.fixture
def listen(bpfd):
    made = []

    def start(*specs):
        listener = Listener(bpfd, specs)
        made.append(listener)
        return listener
    yield start
    for listener in made:
        listener.stop()


class Run:
    def __init__(self, out):
        self.raw = out
        sections = {}
        current = None
        for line in out.splitlines():
            m = re.match(r"^=== (\w+)$", line)
            if m:
                current = m.group(1)
                sections[current] = []
            elif current:
                sections[current].append(line)
        self.client = sections.get("client", [])
        self.reports = sections.get("reports", [])
        self.results = {}
        for line in sections.get("probe", []):
            action, _, rest = line.partition(" ")
            self.results[action] = rest

    def ok(self, action):
        return self.results.get(action, "").startswith("ok")

    def err(self, action):
        return self.results.get(action, "").partition("err ")[2]

    def detail(self, action):
        return self.results.get(action, "").partition(" ")[2]

    def __repr__(self):
        return self.raw[-3000:]


def client_args(allow=(), deny=(), dns=None, log_target=None, report=None):
    args = []
    for a in allow:
        args += ["--allow", a]
    for d in deny:
        args += ["--deny", d]
    if dns:
        args += ["--dns", dns]
    if log_target:
        args += ["--log-target", log_target]
    if report:
        args += ["--report", report]
    return " ".join(shlex.quote(a) for a in args)


def sandboxed(t, actions, allow=(), deny=(), dns=None, log_target=None, report=None, between="",
              props=SANDBOX_PROPS, socket=None):
    """Restricts a new slice, runs the probe in it, and returns what happened."""
    if VIA_SCUDO:
        return via_scudo(t, actions, allow, deny, dns)
    sid = uuid.uuid4().hex[:10]
    unit = "app-scudo_t%s.slice" % sid
    d = "/tmp/ns-" + sid
    probe = " ".join(shlex.quote(a) for a in actions)
    run_props = " ".join("-p " + shlex.quote(p) for p in props)
    script = r"""
set -u
D=%(d)s; mkdir -p $D; mkfifo $D/in
busctl --user call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
    org.freedesktop.systemd1.Manager StartTransientUnit 'ssa(sv)a(sa(sv))' %(unit)s fail 0 0 >/dev/null
CG=
for i in $(seq 100); do
    CG=$(systemctl --user show -p ControlGroup --value %(unit)s)
    [ -n "$CG" ] && [ -d /sys/fs/cgroup$CG ] && break; sleep 0.05
done
%(env)s %(client)s "$CG" %(args)s < $D/in > $D/out 2> $D/err &
exec 3> $D/in
for i in $(seq 200); do grep -qE '^(ready|error)' $D/out && break; sleep 0.05; done
echo "=== client"; cat $D/out
if grep -q '^ready' $D/out; then
    %(between)s
    echo "=== probe"
    systemd-run --user -q --wait --pipe --slice=%(unit)s %(props)s python3 %(probe_py)s %(probe)s
fi
exec 3>&-
wait
echo "=== reports"; cat $D/err
systemctl --user stop %(unit)s
rm -rf $D
""" % {"d": d, "unit": unit, "client": CLIENT,
       "env": "SCUDO_BPFD_SOCKET=" + shlex.quote(socket) if socket else "", "args": client_args(allow, deny, dns, log_target, report),
       "between": between, "props": run_props, "probe_py": PROBE, "probe": probe}
    r = t.dev(script, timeout=90)
    return Run(r.out + "\n" + r.err)


def via_scudo(t, actions, allow, deny, dns):
    args = []
    for a in allow:
        args += ["--net-allow", a]
    for d in deny:
        args += ["--net-deny", d]
    args += ["--", "python3", PROBE] + list(actions)
    r = t.scudo(args)
    out = "=== client\nready\n=== probe\n" + r.out + "\n=== reports\n" + r.err
    return Run(out)


def dns_log(t):
    return [line for line in t.root("cat %s" % DNS_LOG).out.splitlines() if line]


def clear_dns_log(t):
    t.root(": > %s" % DNS_LOG)


# --- connections ------------------------------------------------------------------------

def test_tcp_allowed_and_refused(bpfd, listen):
    ln = listen("tcp:127.0.0.2:7001", "tcp:127.0.0.2:7002", "tcp:127.0.0.3:7001")
    r = sandboxed(bpfd, ["tcp:127.0.0.2:7001", "tcp:127.0.0.2:7002", "tcp:127.0.0.3:7001"],
                  allow=["127.0.0.2:7001"])
    assert r.client and r.client[0].startswith("ready"), r
    assert r.ok("tcp:127.0.0.2:7001"), r
    assert r.err("tcp:127.0.0.2:7002") == "EPERM", r
    assert r.err("tcp:127.0.0.3:7001") == "EPERM", r
    assert ln.arrived() == ["tcp 127.0.0.2 7001"]
    reports = "\n".join(r.reports)
    assert "refused connection to 127.0.0.3:7001 (tcp)" in reports, r
    assert "refused connection to 127.0.0.2:7002 (tcp)" in reports, r
    assert re.search(r"by pid \d+ \(python3\)", reports), r


def test_udp_allowed_and_refused(bpfd, listen):
    ln = listen("udp:127.0.0.2:7101", "udp:127.0.0.3:7101")
    r = sandboxed(bpfd, ["udp:127.0.0.2:7101", "udp:127.0.0.3:7101", "udpc:127.0.0.2:7101", "udpc:127.0.0.3:7101"],
                  allow=["127.0.0.2:7101"])
    assert r.ok("udp:127.0.0.2:7101") and r.ok("udpc:127.0.0.2:7101"), r
    assert r.err("udp:127.0.0.3:7101") == "EPERM", r
    assert r.err("udpc:127.0.0.3:7101") == "EPERM", r
    assert ln.arrived() == ["udp 127.0.0.2 7101"]
    reports = "\n".join(r.reports)
    assert "refused datagram to 127.0.0.3:7101 (udp)" in reports, r
    assert "refused connection to 127.0.0.3:7101 (udp)" in reports, r


def test_ipv6_and_v4_mapped(bpfd, listen):
    ln = listen("tcp:[::1]:7201", "tcp:[::1]:7202", "tcp:127.0.0.2:7203", "tcp:127.0.0.3:7203",
                "udp:[::1]:7204")
    r = sandboxed(bpfd, ["tcp:[::1]:7201", "tcp:[::1]:7202", "tcp:[::ffff:127.0.0.2]:7203",
                         "tcp:[::ffff:127.0.0.3]:7203", "udp:[::1]:7204", "udp:[::1]:7205"],
                  allow=["[::1]:7201", "127.0.0.2:7203", "[::1]/128:7204"])
    assert r.ok("tcp:[::1]:7201"), r
    assert r.err("tcp:[::1]:7202") == "EPERM", r
    # an IPv4 rule covers an AF_INET6 socket reaching the address v4-mapped, and the
    # v4-mapped form is no way around a refusal
    assert r.ok("tcp:[::ffff:127.0.0.2]:7203"), r
    assert r.err("tcp:[::ffff:127.0.0.3]:7203") == "EPERM", r
    assert r.ok("udp:[::1]:7204"), r
    assert r.err("udp:[::1]:7205") == "EPERM", r
    assert ln.arrived() == ["tcp 127.0.0.2 7203", "tcp ::1 7201", "udp ::1 7204"]
    assert "refused connection to [::1]:7202 (tcp)" in "\n".join(r.reports), r


def test_cidr_and_deny_beats_allow(bpfd, listen):
    ln = listen("tcp:127.0.1.5:7401", "tcp:127.0.1.200:7401", "tcp:127.0.2.1:7401",
                "tcp:127.0.3.1:7402", "tcp:127.0.3.2:7402")
    r = sandboxed(bpfd, ["tcp:127.0.1.5:7401", "tcp:127.0.1.200:7401", "tcp:127.0.2.1:7401",
                         "tcp:127.0.3.1:7402", "tcp:127.0.3.2:7402"],
                  allow=["127.0.1.0/24:7401", ":7402"], deny=["127.0.1.128/25", "127.0.3.2"])
    assert r.ok("tcp:127.0.1.5:7401"), r
    assert r.err("tcp:127.0.1.200:7401") == "EPERM", r      # in the allowed /24, but denied
    assert r.err("tcp:127.0.2.1:7401") == "EPERM", r        # outside the /24
    assert r.ok("tcp:127.0.3.1:7402"), r                    # any host on :7402
    assert r.err("tcp:127.0.3.2:7402") == "EPERM", r        # ... but not a denied one
    assert ln.arrived() == ["tcp 127.0.1.5 7401", "tcp 127.0.3.1 7402"]


def test_other_socket_kinds_refused(bpfd):
    r = sandboxed(bpfd, ["icmp"], allow=[":443"])
    assert r.err("icmp") in ("EPERM", "EACCES"), r


# --- DNS ----------------------------------------------------------------------------------

def test_dns_allowed_name_answered_others_refused(bpfd, listen):
    clear_dns_log(bpfd)
    r = sandboxed(bpfd, ["resolve:allowed.test", "resolve:blocked.test", "resolve:v6.test", "resolve:alias.test"],
                  allow=["allowed.test:7301", "v6.test", "alias.test"])
    assert r.client[0].startswith("ready 127.53."), r
    assert r.detail("resolve:allowed.test") == "127.0.0.4", r
    assert r.detail("resolve:v6.test") == "::1", r
    assert r.detail("resolve:alias.test") == "127.0.0.8", r
    assert r.err("resolve:blocked.test"), r
    log = dns_log(bpfd)
    assert any("allowed.test" in line for line in log), log
    assert not any("blocked.test" in line for line in log), log   # never left the proxy
    assert "dns: refused name 'blocked.test'" in "\n".join(r.reports), r


def test_name_reachable_only_after_resolution(bpfd, listen):
    ln = listen("tcp:127.0.0.4:7301", "tcp:127.0.0.4:7302", "tcp:127.0.0.8:7303")
    r = sandboxed(bpfd, ["tcp:127.0.0.4:7301", "resolve:allowed.test", "tcp:127.0.0.4:7301",
                         "tcp:127.0.0.4:7302", "tcp:127.0.0.8:7303", "resolve:alias.test", "tcp:127.0.0.8:7303"],
                  allow=["allowed.test:7301", "alias.test:7303"])
    # the probe prints one line per action; a repeated action keeps the last result, so
    # look at the raw order
    probe = [line for line in r.raw.splitlines() if line.startswith(("tcp:", "resolve:"))]
    assert probe[0] == "tcp:127.0.0.4:7301 err EPERM", r
    assert probe[1] == "resolve:allowed.test ok 127.0.0.4", r
    assert probe[2] == "tcp:127.0.0.4:7301 ok", r
    assert probe[3] == "tcp:127.0.0.4:7302 err EPERM", r     # the rule's port only
    assert probe[4] == "tcp:127.0.0.8:7303 err EPERM", r
    assert probe[6] == "tcp:127.0.0.8:7303 ok", r             # through the CNAME
    assert ln.arrived() == ["tcp 127.0.0.4 7301", "tcp 127.0.0.8 7303"]


def test_dns_wildcards_and_denied_names(bpfd):
    clear_dns_log(bpfd)
    r = sandboxed(bpfd, ["resolve:a.wild.test", "resolve:bad.wild.test", "resolve:wild.test"],
                  allow=["*.wild.test"], deny=["bad.wild.test"])
    assert r.detail("resolve:a.wild.test") == "127.0.0.9", r
    assert r.err("resolve:bad.wild.test"), r                 # deny beats allow for names too
    assert r.err("resolve:wild.test"), r                     # *.x does not cover x itself
    assert not any("bad.wild.test" in line for line in dns_log(bpfd))


def test_dns_replies_come_from_the_server_asked(bpfd):
    # Nothing listens on 10.255.255.53 or 2001:db8::53 and there is no route: the answers
    # come from the sandbox's proxy, shown as the server that was asked.
    r = sandboxed(bpfd, ["dnsudp:10.255.255.53:allowed.test", "dnstcp:10.255.255.53:allowed.test",
                         "dnsudp:[2001:db8::53]:allowed.test", "dnstcp:[2001:db8::53]:allowed.test",
                         "dnsudp:127.0.0.1:blocked.test"],
                  allow=["allowed.test"])
    assert r.detail("dnsudp:10.255.255.53:allowed.test") == "rcode=0 from=10.255.255.53:53", r
    assert r.detail("dnstcp:10.255.255.53:allowed.test") == "rcode=0 peer=10.255.255.53:53", r
    assert r.detail("dnsudp:[2001:db8::53]:allowed.test") == "rcode=0 from=[2001:db8::53]:53", r
    assert r.detail("dnstcp:[2001:db8::53]:allowed.test") == "rcode=0 peer=[2001:db8::53]:53", r
    assert r.detail("dnsudp:127.0.0.1:blocked.test") == "rcode=3 from=127.0.0.1:53", r   # NXDOMAIN


# --- DNS: the fast path -------------------------------------------------------------------
# resolv.conf names 127.0.0.153, a resolver on this host's loopback, so UDP queries to it go
# there as they are: BPF programs read each query and each answer (scudo-net.bpf.c). What
# they leave to the helper is answered from 127.0.0.153's address too.

def dns_peers(t, name):
    """The ports the DNS server saw UDP queries for `name` come from."""
    ports = []
    for line in dns_log(t):
        f = line.split()
        if len(f) >= 4 and f[0] == "udp" and f[1].lower() == name:
            ports.append(f[3].rpartition(":")[2])
    return ports


def test_dns_fast_path_goes_straight_to_the_resolver(bpfd, listen):
    ln = listen("tcp:127.0.0.4:7351", "tcp:127.0.0.4:7352")
    clear_dns_log(bpfd)
    r = sandboxed(bpfd, ["dnsvia:127.0.0.153:allowed.test", "tcp:127.0.0.4:7351", "tcp:127.0.0.4:7352",
                         "dnsvia:[::ffff:127.0.0.153]:allowed.test", "dnsvia:127.0.0.153:blocked.test"],
                  allow=["allowed.test:7351"])
    d = r.detail("dnsvia:127.0.0.153:allowed.test")
    assert d.startswith("rcode=0 from=127.0.0.153:53 port="), r
    # the query reached the resolver from the sandbox's own socket, not from the proxy's
    assert d.rpartition("port=")[2] in dns_peers(bpfd, "allowed.test"), (d, dns_log(bpfd))
    assert r.ok("tcp:127.0.0.4:7351"), r                    # learned from the answer, in the kernel
    assert r.err("tcp:127.0.0.4:7352") == "EPERM", r        # the rule's port only
    # an AF_INET6 socket asking v4-mapped sends IPv4 datagrams: the same path
    d6 = r.detail("dnsvia:[::ffff:127.0.0.153]:allowed.test")
    assert d6.startswith("rcode=0 from=[::ffff:127.0.0.153]:53 port="), r
    assert d6.rpartition("port=")[2] in dns_peers(bpfd, "allowed.test"), (d6, dns_log(bpfd))
    # a refused name never reaches the resolver; its NXDOMAIN comes as if from it
    assert r.detail("dnsvia:127.0.0.153:blocked.test").startswith("rcode=3 from=127.0.0.153:53 "), r
    assert not any("blocked.test" in line for line in dns_log(bpfd))
    assert re.search(r"dns: refused name 'blocked.test' \(A\) by pid \d+ \(python3\)", "\n".join(r.reports)), r
    assert ln.arrived() == ["tcp 127.0.0.4 7351"]


@pytest.fixture
def plain_resolver(bpfd):
    """A second test DNS server, on 127.0.0.155, that writes every name in its answers in
    full, which the BPF programs leave to the helper; resolv.conf points at it for the test."""
    t = bpfd
    r = t.root("""set -e
setsid python3 %(server)s --listen 127.0.0.155 --no-compress --log %(log)s --timeout 120 %(zone)s \
    >/dev/null 2>&1 < /dev/null & echo $! > /tmp/net-dns-plain.pid
cp /etc/resolv.conf /tmp/net-dns-plain.resolv; echo 'nameserver 127.0.0.155' > /etc/resolv.conf
""" % {"server": DNS_SERVER, "log": DNS_LOG, "zone": " ".join(ZONE)})
    assert r.rc == 0, r
    assert wait_for(lambda: t.root("ss -lun | grep -q 127.0.0.155:53").rc == 0, timeout=10)
    yield
    t.root("kill $(cat /tmp/net-dns-plain.pid); cat /tmp/net-dns-plain.resolv > /etc/resolv.conf; "
           "rm -f /tmp/net-dns-plain.*")


def test_dns_fast_path_leaves_odd_answers_to_the_helper(bpfd, listen, plain_resolver):
    ln = listen("tcp:127.0.0.8:7361")
    clear_dns_log(bpfd)
    r = sandboxed(bpfd, ["tcp:127.0.0.8:7361", "resolve:alias.test", "tcp:127.0.0.8:7361",
                         "dnsvia:127.0.0.155:alias.test"],
                  allow=["alias.test:7361"])
    probe = [line for line in r.raw.splitlines() if line.startswith(("tcp:", "resolve:"))]
    assert probe[0] == "tcp:127.0.0.8:7361 err EPERM", r
    assert probe[1] == "resolve:alias.test ok 127.0.0.8", r    # through the CNAME, as the helper read it
    assert probe[2] == "tcp:127.0.0.8:7361 ok", r
    d = r.detail("dnsvia:127.0.0.155:alias.test")
    assert d.startswith("rcode=0 from=127.0.0.155:53 port="), r
    assert d.rpartition("port=")[2] in dns_peers(bpfd, "alias.test"), (d, dns_log(bpfd))
    assert ln.arrived() == ["tcp 127.0.0.8 7361"]


def test_dns_ttl_is_honoured(bpfd, listen):
    ln = listen("tcp:127.0.0.7:7601")
    # short.test has a TTL of 1 s and the helper runs with --dns-grace=0
    r = sandboxed(bpfd, ["resolve:short.test", "tcp:127.0.0.7:7601", "sleep:2.5", "tcp:127.0.0.7:7601"],
                  allow=["short.test:7601"])
    probe = [line for line in r.raw.splitlines() if line.startswith("tcp:")]
    assert probe == ["tcp:127.0.0.7:7601 ok", "tcp:127.0.0.7:7601 err EPERM"], r
    assert ln.arrived() == ["tcp 127.0.0.7 7601"]


def test_dns_open(bpfd, listen):
    ln = listen("tcp:127.0.0.4:7701", "tcp:127.0.0.2:7701")
    clear_dns_log(bpfd)
    r = sandboxed(bpfd, ["resolve:blocked.test", "resolve:allowed.test", "tcp:127.0.0.4:7701", "tcp:127.0.0.2:7701"],
                  allow=["127.0.0.2:7701"], dns="open")
    assert r.client[0] == "ready -", r
    assert r.detail("resolve:blocked.test") == "127.0.0.6", r   # unfiltered
    assert r.err("tcp:127.0.0.4:7701") == "EPERM", r            # connections still follow the rules
    assert r.ok("tcp:127.0.0.2:7701"), r
    assert any("blocked.test" in line for line in dns_log(bpfd))
    assert ln.arrived() == ["tcp 127.0.0.2 7701"]


# --- reports --------------------------------------------------------------------------------

def test_reports_to_file_and_filters(bpfd):
    logf = "/tmp/net-report-%s.log" % uuid.uuid4().hex[:6]
    r = sandboxed(bpfd, ["tcp:127.0.0.3:7801", "resolve:blocked.test"], allow=["allowed.test"],
                  log_target=logf, report="dns")
    text = bpfd.root("cat %s; rm -f %s" % (logf, logf)).out
    assert "dns: refused name 'blocked.test'" in text, text
    assert "refused connection" not in text, text       # log.report = ["dns"]
    assert not any("refused" in line for line in r.reports), r


def test_reports_to_journal(bpfd):
    r = sandboxed(bpfd, ["tcp:127.0.0.3:7802"], allow=["127.0.0.2:1"], log_target="journald")
    assert r.err("tcp:127.0.0.3:7802") == "EPERM", r
    assert wait_for(lambda: "127.0.0.3:7802" in bpfd.root(
        "journalctl -q --no-pager -t scudo SCUDO_REFUSED=net 2>/dev/null | tail -5").out, timeout=5)


# --- what the sandbox cannot undo ----------------------------------------------------------

def test_cannot_detach_or_get_program_fds(bpfd, listen):
    ln = listen("tcp:127.0.0.3:7901")
    r = sandboxed(bpfd, ["detach", "tcp:127.0.0.3:7901"], allow=["127.0.0.2:1"])
    d = r.detail("detach")
    assert "detach4=ok" not in d and "detach10=ok" not in d and "detach2=ok" not in d, r
    assert "prog_fds=0" in d, r
    assert r.err("tcp:127.0.0.3:7901") == "EPERM", r
    assert ln.arrived() == []


def test_cannot_escape_to_another_cgroup(bpfd, listen):
    ln = listen("tcp:127.0.0.3:7902")
    base = "/sys/fs/cgroup/user.slice/user-{0}.slice/user@{0}.service".format(bpfd.uid)
    r = sandboxed(bpfd, ["escape:%s/app.slice" % base, "escape:%s/init.scope" % base, "tcp:127.0.0.3:7902"],
                  allow=["127.0.0.2:1"])
    assert r.err("escape:%s/app.slice" % base) in ("EROFS", "EACCES", "EPERM"), r
    assert r.err("escape:%s/init.scope" % base) in ("EROFS", "EACCES", "EPERM"), r
    assert r.err("tcp:127.0.0.3:7902") == "EPERM", r
    assert ln.arrived() == []


def test_sub_cgroup_stays_covered(bpfd, listen):
    # The service runs in a cgroup below the restricted slice: that is what every run does.
    # A process of the sandbox that creates its own sub-cgroup is covered too, but
    # ProtectControlGroups keeps it from making one; check the programs see the service.
    ln = listen("tcp:127.0.0.3:7903")
    r = sandboxed(bpfd, ["tcp:127.0.0.3:7903"], allow=["127.0.0.2:1"], props=["PrivateUsers=yes"])
    assert r.err("tcp:127.0.0.3:7903") == "EPERM", r
    assert ln.arrived() == []


# --- what the helper refuses ----------------------------------------------------------------

def client_as(t, user, path, *args):
    r = t.root("setpriv --reuid=%s --regid=%s --clear-groups %s %s %s < /dev/null"
               % (user, user, CLIENT, shlex.quote(path), " ".join(shlex.quote(a) for a in args)))
    return r.out.strip()


def dev_slice(t):
    unit = "app-scudo_t%s.slice" % uuid.uuid4().hex[:10]
    t.dev("busctl --user call org.freedesktop.systemd1 /org/freedesktop/systemd1 "
          "org.freedesktop.systemd1.Manager StartTransientUnit 'ssa(sv)a(sa(sv))' %s fail 0 0" % unit)
    cg = t.dev("systemctl --user show -p ControlGroup --value %s" % unit).out.strip()
    assert cg, unit
    return unit, cg


def attached(t, cg):
    return t.root("bpftool cgroup show /sys/fs/cgroup%s 2>/dev/null" % cg).out.strip()


def test_refuses_cgroups_the_caller_does_not_own(bpfd):
    t = bpfd
    unit, cg = dev_slice(t)
    try:
        out = client_as(t, "other", cg, "--allow", ":443")
        assert out.startswith("error -1 ") and "not under the caller" in out, out
        other_uid = t.root("id -u other").out.strip()
        theirs = cg.replace("user-%s.slice" % t.uid, "user-%s.slice" % other_uid).replace(
            "user@%s.service" % t.uid, "user@%s.service" % other_uid)
        out = client_as(t, "dev", theirs, "--allow", ":443")
        assert out.startswith("error -1 "), out
        out = client_as(t, "dev", "/system.slice/cron.service", "--allow", ":443")
        assert out.startswith("error -1 "), out
        out = client_as(t, "dev", cg + "/../../app.slice", "--allow", ":443")
        assert out.startswith("error -22 "), out
        # a root-owned cgroup inside dev's own tree
        t.root("mkdir -p /sys/fs/cgroup%s/rootowned" % cg)
        out = client_as(t, "dev", cg + "/rootowned", "--allow", ":443")
        assert out.startswith("error -1 ") and "not owned by the caller" in out, out
        assert attached(t, cg + "/rootowned") == ""
        out = client_as(t, "dev", cg + "/missing", "--allow", ":443")
        assert out.startswith("error -2 "), out
        assert attached(t, cg) == ""
    finally:
        t.root("rmdir /sys/fs/cgroup%s/rootowned 2>/dev/null" % cg)
        t.dev("systemctl --user stop %s" % unit)


def test_second_request_for_a_cgroup_refused(bpfd):
    t = bpfd
    unit, cg = dev_slice(t)
    try:
        # the second request once the first session is set up (it stays so for 10 s),
        # however long the helper takes to start
        r = t.dev("rm -f /tmp/first.out; (sleep 10 | %s %s --allow 127.0.0.2:1 > /tmp/first.out &) ; "
                  "for i in $(seq 100); do grep -qE '^(ready|error)' /tmp/first.out 2>/dev/null && break; sleep 0.1; done; "
                  "%s %s --allow ':443' < /dev/null; cat /tmp/first.out"
                  % (CLIENT, cg, CLIENT, cg))
        assert "ready" in r.out, r
        assert "error -16 " in r.out and "already has a network policy" in r.out, r
    finally:
        t.dev("systemctl --user stop %s" % unit)


def test_bad_rules_refused_before_anything(bpfd):
    t = bpfd
    unit, cg = dev_slice(t)
    try:
        out = client_as(t, "dev", cg, "--allow", "10.0.0.0/99")
        assert out.startswith("error -22 ") and "10.0.0.0/99" in out, out
        assert attached(t, cg) == ""
    finally:
        t.dev("systemctl --user stop %s" % unit)


def test_malformed_requests_refused(bpfd):
    t = bpfd
    d = "/tmp/net-raw-" + uuid.uuid4().hex[:8]      # the testbed's own /tmp
    t.root("mkdir -m 755 %s" % d)
    cases = {
        "garbage": b"\x01\x02\x03",
        "badmagic": b"XXXX" + b"\x01\x00\x01\x00" + (560).to_bytes(4, "little") + b"\0" * 548,
        "short-open": b"SCBD" + b"\x01\x00\x01\x00" + (16).to_bytes(4, "little") + b"\0" * 4,
        "commit-first": b"SCBD" + b"\x01\x00\x03\x00" + (16).to_bytes(4, "little") + b"\0" * 4,
    }
    for name, data in cases.items():
        p = os.path.join(d, name)
        assert t.root("cat > %s && chmod 644 %s" % (p, p), input=data).rc == 0
        out = client_as(t, "dev", "/", "--raw", p)
        assert out.startswith("reply -74 "), (name, out)   # EBADMSG
    t.root("rm -rf %s" % d)
    # the helper is still there and still serves
    unit, cg = dev_slice(t)
    try:
        r = t.dev("%s %s --allow 127.0.0.2:1 < /dev/null" % (CLIENT, cg))
        assert r.out.startswith("ready"), r
    finally:
        t.dev("systemctl --user stop %s" % unit)


# --- failing closed ------------------------------------------------------------------------------

def test_no_helper_fails_closed(bpfd):
    t = bpfd
    r = t.root("systemctl stop scudo-bpfd.socket scudo-bpfd.service")
    assert r.rc == 0, r
    try:
        unit, cg = dev_slice(t)
        out = client_as(t, "dev", cg, "--allow", ":443")
        assert out.startswith("error -2 ") or out.startswith("error -111 "), out
        assert attached(t, cg) == ""
        t.dev("systemctl --user stop %s" % unit)
    finally:
        t.root("systemctl start scudo-bpfd.socket")


def test_helper_killed_mid_run(bpfd, listen):
    """The helper dies while the sandbox runs: what was refused stays refused."""
    t = bpfd
    ln = listen("tcp:127.0.0.2:8002", "tcp:127.0.0.3:8002")
    unit, cg = dev_slice(t)
    try:
        t.dev("(sleep 30 | %s %s --allow 127.0.0.2:8002 > /tmp/mid.out 2>&1 &)" % (CLIENT, cg))
        assert wait_for(lambda: "ready" in t.dev("cat /tmp/mid.out").out, timeout=10), \
            (t.dev("cat /tmp/mid.out"), t.snapshot())
        pid = t.root("systemctl show -p MainPID --value scudo-bpfd.service").out.strip()
        assert pid and pid != "0"
        t.root("kill -9 %s" % pid)
        assert wait_for(lambda: t.root("test -e /proc/%s" % pid).rc != 0, timeout=5)
        r = t.dev("systemd-run --user -q --wait --pipe --slice=%s %s python3 %s tcp:127.0.0.2:8002 tcp:127.0.0.3:8002"
                  % (unit, " ".join("-p " + p for p in SANDBOX_PROPS), PROBE))
        assert "tcp:127.0.0.2:8002 ok" in r.out, r
        assert "tcp:127.0.0.3:8002 err EPERM" in r.out, r
        assert ln.arrived() == ["tcp 127.0.0.2 8002"]
    finally:
        t.dev("systemctl --user stop %s" % unit)
        t.root("systemctl reset-failed scudo-bpfd.service; systemctl start scudo-bpfd.socket")


def test_file_capabilities_variant(bpfd, listen):
    """scudo-bpfd as a binary with file capabilities, started by the user on a socket of
    its own, instead of the system service."""
    t = bpfd
    caps = "/usr/local/libexec/scudo-bpfd-caps"
    sock = "/run/user/%s/scudo-bpfd-caps.sock" % t.uid
    r = t.root("mkdir -p /usr/local/libexec && install -m 755 %s %s && "
               "setcap cap_bpf,cap_net_admin,cap_perfmon,cap_net_bind_service+ep %s" % (BPFD, caps, caps))
    assert r.rc == 0, r
    ln = listen("tcp:127.0.0.2:8101", "tcp:127.0.0.3:8101")
    t.dev("setsid %s --listen=%s --exit-idle-time=3 >/tmp/caps.log 2>&1 </dev/null & echo $! > /tmp/caps.pid"
          % (caps, sock))
    pid = t.dev("cat /tmp/caps.pid").out.strip()
    try:
        assert wait_for(lambda: t.dev("test -S %s" % sock).rc == 0, timeout=10), t.dev("cat /tmp/caps.log")
        r = sandboxed(t, ["tcp:127.0.0.2:8101", "tcp:127.0.0.3:8101", "resolve:allowed.test"],
                      allow=["127.0.0.2:8101", "allowed.test"], socket=sock)
        assert r.client and r.client[0].startswith("ready 127.53."), r
        assert r.ok("tcp:127.0.0.2:8101"), r
        assert r.err("tcp:127.0.0.3:8101") == "EPERM", r
        assert r.detail("resolve:allowed.test") == "127.0.0.4", r
        assert ln.arrived() == ["tcp 127.0.0.2 8101"]
        assert "(python3)" in "\n".join(r.reports), r      # CAP_PERFMON: the command's name
        # the helper exits once idle, like the service
        assert wait_for(lambda: t.dev("test -e /proc/%s" % pid).rc != 0, timeout=20)
    finally:
        t.dev("kill %s 2>/dev/null; rm -f %s" % (pid, sock))


# --- through scudo itself ------------------------------------------------------------------

needs_scudo = pytest.mark.skipif(not os.path.exists(built("scudo")), reason="no scudo binary")


@needs_scudo
def test_scudo_runs_with_network_rules(bpfd, listen):
    ln = listen("tcp:127.0.0.2:8201", "tcp:127.0.0.3:8201", "udp:[::1]:8202")
    r = bpfd.scudo(["--net-allow", "127.0.0.2:8201", "--net-allow", "allowed.test:8201",
                    "--net-allow", "[::1]:8202", "--net-deny", "127.0.0.4", "--",
                    "python3", PROBE, "tcp:127.0.0.2:8201", "tcp:127.0.0.3:8201", "udp:[::1]:8202",
                    "resolve:allowed.test", "resolve:blocked.test", "tcp:127.0.0.4:8201"])
    assert r.rc == 0, r
    assert "tcp:127.0.0.2:8201 ok" in r.out, r
    assert "tcp:127.0.0.3:8201 err EPERM" in r.out, r
    assert "udp:[::1]:8202 ok" in r.out, r
    assert "resolve:allowed.test ok 127.0.0.4" in r.out, r
    assert "resolve:blocked.test err" in r.out, r
    assert "tcp:127.0.0.4:8201 err EPERM" in r.out, r       # resolved and allowed by name, but denied
    assert ln.arrived() == ["tcp 127.0.0.2 8201", "udp ::1 8202"]
    assert "refused connection to 127.0.0.3:8201 (tcp)" in r.err, r
    assert "dns: refused name 'blocked.test'" in r.err, r


@needs_scudo
def test_scudo_refuses_to_run_without_helper(bpfd, listen):
    t = bpfd
    ln = listen("udp:127.0.0.2:8203")
    r = t.root("systemctl stop scudo-bpfd.socket scudo-bpfd.service")
    assert r.rc == 0, r
    try:
        # had the command run, unconfined or not, its datagram would have arrived
        r = t.scudo(["--net-allow", "127.0.0.2:8203", "--", "python3", PROBE, "udp:127.0.0.2:8203"])
        assert r.rc == 125, r
        assert "scudo-bpfd" in r.err, r
        assert ln.arrived() == [], "the command ran"
    finally:
        t.root("systemctl start scudo-bpfd.socket")


# --- nothing left behind -----------------------------------------------------------------------

def helper_objects(t):
    """The ids of the programs and maps the running helper holds, from its fdinfo."""
    pid = t.root("systemctl show -p MainPID --value scudo-bpfd.service").out.strip()
    r = t.root("cat /proc/%s/fdinfo/* 2>/dev/null | grep -E '^(prog_id|map_id):'" % pid)
    progs = sorted(set(int(l.split()[1]) for l in r.out.splitlines() if l.startswith("prog_id")))
    maps = sorted(set(int(l.split()[1]) for l in r.out.splitlines() if l.startswith("map_id")))
    return progs, maps


def map_entries(t, map_ids):
    """Entries per map name, for the maps with these ids."""
    import json
    counts = {}
    for i in map_ids:
        info = json.loads(t.root("bpftool -j map show id %d" % i).out or "{}")
        if info.get("type") in ("ringbuf", "cgroup_storage", "sk_storage", "array", "percpu_array"):
            continue
        assert "error" not in info, "map %d is gone: the helper exited under the test" % i
        entries = json.loads(t.root("bpftool -j map dump id %d" % i).out or "[]")
        counts[info.get("name", str(i))] = len(entries)
    return counts


KEEPER = """
import socket, time
def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect("/run/scudo-bpfd.sock")
    return s
s = connect()
while True:
    time.sleep(20)
    s, old = connect(), s
    old.close()
"""


def test_nothing_left_after_runs(bpfd, listen):
    t = bpfd
    # An idle connection keeps the helper from exiting while the maps are looked at (killed
    # below; each look is two bpftool calls a map, which on a busy machine add up). The helper
    # drops a client that sends no request within 30 s, so the keeper opens a new connection
    # every 20 s before it closes the old one: never a moment without a client.
    keeper = t.dev("setsid python3 -c '%s' >/dev/null 2>&1 </dev/null & echo $!" % KEEPER).out.strip()
    try:
        assert wait_for(lambda: t.root("systemctl is-active scudo-bpfd.service").out.strip() == "active", timeout=10)
        progs, maps = helper_objects(t)
        # 11 network programs, and the file refusal reporter where it is built (x86-64): its
        # sys_exit program, and the three change-time ones of the write record where the kernel
        # has those trace points (6.13 and later; the helper loads without them before)
        files = (1, 4) if os.path.exists(built("bpf/scudo-files.skel.h")) else (0,)
        assert len(progs) - 11 in files and len(maps) >= 10, (progs, maps)
        # A run that fills every kind of entry: rules, name patterns, an address learned (by
        # the DNS fast path), cached verdicts.
        ln = listen("tcp:127.0.0.4:8301")
        r = sandboxed(t, ["resolve:allowed.test", "tcp:127.0.0.4:8301", "tcp:127.0.0.3:8301"],
                      allow=["allowed.test:8301", "10.0.0.0/8"], deny=["10.1.0.0/16"])
        assert r.ok("tcp:127.0.0.4:8301"), r
        # sandboxed() stopped the slice: the helper notices and forgets the cgroup's entries.
        assert wait_for(lambda: all(n == 0 for n in map_entries(t, maps).values()), timeout=10), \
            map_entries(t, maps)
        assert attached(t, "/user.slice/user-{0}.slice/user@{0}.service/app.slice".format(t.uid)) == ""
    finally:
        t.dev("kill %s 2>/dev/null" % keeper)
    # Then, idle, it exits (--exit-idle-time=2), and its programs and maps go with it.
    assert wait_for(lambda: t.root("systemctl is-active scudo-bpfd.service").out.strip() != "active", timeout=40)
    ids = set(str(i) for i in progs)
    left = [line for line in t.root("bpftool prog show").out.splitlines() if line.split(":")[0] in ids]
    assert left == [], left
    mids = set(str(i) for i in maps)
    left = [line for line in t.root("bpftool map show").out.splitlines() if line.split(":")[0] in mids]
    assert left == [], left
    tree = t.root("bpftool cgroup tree /sys/fs/cgroup/user.slice").out
    assert "scudo_" not in tree, tree
    assert not t.root("find /sys/fs/cgroup -name 'app-scudo_t*'").out.strip()


def test_helper_logged_no_sanitizer_errors(bpfd):
    """With a sanitizer build, what ASan/UBSan found in the helper ends up in its journal."""
    log = bpfd.root("journalctl -q --no-pager -u scudo-bpfd.service").out
    bad = [line for line in log.splitlines()
           if "Sanitizer" in line or "runtime error:" in line]
    assert bad == [], "\n".join(bad[:20])
