# SPDX-License-Identifier: MIT OR Apache-2.0
"""git's remote commands under the recommended `git-remote` profile (docs/policies.md): an agent
that delegates it pushes to a remote without a key in its own sandbox. The remote is `git
http-backend` behind Basic authentication on loopback, its password in git's credential cache
outside, and, where openssh-server is installed, an sshd of dev's own on loopback that only the
ssh-agent's key opens; the ssh-agent runs outside. Checked from
outside: the commit lands in the remote's repository; the agent cannot list the agent's keys,
read ~/.ssh or reach the remote itself; under git-remote the private key stays unreadable while
the ssh-agent answers, and only the remote's host and port are reachable."""
import os
import shlex
import uuid

import pytest

from conftest import SCUDO, built, helper, start_bpfd, stop_bpfd, wait_for

Q = shlex.quote(SCUDO)
PORT = 18431
REMOTE = "127.0.0.1:%d" % PORT
OTHER = "127.0.0.7:%d" % PORT           # the same server on another address: "another host"
USER, PASSWORD = "pusher", "gr-" + uuid.uuid4().hex[:12]

AGENT = """#!/bin/sh
# the stand-in agent: runs what it is given
exec "$@"
"""

# The user's own file: an agent of the tests' (the recommended `agents` base), and the one line
# that lets agents delegate git's remote commands.
USER_CONFIG = """git-remote.delegable = true

[gr-agent]
extend = "agents"
match = ["gr-agent.sh"]
network.allow = []
"""

CONNECT = ("python3 -c 'import socket,sys\n"
           "for a in sys.argv[1:]:\n"
           "    h, p = a.rsplit(\":\", 1); s = socket.socket(); s.settimeout(3)\n"
           "    try: s.connect((h, int(p))); print(\"reached\", a)\n"
           "    except OSError as e: print(\"refused\", a, e.errno)' ")

# Run by git in place of ssh (core.sshCommand), so inside git-remote's sandbox.
PROBE = """#!/bin/sh
{
cat ~/.ssh/id_ed25519 >/dev/null 2>&1 && echo probe-read-key || echo probe-key-unreadable
grep -q gr-known ~/.ssh/known_hosts && echo probe-known-hosts
echo x >> ~/.ssh/known_hosts 2>/dev/null && echo probe-wrote-known-hosts
ssh-add -L | grep -q ssh-ed25519 && echo probe-agent-lists-key
%s %s %s
} >&2
exit 1
""" % (CONNECT, REMOTE, OTHER)


@pytest.fixture(scope="module")
def remote(tb):
    if not os.path.exists(built("src/bpfd/scudo-bpfd")):
        pytest.skip("scudo-bpfd not built (meson -Dbpf=enabled): no network rules to test")
    for prog in ("ssh-agent", "ssh-add", "ssh-keygen", "git"):
        if tb.dev("command -v %s" % prog).rc != 0:
            pytest.skip("%s is not installed" % prog)
    start_bpfd(tb, "-v --exit-idle-time=2")
    agent = "/usr/local/bin/gr-agent.sh"
    r = tb.root("cat > %s && chmod 755 %s && install -m 755 /dev/stdin /usr/local/bin/gr-probe.sh <<'EOF'\n%sEOF"
                % (agent, agent, PROBE), input=AGENT.encode())
    assert r.rc == 0, r
    r = tb.dev("""set -e
rm -rf ~/gr-*; mkdir -p ~/gr-orig
# what other tests may have left here is put back afterwards
for f in .ssh .gitconfig .config/scudo/config.toml; do
  [ -e ~/$f ] && mv ~/$f ~/gr-orig/$(echo $f | tr / _)
done
mkdir -p ~/gr-srv ~/.config/scudo ~/.ssh; chmod 700 ~/.ssh
git init -q --bare ~/gr-srv/r.git
git config --global user.name dev; git config --global user.email dev@example.org
ssh-keygen -q -t ed25519 -N '' -f ~/.ssh/id_ed25519
echo '127.0.0.9 ssh-ed25519 AAAA gr-known' > ~/.ssh/known_hosts
setsid python3 %(server)s --root ~/gr-srv --listen %(remote)s --listen %(other)s --user %(user)s \
    --password %(pw)s --ready ~/gr-ready --timeout 900 >/dev/null 2>&1 </dev/null &
echo $! > ~/gr-server.pid
ssh-agent -a $XDG_RUNTIME_DIR/gr-agent.sock > ~/gr-agent.env
. ~/gr-agent.env >/dev/null; ssh-add -q ~/.ssh/id_ed25519
printf 'protocol=http\\nhost=%(remote)s\\nusername=%(user)s\\npassword=%(pw)s\\n\\n' | git credential-cache --timeout 900 store
""" % {"server": helper("git_http_server.py"), "remote": REMOTE, "other": OTHER, "user": USER, "pw": PASSWORD})
    assert r.rc == 0, r
    assert wait_for(lambda: tb.dev("test -e ~/gr-ready").rc == 0, timeout=10), "the git server did not start"
    r = tb.dev("cat > ~/.config/scudo/config.toml", input=USER_CONFIG.encode())
    assert r.rc == 0, r
    yield tb
    tb.dev("kill $(cat ~/gr-server.pid) 2>/dev/null; . ~/gr-agent.env >/dev/null; ssh-agent -k >/dev/null; "
           "git credential-cache exit; rm -rf ~/.ssh ~/.config/scudo/config.toml ~/.gitconfig; "
           "for f in .ssh .gitconfig .config/scudo/config.toml; do o=~/gr-orig/$(echo $f | tr / _); "
           "[ -e $o ] && mv $o ~/$f; done; rm -rf ~/gr-*")
    tb.root("rm -f %s /usr/local/bin/gr-probe.sh" % agent)
    stop_bpfd(tb)


