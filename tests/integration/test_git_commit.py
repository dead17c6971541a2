# SPDX-License-Identifier: MIT OR Apache-2.0
"""A .git the command may commit to (the agents' profiles): git works
inside as it does outside, and nothing that runs code or points git elsewhere can be planted.
Each attack is tried from inside and judged from outside, by running git there afterwards."""
import shlex

from conftest import SCUDO

HOOK = "#!/bin/sh\necho PWNED\n"


def repo(tb, work):
    r = tb.dev("cd %s && git init -q -b main . && git config user.email t@t && git config user.name t && "
               "echo one > a && git add a && git commit -q -m one" % work)
    assert r.rc == 0, r


def host(tb, work, script):
    """Runs git (or anything) in the project as dev, outside any sandbox."""
    return tb.dev("cd %s && %s" % (work, script))


def exists(tb, path):
    return tb.root("test -e %s || test -L %s" % (shlex.quote(path), shlex.quote(path))).rc == 0


def inside(tb, work, script, profile="agents"):
    return tb.scudo(["--profile", profile, "sh", "-c", script], cwd=work)


def test_git_works_inside(tb, work):
    repo(tb, work)
    script = r"""set -ex
echo two >> a && git add a && git commit -q -m two
git commit -q --amend -m two-amended
git branch side && git checkout -q -b feature && echo f > f && git add f && git commit -q -m feature
git switch -q main && git merge -q --ff-only feature
git checkout -q side && echo s > s && git add s && git commit -q -m side
git switch -q main && git merge -q --no-edit side
echo three >> a && git commit -qam three && echo four >> a && git commit -qam four
GIT_SEQUENCE_EDITOR="sed -i '2s/^pick/squash/'" GIT_EDITOR=true git rebase -q -i HEAD~2
git checkout -q side && git cherry-pick feature && git switch -q main
echo wip >> a && git stash -q && git stash pop -q && git commit -qam after-stash
git tag -a v1 -m v1 && git tag light
git reset -q --hard HEAD~1 && git reset -q --hard ORIG_HEAD
git gc -q
echo done
"""
    r = inside(tb, work, script)
    assert r.rc == 0 and "done" in r.out, r.out + r.err
    # from outside: the history the command made, whole
    r = host(tb, work, "git fsck --no-progress && git log --format=%s main && git tag && git branch")
    assert r.rc == 0, r
    assert "after-stash" in r.out and "two-amended" in r.out and "Merge branch 'side'" in r.out, r
    assert "v1" in r.out and "feature" in r.out, r


def test_hooks_and_config_cannot_be_planted(tb, work):
    repo(tb, work)
    config = tb.root("cat %s/.git/config" % work).out
    attempts = [
        "printf '%s' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit" % HOOK,
        "git config core.hooksPath /tmp",
        "git config core.fsmonitor 'touch /tmp/x'",
        "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
        "mv .git/config .git/config.old",
        "git config extensions.worktreeConfig true",
        "mv .git .git-old",
        "rm -rf .git/hooks",
    ]
    for a in attempts:
        r = inside(tb, work, a)
        assert r.rc != 0, (a, r)
    assert tb.root("cat %s/.git/config" % work).out == config
    assert not exists(tb, work + "/.git/hooks/pre-commit")
    assert not exists(tb, work + "/.git-old")
    r = host(tb, work, "git config core.hooksPath; git config core.fsmonitor; git status --porcelain")
    assert "PWNED" not in r.out and "/tmp" not in r.out and "evil" not in r.out, r


