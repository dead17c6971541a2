# SPDX-License-Identifier: MIT OR Apache-2.0
"""Real agent CLIs under their profiles of the recommended configuration (docs/agents.md):
Claude Code (npm @anthropic-ai/claude-code) and the Codex CLI (npm @openai/codex), each driven
by a scripted model of the tests' own on loopback (fake_model.py: the Anthropic Messages API
and the OpenAI Responses API, streaming), its endpoint allowed by a user profile as the docs
say. The model asks for one shell command a turn; the agent runs it with its own shell tool and
sends the output back, which the model server records. Everything is checked from outside:
what the agent sent back, the host's files, the project's git history, the journal.

The CLIs come from the npm registry, installed once into a directory the tests own
(SCUDO_AGENT_CLIS, default BUILD/agent-clis: never the user's home) and bound read-only into
the testbed at /usr/local/lib/scudo-test-agents (node finds a package's dependencies in the
node_modules beside it), linked from /usr/local/bin as a global npm install links them. Where
the registry is not reachable or the install fails, the tests skip with the reason."""
import json
import os
import shlex
import subprocess
import uuid

import pytest

from conftest import BPFD, BUILD, SCUDO, built, helper, start_bpfd, stop_bpfd, wait_for

Q = shlex.quote(SCUDO)
CLIS = os.path.abspath(os.environ.get("SCUDO_AGENT_CLIS", os.path.join(BUILD, "agent-clis")))
INSIDE = "/usr/local/lib/scudo-test-agents"
PACKAGES = {"claude": ("@anthropic-ai/claude-code", "@anthropic-ai/claude-code/bin/claude.exe"),
            "codex": ("@openai/codex", "@openai/codex/bin/codex.js")}
KEY_MARK = "AGENT-TEST-KEY-" + uuid.uuid4().hex
STATUS = {}     # name: None (works) or why not, for the session


def exe(name):
    return os.path.join(CLIS, "node_modules", PACKAGES[name][1])


def install_clis():
    """npm install of both, once into CLIS (kept for the next run of the same build), with
    npm's cache there too, removed afterwards. The CLIs themselves run in the testbed only."""
    if all(os.path.exists(exe(n)) for n in PACKAGES):
        return
    if subprocess.run(["sh", "-c", "command -v npm"], capture_output=True).returncode != 0:
        STATUS.update((n, "npm is not installed on this machine (tools/install-deps)") for n in PACKAGES)
        return
    os.makedirs(CLIS, exist_ok=True)
    env = dict(os.environ, npm_config_cache=os.path.join(CLIS, "npm-cache"), npm_config_update_notifier="false")
    try:
        p = subprocess.run(["npm", "install", "--prefix", CLIS, "--no-audit", "--no-fund", "--no-save",
                            "--fetch-retries=1", "--fetch-timeout=60000", "--loglevel=error"]
                           + [v[0] for v in PACKAGES.values()], capture_output=True, timeout=900, env=env)
        why = None if p.returncode == 0 else p.stderr.decode(errors="replace")[:400]
    except subprocess.TimeoutExpired:
        why = "took longer than 900 s"
    subprocess.run(["rm", "-rf", os.path.join(CLIS, "npm-cache")])
    if why is not None:
        STATUS.update((n, "npm install from the registry failed: " + why) for n in PACKAGES)


@pytest.fixture(scope="module")
def clis(tb):
    install_clis()
    if any(STATUS.get(n) is None for n in PACKAGES):
        # bound read-only over a directory of the testbed's own root; links as `npm -g` makes
        src = shlex.quote(CLIS)
        r = tb.root("set -e; mkdir -p {i}; mountpoint -q {i} || {{ mount --bind {c} {i}; "
                    "mount -o remount,bind,ro {i}; }}".format(i=INSIDE, c=src))
        assert r.rc == 0, r
        for n, (_, path) in PACKAGES.items():
            if STATUS.get(n) is None:
                assert tb.root("ln -sfn %s/node_modules/%s /usr/local/bin/%s" % (INSIDE, path, n)).rc == 0
                # run by dev, in the testbed, outside any sandbox: does it start at all?
                r = tb.dev("%s --version" % n, timeout=120)
                if r.rc != 0:
                    STATUS[n] = "%s --version failed (remove %s to install again): %s" % (n, CLIS, r.err[-500:])
    yield STATUS
    tb.root("rm -f %s; umount %s 2>/dev/null" % (" ".join("/usr/local/bin/" + n for n in PACKAGES), INSIDE))


