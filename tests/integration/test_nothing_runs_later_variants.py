# SPDX-License-Identifier: MIT OR Apache-2.0
"""Variants of issue 27's attacks that test_nothing_runs_later.py does not try: planted from
inside under the recommended profiles (a build, `scudo make`, and the agents'), then the real
program run outside afterwards by dev, and what it did judged from outside."""
import os
import shlex
import uuid

import pytest

from conftest import built, stop_bpfd
from test_network import install_helper
from test_nothing_runs_later import exists, host, is_link, marker


@pytest.fixture(scope="module")
def helper(tb):
    """make's profile has network rules: the helper runs, as in test_tools.py (started once
    for the module: fewer stops of it on a loaded machine)."""
    if not os.path.exists(built("src/bpfd/scudo-bpfd")):
        pytest.skip("scudo-bpfd not built (meson -Dbpf=enabled): make's profile has network rules")
    install_helper(tb)
    yield
    stop_bpfd(tb)


def make(tb, work, script):  # needs the helper fixture
    """`scudo make` in work, whose one recipe runs script (from plant.sh: no make quoting)."""
    r = tb.dev("cd %s && printf %%s %s > plant.sh && printf 'all:\\n\\t@sh ./plant.sh\\n' > Makefile"
               % (shlex.quote(work), shlex.quote(script)))
    assert r.rc == 0, r
    if tb.dev("command -v make").rc != 0:
        pytest.skip("make is not installed in the testbed")
    return tb.scudo(["make", "-s"], cwd=work)


def repo(tb, work):
    r = host(tb, work, "git init -q -b main . && git config user.email t@t && git config user.name t && "
                       "echo one > a && git add a && git commit -q -m one")
    assert r.rc == 0, r


@pytest.fixture
def bashrc(tb):
    tb.dev("test -e ~/.bashrc || printf 'echo bashrc\\n' > ~/.bashrc")
    return tb.root("cat /home/dev/.bashrc").out


def test_symlink_chains_and_dot_dot_paths_out_are_removed(tb, work, helper, bashrc):
    # each link alone looks inside (a -> b, b -> c), the last leads out; and a path through ..
    r = make(tb, work, "mkdir -p cache/d node_modules && ln -s /home/dev/.bashrc cache/c && "
                       "ln -s c cache/b && ln -s ../cache/b node_modules/a && "
                       "ln -s d/../../../../../home/dev/.bashrc cache/dots && "
                       "ln -s /home/dev/.local/bin node_modules/.bin && "
                       "ln -s /home/dev/.bashrc \"$(printf 'new\\nline')\"")
    assert r.rc == 0, r
    for link in ("cache/c", "cache/b", "cache/dots", "node_modules/.bin", "new\nline"):
        assert not is_link(tb, work + "/" + link), (link, r)
    # node_modules/a may stay: with b gone, it leads to cache/b, inside
    # the programs outside write where the links were: files of their own now
    host(tb, work, "mkdir -p node_modules/.bin; for f in node_modules/a cache/dots; do echo x >> $f; done; "
                   "echo x > node_modules/.bin/tool-h27")
    assert tb.root("cat /home/dev/.bashrc").out == bashrc
    assert not exists(tb, "/home/dev/.local/bin/tool-h27")


def test_a_planted_name_cannot_forge_a_line_of_scudos(tb, work, helper, bashrc):
    # the report names the link; a newline in its name must not start a line that reads as
    # scudo's own (an all-clear after the warning, say)
    r = make(tb, work, "ln -s /home/dev/.bashrc \"$(printf 'x\\nscudo: nothing was planted')\"")
    assert r.rc == 0, r
    assert not is_link(tb, work + "/x\nscudo: nothing was planted"), r
    lines = r.err.splitlines()
    assert not any(line.startswith("scudo: nothing was planted") for line in lines), r
    assert any("x\\x0ascudo: nothing was planted" in line for line in lines), r


def test_a_symlink_through_proc_self_is_removed(tb, work, helper, bashrc):
    # /proc/self/cwd is scudo's working directory when the check follows it, and the working
    # directory of whichever program follows it later: a home-directory shell's is the home
    r = make(tb, work, "mkdir -p cache && ln -s /proc/self/cwd/.bashrc cache/cwd && "
                       "ln -s /dev/fd/9 cache/fd && ln -s ../../../../proc/thread-self/cwd/.bashrc cache/rel")
    assert r.rc == 0, r
    for link in ("cache/cwd", "cache/fd", "cache/rel"):
        assert not is_link(tb, work + "/" + link), (link, r)
    tb.dev("cd ~ && for f in cwd rel; do echo 'echo pwned' >> %s/cache/$f; done; true" % work)
    assert tb.root("cat /home/dev/.bashrc").out == bashrc


def test_a_hard_link_to_a_file_outside_cannot_be_made(tb, work, helper, bashrc):
    repo(tb, work)
    r = make(tb, work, "ln /home/dev/.bashrc hl; a=$?; ln .git/config cfg; echo rc=$a$?")
    assert "rc=" in r.out and "0" not in r.out.split("rc=")[1].split()[0], r
    assert not exists(tb, work + "/hl") and not exists(tb, work + "/cfg"), r
    assert tb.root("stat -c %%h /home/dev/.bashrc %s/.git/config" % work).out.split() == ["1", "1"]


def test_a_worktree_layout_with_commondir_is_made_inert(tb, work, helper):
    # HEAD and commondir make a git directory; the common one (objects/, refs/, config) needs
    # no HEAD, and a gitdir: file leads git to the first from elsewhere in the project
    m = marker(tb)
    r = make(tb, work, "mkdir -p c/objects c/refs/heads wt d && "
                       "printf '[core]\\n\\tfsmonitor = touch %s; false\\n' > c/config && "
                       "echo ../c > wt/commondir && echo 'ref: refs/heads/main' > wt/HEAD && "
                       "echo \"gitdir: $PWD/wt\" > d/.git" % m)
    assert "inert" in r.err, r
    for d in ("d", "wt", "c"):
        host(tb, work + "/" + d, "git status >/dev/null 2>&1; true")
    assert not exists(tb, m)


