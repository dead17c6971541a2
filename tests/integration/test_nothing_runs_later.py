# SPDX-License-Identifier: MIT OR Apache-2.0
"""Nothing a sandboxed command writes is run or followed later outside (docs/persistence.md).
Each attack is made from inside; then the program it aims at is run outside, as dev, the way
the user would (git in the planted directory, a write through a cache's symlink), and what it
did is judged from outside."""
import json
import os
import shlex
import uuid

import pytest

from conftest import built, stop_bpfd
from test_network import install_helper

HOOK = "#!/bin/sh\necho PWNED\n"


def host(tb, work, script):
    """Runs a program as dev outside any sandbox, in `work`."""
    return tb.dev("cd %s && %s" % (shlex.quote(work), script))


def exists(tb, path):
    return tb.root("test -e %s || test -L %s" % (shlex.quote(path), shlex.quote(path))).rc == 0


def is_link(tb, path):
    return tb.root("test -L %s" % shlex.quote(path)).rc == 0


def marker(tb):
    """A file outside every writable place that a planted command would make; absent now."""
    m = "/home/dev/pwned-" + uuid.uuid4().hex[:8]
    tb.root("rm -f %s" % m)
    return m


def repo(tb, work):
    r = host(tb, work, "git init -q -b main . && git config user.email t@t && git config user.name t && "
                       "echo one > a && git add a && git commit -q -m one")
    assert r.rc == 0, r


def test_a_reflog_symlink_to_a_startup_file_is_removed(tb, work):
    # .git/logs/HEAD -> ~/.bashrc, then a branch whose name is a command: the next checkout
    # outside would append the reflog line, the command in it, to ~/.bashrc.
    repo(tb, work)
    tb.dev("printf 'echo bashrc\\n' > ~/.bashrc")
    before = tb.root("cat /home/dev/.bashrc").out
    r = tb.scudo(["--profile", "agents", "sh", "-c",
                  "rm -f .git/logs/HEAD && ln -s /home/dev/.bashrc .git/logs/HEAD"], cwd=work)
    assert not is_link(tb, work + "/.git/logs/HEAD"), r
    assert ".bashrc" in r.err, r
    r = host(tb, work, "git checkout -q -b 'x;touch${IFS}/home/dev/pwned;' && git checkout -q main")
    assert r.rc == 0, r
    assert tb.root("cat /home/dev/.bashrc").out == before
    r = tb.dev("bash -i -c true 2>&1")
    assert "pwned" not in r.out


def test_a_symlink_out_of_a_writable_cache_is_removed_and_one_inside_stays(tb, work):
    target = "/home/dev/.config/scudo-target-" + uuid.uuid4().hex[:8]
    tb.dev("mkdir -p ~/.config && echo precious > %s" % target)
    # npm's layout: node_modules/.bin/tool -> ../pkg/bin.js (relative, inside the project)
    r = tb.scudo(["sh", "-c", "mkdir -p cache node_modules/pkg node_modules/.bin && "
                  "echo 'echo tool' > node_modules/pkg/bin.js && "
                  "ln -s ../pkg/bin.js node_modules/.bin/tool && "
                  "ln -s %s cache/_update-notifier-last-checked && "
                  "ln -s ../../../../../../../../%s cache/relative && ln -s /home/dev cache/home && "
                  "mkdir -p venv/bin && ln -s /usr/bin/python3 venv/bin/python"
                  % (target, target)], cwd=work)
    assert r.rc == 0, r
    assert not exists(tb, work + "/cache/_update-notifier-last-checked"), r
    assert not exists(tb, work + "/cache/relative"), r
    assert not exists(tb, work + "/cache/home"), r
    # a venv's python: the system's, which the user cannot write either; it stays
    assert is_link(tb, work + "/venv/bin/python"), r
    assert "_update-notifier-last-checked" in r.err and target in r.err, r
    assert is_link(tb, work + "/node_modules/.bin/tool")
    assert "echo tool" in host(tb, work, "cat node_modules/.bin/tool").out
    # the program outside writes through where the symlink was: a file of its own now
    host(tb, work, "echo 1 > cache/_update-notifier-last-checked")
    assert tb.root("cat %s" % target).out.strip() == "precious"