@pytest.fixture
def bpfd(tb):
    # the agents' profiles filter the network: scudo-bpfd must run
    if not os.path.exists(built("src/bpfd/scudo-bpfd")) or not BPFD:
        pytest.skip("scudo-bpfd not built (meson -Dbpf=enabled)")
    start_bpfd(tb, "--exit-idle-time=5")
    yield tb
    stop_bpfd(tb)


# What the scripted model asks for, a command a turn, each saying how it went.
COMMANDS = [
    # a real npm install of a local tarball (no network): npm's profile, a unit of its own
    "grep ^0:: /proc/self/cgroup | sed 's/^/agent-cgroup=/'; npm install --offline --no-audit --no-fund 2>&1;"
    " echo npm-rc=$?",
    "cat ~/.ssh/id_agent_test 2>&1; echo cat-rc=$?",
    "echo 'echo pwned' >> ~/.bashrc; echo bashrc-rc=$?",
    "git add -A 2>&1 && git commit -qm 'agent: use greet' 2>&1; echo commit-rc=$?",
    "python3 -c \"import socket; s = socket.socket(); s.settimeout(5); "
    "print('net-rc', s.connect_ex(('127.0.0.9', 9)))\"",
    "%s --fs-write ~ true 2>&1; echo widen-rc=$?" % Q,
]
FINAL = "ALL STEPS DONE"

GREET = {"name": "greet", "version": "1.0.0",
         # npm's INIT_CWD: where `npm install` was started, the project
         "scripts": {"postinstall": "grep ^0:: /proc/self/cgroup > \"$INIT_CWD/npm-cgroup\""}}
PROJECT = {"name": "agent-project", "version": "1.0.0", "private": True,
           "dependencies": {"greet": "file:vendor/greet-1.0.0.tgz"}}


@pytest.fixture
def scene(tb, work, bpfd):
    """A git project with a local npm dependency, a planted key, the model server running."""
    tb.dev("rm -rf ~/.claude ~/.claude.json ~/.codex ~/.fake-model ~/.npm")
    r = tb.dev("""set -e
mkdir -p ~/.ssh ~/.fake-model && chmod 700 ~/.ssh && echo %(mark)s > ~/.ssh/id_agent_test
test -e ~/.bashrc || echo '# dev' > ~/.bashrc
test -e ~/.gitconfig || { git config --global user.name Dev; git config --global user.email dev@example.org;
  touch ~/.fake-model/gitconfig-ours; }
cd %(w)s && git init -q . && mkdir -p vendor/src/package
printf '%%s' %(greet)s > vendor/src/package/package.json
tar czf vendor/greet-1.0.0.tgz -C vendor/src package && rm -rf vendor/src
printf '%%s' %(proj)s > package.json && printf 'node_modules/\\nnpm-cgroup\\n' > .gitignore
git add -A && git commit -qm initial""" % {
        "mark": KEY_MARK, "w": work, "greet": shlex.quote(json.dumps(GREET)),
        "proj": shlex.quote(json.dumps(PROJECT))})
    assert r.rc == 0, r
    script = json.dumps({"commands": COMMANDS, "final": FINAL})
    assert tb.dev("cat > ~/.fake-model/script.json", input=script.encode()).rc == 0
    tb.dev("cd ~/.fake-model || exit 1; setsid python3 %s --script script.json --log log.jsonl --port-file port"
           " </dev/null >server.out 2>&1 & echo $! > ~/.fake-model/pid" % helper("fake_model.py"))
    assert wait_for(lambda: tb.dev("test -s ~/.fake-model/port").rc == 0, 30), tb.dev("cat ~/.fake-model/*")
    port = int(tb.dev("cat ~/.fake-model/port").out)
    before = tb.root("sha256sum /home/dev/.ssh/id_agent_test /home/dev/.bashrc").out
    since = tb.root("date +%s").out.strip()
    yield {"work": work, "port": port, "before": before, "since": since}
    tb.dev("kill $(cat ~/.fake-model/pid); test -e ~/.fake-model/gitconfig-ours && rm -f ~/.gitconfig;"
           " rm -rf ~/.fake-model ~/.ssh/id_agent_test ~/.config/scudo/config.toml ~/.claude ~/.claude.json ~/.codex")
    assert wait_for(lambda: not tb.user_units("scudo-*"), 15), tb.user_units("scudo-*")


