# SPDX-License-Identifier: MIT OR Apache-2.0
"""Credentials stay out of every sandbox that does not exist to use them (issue 28): a tool's
sandbox, started by an agent through delegation, gets an environment by allow-list and sees
its configuration files less their credentials; builds still get their compiler variables;
the package managers still work. Each test sets the credentials up as a user would have them
(made-up values in the formats real services issue), runs scudo as dev, and judges from outside
what the command saw, and that the files on the host are unchanged."""
import base64
import io
import os
import shlex
import zipfile

import pytest

from conftest import SCUDO, built, wait_for
from test_network import install_helper

Q = shlex.quote(SCUDO)

AGENT = """#!/bin/sh
# the stand-in agent: runs what it is given
exec "$@"
"""

# The stand-in tool prints its environment and the configuration file its profile shows it.
TOOL = """#!/bin/sh
case "$1" in
env) env ;;
config) cat ~/.cred-tool/config; echo "--"; cat ~/.config/cred-tool/settings.json ;;
cat) shift; cat "$@" ;;
git) shift; git "$@" ;;
esac
"""

# A delegable tool of the supply-chain family, and an agent that delegates it.
PROFILES = """
[cred-agent]
extend = "git-project"
match = ["cred-agent.sh"]
delegate = ["cred-tool"]

[cred-tool]
extend = "supply-chain"
match = ["cred-tool.sh"]
filesystem.read = ["~/.cred-tool/config", "${XDG_CONFIG_HOME}/cred-tool"]
allow_env = ["CRED_TOOL_HOME"]
"""

KUBECONFIG = ("apiVersion: v1\nkind: Config\nusers:\n- name: dev\n  user:\n"
              "    token: kube0123456789abcdefXYZ\n")

# Credentials under the names real tools read them from, each with a value found nowhere else.
SECRETS = {
    "GITHUB_TOKEN": "ghp_" + "Q1w2E3r4T5" * 4,
    "AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=acct;"
                                       "AccountKey=Zm9vYmFyYmF6cXV4cXV1eDAxMjM0NTY3ODk=;",
    "VAULT_TOKEN": "hvs.CAESIJ" + "a1b2c3d4e5" * 3,
    "DIGITALOCEAN_ACCESS_TOKEN": "dop_v1_" + "0123456789abcdef" * 4,
    "SLACK_WEBHOOK": "https://hooks.slack.com/services/T00000001/B00000001/" + "Xx9Yy8Zz7" * 3,
    "KUBE_CONFIG_DATA": base64.b64encode(KUBECONFIG.encode()).decode(),
    "BUNDLE_GEMS__EXAMPLE__COM": "deploy:gemPass2024",
    "JAVA_TOOL_OPTIONS": "-Djavax.net.ssl.keyStorePassword=ksPass2024 -Xmx1g",
    "MAVEN_OPTS": "-Dgpg.passphrase=gpgPhrase2024",
    "SQLCONNSTR_main": "Server=db;Database=app;User Id=sa;Pwd=sqlPw2024;",
    "NETRC_LINE": "machine api.example.com login dev password netrcPw2024",
    "OPENAI_PROJECT": "sk-proj-" + "Aa1Bb2Cc3Dd4" * 3,
    "STRIPE_RESTRICTED": "rk_live_" + "51HabcDEF" * 3,
    "HTTPS_PROXY": "http://proxyuser:proxyPw2024@proxy.example:3128",
}

# What a build needs, kept.
KEPT = {"CFLAGS": "-O2 -DKEPT_FLAG", "CC": "gcc", "MAKEFLAGS": "-j2", "LANG": "C.UTF-8",
        "CRED_TOOL_HOME": "/home/dev/ctool", "PKG_CONFIG_PATH": "/usr/lib/pkgconfig"}

CONFIG = ("registry = https://registry.example/\n[auth]\nuser = dev\nkey = cfgKey2024abc\n[build]\n"
          "jobs = 4\ntoken = \"cfgTok2024abcdef\"\nmirror = https://dev:cfgPw2024@mirror.example/\n")
SETTINGS = ('{"process-timeout": 600, "github-oauth": {"github.com": "0123456789abcdef0123456789abcdef0badc0de"},'
            ' "http-basic": {"repo.example": {"username": "dev", "password": "jsonPw2024"}}}\n')
CONFIG_SECRETS = ["cfgKey2024abc", "cfgTok2024abcdef", "cfgPw2024", "0badc0de", "jsonPw2024"]