def test_a_fifo_as_a_new_repositorys_config_is_made_inert(tb, work, helper):
    r = make(tb, work, "git init -q r && rm r/.git/config && mkfifo r/.git/config")
    assert "inert" in r.err, r
    r = host(tb, work + "/r", "timeout 20 git status >/dev/null 2>&1; echo rc=$?")
    assert "rc=124" not in r.out, r


def test_a_missing_file_the_repositorys_config_includes_stays_unmade(tb, work, helper):
    # the project's .git/config includes conf/local.gitconfig, in a directory not made yet
    repo(tb, work)
    m = marker(tb)
    host(tb, work, "git config include.path ../conf/local.gitconfig")
    r = make(tb, work, "mkdir -p conf && printf '[core]\\n\\tfsmonitor = touch %s; false\\n' "
                       "> conf/local.gitconfig; echo rc=$?" % m)
    host(tb, work, "git status >/dev/null 2>&1; true")
    assert not exists(tb, m), r


def test_a_missing_tool_the_home_links_to_stays_unmade(tb, work, helper, bashrc):
    # ~/.local/bin/tool -> the project's build/tool, not built yet, build/ missing too
    m = marker(tb)
    name = "h27-" + uuid.uuid4().hex[:6]
    tb.dev("mkdir -p ~/.local/bin && ln -sfn %s/build/tool ~/.local/bin/%s" % (work, name))
    try:
        make(tb, work, "mkdir -p build && printf '#!/bin/sh\\ntouch %s\\n' > build/tool && "
                       "chmod +x build/tool" % m)
        tb.dev("~/.local/bin/%s >/dev/null 2>&1; true" % name)
        assert not exists(tb, m)
    finally:
        tb.dev("rm -f ~/.local/bin/%s" % name)


def test_agents_submodule_hooks_path_and_nested_module_are_made_inert(tb, work):
    repo(tb, work)
    sub = work + "-sub"
    r = tb.dev("mkdir -p %s && cd %s && git init -q -b main . && git -c user.email=t@t -c user.name=t "
               "commit -q --allow-empty -m s && cd %s && git -c protocol.file.allow=always submodule -q add "
               "%s m && git commit -q -m sub" % (sub, sub, work, sub))
    assert r.rc == 0, r
    try:
        m = marker(tb)
        r = tb.scudo(["--profile", "agents", "sh", "-c",
                      "mkdir -p hk && printf '#!/bin/sh\\ntouch %s\\n' > hk/post-checkout && chmod +x "
                      "hk/post-checkout && git -C m config core.hooksPath $PWD/hk; "
                      "git init -q --bare .git/modules/m/modules/b && "
                      "git --git-dir=.git/modules/m/modules/b config core.bare false && "
                      "git --git-dir=.git/modules/m/modules/b config core.fsmonitor 'touch %s; false' && "
                      "mkdir -p m/b && echo 'gitdir: ../../.git/modules/m/modules/b' > m/b/.git" % (m, m)],
                     cwd=work)
        # the submodule's config is refused (bound read-only); the nested repository stops the
        # run (the .git watch) or is made inert when it ends
        assert "inert" in r.err or r.rc == 125, r
        assert "core.hooksPath" not in host(tb, work + "/m", "git config --show-origin --list").out
        host(tb, work + "/m", "git checkout -q -b x; git status >/dev/null 2>&1; true")
        host(tb, work + "/m/b", "git status >/dev/null 2>&1; true")
        assert not exists(tb, m), r
        assert host(tb, work, "git log --format=%s").out.split()[0] == "sub"
    finally:
        tb.root("rm -rf %s" % sub)


def test_a_git_symlink_to_a_gitdir_file_leading_out_is_moved_aside(tb, work, helper):
    # x/.git -> ../gf, a file inside, whose "gitdir:" names another checkout of the user's: git
    # run in x outside would write that repository's index and refs, outside what the run may write
    other = work + "-other"
    r = tb.dev("mkdir -p %s && cd %s && git init -q . && git -c user.email=t@t -c user.name=t commit -q "
               "--allow-empty -m other" % (other, other))
    assert r.rc == 0, r
    try:
        r = make(tb, work, "mkdir -p x && echo 'gitdir: %s/.git' > gf && ln -s ../gf x/.git" % other)
        assert not is_link(tb, work + "/x/.git"), r
        r = host(tb, work + "/x", "git rev-parse --absolute-git-dir 2>&1; true")
        assert other not in r.out, r
    finally:
        tb.root("rm -rf %s" % other)


def test_a_unit_linked_from_a_directory_not_made_yet_stays_unmade(tb, work, helper):
    # `systemctl --user link` of the project's units/x.service before it exists: units/ missing
    m = marker(tb)
    name = "h27-%s.service" % uuid.uuid4().hex[:6]
    units = "/home/dev/.config/systemd/user"
    tb.dev("mkdir -p %s && ln -sfn %s/units/%s %s/%s" % (units, work, name, units, name))
    try:
        make(tb, work, "mkdir -p units && printf '[Service]\\nType=oneshot\\nExecStart=/bin/touch %s\\n' "
                       "> units/%s" % (m, name))
        tb.dev("systemctl --user daemon-reload; systemctl --user start %s >/dev/null 2>&1; true" % name)
        assert not exists(tb, m)
    finally:
        tb.dev("rm -f %s/%s; systemctl --user daemon-reload" % (units, name))
