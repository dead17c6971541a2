# SPDX-License-Identifier: MIT OR Apache-2.0
"""The built-in profiles with the real tools: each tool that Debian packages or the npm registry
serves runs a real command under its profile, as dev, and what it left is checked from outside
the sandbox (as root in the testbed). A tool the machine lacks is skipped, saying so
(tools/install-deps installs them). The profiles have network rules, so scudo-bpfd runs as the
service installed in the testbed, as in test_network.py; none of these commands needs the
network. The agents' network is checked with a stand-in `claude` against the test's own DNS
server and listeners."""
import json
import os
import shlex

import pytest

from conftest import built, wait_for
from test_network import DNS_SERVER, RESOLVER, Listener, install_helper


@pytest.fixture(scope="module")
def tools(tb):
    if not os.path.exists(built("src/bpfd/scudo-bpfd")):
        pytest.skip("scudo-bpfd not built (meson -Dbpf=enabled): the tools' profiles have network rules")
    install_helper(tb)
    yield tb
    tb.root("systemctl stop scudo-bpfd.socket scudo-bpfd.service")


def need(t, *commands):
    for c in commands:
        if t.dev("command -v %s" % shlex.quote(c)).rc != 0:
            pytest.skip("%s is not installed in the testbed (tools/install-deps installs it)" % c)


def stat(t, path):
    """(mode in octal, owner) of path, from outside the sandbox, or None."""
    r = t.root("stat -c '%%a %%U' %s" % shlex.quote(path))
    return tuple(r.out.split()) if r.rc == 0 else None


def applied(t, cwd, argv):
    r = t.scudo(["explain", "--json"] + argv, cwd=cwd)
    assert r.rc == 0, r
    return [p["name"] for p in json.loads(r.out)["profiles"]]


def test_npm_cache_is_created_and_persists(tools, work):
    t = tools
    need(t, "npm")
    t.root("rm -rf /home/dev/.npm")
    r = t.scudo(["npm", "--version"], cwd=work)
    assert r.rc == 0 and r.out.strip()[0].isdigit(), r
    # Made by scudo before the run, the user's and private; npm writes its log into it.
    assert stat(t, "/home/dev/.npm") == ("700", "dev")
    r = t.scudo(["npm", "init", "-y"], cwd=work)
    assert r.rc == 0, r
    assert json.loads(t.root("cat %s/package.json" % work).out)["version"] == "1.0.0"
    first = t.root("ls /home/dev/.npm/_logs").out.split()
    assert first, "npm wrote no log into ~/.npm"
    # A second run finds what the first left, and adds to it.
    r = t.scudo(["npm", "pkg", "get", "name"], cwd=work)
    assert r.rc == 0, r
    second = t.root("ls /home/dev/.npm/_logs").out.split()
    assert set(first) < set(second), (first, second)


def test_npx_and_node(tools, work):
    t = tools
    need(t, "npx", "node")
    r = t.scudo(["npx", "--version"], cwd=work)
    assert r.rc == 0 and r.out.strip()[0].isdigit(), r
    assert applied(t, work, ["npx", "--version"])[-1] == "npm"
    # node has no profile of its own: a script is the project's code, under `sandbox`.
    r = t.scudo(["node", "-e", "require('fs').writeFileSync('n.txt', process.version)"], cwd=work)
    assert r.rc == 0, r
    assert t.root("cat %s/n.txt" % work).out.startswith("v")


def test_yarn_and_pnpm(tools, work):
    t = tools
    need(t, "yarn", "pnpm")
    t.root("rm -rf /home/dev/.cache/yarn /home/dev/.local/share/pnpm")
    r = t.scudo(["yarn", "--version"], cwd=work)
    assert r.rc == 0 and r.out.strip()[0].isdigit(), r
    assert stat(t, "/home/dev/.cache/yarn") == ("700", "dev")
    r = t.scudo(["pnpm", "--version"], cwd=work)
    assert r.rc == 0 and r.out.strip()[0].isdigit(), r
    assert stat(t, "/home/dev/.local/share/pnpm/store") == ("700", "dev")
    r = t.scudo(["pnpm", "init"], cwd=work)
    assert r.rc == 0, r
    assert t.root("test -s %s/package.json" % work).rc == 0, "pnpm init wrote no package.json"


