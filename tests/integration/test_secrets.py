# SPDX-License-Identifier: MIT OR Apache-2.0
"""Secrets that are no files of their own: credentials in the environment, in git's
configuration and credential stores, and other programs' log lines in the journal (issue 15,
items 6, 9 and 10). Each test sets the secret up as the user would have it, runs scudo as dev,
and judges from outside what the command saw: by its output, and for the journal as root."""
import shlex

from conftest import SCUDO, wait_for

Q = shlex.quote(SCUDO)

# The names an attack run saw reach `scudo env`, each with a value found nowhere else.
NAMED = {
    "BW_SESSION": "bw-sess-1",
    "OP_SESSION_my": "op-sess-2",
    "GITHUB_PAT": "gh-pat-3",
    "SECRET_KEY_BASE": "skb-4",
    "DATABASE_URL": "db-url-5",
    "DB_PASS": "db-pass-6",
    "MY_CREDENTIAL": "cred-7",
    "OPENAI_KEY": "oai-8",
    "PRIVATE_KEY": "pk-9",
    "SENTRY_DSN": "dsn-10",
    "Some_Token_Here": "tok-11",
    "APP_AUTH_HEADER": "auth-12",
    "SLACK_WEBHOOK_URL": "hook-13",
}

# Harmless names holding credentials by their shape (made-up tokens of the real formats).
BY_VALUE = {
    "HARMLESS_A": ("ghp_" + "a1B2c3D4e5" * 4, "a GitHub token"),
    "HARMLESS_B": ("glpat-" + "x9Y8z7W6v5" * 2, "a GitLab token"),
    "HARMLESS_C": ("xoxb-1234567890-" + "abcdefghij", "a Slack token"),
    "HARMLESS_D": ("sk-proj-" + "Q1w2E3r4T5" * 3, "an OpenAI key"),
    "HARMLESS_E": ("sk-ant-api03-" + "Z0y9X8w7V6" * 3, "an Anthropic key"),
    "HARMLESS_F": ("AKIA" + "QWERTYUIOP123456", "an AWS access key id"),
    "HARMLESS_G": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXYtand0In0.c2lnbmF0dXJl", "a JSON Web Token"),
    "HARMLESS_H": ("https://deploy:hunter2pw@git.example/r.git", "a URL with a password"),
    "HARMLESS_I": ("-----BEGIN OPENSSH PRIVATE KEY-----", "a PEM private key"),
}


def env_args(d):
    return " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in d.items())


def test_env_credential_names_removed(tb, work):
    r = tb.dev("cd %s && %s KEEP_THIS=kept XDG_SESSION_TYPE=wayland GIT_AUTHOR_NAME=Dev %s env"
               % (work, env_args(NAMED), Q))
    assert r.rc == 0, r
    for name, value in NAMED.items():
        assert name not in r.out and value not in r.out, (name, r)
    # The rest is there, and so are the names the patterns would catch but give back.
    for kept in ("KEEP_THIS=kept", "XDG_SESSION_TYPE=wayland", "GIT_AUTHOR_NAME=Dev"):
        assert kept in r.out, (kept, r)


def test_env_credential_values_removed_whatever_the_name(tb, work):
    values = {k: v for k, (v, _) in BY_VALUE.items()}
    r = tb.dev("cd %s && %s KEEP_THIS=kept %s env" % (work, env_args(values), Q))
    assert r.rc == 0, r
    for name, value in values.items():
        assert name not in r.out and value not in r.out, (name, r)
    assert "KEEP_THIS=kept" in r.out, r


def test_env_explain_names_each_variable_and_its_rule_never_the_value(tb, work):
    values = {k: v for k, (v, _) in BY_VALUE.items()}
    r = tb.dev("cd %s && %s %s %s explain env" % (work, env_args(NAMED), env_args(values), Q))
    assert r.rc == 0, r
    lines = {l.split(":")[0].strip(): l for l in r.out.splitlines() if l.startswith("  ")}
    assert "BW_SESSION: name matches deny_env '*_SESSION*'" in r.out, r
    assert "SENTRY_DSN: name matches deny_env '*_DSN'" in r.out, r
    for name in NAMED:
        assert "name matches deny_env" in lines.get(name, ""), (name, r)
    for name, (_, kind) in BY_VALUE.items():
        assert "%s: value is %s" % (name, kind) in r.out, (name, r)
    for value in list(NAMED.values()) + list(values.values()):
        assert value not in r.out, (value, r)


