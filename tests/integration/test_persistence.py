# SPDX-License-Identifier: MIT OR Apache-2.0
"""Staying behind: a sandboxed command must not leave code that runs later, outside any
sandbox. Each attack is tried from inside, and its failure checked from outside: the command
fails AND the host file is as it was (or still absent)."""
import shlex

from conftest import SCUDO, wait_for

HOOK = "#!/bin/sh\necho PWNED\n"


def git_repo(tb, work, hooks=True):
    r = tb.dev("cd %s && git init -q . && git config user.email t@t && git config user.name t%s"
               % (work, "" if hooks else " && rm -rf .git/hooks"))
    assert r.rc == 0, r


def host_cat(tb, path):
    return tb.root("cat %s 2>/dev/null" % shlex.quote(path)).out


def host_exists(tb, path):
    return tb.root("test -e %s || test -L %s" % (shlex.quote(path), shlex.quote(path))).rc == 0


def test_git_hook_cannot_be_planted_under_a_project_profile(tb, work):
    git_repo(tb, work)
    r = tb.scudo(["--profile", "git-project", "sh", "-c",
                  "printf '%s' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit" % HOOK], cwd=work)
    assert r.rc != 0, r
    assert not host_exists(tb, work + "/.git/hooks/pre-commit")


def test_git_hook_cannot_be_planted_when_the_hooks_directory_is_missing(tb, work):
    git_repo(tb, work, hooks=False)
    r = tb.scudo(["sh", "-c", "mkdir -p .git/hooks && printf '%s' > .git/hooks/pre-commit" % HOOK], cwd=work)
    assert r.rc != 0, r
    assert not host_exists(tb, work + "/.git/hooks")


def test_git_config_and_commondir_cannot_be_written_by_any_command(tb, work):
    # The sandbox profile alone (sh matches nothing else): the start directory is writable,
    # its .git is not.
    git_repo(tb, work)
    before = host_cat(tb, work + "/.git/config")
    r = tb.scudo(["sh", "-c", "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config"], cwd=work)
    assert r.rc != 0, r
    assert host_cat(tb, work + "/.git/config") == before
    # commondir makes git read its config from elsewhere: as good as writing the config.
    r = tb.scudo(["sh", "-c", "mkdir -p x && printf '[core]\\n\\tfsmonitor = evil\\n' > x/config && "
                  "echo ../x > .git/commondir"], cwd=work)
    assert r.rc != 0, r
    assert not host_exists(tb, work + "/.git/commondir")
    # and the project itself stays writable
    r = tb.scudo(["sh", "-c", "echo ok > file"], cwd=work)
    assert r.rc == 0, r
    assert host_cat(tb, work + "/file").strip() == "ok"


def test_git_directory_cannot_be_renamed_and_replaced(tb, work):
    git_repo(tb, work)
    r = tb.scudo(["sh", "-c", "mv .git .git-old && mkdir -p .git/hooks && "
                  "printf '%s' > .git/hooks/pre-commit" % HOOK], cwd=work)
    assert r.rc != 0, r
    assert not host_exists(tb, work + "/.git-old")
    assert not host_exists(tb, work + "/.git/hooks/pre-commit")
    assert tb.dev("cd %s && git status --porcelain" % work).rc == 0


def test_planted_git_symlink_does_not_expose_the_home_directory(tb, work):
    tb.dev("echo secret-content > ~/secret-%s" % work[-8:])
    # A run (start directory writable, no .git) cannot plant .git -> the home directory: the
    # empty .git of the run is in the way.
    r = tb.scudo(["sh", "-c", "ln -s /home/dev .git"], cwd=work)
    assert r.rc != 0 and not host_exists(tb, work + "/.git"), r
    # Planted all the same (a run whose profile granted that .git, an older scudo):
    tb.dev("ln -s /home/dev %s/.git" % work)
    assert tb.root("readlink %s/.git" % work).out.strip() == "/home/dev"
    # Next run under a profile that names ${project}/.git (the agents'): the link must not bind
    # the home directory into the sandbox.
    r = tb.scudo(["--profile", "agents", "sh", "-c", "cat /home/dev/secret-%s" % work[-8:]], cwd=work)
    assert r.rc != 0 and "secret-content" not in r.out, r
    assert "leads out of" in r.err, r
    assert host_cat(tb, "/home/dev/secret-%s" % work[-8:]).strip() == "secret-content"
    tb.dev("rm -f ~/secret-%s" % work[-8:])