def test_pip(tools, work):
    t = tools
    need(t, "python3")
    if t.dev("python3 -m pip --version").rc != 0:
        pytest.skip("python3 -m pip is not installed in the testbed (python3-pip)")
    t.root("rm -rf /home/dev/.cache/pip")
    assert applied(t, work, ["python3", "-m", "pip", "list"])[-1] == "pip"
    r = t.scudo(["python3", "-m", "pip", "--version"], cwd=work)
    assert r.rc == 0 and r.out.startswith("pip "), r
    r = t.scudo(["python3", "-m", "pip", "list"], cwd=work)
    assert r.rc == 0 and "Package" in r.out, r
    assert stat(t, "/home/dev/.cache/pip") == ("700", "dev")


def test_go_build(tools, work):
    t = tools
    need(t, "go")
    t.root("rm -rf /home/dev/.cache/go-build /home/dev/go")
    # A checkout, as a Go project is: outside one, the empty .git scudo puts in the start
    # directory (git-guard.h) makes go's VCS stamping fail (docs/policies.md, go).
    t.dev("cd %s && git init -q . && printf 'module example.com/hello\\n\\ngo 1.19\\n' > go.mod && "
          "printf 'package main\\nimport \"fmt\"\\nfunc main() { fmt.Println(\"hello\") }\\n' > main.go" % work)
    r = t.scudo(["go", "version"], cwd=work)
    assert r.rc == 0 and r.out.startswith("go version"), r
    r = t.scudo(["go", "build", "-o", "hello", "."], cwd=work, timeout=180)
    assert r.rc == 0, r
    assert t.dev("%s/hello" % work).out.strip() == "hello"
    # The build cache was made, and filled, where the next build (inside or out) finds it.
    assert stat(t, "/home/dev/.cache/go-build") == ("700", "dev")
    assert int(t.root("ls /home/dev/.cache/go-build | wc -l").out) > 1
    assert stat(t, "/home/dev/go/pkg") == ("700", "dev")


def test_cargo_build_offline(tools, work):
    t = tools
    need(t, "cargo")
    t.root("rm -rf /home/dev/.cargo")
    t.dev("cd %s && mkdir -p src && printf '[package]\\nname = \"hello\"\\nversion = \"0.1.0\"\\n"
          "edition = \"2021\"\\n' > Cargo.toml && printf 'fn main() { println!(\"hello\"); }\\n' > src/main.rs" % work)
    r = t.scudo(["cargo", "--version"], cwd=work)
    assert r.rc == 0 and r.out.startswith("cargo "), r
    r = t.scudo(["cargo", "build", "--offline"], cwd=work, timeout=300)
    assert r.rc == 0, r
    assert t.dev("%s/target/debug/hello" % work).out.strip() == "hello"
    assert stat(t, "/home/dev/.cargo/registry") == ("700", "dev")
    assert stat(t, "/home/dev/.cargo/bin") is None, "cargo (not cargo install) made ~/.cargo/bin"


def test_make_has_no_network(tools, work):
    t = tools
    need(t, "make", "python3")
    listener = Listener(t, ["tcp:127.0.0.4:8080"])
    try:
        connect = ("python3 -c \"import socket; socket.create_connection(('127.0.0.4', 8080), 3)\" "
                   "&& echo reached > net.txt || echo refused > net.txt")
        t.dev("cd %s && printf 'out.txt:\\n\\techo built > out.txt\\n\\t%s\\n' > Makefile" %
              (work, connect.replace("\\", "\\\\").replace("'", "'\\''")))
        r = t.scudo(["make", "--version"], cwd=work)
        assert r.rc == 0 and "GNU Make" in r.out, r
        r = t.scudo(["make"], cwd=work)
        assert r.rc == 0, r
        assert t.root("cat %s/out.txt" % work).out.strip() == "built"
        assert t.root("cat %s/net.txt" % work).out.strip() == "refused"
        assert listener.arrived() == [], "a connection from make's recipe arrived"
    finally:
        listener.stop()


# ---- the agents: their state writable, their API host the only one ----------------------

ZONE = ["api.anthropic.com=127.0.0.4", "evil.test=127.0.0.5"]

FAKE_CLAUDE = r'''#!/usr/bin/env python3
import os, socket
def conn(host):
    try:
        socket.create_connection((host, 443), timeout=3).close()
        return "ok"
    except OSError as e:
        return "err " + type(e).__name__
for host in ("api.anthropic.com", "evil.test", "127.0.0.5"):
    print(host, conn(host))
with open(os.path.expanduser("~/.claude/state"), "w") as f:
    f.write("kept")
try:
    with open(os.path.expanduser("~/.bashrc"), "a") as f:
        f.write("planted\n")
except OSError as e:
    pass
'''