def test_names_git_does_not_make_stop_the_run(tb, work):
    repo(tb, work)
    tb.dev("mkdir -p %s/evil && printf '[core]\\n\\tfsmonitor = echo PWNED\\n' > %s/evil/config" % (work, work))
    planted = [
        ("echo ../evil > .git/commondir", ".git/commondir"),
        ("printf '[core]\\n\\tfsmonitor = echo PWNED\\n' > .git/config.worktree", ".git/config.worktree"),
        ("echo /tmp/objects > .git/objects/info/alternates", ".git/objects/info/alternates"),
        ("echo x > .git/c.tmp && mv .git/c.tmp .git/commondir", ".git/commondir"),
        ("mkdir -p .git/worktrees/w && echo ../../evil > .git/worktrees/w/commondir", ".git/worktrees/w"),
        ("mkdir -p .git/modules/m/hooks", ".git/modules"),
    ]
    for script, path in planted:
        r = inside(tb, work, script + "; sleep 2; echo survived")
        assert r.rc != 0 and "survived" not in r.out, (script, r)
        assert "git does not make" in r.err, (script, r)
        assert not exists(tb, "%s/%s" % (work, path)), (script, r)
    r = host(tb, work, "git status --porcelain && git rev-parse --git-common-dir")
    assert r.rc == 0 and "PWNED" not in r.out + r.err and r.out.strip().endswith(".git"), r


def test_a_gitdir_file_stays_read_only(tb, work):
    # A linked worktree: its .git is a file naming the git directory; rewritten, it would
    # point git outside at one the command made.
    repo(tb, work)
    r = host(tb, work, "git worktree add -q ../wt-%s" % work[-8:])
    assert r.rc == 0, r
    wt = "/home/dev/wt-" + work[-8:]
    before = tb.root("cat %s/.git" % wt).out
    r = tb.scudo(["--profile", "agents", "sh", "-c", "echo 'gitdir: /tmp/evil' > .git"], cwd=wt)
    assert r.rc != 0, r
    assert tb.root("cat %s/.git" % wt).out == before
    tb.root("rm -rf %s" % wt)


def test_explain_shows_the_git_entries(tb, work):
    repo(tb, work)
    r = tb.scudo(["explain", "--profile", "agents", "true"], cwd=work)
    assert r.rc == 0, r
    assert "write  %s/.git" % work in r.out, r
    assert "%s/.git/config" % work in r.out and "%s/.git/hooks" % work in r.out, r
    assert "git reads code to run" in r.out, r
    assert "a name git does not make there stops the run" in r.out, r


def test_worktree_add_and_submodule_update_are_refused_a_submodule_commits(tb, work):
    repo(tb, work)
    lib = work + "-lib"
    r = tb.dev("mkdir -p %s && cd %s && git init -q -b main . && git config user.email t@t && "
               "git config user.name t && echo l > l && git add l && git commit -q -m lib && "
               "cd %s && git -c protocol.file.allow=always submodule -q add %s sub && git commit -q -m sub"
               % (lib, lib, work, lib))
    assert r.rc == 0, r
    assert exists(tb, work + "/.git/modules/sub/config")
    try:
        # a new worktree is a new entry in .git/worktrees: refused, the run stopped
        r = inside(tb, work, "git worktree add -q ../wt-%s; sleep 2; echo survived" % work[-8:])
        assert r.rc != 0 and "survived" not in r.out, r
        assert not exists(tb, work + "/.git/worktrees"), r
        # git submodule update writes the submodule's config (core.worktree): refused, as it is
        config = tb.root("cat %s/.git/modules/sub/config" % work).out
        r = inside(tb, work, "git submodule update")
        assert r.rc != 0 and "could not write config file" in r.err, r
        assert tb.root("cat %s/.git/modules/sub/config" % work).out == config
        # the submodule, cloned already, is committed to inside
        r = inside(tb, work, "cd sub && echo m >> l && git -c user.email=t@t -c user.name=t commit -qam in-sub && echo done")
        assert r.rc == 0 and "done" in r.out, r.out + r.err
        r = host(tb, work + "/sub", "git log --format=%s -1 && git fsck --no-progress")
        assert r.rc == 0 and "in-sub" in r.out, r
        # and its hooks are no more plantable than the project's
        r = inside(tb, work, "printf '%s' > .git/modules/sub/hooks/post-checkout" % HOOK)
        assert r.rc != 0, r
        assert not exists(tb, work + "/.git/modules/sub/hooks/post-checkout")
    finally:
        tb.root("rm -rf %s /home/dev/wt-%s" % (lib, work[-8:]))