@pytest.fixture(scope="module")
def net(tb):
    """scudo-bpfd as the testbed's service: make's and pip's profiles have network rules."""
    if not os.path.exists(built("src/bpfd/scudo-bpfd")):
        pytest.skip("scudo-bpfd not built (meson -Dbpf=enabled): the tools' profiles have network rules")
    install_helper(tb)
    yield tb
    tb.root("systemctl stop scudo-bpfd.socket scudo-bpfd.service")


def env_args(d):
    return " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in d.items())


def install(tb, path, text):
    r = tb.root("cat > %s && chmod 755 %s" % (path, path), input=text.encode())
    assert r.rc == 0, r


@pytest.fixture
def cred(tb, work):
    install(tb, "/usr/local/bin/cred-agent.sh", AGENT)
    install(tb, "/usr/local/bin/cred-tool.sh", TOOL)
    r = tb.dev("mkdir -p ~/.cred-tool ~/.config/cred-tool && cat > ~/.cred-tool/config", input=CONFIG.encode())
    assert r.rc == 0, r
    r = tb.dev("cat > ~/.config/cred-tool/settings.json", input=SETTINGS.encode())
    assert r.rc == 0, r
    r = tb.dev("cd %s && git init -q . && cat > .scudo.toml && %s trust --yes" % (work, Q), input=PROFILES.encode())
    assert r.rc == 0, r
    yield work
    tb.dev("rm -rf ~/.cred-tool ~/.config/cred-tool")
    assert wait_for(lambda: not tb.user_units("scudo-*"), 10), tb.user_units("scudo-*")


def agent(tb, cwd, script, env=""):
    """The agent (under its profile, from `cwd`, with `env`) runs `script`; tools by name."""
    return tb.dev("cd %s || exit 1; %s %s cred-agent.sh sh -c %s </dev/null"
                  % (cwd, env, Q, shlex.quote(script)))


def test_delegated_tool_gets_no_credential_from_the_environment(tb, cred):
    r = agent(tb, cred, "cred-tool.sh env; echo rc=$?", env_args(SECRETS) + " " + env_args(KEPT))
    assert "rc=0" in r.out, r
    # delegated: the tool ran under its own profile (its allow_env passed its variable)
    assert "CRED_TOOL_HOME=/home/dev/ctool" in r.out, r
    for name, value in SECRETS.items():
        assert value not in r.out and ("%s=" % name) not in r.out, (name, r)
    for secret in ("kube0123456789abcdefXYZ", "gemPass2024", "ksPass2024", "proxyPw2024"):
        assert secret not in r.out, (secret, r)
    for name, value in KEPT.items():
        assert "%s=%s" % (name, value) in r.out, (name, r)


def test_delegated_tool_sees_its_configuration_less_credentials(tb, cred):
    r = agent(tb, cred, "cred-tool.sh config; echo rc=$?")
    assert "rc=0" in r.out, r
    for secret in CONFIG_SECRETS:
        assert secret not in r.out, (secret, r)
    # the rest of each file is shown as written
    assert "registry = https://registry.example/" in r.out and "jobs = 4" in r.out, r
    assert '"process-timeout": 600' in r.out and '"username": "dev"' in r.out, r
    # the files on the host are unchanged, and no copy is left behind
    assert tb.root("cat /home/dev/.cred-tool/config").out == CONFIG
    assert tb.root("cat /home/dev/.config/cred-tool/settings.json").out == SETTINGS
    assert tb.root("ls /run/user/%s/scudo 2>/dev/null | grep git-config- || true" % tb.uid).out.strip() == ""


VENDORED_TOKEN = "ghp_" + "V3nd0r3d7k" * 4


def test_vendored_repository_configuration_is_shown_less_its_token(tb, cred):
    # a repository vendored five levels down the (writable) project, with a token in a remote
    lib = "third_party/a/b/c/lib"
    url = "https://user:%s@github.com/x/lib.git" % VENDORED_TOKEN
    r = tb.dev("cd %s && git init -q %s && git -C %s remote add origin %s && cat %s/.git/config"
               % (cred, lib, lib, url, lib))
    assert r.rc == 0 and VENDORED_TOKEN in r.out, r
    before = r.out
    r = tb.dev("cd %s && %s cred-tool.sh cat %s/.git/config; echo rc=$?; %s cred-tool.sh git -C %s "
               "config --get-regexp '^remote'; echo rc=$?" % (cred, Q, lib, Q, lib))
    assert r.out.count("rc=0") == 2, r
    assert VENDORED_TOKEN not in r.out and VENDORED_TOKEN not in r.err, r
    # the rest of it is there, and git inside still reads it
    assert "repositoryformatversion = 0" in r.out and "remote.origin.fetch" in r.out, r
    # the host file is unchanged, and no copy is left behind
    assert tb.root("cat %s/%s/.git/config" % (cred, lib)).out == before
    assert tb.root("ls /run/user/%s/scudo 2>/dev/null | grep git-config- || true" % tb.uid).out.strip() == ""


