# SPDX-License-Identifier: MIT OR Apache-2.0
"""Staying behind: a sandboxed command must not leave code that runs later, outside any
sandbox. Each attack is tried from inside, and its failure checked from outside: the command
fails AND the host file is as it was (or still absent)."""
import shlex

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
    # First run (start directory writable, no .git): plant .git -> the home directory.
    r = tb.scudo(["sh", "-c", "ln -s /home/dev .git"], cwd=work)
    assert r.rc == 0, r
    assert tb.root("readlink %s/.git" % work).out.strip() == "/home/dev"
    # Next run under a profile that makes ${project}/.git read-only: the link must not bind
    # the home directory into the sandbox.
    r = tb.scudo(["--profile", "git-project", "sh", "-c", "cat /home/dev/secret-%s" % work[-8:]], cwd=work)
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
    # An ordinary directory below ~/.config stays writable.
    tb.dev("mkdir -p ~/.config/%s" % marker)
    r = tb.scudo(["sh", "-c", "echo ok > f"], cwd="~/.config/" + marker)
    assert r.rc == 0, r
    assert host_cat(tb, "/home/dev/.config/%s/f" % marker).strip() == "ok"
    tb.dev("rm -rf ~/.config/%s" % marker)