def test_a_repository_made_below_the_start_directory_is_made_inert(tb, work):
    m = marker(tb)
    r = tb.scudo(["sh", "-c", "git init -q src && git -C src config core.fsmonitor 'touch %s; false'" % m],
                 cwd=work)
    assert r.rc == 0, r
    assert "src" in r.err and "inert" in r.err, r
    host(tb, work + "/src", "git status >/dev/null 2>&1; true")
    assert not exists(tb, m)


def test_a_plain_new_repository_stays_usable(tb, work):
    # git init and clone write only keys that name no program: the repository stays as made
    r = tb.scudo(["sh", "-c", "git init -q plain && git -C plain config user.name t && "
                  "git -C plain config user.email t@t && echo x > plain/f && git -C plain add f && "
                  "git -C plain commit -q -m one"], cwd=work)
    assert r.rc == 0, r
    assert "inert" not in r.err, r
    r = host(tb, work + "/plain", "git log --format=%s")
    assert r.rc == 0 and "one" in r.out, r


def test_a_bare_layout_in_the_start_directory_is_made_inert(tb, work):
    # beside scudo's empty placeholder .git: HEAD, objects/, refs/ and a config naming the
    # start directory as its working tree
    m = marker(tb)
    r = tb.scudo(["sh", "-c", "git init -q --bare . && git config core.bare false && "
                  "git config core.worktree \"$PWD\" && git config core.fsmonitor 'touch %s; false'" % m],
                 cwd=work)
    assert "inert" in r.err, r
    host(tb, work, "git status >/dev/null 2>&1; true")
    assert not exists(tb, m)


def test_a_deep_repository_and_a_gitdir_file_leading_to_it_are_made_inert(tb, work):
    m = marker(tb)
    deep = "/".join("d%d" % i for i in range(40))
    r = tb.scudo(["sh", "-c", "mkdir -p %s w && git init -q --bare %s/r.git && "
                  "git --git-dir=%s/r.git config core.fsmonitor 'touch %s; false' && "
                  "git --git-dir=%s/r.git config core.bare false && "
                  "echo \"gitdir: $PWD/%s/r.git\" > w/.git && echo 'gitdir: /home/dev' > .git-other && "
                  "mkdir v && echo 'gitdir: /home/dev/elsewhere.git' > v/.git"
                  % (deep, deep, deep, m, deep, deep)], cwd=work)
    assert "inert" in r.err, r
    assert not exists(tb, work + "/v/.git"), r
    host(tb, work + "/w", "git status >/dev/null 2>&1; true")
    host(tb, work + "/" + deep + "/r.git", "git status >/dev/null 2>&1; true")
    assert not exists(tb, m)


def test_a_repository_five_levels_down_in_a_checkout_is_made_inert(tb, work):
    repo(tb, work)
    m = marker(tb)
    r = tb.scudo(["--profile", "agents", "sh", "-c",
                  "mkdir -p p/q/r/s/t && git init -q p/q/r/s/t && "
                  "git -C p/q/r/s/t config core.fsmonitor 'touch %s; false'" % m], cwd=work)
    assert "inert" in r.err, r
    host(tb, work + "/p/q/r/s/t", "git status >/dev/null 2>&1; true")
    assert not exists(tb, m), r
    # the project's own repository is as it was
    assert host(tb, work, "git log --format=%s").out.strip() == "one"


def test_ordinary_git_work_leaves_the_repository_as_it_was(tb, work):
    repo(tb, work)
    r = tb.scudo(["--profile", "agents", "sh", "-c",
                  "echo two >> a && git commit -qam two && git stash list && git gc -q && echo done"], cwd=work)
    assert r.rc == 0 and "done" in r.out, r
    assert "inert" not in r.err and "removed" not in r.err, r
    r = host(tb, work, "git log --format=%s")
    assert r.rc == 0 and "two" in r.out, r