def requests(tb):
    r = tb.root("cat /home/dev/.fake-model/log.jsonl")
    return r.out, [json.loads(l) for l in r.out.splitlines() if l.strip()]


def user_config(tb, text):
    assert tb.dev("mkdir -p ~/.config/scudo && cat > ~/.config/scudo/config.toml", input=text.encode()).rc == 0


def journal(tb, scene):
    """scudo's journal entries since the scene was set (the agents' reports go there)."""
    return tb.root("journalctl -q --no-pager -o cat --since @%s SYSLOG_IDENTIFIER=scudo" % scene["since"]).out


def check_scene(tb, scene, outputs, run):
    """outputs: what the agent sent back for each command, in order."""
    assert len(outputs) == len(COMMANDS), (outputs, run)
    npm, cat, bashrc, commit, net, widen = outputs
    w = scene["work"]
    # npm install ran, delegated: in a unit of its own (npm's), not the agent's, and installed
    assert "npm-rc=0" in npm, npm
    assert tb.root("test -f %s/node_modules/greet/package.json" % w).rc == 0, npm
    agent_cg = [l.split("=", 1)[1] for l in npm.splitlines() if l.startswith("agent-cgroup=")]
    npm_cg = tb.root("cat %s/npm-cgroup" % w).out.strip()
    assert agent_cg and agent_cg[0].startswith("0::/") and "/scudo-" in agent_cg[0], npm
    assert npm_cg.startswith("0::/") and "/scudo-" in npm_cg and npm_cg.endswith(".service"), npm_cg
    assert npm_cg != agent_cg[0] and not npm_cg.startswith(agent_cg[0].rstrip("/") + "/"), (npm_cg, agent_cg)
    # under npm's profile: ~/.npm, which only that profile grants (made when missing), has npm's cache
    assert tb.root("ls /home/dev/.npm").out.split(), npm
    # the key stays hidden: the agent could not read it, sent nothing of it, the file is as it was
    assert "cat-rc=0" not in cat and "cat-rc=" in cat, cat
    log, _ = requests(tb)
    assert KEY_MARK not in log
    # ~/.bashrc as it was: the agent's home is an empty tmpfs (its own state bound in), where
    # the write succeeds and is lost with the sandbox
    assert "bashrc-rc=" in bashrc, bashrc
    assert tb.root("sha256sum /home/dev/.ssh/id_agent_test /home/dev/.bashrc").out == scene["before"]
    # the commit landed
    assert "commit-rc=0" in commit, commit
    r = tb.dev("git -C %s log --format=%%s" % w)
    assert r.out.split("\n")[:2] == ["agent: use greet", "initial"], r
    # the connection the profile does not allow was refused (EPERM), and reported
    assert "net-rc 1" in net, net
    assert wait_for(lambda: "refused connection to 127.0.0.9:9" in journal(tb, scene), 15), journal(tb, scene)
    # widening from inside is refused
    assert "widen-rc=125" in widen and "is refused inside a scudo sandbox" in widen, widen
    # and the broker said npm install was delegated
    assert wait_for(lambda: "'npm install --offline --no-audit --no-fund' delegated, exit status 0"
                    in journal(tb, scene), 15), journal(tb, scene)


def needs(clis, name):
    if clis.get(name) is not None:
        pytest.skip("%s is not available: %s" % (name, clis[name]))


# Named before `scene` by the tests: a CLI that is not there skips before anything is set up.
@pytest.fixture
def claude(clis):
    needs(clis, "claude")


@pytest.fixture
def codex(clis):
    needs(clis, "codex")