def test_starting_in_the_home_directory_does_not_make_it_writable(tb, work):
    marker = "w-" + work[-8:]
    tb.dev("touch ~/.bashrc")
    before = host_cat(tb, "/home/dev/.bashrc")
    # The home directory stays hidden (an empty one of the sandbox's own): the write may
    # succeed in there, and must not reach the host.
    r = tb.scudo(["sh", "-c", "echo 'echo PWNED-%s' >> ~/.bashrc; mkdir -p ~/.local/bin && "
                  "echo x > ~/.local/bin/%s" % (marker, marker)], cwd="~")
    assert host_cat(tb, "/home/dev/.bashrc") == before, r
    assert not host_exists(tb, "/home/dev/.local/bin/" + marker), r
    r = tb.scudo(["explain", "true"], cwd="~")
    assert "would make the home directory writable" in r.out, r
    # Asked for explicitly, for one run, it is granted.
    tb.dev("mkdir -p ~/%s" % marker)
    r = tb.scudo(["--fs-write", "/home/dev/" + marker, "sh", "-c", "echo ok > ~/%s/f" % marker], cwd="~")
    assert r.rc == 0, r
    assert host_cat(tb, "/home/dev/%s/f" % marker).strip() == "ok"
    tb.dev("rm -rf ~/%s" % marker)


def test_starting_in_config_or_a_path_directory_does_not_make_it_writable(tb, work):
    marker = "evil-" + work[-8:]
    # ~/.config holds user units, autostart entries, git's configuration.
    tb.dev("mkdir -p ~/.config/systemd/user ~/.local/bin")
    r = tb.scudo(["sh", "-c", "echo '[Service]' > ~/.config/systemd/user/%s.service" % marker], cwd="~/.config")
    assert r.rc != 0 and "not made writable" in r.err, r
    assert not host_exists(tb, "/home/dev/.config/systemd/user/%s.service" % marker)
    r = tb.scudo(["sh", "-c", "echo x > %s" % marker], cwd="~/.local/bin")
    assert r.rc != 0, r
    assert not host_exists(tb, "/home/dev/.local/bin/" + marker)
    # A directory on $PATH, wherever it is: here the project's own bin directory.
    tb.dev("mkdir -p %s/bin" % work)
    r = tb.scudo(["sh", "-c", "echo x > bin/%s" % marker], cwd=work, extra_env="PATH=%s/bin:$PATH" % work)
    assert r.rc != 0, r
    assert not host_exists(tb, "%s/bin/%s" % (work, marker))
    # Any other directory below ~/.config is some program's configuration too (issue 27): not
    # writable unless granted for the run.
    tb.dev("mkdir -p ~/.config/%s" % marker)
    r = tb.scudo(["sh", "-c", "echo ok > f"], cwd="~/.config/" + marker)
    assert r.rc != 0 and "dot-directory" in r.err, r
    assert not host_exists(tb, "/home/dev/.config/%s/f" % marker)
    r = tb.scudo(["--fs-write", "/home/dev/.config/" + marker, "sh", "-c", "echo ok > f"], cwd="~/.config/" + marker)
    assert r.rc == 0, r
    assert host_cat(tb, "/home/dev/.config/%s/f" % marker).strip() == "ok"
    tb.dev("rm -rf ~/.config/%s" % marker)


# Inside, where the command starts and there is no repository: make one whose config runs code
# at the next `git status` (a shell prompt runs one after every command), in every way there is.
PLANT = r"""
git init -q . 2>/dev/null && echo INIT
git config core.fsmonitor "touch %(w)s/PWNED" 2>/dev/null && echo CONFIG
rmdir .git 2>/dev/null && echo RMDIR
mkdir -p x && git init -q x && printf '[core]\n\tfsmonitor = touch %(w)s/PWNED\n' >> x/.git/config &&
  mv x/.git .git 2>/dev/null && echo MOVED
printf 'gitdir: x/.git\n' > .git 2>/dev/null && echo GITFILE
ln -s x/.git .git 2>/dev/null && echo SYMLINK
echo ok > file
"""


def outside_git_status(tb, work):
    return tb.dev("cd %s && git status 2>&1; ls -a" % work)