def test_a_refused_hook_too_deep_to_remove_is_gone(tb, work):
    # hooks/ made in the project, with many deep trees beside the hook, then moved into a .git
    # without one in a single rename: the watch refuses it, and removes all of it.
    repo(tb, work)
    tb.dev("rm -rf %s/.git/hooks" % work)
    m = marker(tb)
    deep = "/".join(["d"] * 24)
    r = tb.scudo(["--profile", "agents", "sh", "-c",
                  "mkdir -p t/hooks && for i in $(seq 30); do mkdir -p t/hooks/z$i/%s; done && "
                  "printf '#!/bin/sh\\ntouch %s\\n' > t/hooks/post-checkout && chmod +x t/hooks/post-checkout && "
                  "mv t/hooks .git/hooks && sleep 1" % (deep, m)], cwd=work)
    assert not exists(tb, work + "/.git/hooks"), r
    r = host(tb, work, "git checkout -q -b other && git checkout -q main && git log --format=%s")
    assert r.rc == 0 and "one" in r.out, r
    assert not exists(tb, m)


def test_a_config_symlinked_to_an_old_project_file_is_made_inert(tb, work):
    # the file the configuration leads to is the project's, older than the run; the symlink
    # to it is the run's
    m = marker(tb)
    r = host(tb, work, "printf '[core]\\n\\tfsmonitor = touch %s; false\\n' > gitconf" % m)
    assert r.rc == 0, r
    r = tb.scudo(["sh", "-c", "git init -q sub && rm sub/.git/config && ln -s ../../gitconf sub/.git/config"],
                 cwd=work)
    assert "inert" in r.err, r
    host(tb, work + "/sub", "git status >/dev/null 2>&1; true")
    assert not exists(tb, m)


def test_npm_install_keeps_its_links_and_loses_a_planted_one(tb, work):
    # the npm profile has network rules: the helper runs, as in test_tools.py
    if not os.path.exists(built("src/bpfd/scudo-bpfd")):
        pytest.skip("scudo-bpfd not built (meson -Dbpf=enabled): npm's profile has network rules")
    if tb.dev("command -v npm").rc != 0:
        pytest.skip("npm is not installed in the testbed (tools/install-deps installs it)")
    install_helper(tb)
    try:
        target = "/home/dev/.config/npm-target-" + uuid.uuid4().hex[:8]
        tb.dev("mkdir -p ~/.config ~/.npm %s/tool && echo precious > %s" % (work, target))
        pkg = {"name": "proj", "version": "1.0.0", "dependencies": {"tool": "file:./tool"},
               "scripts": {"postinstall": "ln -sf %s $HOME/.npm/_update-notifier-last-checked" % target}}
        tool = {"name": "tool", "version": "1.0.0", "bin": {"tool": "bin.js"}}
        tb.dev("cd %s && printf '%%s' %s > package.json && printf '%%s' %s > tool/package.json && "
               "printf '#!/usr/bin/env node\\nconsole.log(\"tool ok\")\\n' > tool/bin.js"
               % (work, shlex.quote(json.dumps(pkg)), shlex.quote(json.dumps(tool))))
        r = tb.scudo(["npm", "install", "--offline", "--no-audit", "--no-fund"], cwd=work, timeout=180)
        assert r.rc == 0, r
        assert not exists(tb, "/home/dev/.npm/_update-notifier-last-checked"), r
        assert "_update-notifier-last-checked" in r.err, r
        # npm's own links, inside the project, stay and work outside
        assert is_link(tb, work + "/node_modules/tool") and is_link(tb, work + "/node_modules/.bin/tool"), r
        assert "tool ok" in host(tb, work, "node_modules/.bin/tool").out
        # npm outside, then the file the planted link led to
        host(tb, work, "npm --version >/dev/null 2>&1; echo 1 > ~/.npm/_update-notifier-last-checked")
        assert tb.root("cat %s" % target).out.strip() == "precious"
    finally:
        stop_bpfd(tb)