NESTED_TOKEN = "ghp_" + "N3st3dL8r" * 4 + "abcd"
# More than the project walk's cache counts as "changed just now" (git-dir-cache.h: 2 s).
RACY_WAIT = 3


def cache_files(tb):
    """The project walk's cache files, with their hashes, as root sees them from outside."""
    r = tb.root("cd /run/user/%s/scudo/git-dirs 2>/dev/null && sha256sum * 2>/dev/null || true" % tb.uid)
    return sorted(r.out.split("\n"))


def test_repository_made_outside_between_runs_is_filtered_on_the_next(tb, cred):
    # The walk of the project is cached between runs, and a directory it did not read again
    # would hide a repository made there since. One made outside, deep down, in a directory
    # whose mtime is then set back (as a command could, with utimensat): its token stays out.
    deep = "src/a/b"
    r = tb.dev("cd %s && mkdir -p %s && sleep %d && %s cred-tool.sh cat /dev/null; echo rc=$?"
               % (cred, deep, RACY_WAIT, Q))
    assert "rc=0" in r.out, r
    first = cache_files(tb)
    assert first != [""], "no cache of the walk written"
    r = tb.dev("cd %s && %s cred-tool.sh cat /dev/null; echo rc=$?" % (cred, Q))
    assert "rc=0" in r.out, r
    # nothing changed: the second run read nothing again, and so wrote nothing
    assert cache_files(tb) == first, "the cache of the walk was not used"
    url = "https://user:%s@github.com/x/lib.git" % NESTED_TOKEN
    r = tb.dev("cd %s && before=$(stat -c %%y %s) && git init -q %s/lib && git -C %s/lib remote add origin %s && "
               "touch -d \"$before\" %s && stat -c %%y %s && echo \"$before\""
               % (cred, deep, deep, deep, url, deep, deep))
    assert r.rc == 0, r
    now, before = r.out.strip().split("\n")
    assert now == before, r     # the mtime is back where it was
    r = tb.dev("cd %s && %s cred-tool.sh cat %s/lib/.git/config; echo rc=$?; %s cred-tool.sh git -C %s/lib "
               "config --get-regexp '^remote'; echo rc=$?" % (cred, Q, deep, Q, deep))
    assert r.out.count("rc=0") == 2, r
    assert NESTED_TOKEN not in r.out and NESTED_TOKEN not in r.err, r
    assert "repositoryformatversion = 0" in r.out and "remote.origin.fetch" in r.out, r


def test_sandbox_cannot_alter_the_project_walk_cache(tb, cred):
    # The cache decides which directories a run reads again: a sandbox that could write it
    # would hide a repository from the next run. It is below /run/user/UID/scudo, which no
    # sandbox reaches, even one granted the runtime directory.
    r = tb.dev("cd %s && %s cred-tool.sh cat /dev/null; echo rc=$?" % (cred, Q))
    assert "rc=0" in r.out, r
    before = cache_files(tb)
    assert before != [""], "no cache of the walk written"
    run = "/run/user/%s" % tb.uid
    # The attacks start in the home, which is no project: their runs write no cache of their own.
    # each in a subshell: a redirection that fails ends a non-interactive sh
    attack = ("for f in %s/scudo/git-dirs/*; do (echo x >> \"$f\") && echo wrote; (true > \"$f\") && "
              "echo emptied; done; mv %s/scudo %s/moved && echo moved; mkdir -p %s/scudo/git-dirs && echo made; "
              "(echo x > %s/probe) && echo probe-ok; rm -f %s/probe; echo done" % (run, run, run, run, run, run))
    for grant in ([], ["--fs-write", run]):
        r = tb.scudo(grant + ["sh", "-c", attack])
        assert "done" in r.out, r
        for what in ("wrote", "emptied", "moved"):
            assert what not in r.out, (what, grant, r)
        # granted, the runtime directory itself is writable: only scudo's own part is kept out
        assert not grant or "probe-ok" in r.out, r
        assert cache_files(tb) == before, (grant, r)
    # a grant of the cache itself is refused
    r = tb.scudo(["--fs-write", run + "/scudo/git-dirs", "true"])
    assert r.rc == 125 and "no profile can grant" in r.err, r
    assert cache_files(tb) == before