def test_claude_code(tb, claude, scene):
    port = scene["port"]
    user_config(tb, '[claude]\nnetwork.allow = ["127.0.0.1:%d"]\nenv.ANTHROPIC_BASE_URL = "http://127.0.0.1:%d"\n'
                % (port, port))
    # No ~/.claude.json (the scene removed it): the profile makes it, holding {}, which Claude
    # takes for "nothing yet" (an empty file it rejects as corrupt)
    assert tb.dev("test -e ~/.claude.json").rc != 0
    # -p: no terminal, one prompt; the sandbox is what holds it back, not Claude's permissions
    run = tb.dev("cd %s && ANTHROPIC_API_KEY=sk-ant-test-fake %s claude -p 'do the steps'"
                 " --dangerously-skip-permissions </dev/null" % (scene["work"], Q), timeout=300)
    assert run.rc == 0 and FINAL in run.out, run
    _, reqs = requests(tb)
    last = [r["body"] for r in reqs if r["path"].startswith("/v1/messages") and r["body"]
            and any(t.get("name") == "Bash" for t in r["body"].get("tools") or [])][-1]
    results = {}
    for m in last["messages"]:
        for c in m["content"] if isinstance(m["content"], list) else []:
            if c.get("type") == "tool_result":
                content = c["content"]
                if isinstance(content, list):
                    content = "".join(x.get("text", "") for x in content)
                results[c["tool_use_id"]] = content
    check_scene(tb, scene, [results.get("toolu_fake_%d" % i, "") for i in range(len(COMMANDS))], run)
    # its state is kept for the next run: the settings file and ~/.claude, made by scudo, and
    # what Claude wrote in the sandbox is in the real file, read from outside
    state = json.loads(tb.root("cat /home/dev/.claude.json").out)
    assert "firstStartTime" in state, state
    assert tb.root("stat -c %U:%a /home/dev/.claude.json").out.strip() == "dev:600"
    assert tb.root("test -d /home/dev/.claude/projects").rc == 0


def test_codex(tb, codex, scene):
    port = scene["port"]
    # Codex takes its endpoint from a provider of its own configuration (OPENAI_BASE_URL does
    # not move the built-in one); written outside, as a user sets it up once
    codex_config(tb, port)
    # its own sandbox off: scudo's is the one under test
    run = tb.dev("cd %s && OPENAI_API_KEY=sk-test-fake %s codex exec --dangerously-bypass-approvals-and-sandbox"
                 " 'do the steps' </dev/null" % (scene["work"], Q), timeout=300)
    assert run.rc == 0 and FINAL in run.out, run
    _, reqs = requests(tb)
    last = [r["body"] for r in reqs if r["path"].startswith("/v1/responses") and r["body"]][-1]
    results = {i["call_id"]: i["output"] for i in last["input"] if i.get("type") == "function_call_output"}
    outputs = []
    for i in range(len(COMMANDS)):
        o = results.get("call_fake_%d" % i, "")
        outputs.append(o if isinstance(o, str) else json.dumps(o))
    check_scene(tb, scene, outputs, run)
    # its state is kept for the next run
    assert tb.root("test -d /home/dev/.codex/sessions").rc == 0


def codex_config(tb, port):
    user_config(tb, '[codex]\nnetwork.allow = ["127.0.0.1:%d"]\n' % port)
    conf = ('model_provider = "fake"\nmodel = "gpt-5.1-codex"\n[model_providers.fake]\nname = "fake"\n'
            'base_url = "http://127.0.0.1:%d/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n' % port)
    assert tb.dev("mkdir -p ~/.codex && cat > ~/.codex/config.toml", input=conf.encode()).rc == 0


def test_codex_own_sandbox_and_delegation(tb, codex, scene):
    # Codex's own sandbox (workspace-write) inside scudo's: without network access it refuses
    # the broker's socket too, and a delegated command fails saying why, never run in place;
    # with network access (scudo's rules still decide where to), it is delegated
    codex_config(tb, scene["port"])
    script = {"commands": ["npm --version 2>&1; echo npm-rc=$?"], "final": FINAL}
    assert tb.dev("cat > ~/.fake-model/script.json", input=json.dumps(script).encode()).rc == 0
    outs = []
    for extra in ("", "-c sandbox_workspace_write.network_access=true"):
        tb.dev(": > ~/.fake-model/log.jsonl")
        run = tb.dev("cd %s && OPENAI_API_KEY=sk-test-fake %s codex exec --sandbox workspace-write %s"
                     " 'do the steps' </dev/null" % (scene["work"], Q, extra), timeout=300)
        assert run.rc == 0 and FINAL in run.out, run
        _, reqs = requests(tb)
        last = [r["body"] for r in reqs if r["path"].startswith("/v1/responses") and r["body"]][-1]
        outs.append("".join(i["output"] for i in last["input"] if i.get("type") == "function_call_output"))
    refused, allowed = outs
    assert "npm-rc=0" not in refused and "'npm' was not run" in refused, refused
    assert "the agent's own sandbox refuses sockets" in refused, refused
    assert "npm-rc=0" in allowed, allowed
    assert wait_for(lambda: "'npm --version' delegated, exit status 0" in journal(tb, scene), 15), journal(tb, scene)