def test_env_exact_grant_passes_a_credential_value(tb, work):
    token = BY_VALUE["HARMLESS_A"][0]
    r = tb.scudo(["--allow-env", "HARMLESS_A", "sh", "-c", 'echo "[$HARMLESS_A][$HARMLESS_B]"'], cwd=work,
                 extra_env="HARMLESS_A=%s HARMLESS_B=%s" % (token, BY_VALUE["HARMLESS_B"][0]))
    assert r.rc == 0 and r.out == "[%s][]\n" % token, r
    # A glob is no explicit grant: the value rule still holds.
    r = tb.scudo(["--allow-env", "HARMLESS_*", "sh", "-c", 'echo "[$HARMLESS_A]"'], cwd=work,
                 extra_env="HARMLESS_A=%s" % token)
    assert r.rc == 0 and r.out == "[]\n", r
    r = tb.scudo(["explain", "--allow-env", "HARMLESS_A", "true"], cwd=work, extra_env="HARMLESS_A=%s" % token)
    assert "HARMLESS_A: passed although its value is a GitHub token: named by allow_env, --allow-env" in r.out, r
    assert token not in r.out, r


# ---------------------------------------------------------------------------------------------
# The journal (item 6)

def test_journal_files_hidden_logging_still_reaches_the_journal(tb, work):
    tag = "scudo-it-" + work.rsplit("-", 1)[1]
    outside = "outside-secret-" + tag
    tb.dev("logger -t %s-out %s" % (tag, outside))
    assert wait_for(lambda: outside in tb.root("journalctl --no-pager -t %s-out" % tag).out, timeout=10)
    # Control: outside, dev reads that line back from the journal's files.
    assert outside in tb.dev("journalctl --no-pager -t %s-out" % tag).out
    r = tb.scudo(["sh", "-c", "logger -t %s-in via-logger-%s; echo via-cat-%s | systemd-cat -t %s-in; "
                  "echo @files; ls -A /var/log/journal /run/log/journal; echo @log; "
                  "journalctl --no-pager -t %s-out; journalctl --no-pager -n 50" % (tag, tag, tag, tag, tag)],
                 cwd=work)
    assert "@files" in r.out and "@log" in r.out, r
    assert outside not in r.out, r
    files = r.out.split("@files", 1)[1].split("@log", 1)[0]
    # no journal file: each directory empty (or, for /run/log/journal under the empty /run,
    # not there at all)
    assert files.split() in ([], ["/var/log/journal:"], ["/run/log/journal:", "/var/log/journal:"],
                             ["/var/log/journal:", "/run/log/journal:"]), r
    # Both ways of logging from inside reach the journal, read as root outside.
    for line in ("via-logger-" + tag, "via-cat-" + tag):
        assert wait_for(lambda: line in tb.root("journalctl --no-pager -t %s-in" % tag).out, timeout=10), (line, r)


# ---------------------------------------------------------------------------------------------
# git's credentials (item 10)

def git_project(tb, work):
    r = tb.dev("cd %s && git init -q . && git config user.email dev@example.invalid" % work)
    assert r.rc == 0, r


def test_git_credential_stores_denied(tb, work):
    git_project(tb, work)
    tb.dev("mkdir -p ~/.config/git ~/.cache/git/credential && "
           "echo 'https://dev:store-secret-1@git.example' > ~/.config/git/credentials && "
           "echo 'https://dev:store-secret-2@git.example' > ~/.git-credentials && "
           "echo '[core]' > ~/.config/git/config && echo '\teditor = ed-marker' >> ~/.config/git/config")
    try:
        r = tb.scudo(["-p", "git-project", "sh", "-c",
                      "cat ~/.config/git/credentials ~/.git-credentials; ls -A ~/.cache/git/credential; "
                      "git config --get core.editor"], cwd=work)
        assert "store-secret" not in r.out, r
        assert "ed-marker" in r.out, r          # the rest of ~/.config/git is there
        # Control: dev reads both outside.
        assert "store-secret-1" in tb.dev("cat ~/.config/git/credentials").out
    finally:
        tb.dev("rm -rf ~/.config/git ~/.git-credentials ~/.cache/git")