def test_repository_cannot_be_planted_where_the_command_starts(tb, work):
    r = tb.scudo(["sh", "-c", PLANT % {"w": work}], cwd=work)
    assert r.rc == 0, r
    assert not any(w in r.out for w in ("INIT", "CONFIG", "RMDIR", "MOVED", "GITFILE", "SYMLINK")), r
    # Outside: no .git (the empty one of the run is gone), so git finds no repository, and runs
    # nothing of what the command left in x/.
    assert not host_exists(tb, work + "/.git"), r
    assert host_cat(tb, work + "/file").strip() == "ok"
    o = outside_git_status(tb, work)
    assert "not a git repository" in o.out and "\n.git\n" not in o.out, o
    assert not host_exists(tb, work + "/PWNED"), o
    # A plan that names the .git (to let git init) lets it; a repository made so, whose
    # configuration names a program, is made inert when the run ends (docs/persistence.md).
    r = tb.scudo(["--fs-write", work + "/.git", "sh", "-c",
                  "git init -q . && git config core.fsmonitor 'touch %s/PWNED' && echo INIT" % work], cwd=work)
    assert "INIT" in r.out and "inert" in r.err, r
    outside_git_status(tb, work)
    assert not host_exists(tb, work + "/PWNED")


def test_repository_guard_outlives_a_shorter_run_and_a_killed_scudo(tb, work):
    # Two runs in the same directory share the empty .git: the one that ends first leaves it
    # to the other. A killed scudo's watcher removes it after stopping the unit.
    first = "%s sleep 1" % shlex.quote(SCUDO)
    second = "%s sh -c 'sleep 3; git init -q . 2>&1; echo second-rc=$?'" % shlex.quote(SCUDO)
    r = tb.dev("cd %s && { %s & } && %s; wait" % (work, first, second), timeout=60)
    assert "second-rc=0" not in r.out and "second-rc=" in r.out, r
    assert not host_exists(tb, work + "/.git"), r
    # scudo killed while the command runs
    tb.dev("cd %s && { setsid %s sleep 60 </dev/null >/dev/null 2>&1 & echo $! > scudo.pid; }" % (work, shlex.quote(SCUDO)))
    assert wait_for(lambda: host_exists(tb, work + "/.git"), timeout=10)
    assert tb.root("cat %s/.git/../scudo.pid" % work).rc == 0
    tb.root("kill -KILL $(cat %s/scudo.pid)" % work)
    assert wait_for(lambda: not host_exists(tb, work + "/.git"), timeout=15)
    assert wait_for(lambda: tb.user_units() == [], timeout=15), tb.user_units()


def test_no_repository_planted_between_the_start_and_the_project(tb, work):
    # Started in a/b of a checkout: a repository made in a/ (or a/b/) would be the one git
    # outside finds first when run in a/b, with whatever configuration it was given.
    git_repo(tb, work)
    tb.dev("mkdir -p %s/a/b" % work)
    for script in ("git init -q ..", "git init -q .", "mkdir -p ../.git/hooks"):
        r = tb.scudo(["--profile", "git-project", "sh", "-c", script], cwd=work + "/a/b")
        assert r.rc != 0, (script, r)
    assert not host_exists(tb, work + "/a/.git") and not host_exists(tb, work + "/a/b/.git")
    r = tb.dev("cd %s/a/b && git rev-parse --show-toplevel" % work)
    assert r.rc == 0 and r.out.strip() == work, r


def test_repositories_below_a_writable_directory_stay_read_only(tb, work):
    # Started in a directory of checkouts, or in a project holding a vendored repository:
    # their .git is below the writable directory, and git run there later outside reads it.
    for sub in ("foo", "bar", "third_party/lib"):
        r = tb.dev("mkdir -p %s/%s && cd %s/%s && git init -q ." % (work, sub, work, sub))
        assert r.rc == 0, r
    before = {sub: host_cat(tb, "%s/%s/.git/config" % (work, sub)) for sub in ("foo", "bar", "third_party/lib")}
    for sub in ("foo", "bar", "third_party/lib"):
        r = tb.scudo(["sh", "-c", "printf '[core]\\n\\tfsmonitor = echo PWNED\\n' >> %s/.git/config" % sub],
                     cwd=work)
        assert r.rc != 0, (sub, r)
        r = tb.scudo(["sh", "-c", "printf '%s' > %s/.git/hooks/post-checkout" % (HOOK, sub)], cwd=work)
        assert r.rc != 0, (sub, r)
        assert host_cat(tb, "%s/%s/.git/config" % (work, sub)) == before[sub]
        assert not host_exists(tb, "%s/%s/.git/hooks/post-checkout" % (work, sub))
    # the checkouts themselves stay writable
    r = tb.scudo(["sh", "-c", "echo ok > foo/file && echo ok > third_party/lib/file"], cwd=work)
    assert r.rc == 0, r
    assert host_cat(tb, work + "/third_party/lib/file").strip() == "ok"


