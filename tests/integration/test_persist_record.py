# SPDX-License-Identifier: MIT OR Apache-2.0
"""What stays behind, looked for where scudo-bpfd's write record says the command wrote
(docs/persistence.md, "How the check knows what the run wrote"). The check still finds a planted
symlink; it looks at far fewer directories when the record places every write, at every one
when it cannot or when the helper is not there. `scudo -v` says how many it looked at."""
import re
import shlex

import pytest

from conftest import BPFD, start_bpfd, stop_bpfd

LOOKED = re.compile(r"looked at (\d+) directories, (where scudo-bpfd recorded a write|"
                    r"every one of the writable places)")
DIRS = 300


@pytest.fixture
def bpfd(tb):
    if not BPFD:
        pytest.skip("scudo-bpfd was not built (no libbpf, clang or bpftool)")
    start_bpfd(tb, "--exit-idle-time=2")
    yield
    stop_bpfd(tb)


def looked(r):
    m = LOOKED.search(r.err)
    assert m, r
    return int(m.group(1)), m.group(2).startswith("where")


def many_dirs(tb, work):
    # DIRS directories, two levels each: what a full walk reads
    r = tb.dev("cd %s && mkdir -p $(seq -f 'd%%g/e' 1 %d)" % (work, DIRS))
    assert r.rc == 0, r


def host_exists(tb, path):
    return tb.root("test -e %s || test -L %s" % (shlex.quote(path), shlex.quote(path))).rc == 0


def recorded(r):
    n, narrowed = looked(r)
    if not narrowed and "file refusals are not reported" in r.err:
        pytest.skip("the helper keeps no record here (no file reports: %s)" % r.err.strip()[-200:])
    return n, narrowed


def test_a_symlink_planted_where_the_record_says_is_removed_and_little_is_walked(tb, work, bpfd):
    many_dirs(tb, work)
    r = tb.scudo(["-v", "sh", "-c", "cd d7/e && ln -s /home/dev/.bashrc evil && exit 3"], cwd=work)
    assert r.rc == 3, r         # the command's own status: the check does not change it
    n, narrowed = recorded(r)
    assert narrowed, r
    # the start directory, d7 and d7/e (and what lies above them): not the 600 others
    assert 0 < n < 10, r
    assert not host_exists(tb, work + "/d7/e/evil"), r
    assert "d7/e/evil" in r.err, r
    assert tb.root("test -f /home/dev/.bashrc || test ! -e /home/dev/.bashrc").rc == 0


def test_a_write_the_record_cannot_place_means_the_whole_walk(tb, work, bpfd):
    many_dirs(tb, work)
    assert tb.dev("echo data > %s/d8/e/x" % work).rc == 0
    # renameat2(RENAME_EXCHANGE) through paths with "/": two directories change, which the
    # record does not place, so it is incomplete
    swap = ("import ctypes, os; l = ctypes.CDLL(None, use_errno=True); "
            "os.symlink('/home/dev/.bashrc', 'd9/e/evil'); "
            "assert l.syscall(316, -100, b'd8/e/x', -100, b'd9/e/evil', 2) == 0, ctypes.get_errno()")
    r = tb.scudo(["-v", "python3", "-c", swap], cwd=work)
    assert r.rc == 0, r
    n, narrowed = looked(r)
    assert not narrowed and n > 2 * DIRS, r
    assert tb.root("test -L %s/d8/e/x" % work).rc != 0, r


def test_a_symlink_planted_through_a_path_with_a_slash_is_placed_and_removed(tb, work, bpfd):
    many_dirs(tb, work)
    # relative paths with "/", as git's renames of its .lock files: placed by the directories'
    # time stamps, not by the path's text; a directory made so, and a name renamed into it
    plant = ("mkdir d9/e/f && ln -s /home/dev/.bashrc d9/e/f/evil.lock && "
             "mv d9/e/f/evil.lock d9/e/f/evil && ln -s /home/dev/.profile d5/e/other")
    r = tb.scudo(["-v", "sh", "-c", plant], cwd=work)
    assert r.rc == 0, r
    n, narrowed = recorded(r)
    assert narrowed and 0 < n < 12, r
    for p in ("d9/e/f/evil", "d5/e/other"):
        assert not host_exists(tb, "%s/%s" % (work, p)), r
        assert p in r.err, r


def test_an_agents_git_work_keeps_the_record_complete(tb, work, bpfd):
    r = tb.dev("cd %s && git init -q -b main . && git config user.email t@t && git config user.name t && "
               "echo one > a && git add a && git commit -q -m one" % work)
    assert r.rc == 0, r
    many_dirs(tb, work)
    # git renames refs/heads/main.lock, .git/index.lock... with paths relative to the project
    work_git = ("echo two >> a && git commit -qam two && git commit -q --amend -m two-b && "
                "echo three >> a && git stash -q && git stash pop -q && git commit -qam three && "
                "GIT_SEQUENCE_EDITOR=true git rebase -qi HEAD~2")
    r = tb.scudo(["-v", "--profile", "agents", "sh", "-c", work_git], cwd=work)
    assert r.rc == 0, r
    # `scudo -v` says where it looked: only where the record says, not the 600 directories
    n, narrowed = recorded(r)
    assert narrowed and 0 < n < 100, r
    assert tb.dev("cd %s && git log --format=%%s" % work).out.split() == ["three", "two-b", "one"]


def test_a_run_that_writes_nothing_walks_nothing(tb, work, bpfd):
    many_dirs(tb, work)
    r = tb.scudo(["-v", "sh", "-c", "ls d1 >/dev/null && cat /etc/hostname >/dev/null"], cwd=work)
    assert r.rc == 0, r
    n, narrowed = recorded(r)
    assert narrowed and n < 10, r


def test_without_the_helper_the_whole_walk_still_finds_a_planted_symlink(tb, work):
    stop_bpfd(tb)
    many_dirs(tb, work)
    r = tb.scudo(["-v", "sh", "-c", "cd d7/e && ln -s /home/dev/.bashrc evil"], cwd=work)
    assert r.rc == 0, r
    n, narrowed = looked(r)
    assert not narrowed and n > 2 * DIRS, r
    assert not host_exists(tb, work + "/d7/e/evil"), r


def test_a_symlink_swapped_into_an_unrecorded_directory_is_still_removed(tb, work, bpfd):
    many_dirs(tb, work)
    assert tb.dev("echo data > %s/d9/e/x" % work).rc == 0
    # made in d7/e (recorded), then swapped with d9/e/x by renameat2(RENAME_EXCHANGE), whose
    # new name is in d7/e: the symlink ends in d9/e, which nothing else wrote in
    swap = ("import ctypes, os; l = ctypes.CDLL(None, use_errno=True); "
            "a = os.open('d7/e', os.O_RDONLY); b = os.open('d9/e', os.O_RDONLY); "
            "os.symlink('/home/dev/.bashrc', 'evil', dir_fd=a); "
            "assert l.syscall(316, b, b'x', a, b'evil', 2) == 0, ctypes.get_errno()")
    r = tb.scudo(["-v", "python3", "-c", swap], cwd=work)
    assert r.rc == 0, r
    assert tb.root("test -L %s/d9/e/x" % work).rc != 0, r
    n, narrowed = looked(r)
    assert not narrowed, r
