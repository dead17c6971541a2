# SPDX-License-Identifier: MIT OR Apache-2.0
"""What the user's own configuration points at is read-only in every sandbox (issue 27, item 1):
a stow-style dotfiles checkout that ~/.ssh/config, ~/.vimrc and ~/.tmux.conf lead into, a unit
linked from a project, ~/.local/bin/tool -> the project, the programs and hook directory
~/.gitconfig (or $GIT_CONFIG_GLOBAL's file) names inside a writable checkout; and a start
directory inside a dot-directory of the home is not writable. And only the agents write .git
(item 2). Each attack is tried from inside, then judged from outside: the file as it was, and
the real program the user runs (ssh, vim, tmux, systemctl, git) run there afterwards, planting
nothing."""
import shlex
import uuid

import pytest

PLANT = "touch /home/dev/PWNED-%s"


def exists(tb, path):
    return tb.root("test -e %s || test -L %s" % (shlex.quote(path), shlex.quote(path))).rc == 0


def cat(tb, path):
    return tb.root("cat %s 2>/dev/null" % shlex.quote(path)).out


@pytest.fixture
def tag(tb):
    t = uuid.uuid4().hex[:8]
    yield t
    tb.root("rm -f /home/dev/PWNED-%s" % t)


@pytest.fixture
def dotfiles(tb):
    """~/dotfiles-<id>, a git checkout (stow's layout: the home's files are symlinks into it)."""
    d = "/home/dev/dotfiles-" + uuid.uuid4().hex[:8]
    r = tb.dev("mkdir -p %s && cd %s && git init -q ." % (d, d))
    assert r.rc == 0, r
    yield d
    tb.root("rm -rf %s" % d)


def all_refused(r):
    """Whether every status the script printed after "rc=" (one digit each) is a failure."""
    assert "rc=" in r.out, r
    codes = r.out.split("rc=", 1)[1].split()[0]
    return codes != "" and "0" not in codes


def link_into(tb, dotfiles, name, link, text):
    """dotfiles/name holding text, and link (in the home) leading to it."""
    r = tb.dev("mkdir -p %s $(dirname %s) && printf %%s %s > %s/%s && ln -sfn %s/%s %s"
               % (dotfiles, link, shlex.quote(text), dotfiles, name, dotfiles, name, link))
    assert r.rc == 0, r


def test_stow_ssh_config_stays_as_it_is(tb, dotfiles, tag):
    link_into(tb, dotfiles, "ssh_config", "/home/dev/.ssh/config", "Host *\n  User dev\n")
    try:
        tb.dev("chmod 700 ~/.ssh")
        r = tb.scudo(["sh", "-c", "printf 'Match exec \"%s\"\\n' >> ssh_config; echo rc=$?" % (PLANT % tag)],
                     cwd=dotfiles)
        assert all_refused(r), r
        assert cat(tb, dotfiles + "/ssh_config") == "Host *\n  User dev\n"
        # the user's ssh, outside, reads ~/.ssh/config
        tb.dev("ssh -G example.com >/dev/null 2>&1")
        assert not exists(tb, "/home/dev/PWNED-" + tag)
    finally:
        tb.dev("rm -f ~/.ssh/config")


def test_stow_vimrc_and_tmux_conf_stay_as_they_are(tb, dotfiles, tag):
    link_into(tb, dotfiles, "vimrc", "/home/dev/.vimrc", "set nocompatible\n")
    link_into(tb, dotfiles, "tmux.conf", "/home/dev/.tmux.conf", "set -g status off\n")
    try:
        r = tb.scudo(["sh", "-c", "echo \"call system('%s-vim')\" >> vimrc; a=$?; "
                      "echo 'run-shell \"%s-tmux\"' >> tmux.conf; echo rc=$a$?" % (PLANT % tag, PLANT % tag)],
                     cwd=dotfiles)
        assert all_refused(r), r
        assert cat(tb, dotfiles + "/vimrc") == "set nocompatible\n"
        assert cat(tb, dotfiles + "/tmux.conf") == "set -g status off\n"
        # the user's vim and tmux, outside, read them
        tb.dev("vim -es -u ~/.vimrc -c 'qa!' </dev/null; tmux -L t%s -f ~/.tmux.conf start-server; sleep 0.3; "
               "tmux -L t%s kill-server 2>/dev/null; true" % (tag, tag))
        assert not exists(tb, "/home/dev/PWNED-%s-vim" % tag)
        assert not exists(tb, "/home/dev/PWNED-%s-tmux" % tag)
    finally:
        tb.dev("rm -f ~/.vimrc ~/.tmux.conf ~/PWNED-%s-*" % tag)


