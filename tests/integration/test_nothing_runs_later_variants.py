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


@pytest.fixture
def helper(tb):
    """make's profile has network rules: the helper runs, as in test_tools.py."""
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