@pytest.fixture
def agent_net(tools):
    t = tools
    # The stand-in, where the sandbox sees it (the testbed's own /usr/local: not the host's).
    r = t.root("cat > /usr/local/bin/claude && chmod 755 /usr/local/bin/claude", input=FAKE_CLAUDE.encode())
    assert r.rc == 0, r
    r = t.root("""set -e
cp -P /etc/resolv.conf /tmp/tools-resolv.conf.orig 2>/dev/null || true
rm -f /etc/resolv.conf; echo 'nameserver %(resolver)s' > /etc/resolv.conf
setsid python3 %(server)s --listen %(resolver)s --log /tmp/tools-dns.log --timeout 600 %(zone)s \
    >/dev/null 2>&1 < /dev/null & echo $! > /tmp/tools-dns.pid
""" % {"resolver": RESOLVER, "server": DNS_SERVER, "zone": " ".join(ZONE)})
    assert r.rc == 0, r
    assert wait_for(lambda: t.root("ss -lun | grep -q %s:53" % RESOLVER).rc == 0, timeout=10)
    listener = Listener(t, ["tcp:127.0.0.4:443", "tcp:127.0.0.5:443"])
    yield t, listener
    listener.stop()
    t.root("rm -f /usr/local/bin/claude")
    t.root("kill $(cat /tmp/tools-dns.pid) 2>/dev/null; [ -e /tmp/tools-resolv.conf.orig ] && "
           "rm -f /etc/resolv.conf && mv /tmp/tools-resolv.conf.orig /etc/resolv.conf")


def test_agent_reaches_its_api_only_and_keeps_its_state(agent_net, work):
    t, listener = agent_net
    t.root("rm -rf /home/dev/.claude")
    bashrc = t.root("sha256sum /home/dev/.bashrc").out
    r = t.scudo(["explain", "--json", "claude"], cwd=work)
    d = json.loads(r.out)
    assert [a["rule"] for a in d["network"]["allow"]] == ["api.anthropic.com:443"], d["network"]
    r = t.scudo(["claude"], cwd=work, timeout=90)
    assert r.rc == 0, r
    lines = dict(line.split(" ", 1) for line in r.out.splitlines() if " " in line)
    assert lines.get("api.anthropic.com") == "ok", r
    assert lines.get("evil.test", "").startswith("err"), r
    assert lines.get("127.0.0.5", "").startswith("err"), r
    assert listener.arrived() == ["tcp 127.0.0.4 443"], listener.arrived()
    # Its state directory was made and kept; the rest of the home directory was not written.
    assert stat(t, "/home/dev/.claude") == ("700", "dev")
    assert t.root("cat /home/dev/.claude/state").out == "kept"
    assert t.root("sha256sum /home/dev/.bashrc").out == bashrc


def test_electron_app_reaches_the_x11_socket(tb, work):
    """The editors' base: X11's socket directory is the host's, through the sandbox's own /tmp."""
    t = tb
    r = t.root("mkdir -p /tmp/.X11-unix; chmod 1777 /tmp/.X11-unix; rm -f /tmp/.X11-unix/X9; "
               "setsid python3 -c \"import socket, os, time; s = socket.socket(socket.AF_UNIX); "
               "s.bind('/tmp/.X11-unix/X9'); os.chmod('/tmp/.X11-unix/X9', 0o777); s.listen(); time.sleep(60)\" "
               ">/dev/null 2>&1 </dev/null & echo $! > /tmp/x9.pid")
    assert r.rc == 0, r
    try:
        assert wait_for(lambda: t.root("test -S /tmp/.X11-unix/X9").rc == 0, timeout=10)
        probe = ("import socket; s = socket.socket(socket.AF_UNIX); s.connect('/tmp/.X11-unix/X9'); "
                 "print('connected')")
        r = t.scudo(["--profile", "electron-app", "python3", "-c", probe], cwd=work)
        assert r.rc == 0 and r.out.strip() == "connected", r
        # Without the profile the sandbox's /tmp is its own: no display.
        r = t.scudo(["python3", "-c", probe], cwd=work)
        assert r.rc != 0, r
    finally:
        t.root("kill $(cat /tmp/x9.pid); rm -f /tmp/.X11-unix/X9 /tmp/x9.pid")