def test_stow_directory_link_keeps_a_start_directory_below_it_read_only(tb, dotfiles, tag):
    # ~/.config/nvim -> dotfiles/nvim, the command started in dotfiles/nvim/lua: the user's
    # editor reads all of it.
    tb.dev("mkdir -p %s/nvim/lua && echo 'vim.o.number = true' > %s/nvim/lua/opts.lua && mkdir -p ~/.config "
           "&& ln -sfn %s/nvim ~/.config/nvim" % (dotfiles, dotfiles, dotfiles))
    try:
        r = tb.scudo(["sh", "-c", "echo 'os.execute(\"%s\")' >> opts.lua; echo rc=$?" % (PLANT % tag)],
                     cwd=dotfiles + "/nvim/lua")
        assert all_refused(r), r
        assert cat(tb, dotfiles + "/nvim/lua/opts.lua") == "vim.o.number = true\n"
    finally:
        tb.dev("rm -f ~/.config/nvim")


def test_linked_unit_stays_as_it_is(tb, work, tag):
    unit = "w27-%s.service" % tag
    tb.dev("printf '[Service]\\nType=oneshot\\nExecStart=/bin/true\\n' > %s/%s && systemctl --user link %s/%s"
           % (work, unit, work, unit))
    try:
        assert tb.root("readlink /home/dev/.config/systemd/user/%s" % unit).out.strip() == "%s/%s" % (work, unit)
        before = cat(tb, "%s/%s" % (work, unit))
        r = tb.scudo(["sh", "-c", "printf '[Service]\\nType=oneshot\\nExecStart=/bin/sh -c \"%s\"\\n' > %s; "
                      "echo rc=$?" % (PLANT % tag, unit)], cwd=work)
        assert all_refused(r), r
        assert cat(tb, "%s/%s" % (work, unit)) == before
        # the user's service manager, outside, reloads and starts it
        tb.dev("systemctl --user daemon-reload && systemctl --user start %s" % unit)
        assert not exists(tb, "/home/dev/PWNED-" + tag)
    finally:
        tb.dev("systemctl --user disable %s 2>/dev/null; rm -f ~/.config/systemd/user/%s; "
               "systemctl --user daemon-reload" % (unit, unit))


def test_local_bin_tool_in_the_project_stays_as_it_is(tb, work, tag):
    tool = "tool-" + tag
    tb.dev("printf '#!/bin/sh\\necho tool\\n' > %s/%s && chmod +x %s/%s && mkdir -p ~/.local/bin && "
           "ln -sfn %s/%s ~/.local/bin/%s" % (work, tool, work, tool, work, tool, tool))
    try:
        r = tb.scudo(["sh", "-c", "printf '#!/bin/sh\\n%s\\n' > %s; echo rc=$?" % (PLANT % tag, tool)], cwd=work)
        assert all_refused(r), r
        assert tb.dev("~/.local/bin/%s" % tool).out == "tool\n"
        assert not exists(tb, "/home/dev/PWNED-" + tag)
    finally:
        tb.dev("rm -f ~/.local/bin/%s" % tool)


def git_repo(tb, d):
    r = tb.dev("mkdir -p %s && cd %s && git init -q . && git config user.email t@t && git config user.name t && "
               "git commit -q --allow-empty -m one" % (d, d))
    assert r.rc == 0, r


def test_gitconfig_hooks_path_and_editor_in_a_checkout_stay_as_they_are(tb, work, tag):
    # ~/.gitconfig names a hooks directory and an editor that live in a checkout the command
    # may write; git outside, in any repository, runs them.
    other = work + "-other"
    git_repo(tb, other)
    tb.dev("mkdir -p %s/hooks && printf '#!/bin/sh\\ntrue\\n' > %s/editor.sh && chmod +x %s/editor.sh && "
           "git config --global core.hooksPath %s/hooks && "
           "git config --global core.editor %s/editor.sh" % (work, work, work, work, work))
    try:
        r = tb.scudo(["sh", "-c", "printf '#!/bin/sh\\n%s-hook\\n' > hooks/pre-commit; chmod +x hooks/pre-commit; "
                      "a=$?; printf '#!/bin/sh\\n%s-editor\\n' > editor.sh; echo rc=$a$?"
                      % (PLANT % tag, PLANT % tag)], cwd=work)
        assert all_refused(r), r
        assert not exists(tb, work + "/hooks/pre-commit")
        assert cat(tb, work + "/editor.sh") == "#!/bin/sh\ntrue\n"
        # the user's git, outside, in another repository: hooks and the editor
        tb.dev("cd %s && git commit -q --allow-empty" % other)
        assert not exists(tb, "/home/dev/PWNED-%s-hook" % tag)
        assert not exists(tb, "/home/dev/PWNED-%s-editor" % tag)
    finally:
        tb.dev("git config --global --unset core.hooksPath; git config --global --unset core.editor; "
               "rm -f ~/PWNED-%s-*; rm -rf %s" % (tag, other))