@pytest.fixture
def project(remote, work):
    """A clone of the remote with one commit of its own, made outside any sandbox."""
    r = remote.dev("cd %s && git init -q -b main && git remote add origin http://%s/r.git && "
                   "echo one > f && git add f && git commit -q -m one && git rev-parse HEAD" % (work, REMOTE))
    assert r.rc == 0, r
    return work


def dev(tb, script, **kw):
    """As dev, with the ssh-agent's socket in the environment, as in a desktop session."""
    return tb.dev(". ~/gr-agent.env >/dev/null; " + script, **kw)


def remote_main(tb):
    return tb.dev("git --git-dir ~/gr-srv/r.git rev-parse -q --verify refs/heads/main").out.strip()


def test_agent_pushes_without_a_key(remote, project):
    tb = remote
    r = dev(tb, "cd %s && %s gr-agent.sh sh -c %s </dev/null" % (project, Q, shlex.quote(
        "echo two >> f && git commit -q -am two && git rev-parse HEAD > head-commit;"
        "git push -q origin HEAD:main; echo push-rc=$?;"
        "ssh-add -L >/dev/null 2>&1; echo ssh-add-rc=$?;"
        "cat ~/.ssh/id_ed25519 >/dev/null 2>&1; echo key-rc=$?;"
        "echo SSH_AUTH_SOCK=$SSH_AUTH_SOCK;" + CONNECT + REMOTE)), timeout=120)
    head = tb.dev("cat %s/head-commit" % project).out.strip()
    # the push landed: the remote's main is the agent's commit (read outside)
    assert "push-rc=0" in r.out, r
    assert head and remote_main(tb) == head, (r, head)
    # the agent itself has no key, no agent socket and no way to the remote
    assert "ssh-add-rc=2" in r.out or "ssh-add-rc=1" in r.out, r
    assert "key-rc=1" in r.out and "SSH_AUTH_SOCK=\n" in r.out + "\n", r
    assert "refused %s" % REMOTE in r.out, r


def test_agent_refused_pushes_say_why(remote, project):
    tb = remote
    before = remote_main(tb)
    r = dev(tb, "cd %s && %s gr-agent.sh sh -c %s </dev/null" % (project, Q, shlex.quote(
        "git -c core.sshCommand=gr-probe.sh push origin HEAD:main; echo c-rc=$?;"
        "git push http://%s/r.git HEAD:main; echo url-rc=$?;"
        "git clone -q http://%s/r.git c; echo clone-rc=$?" % (REMOTE, REMOTE))), timeout=120)
    codes = [l for l in r.out.splitlines() if l.endswith("rc=125")]
    assert len(codes) == 3, r
    assert "-c is refused in a delegated request" in r.err, r
    assert "'http://%s/r.git' is no remote of the repository" % REMOTE in r.err, r
    assert "git clone: the URL comes from the command line" in r.err, r
    assert "probe-" not in r.err and remote_main(tb) == before, r


def test_not_delegated_unless_the_user_says_so(remote, project):
    tb = remote
    tb.dev("sed -i '/^git-remote.delegable/d' ~/.config/scudo/config.toml")
    try:
        before = remote_main(tb)
        r = dev(tb, "cd %s && %s gr-agent.sh sh -c %s </dev/null" % (project, Q, shlex.quote(
            "echo three >> f && git commit -q -am three; GIT_TERMINAL_PROMPT=0 git push origin HEAD:main;"
            "echo push-rc=$?")), timeout=120)
        # git ran in the agent's own sandbox: no network, no credentials; nothing landed
        assert "push-rc=0" not in r.out and "push-rc=" in r.out, r
        assert remote_main(tb) == before, r
    finally:
        tb.dev("sed -i '1i git-remote.delegable = true' ~/.config/scudo/config.toml")


def test_git_remote_sandbox_has_the_agent_socket_not_the_keys(remote, project):
    tb = remote
    r = dev(tb, "cd %s && %s git -c core.sshCommand=gr-probe.sh -c ssh.variant=ssh ls-remote ssh://%s/r.git" % (project, Q, REMOTE),
            timeout=120)
    # ssh's stand-in ran inside git-remote's sandbox
    assert "probe-key-unreadable" in r.err and "probe-read-key" not in r.err, r
    assert "probe-agent-lists-key" in r.err, r
    assert "probe-known-hosts" in r.err and "probe-wrote-known-hosts" not in r.err, r
    assert "reached %s" % REMOTE in r.err and "refused %s" % OTHER in r.err, r
    # the files outside are as they were
    assert tb.dev("grep -c . ~/.ssh/known_hosts").out.strip() == "1"
    # outside any sandbox both addresses answer: the refusal was the profile's
    r = tb.dev(CONNECT + "%s %s" % (REMOTE, OTHER))
    assert "reached %s" % OTHER in r.out, r