GH_TOKEN = "ghp_" + "Z9y8X7w6V5" * 4
GITCONFIG = """[user]
\tname = Dev Marker
[url "https://dev:%s@github.com/"]
\tinsteadOf = https://github.com/
[http]
\textraHeader = AUTHORIZATION: basic extraheader-secret
\tcookieFile = ~/.gitcookies-secret
[credential]
\thelper = "!f() { echo password=helper-secret; }; f"
[include]
\tpath = ~/.config/git/work.inc
[alias]
\tst = status
""" % GH_TOKEN
WORK_INC = """[sendemail]
\tsmtpPass = smtp-secret
\tsmtpServer = mail.example
"""
PROJECT_REMOTE = "https://x-access-token:project-secret@github.com/o/r.git"


def test_git_config_shown_without_credentials(tb, work):
    git_project(tb, work)
    tb.dev("mkdir -p ~/.config/git && cat > ~/.gitconfig && chmod 644 ~/.gitconfig", input=GITCONFIG.encode())
    tb.dev("cat > ~/.config/git/work.inc", input=WORK_INC.encode())
    tb.dev("cd %s && git remote add origin %s" % (work, PROJECT_REMOTE))
    try:
        r = tb.scudo(["-p", "git-project", "sh", "-c",
                      "git config --list --show-origin; echo @files; cat ~/.gitconfig ~/.config/git/work.inc "
                      ".git/config; echo @mode; stat -c %a ~/.gitconfig"], cwd=work)
        assert r.rc == 0, r
        for secret in (GH_TOKEN, "extraheader-secret", "gitcookies-secret", "helper-secret", "smtp-secret",
                       "project-secret"):
            assert secret not in r.out, (secret, r)
        # What holds no credential is there, includes followed.
        for kept in ("user.name=Dev Marker", "alias.st=status", "sendemail.smtpserver=mail.example",
                     "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*", "include.path=~/.config/git/work.inc"):
            assert kept in r.out, (kept, r)
        assert r.out.split("@mode", 1)[1].split() == ["600"], r
        # The originals are untouched, and the copies gone with the run.
        assert GH_TOKEN in tb.dev("cat ~/.gitconfig").out
        assert "project-secret" in tb.dev("cat %s/.git/config" % work).out
        left = tb.dev("ls -A /run/user/$(id -u)/scudo 2>/dev/null | grep git-config || true")
        assert left.out == "", left
        # explain shows each copy as the run makes it, with why, and makes none.
        x = tb.scudo(["explain", "-p", "git-project", "git", "status"], cwd=work)
        assert x.rc == 0, x
        copied = [l for l in x.out.splitlines() if "holds credentials" in l]
        assert any("/.gitconfig" in l for l in copied), x.out
        assert any("/.config/git/work.inc" in l for l in copied), x.out
        assert any("%s/.git/config" % work in l for l in copied), x.out
        left = tb.dev("ls -A /run/user/$(id -u)/scudo 2>/dev/null | grep git-config || true")
        assert left.out == "", left
    finally:
        tb.dev("rm -rf ~/.gitconfig ~/.config/git")


def test_git_config_with_nothing_to_remove_is_the_original(tb, work):
    git_project(tb, work)
    tb.dev("printf '[user]\\n\\tname = Plain Dev\\n' > ~/.gitconfig")
    try:
        r = tb.scudo(["-p", "git-project", "sh", "-c", "stat -c '%i' ~/.gitconfig; git config user.name"], cwd=work)
        outside = tb.dev("stat -c '%i' ~/.gitconfig").out.strip()
        assert r.rc == 0 and r.out.split() == [outside, "Plain", "Dev"], (r, outside)
    finally:
        tb.dev("rm -f ~/.gitconfig")


def test_git_config_copies_removed_when_scudo_is_killed(tb, work):
    git_project(tb, work)
    tb.dev("cat > ~/.gitconfig", input=GITCONFIG.encode())
    try:
        r = tb.dev("cd %s && { %s -p git-project sh -c 'echo up > up; exec sleep 60' </dev/null >/dev/null 2>&1 & "
                   "echo $! > scudo.pid; } ; for i in $(seq 100); do test -s up && break; sleep 0.1; done; "
                   "ls -A /run/user/$(id -u)/scudo | grep -c git-config" % (work, Q))
        assert r.out.strip() == "1", r       # the copy is there while the run is
        tb.dev("kill -KILL $(cat %s/scudo.pid)" % work)
        assert wait_for(lambda: tb.user_units() == [], timeout=5), tb.user_units()
        assert wait_for(lambda: "git-config" not in tb.dev("ls -A /run/user/$(id -u)/scudo").out, timeout=5), \
            tb.dev("ls -lAR /run/user/$(id -u)/scudo").out
    finally:
        tb.dev("rm -f ~/.gitconfig")