def test_git_config_global_file_in_a_checkout_stays_as_it_is(tb, work, tag):
    # $GIT_CONFIG_GLOBAL names the user's configuration; it lives in a writable checkout.
    other = work + "-other"
    git_repo(tb, other)
    tb.dev("printf '[user]\\n\\tname = t\\n' > %s/gitconfig" % work)
    try:
        r = tb.scudo(["sh", "-c", "printf '[core]\\n\\tfsmonitor = %s\\n' >> gitconfig; echo rc=$?" % (PLANT % tag)],
                     cwd=work, extra_env="GIT_CONFIG_GLOBAL=%s/gitconfig" % work)
        assert all_refused(r), r
        assert cat(tb, work + "/gitconfig") == "[user]\n\tname = t\n"
        tb.dev("cd %s && GIT_CONFIG_GLOBAL=%s/gitconfig git status >/dev/null" % (other, work))
        assert not exists(tb, "/home/dev/PWNED-" + tag)
    finally:
        tb.dev("rm -rf %s" % other)


def test_a_start_directory_in_a_dot_directory_is_not_writable(tb, tag):
    # started in ~/.vim/pack/<id>: vim, outside, loads the packages there
    d = "/home/dev/.vim/pack/t" + tag
    tb.dev("mkdir -p %s" % d)
    try:
        r = tb.scudo(["sh", "-c", "mkdir -p start/p/plugin && echo \"call system('%s')\" > start/p/plugin/x.vim"
                      % (PLANT % tag)], cwd=d)
        assert r.rc != 0, r
        assert "dot-directory" in r.err, r
        assert not exists(tb, d + "/start")
        tb.dev("vim -es -N -u NONE -c 'set packpath=~/.vim' -c 'packloadall' -c 'qa!' </dev/null")
        assert not exists(tb, "/home/dev/PWNED-" + tag)
        # --fs-write still grants it, for one run
        r = tb.scudo(["--fs-write", d, "sh", "-c", "echo ok > granted"], cwd=d)
        assert r.rc == 0 and cat(tb, d + "/granted") == "ok\n", r
    finally:
        tb.root("rm -rf %s" % d)


def test_a_build_cannot_write_git(tb, work, tag):
    # A build: a Makefile that replaces .git/logs/HEAD with a symlink to ~/.bashrc; the
    # user's next checkout would append its reflog line (a branch named to be a command).
    git_repo(tb, work)
    tb.dev("touch ~/.bashrc")
    before = cat(tb, "/home/dev/.bashrc")
    tb.dev("printf 'all:\\n\\tln -sf /home/dev/.bashrc .git/logs/HEAD; echo rc=$$?\\n' > %s/Makefile" % work)
    # (the build profiles' network rules need scudo-bpfd: their base, supply-chain, is what
    # takes the .git away; test_tools.py runs make, npm and cargo under their own profiles)
    r = tb.scudo(["--profile", "supply-chain", "sh", "-c", "make"], cwd=work)
    assert all_refused(r), r
    assert tb.root("test -L %s/.git/logs/HEAD" % work).rc != 0
    r = tb.dev("cd %s && git checkout -q -b 'x;%s;' && git checkout -q -" % (work, (PLANT % tag).replace(" ", "${IFS}")))
    assert cat(tb, "/home/dev/.bashrc") == before
    # and an agent still commits (tests/integration/test_git_commit.py has the rest)
    r = tb.scudo(["--profile", "agents", "sh", "-c", "git commit -q --allow-empty -m two && echo ok"], cwd=work)
    assert r.rc == 0 and "ok" in r.out, r
    assert "two" in tb.dev("cd %s && git log --format=%%s -1" % work).out


def test_explain_names_what_the_user_configuration_points_at(tb, dotfiles):
    link_into(tb, dotfiles, "vimrc", "/home/dev/.vimrc", "set nocompatible\n")
    try:
        r = tb.scudo(["explain", "true"], cwd=dotfiles)
        assert r.rc == 0, r
        line = [l for l in r.out.splitlines() if "%s/vimrc" % dotfiles in l]
        assert line and line[0].lstrip().startswith("read"), r.out
        assert "/home/dev/.vimrc leads here" in line[0], line
        assert "what the user's configuration points at" in r.out, r.out
    finally:
        tb.dev("rm -f ~/.vimrc")