def test_a_git_symlink_is_put_back_and_what_it_leads_to_stays_read_only(tb, work):
    r = tb.dev("cd %s && git init -q --separate-git-dir=%s/.repo-git . && rm .git && ln -s .repo-git .git && "
               "git status --porcelain" % (work, work))
    assert r.rc == 0, r
    # replaced by a repository of the command's making: put back, and the run stopped
    r = tb.scudo(["sh", "-c", "rm .git && git init -q . && git config core.fsmonitor 'echo PWNED'; "
                  "sleep 2; echo survived"], cwd=work)
    assert r.rc != 0 and "survived" not in r.out, r
    assert "put back" in r.err, r
    assert tb.root("readlink %s/.git" % work).out.strip() == ".repo-git"
    r = tb.dev("cd %s && git status --porcelain; git config core.fsmonitor" % work)
    assert "PWNED" not in r.out + r.err, r
    # what it leads to is a .git like any other: its hooks and config read-only
    r = tb.scudo(["sh", "-c", "printf '%s' > .repo-git/hooks/post-checkout" % HOOK], cwd=work)
    assert r.rc != 0, r
    assert not host_exists(tb, work + "/.repo-git/hooks/post-checkout")


def test_places_that_run_later_are_kept_through_symlinks(tb, work):
    # A stow layout: the start-up files and configuration directories are symlinks into a
    # dotfiles checkout, which is where the command starts (and so writable).
    d = work + "/dotfiles"
    setup = ("mkdir -p %(d)s/git %(d)s/systemd/user ~/.config && echo '# bashrc' > %(d)s/bashrc && "
             "printf '[user]\\n\\tname = t\\n' > %(d)s/git/config && "
             "mv ~/.bashrc ~/.bashrc.keep 2>/dev/null; rm -rf ~/.config/git ~/.config/systemd && "
             "ln -sfn %(d)s/bashrc ~/.bashrc && "
             "ln -sfn %(d)s/git ~/.config/git && ln -sfn %(d)s/systemd ~/.config/systemd" % {"d": d})
    assert tb.dev(setup).rc == 0
    try:
        before = {f: host_cat(tb, "%s/%s" % (d, f)) for f in ("bashrc", "git/config")}
        for script in ("echo 'echo PWNED' >> bashrc", "printf '[core]\\n\\tfsmonitor = echo PWNED\\n' >> git/config",
                       "printf '[Service]\\nExecStart=/bin/true\\n' > systemd/user/evil.service"):
            r = tb.scudo(["sh", "-c", script], cwd=d)
            assert r.rc != 0, (script, r)
        assert {f: host_cat(tb, "%s/%s" % (d, f)) for f in ("bashrc", "git/config")} == before
        assert not host_exists(tb, d + "/systemd/user/evil.service")
        r = tb.scudo(["explain", "true"], cwd=d)
        assert "/home/dev/.bashrc leads here" in r.out, r
        # the rest of the checkout stays writable
        r = tb.scudo(["sh", "-c", "echo ok > notes"], cwd=d)
        assert r.rc == 0 and host_cat(tb, d + "/notes").strip() == "ok", r
    finally:
        tb.dev("rm -f ~/.bashrc ~/.config/git ~/.config/systemd; mv ~/.bashrc.keep ~/.bashrc 2>/dev/null; true")


def test_a_file_gits_configuration_includes_stays_read_only(tb, work):
    # Run git in ~/work-X outside, and it reads ~/work-X/.gitconfig-work: made from inside, it
    # would set core.fsmonitor for every git command there.
    inc = work + "/.gitconfig-work"
    r = tb.dev("cp ~/.gitconfig ~/.gitconfig.keep 2>/dev/null; printf '[includeIf \"gitdir:%s/\"]\\n\\tpath = %s\\n' "
               ">> ~/.gitconfig && cd %s && git init -q ." % (work, inc, work))
    assert r.rc == 0, r
    try:
        r = tb.scudo(["sh", "-c", "printf '[core]\\n\\tfsmonitor = echo PWNED\\n' > .gitconfig-work"], cwd=work)
        assert r.rc != 0, r
        assert "fsmonitor" not in host_cat(tb, inc)
        r = tb.dev("cd %s && git config core.fsmonitor" % work)
        assert "PWNED" not in r.out, r
    finally:
        tb.dev("if [ -e ~/.gitconfig.keep ]; then mv ~/.gitconfig.keep ~/.gitconfig; else rm -f ~/.gitconfig; fi")