def test_fetch_by_name_with_options_before_the_verb(remote, project):
    tb = remote
    # the remote's main, pushed from outside
    r = dev(tb, "cd %s && git -c credential.helper=cache push -q origin HEAD:refs/heads/fetched" % project)
    assert r.rc == 0, r
    r = dev(tb, "cd ~ && GIT_TERMINAL_PROMPT=0 %s git -C %s fetch -q origin; echo rc=$?; "
            % (Q, project), timeout=120)
    assert "rc=0" in r.out, r
    fetched = tb.dev("git --git-dir ~/gr-srv/r.git rev-parse refs/heads/fetched").out.strip()
    assert fetched and fetched in tb.dev("cat %s/.git/FETCH_HEAD" % project).out, r


def test_agent_push_refused_where_the_agent_could_plant_hooks(remote, project):
    tb = remote
    before = remote_main(tb)
    # a .git without hooks/: the agent, which writes .git, could make it and its pre-push hook
    r = tb.dev("rm -rf %s/.git/hooks" % project)
    assert r.rc == 0, r
    r = dev(tb, "cd %s && %s gr-agent.sh sh -c %s </dev/null" % (project, Q, shlex.quote(
        "git push -q origin HEAD:main; echo push-rc=$?")), timeout=120)
    assert "push-rc=125" in r.out, r
    assert "%s/.git/hooks is missing, and scudo-" % project in r.err and "mkdir" in r.err, r
    assert remote_main(tb) == before and tb.dev("test -e %s/.git/hooks" % project).rc != 0, r


SSH_PORT = 18432
SSHD_CONFIG = """Port %(port)d
ListenAddress 127.0.0.1
HostKey /home/dev/gr-sshd/host_key
PidFile /home/dev/gr-sshd/pid
AuthorizedKeysFile /home/dev/gr-sshd/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
"""


@pytest.fixture
def sshd(remote):
    """An sshd of dev's own on loopback (no root): the remote over ssh, only the ssh-agent's
    key authorized."""
    tb = remote
    if tb.dev("test -x /usr/sbin/sshd").rc != 0:
        pytest.skip("/usr/sbin/sshd is not installed (openssh-server, tools/install-deps)")
    r = dev(tb, """set -e
rm -rf ~/gr-sshd; mkdir -p ~/gr-sshd
ssh-keygen -q -t ed25519 -N '' -f ~/gr-sshd/host_key
cat > ~/gr-sshd/config
ssh-add -L > ~/gr-sshd/authorized_keys
echo "[127.0.0.1]:%d $(cut -d' ' -f1,2 ~/gr-sshd/host_key.pub)" >> ~/.ssh/known_hosts
/usr/sbin/sshd -f ~/gr-sshd/config -E ~/gr-sshd/log
""" % SSH_PORT, input=(SSHD_CONFIG % {"port": SSH_PORT}).encode())
    assert r.rc == 0, r
    assert wait_for(lambda: tb.dev("test -s ~/gr-sshd/pid").rc == 0, timeout=10), "sshd did not start"
    yield tb
    tb.dev("kill $(cat ~/gr-sshd/pid) 2>/dev/null; sed -i '/^\\[127.0.0.1\\]:%d /d' ~/.ssh/known_hosts; "
           "rm -rf ~/gr-sshd" % SSH_PORT)


def test_agent_pushes_over_ssh_with_the_ssh_agents_key(sshd, project):
    tb = sshd
    url = "ssh://dev@127.0.0.1:%d/home/dev/gr-srv/r.git" % SSH_PORT
    r = tb.dev("cd %s && git remote set-url origin %s" % (project, url))
    assert r.rc == 0, r
    # outside any sandbox, ssh logs in with the ssh-agent's key
    r = dev(tb, "ssh -o BatchMode=yes -p %d dev@127.0.0.1 true; echo outside-rc=$?" % SSH_PORT)
    assert "outside-rc=0" in r.out, r
    r = dev(tb, "cd %s && %s gr-agent.sh sh -c %s </dev/null" % (project, Q, shlex.quote(
        "echo ssh >> f && git commit -q -am ssh && git rev-parse HEAD > head-commit;"
        "git push -q origin HEAD:refs/heads/over-ssh; echo push-rc=$?")), timeout=120)
    head = tb.dev("cat %s/head-commit" % project).out.strip()
    assert "push-rc=0" in r.out, (r.err, tb.dev("cat ~/gr-sshd/log").out)
    got = tb.dev("git --git-dir ~/gr-srv/r.git rev-parse -q --verify refs/heads/over-ssh").out.strip()
    assert head and got == head, r
    # the key signed through the ssh-agent: the private key file stayed unreadable to ssh there
    assert "Accepted publickey for dev" in tb.dev("cat ~/gr-sshd/log").out