def test_explain_names_what_an_allow_list_keeps_and_drops(tb, cred):
    r = tb.dev("cd %s && %s %s explain cred-tool.sh env" % (cred, env_args(SECRETS) + " " + env_args(KEPT), Q))
    assert r.rc == 0, r
    assert "not in allow_env (deny_env '*'" in r.out, r
    keeps = [l for l in r.out.splitlines() if l.strip().startswith("keeps ")]
    assert keeps and "CFLAGS" in keeps[0] and "MAKEFLAGS" in keeps[0], r
    assert "HTTPS_PROXY: value is a URL with a password" in r.out, r
    assert "a tool's configuration that holds credentials" in r.out, r
    for value in SECRETS.values():
        assert value not in r.out, (value, r)


def test_run_prints_no_line_per_dropped_variable(tb, cred):
    r = tb.dev("cd %s && %s %s cred-tool.sh env >/dev/null" % (cred, env_args(SECRETS), Q))
    assert r.rc == 0, r
    for name in SECRETS:
        assert name not in r.err, (name, r)


def test_default_sandbox_judges_values_by_structure(tb, work):
    # no allow-list there: the caller's environment less what is a credential by its structure
    harmless = {"H_AZ": SECRETS["AZURE_STORAGE_CONNECTION_STRING"], "H_VAULT": SECRETS["VAULT_TOKEN"],
                "H_KUBE": SECRETS["KUBE_CONFIG_DATA"], "H_JAVA": SECRETS["JAVA_TOOL_OPTIONS"],
                "H_SQL": SECRETS["SQLCONNSTR_main"], "H_NETRC": SECRETS["NETRC_LINE"],
                "H_HOOK": SECRETS["SLACK_WEBHOOK"], "H_DO": SECRETS["DIGITALOCEAN_ACCESS_TOKEN"]}
    r = tb.dev("cd %s && %s KEEP_THIS=kept LS_COLORS='di=01;34:ln=01;36' %s env" % (work, env_args(harmless), Q))
    assert r.rc == 0, r
    for name, value in harmless.items():
        assert value not in r.out and ("%s=" % name) not in r.out, (name, r)
    assert "KEEP_THIS=kept" in r.out and "LS_COLORS=di=01;34:ln=01;36" in r.out, r


def test_make_gets_the_build_variables_and_no_credential(net, work):
    tb = net
    if tb.dev("command -v make").rc != 0:
        pytest.skip("make is not installed in the testbed")
    tb.dev("cd %s && printf 'all:\\n\\t@echo \"cc=$(CC) cflags=$(CFLAGS) mf=$$MAKEFLAGS tok=$$GITHUB_TOKEN\"\\n'"
           " > Makefile" % work)
    r = tb.dev("cd %s && CC=gcc CFLAGS='-O2 -DKEPT_FLAG' MAKEFLAGS=-s GITHUB_TOKEN=%s %s make"
               % (work, SECRETS["GITHUB_TOKEN"], Q))
    assert r.rc == 0, r
    assert "cc=gcc cflags=-O2 -DKEPT_FLAG" in r.out and "mf=s" in r.out, r
    assert "tok=" in r.out and SECRETS["GITHUB_TOKEN"] not in r.out, r


def wheel():
    """A wheel of one module, made here: pip installs it with no index and no network."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("credtest/__init__.py", "VALUE = 'installed'\n")
        z.writestr("credtest-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: credtest\nVersion: 0.1\n")
        z.writestr("credtest-0.1.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                   "Tag: py3-none-any\n")
        z.writestr("credtest-0.1.dist-info/RECORD", "")
    return buf.getvalue()


def test_pip_installs_a_local_wheel_with_the_allow_list(net, work):
    tb = net
    if tb.dev("python3 -m pip --version").rc != 0:
        pytest.skip("python3 -m pip is not installed in the testbed (python3-pip)")
    r = tb.dev("cat > %s/credtest-0.1-py3-none-any.whl" % work, input=wheel())
    assert r.rc == 0, r
    r = tb.dev("cd %s && GITHUB_TOKEN=%s PIP_NO_INPUT=1 %s python3 -m pip install --no-index "
               "--target %s/site ./credtest-0.1-py3-none-any.whl" % (work, SECRETS["GITHUB_TOKEN"], Q, work),
               timeout=120)
    assert r.rc == 0, r
    r = tb.root("cat %s/site/credtest/__init__.py" % work)
    assert "installed" in r.out, r
