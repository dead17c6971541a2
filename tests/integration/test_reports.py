# SPDX-License-Identifier: MIT OR Apache-2.0
"""Refusal reports: files, connections and DNS names, each tied to the plan entry that refused
it, written once to stderr and to --report-json; nothing for a run that touches nothing
forbidden; a run without network rules goes on without the helper, and says so once.

scudo-bpfd runs as the socket-activated system service meson installed in the testbed
(conftest.py). What a report says is compared with what the test made happen; the
files are looked at from outside the sandbox."""
import json
import os
import re
import shlex
import uuid

import pytest

from conftest import SCUDO, built, start_bpfd, stop_bpfd, wait_for

pytestmark = pytest.mark.skipif(not os.path.exists(built("src/bpfd/scudo-bpfd"))
                                or not os.path.exists(built("bpf/scudo-files.skel.h")),
                                reason="scudo-bpfd or its file reporter not built (-Dbpf=enabled, x86-64)")


@pytest.fixture(scope="module")
def helper(tb):
    start_bpfd(tb, "-v --exit-idle-time=2")
    yield tb
    stop_bpfd(tb)


def run(tb, args, cwd, json_path=None):
    """scudo ARGS with --report-json; returns (result, the JSON records)."""
    json_path = json_path or "/tmp/reports-%s.json" % uuid.uuid4().hex[:8]
    r = tb.scudo(["--report-json", json_path] + args, cwd=cwd)
    text = tb.dev("cat %s 2>/dev/null; rm -f %s" % (json_path, json_path)).out
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    # the run's own records, first and last, are for scudo suggest (test_suggest.py)
    assert not records or records[0]["kind"] == "run", records
    return r, [x for x in records if x["kind"] not in ("run", "usage")]


def report_lines(err):
    # scudo writes each report in one write(); the command writes to the same stderr as it
    # pleases (cat's error message is three writes), so a report may start inside its line
    return re.findall(r"scudo: [^\n]*", err)


def test_hidden_file_reported_once_with_its_rule(helper, work):
    r, recs = run(helper, ["--", "cat", "/home/dev/.bashrc"], work)
    assert r.rc == 1, r                                   # hidden: cat fails
    assert len(recs) == 1, recs
    rec = recs[0]
    assert rec["kind"] == "file" and rec["op"] == "read" and rec["path"] == "/home/dev/.bashrc", rec
    assert rec["error"] == "ENOENT" and rec["rule"] == 'filesystem.hide "~"', rec
    assert rec["origin"].startswith("<built-in>/default.toml:"), rec
    assert rec["comm"] == "cat" and rec["pid"] > 0, rec
    lines = report_lines(r.err)
    assert len(lines) == 1, r
    assert re.match(r"scudo: file: refused read of '/home/dev/\.bashrc' \(ENOENT\) by pid \d+ \(cat\); "
                    r"by <built-in>/default\.toml:\d+ filesystem\.hide \"~\"$", lines[0]), lines


@pytest.mark.parametrize("path", ["/tmp/../home/dev/.bashrc", "/usr/lib/../../home/./dev/.bashrc"])
def test_hidden_file_named_through_dotdot_reported(helper, work, path):
    """The kernel's walk of a path follows ".." back (docs/reports.md): a hidden file named
    through another directory is a candidate, and reported with the rule that hides it."""
    r, recs = run(helper, ["--", "cat", path], work)
    assert r.rc == 1, r
    assert [(x["path"], x["rule"]) for x in recs] == [(path, 'filesystem.hide "~"')], recs
    assert helper.dev("test -s /home/dev/.bashrc").rc == 0


@pytest.mark.parametrize("dirs", [["/home"], ["/tmp", "../home"], ["/usr", "/home"]])
def test_relative_paths_judged_from_the_directory_changed_to(helper, work, dirs):
    """The kernel judges a relative path from the directory the process changed to (chdir),
    not the one the command started in: failed lookups in the hidden home, named from /home,
    are candidates, so many that the sandbox's share is exceeded and the end line says so;
    the same lookups from the project are none (test_refusal_amid_a_flood_...)."""
    prog = ("import os\nfor d in %r: os.chdir(d)\nfor i in range(100000):\n"
            "    try: os.stat('dev/.nothing-%%d' %% i)\n    except OSError: pass\n" % dirs)
    r, recs = run(helper, ["--", "python3", "-c", prog], work)
    assert r.rc == 0, r
    assert unexamined(r.err), r


def test_denied_file_reported_once_with_its_rule(helper, work):
    helper.dev("mkdir -p ~/.ssh && echo secret > ~/.ssh/id_test")
    try:
        r, recs = run(helper, ["--", "sh", "-c", "cat ~/.ssh/id_test"], work)
    finally:
        helper.dev("rm -f ~/.ssh/id_test")
    assert r.rc != 0 and "secret" not in r.out, r
    assert len(recs) == 1, recs
    assert recs[0]["path"] == "/home/dev/.ssh/id_test" and recs[0]["rule"] == 'filesystem.deny "~/.ssh"', recs
    assert recs[0]["access"] == "deny" and recs[0]["origin"].startswith("<built-in>/default.toml:"), recs


def test_read_only_write_reported_once_with_its_rule(helper, work):
    helper.dev("mkdir -p %s/ro" % work)
    r, recs = run(helper, ["--fs-read", work + "/ro", "--", "sh", "-c", "echo x > ro/new"], work)
    assert r.rc != 0, r
    assert helper.dev("test -e %s/ro/new" % work).rc != 0, "the write went through"
    assert len(recs) == 1, recs
    rec = recs[0]
    assert rec["op"] == "write" and rec["error"] == "EROFS" and rec["path"] == "ro/new", rec
    assert rec["resolved"] == work + "/ro/new", rec
    assert rec["rule"] == 'filesystem.read "~/%s/ro"' % os.path.basename(work) and rec["origin"] == "--fs-read", rec


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_write_into_a_nested_git_reported(helper, work, how):
    """A `.git` deep in the project is read-only (plan-harden.c): a write into it is a
    candidate however far below the project's own prefix it lies, where no other prefix is."""
    helper.dev("mkdir -p %s/sub/deeper && git init -q %s/sub/deeper" % (work, work))
    target = "sub/deeper/.git/hooks/post-checkout"
    path = work + "/" + target if how == "absolute" else target
    r, recs = run(helper, ["--", "sh", "-c", "echo evil > %s" % path], work)
    assert r.rc != 0, r
    assert helper.dev("test -e %s/%s" % (work, target)).rc != 0, "the write went through"
    assert [(x["path"], x["error"]) for x in recs] == [(path, "EROFS")], recs


def test_refused_connection_and_name_reported_once_with_their_rules(helper, work):
    probe = ("import socket\n"
             "s = socket.socket(); s.settimeout(2)\n"
             "try: s.connect(('127.0.0.9', 7))\n"
             "except OSError as e: print('connect', e.errno)\n"
             "try: socket.getaddrinfo('refused.example', 80, socket.AF_INET, socket.SOCK_STREAM)\n"
             "except OSError as e: print('resolve', e.errno)\n")
    r, recs = run(helper, ["--net-allow", "127.0.0.0/8", "--net-deny", "127.0.0.9", "--",
                           "python3", "-c", probe], work)
    assert r.rc == 0 and "connect 1" in r.out and "resolve" in r.out, r
    net = [x for x in recs if x["kind"] == "network"]
    dns = [x for x in recs if x["kind"] == "dns" and x["count"] == 1]
    assert len(net) == 1 and net[0]["target"] == "127.0.0.9:7" and net[0]["op"] == "connect", recs
    assert net[0]["rule"] == 'network.deny "127.0.0.9"' and net[0]["origin"] == "--net-deny", net
    assert len(dns) == 1 and dns[0]["name"] == "refused.example", recs
    assert dns[0]["rule"] == "no rule allows it" and "origin" not in dns[0], dns
    # glibc may ask again: counted in one line at the end, never a second report of its own
    assert len(re.findall(r"dns: refused name 'refused\.example' \(A\)[^\n]*no rule allows it$",
                          r.err, re.M)) == 1, r


@pytest.mark.parametrize("command", [
    "git status",
    "python3 -c pass",
    "bash -c true",
    "sh -c :",
    "npm --version",
])
def test_run_touching_nothing_forbidden_reports_nothing(helper, work, command):
    if command.startswith("npm") and helper.dev("command -v npm").rc != 0:
        pytest.skip("no npm in the testbed")
    helper.dev("cd %s && git init -q . && echo a > a && git add a && git -c user.name=t -c user.email=t@t "
               "commit -qm a" % work)
    r, recs = run(helper, ["--"] + shlex.split(command), work)
    assert r.rc == 0, r
    assert recs == [], recs
    assert report_lines(r.err) == [], r


def test_paths_with_escape_sequences_are_escaped(helper, work):
    """A command names a path with a terminal escape in it: the report shows it escaped."""
    helper.dev("mkdir -p ~/.ssh && touch \"$HOME/.ssh/$(printf 'a\\033]0;x\\007b')\"")
    try:
        r, recs = run(helper, ["--", "sh", "-c", "cat \"$HOME/.ssh/$(printf 'a\\033]0;x\\007b')\""], work)
    finally:
        helper.dev("rm -f \"$HOME/.ssh/$(printf 'a\\033]0;x\\007b')\"")
    assert "\x1b" not in r.err and "\x07" not in r.err, r
    assert "a\\x1b]0;x\\x07b" in r.err, r
    assert len(recs) == 1 and recs[0]["path"].endswith("a\\x1b]0;x\\x07b"), recs


def test_reports_to_the_journal_with_fields(helper, work):
    tag = uuid.uuid4().hex[:8]
    helper.dev("mkdir -p ~/.config/scudo && printf '[sandbox]\\nlog.target = \"journald\"\\n' "
               "> ~/.config/scudo/config.toml")
    try:
        r = helper.scudo(["--", "cat", "/home/dev/.profile-%s" % tag], cwd=work)
        helper.dev("touch ~/.profile-%s" % tag)     # exists outside only after the run: no report
        r = helper.scudo(["--", "sh", "-c", "cat ~/.profile-%s; true" % tag], cwd=work)
    finally:
        helper.dev("rm -f ~/.config/scudo/config.toml ~/.profile-%s" % tag)
    assert r.rc == 0 and report_lines(r.err) == [], r
    query = "journalctl -q --no-pager -o json SCUDO_KIND=file SCUDO_PATH=/home/dev/.profile-%s" % tag
    assert wait_for(lambda: helper.root(query).out.strip() != "", timeout=10)
    entries = [json.loads(line) for line in helper.root(query).out.splitlines()]
    assert len(entries) == 1, entries
    e = entries[0]
    assert e["SCUDO_RULE"] == 'filesystem.hide "~"' and e["SCUDO_ORIGIN"].startswith("<built-in>/default.toml:"), e
    assert e["SCUDO_ERRNO"] == "ENOENT" and e["SCUDO_OP"] == "read" and e["SYSLOG_IDENTIFIER"] == "scudo", e


def test_without_the_helper_a_run_goes_on_and_says_so_once(helper, work):
    helper.root("systemctl stop scudo-bpfd.socket scudo-bpfd.service")
    try:
        r, recs = run(helper, ["--", "sh", "-c", "cat ~/.bashrc; echo ran"], work)
    finally:
        helper.root("systemctl start scudo-bpfd.socket")
    assert r.rc == 0 and "ran" in r.out, r
    lines = report_lines(r.err)
    assert len(lines) == 1 and "file refusals are not reported: scudo-bpfd is not reachable" in lines[0], r
    assert recs == [], recs


def test_other_sandboxes_refusals_are_not_reported(helper, work):
    """Two runs at once: each reports its own refusals only. (Each waits for the other to be
    up, through files in the project, before it touches what it is refused.)"""
    a = "/tmp/ra-%s.json" % uuid.uuid4().hex[:6]
    wait = "for i in $(seq 300); do test -e %s && break; sleep 0.1; done; "
    helper.dev("cd %s && (%s --report-json %s -- sh -c 'touch a-up; %s cat ~/.profile' > /dev/null 2>&1 &)"
               % (work, SCUDO, a, wait % "b-up"))
    r, recs = run(helper, ["--", "sh", "-c", wait % "a-up" + "touch b-up; cat ~/.bashrc"], work)
    assert wait_for(lambda: helper.dev("grep -q profile %s" % a).rc == 0, timeout=10)
    # The other run must not outlive the test: in some full runs of the suite it did not end
    # (an open question, see the notes); its scudo killed, its watcher stops its unit.
    pattern = "--report-json[ ]%s" % a
    if not wait_for(lambda: helper.dev("pgrep -f -- '%s'" % pattern).rc != 0, timeout=60):
        helper.dev("pkill -KILL -f -- '%s'" % pattern)
        wait_for(lambda: helper.user_units() == [], timeout=10)
    other = helper.dev("cat %s; rm -f %s" % (a, a)).out
    assert [x["path"] for x in recs] == ["/home/dev/.bashrc"], recs
    assert ".bashrc" not in other and ".profile" in other, other


# A command that fails many lookups where scudo changes nothing (as a module or include search
# does), with one read of a hidden file in the middle. The file has to exist outside.
FLOOD = r"""
import os, sys
n = int(sys.argv[1])
base = sys.argv[2]
for i in range(n):
    try:
        os.stat("%s/nothing-%d/x.js" % (base, i))
    except OSError:
        pass
    if i == n // 2:
        try:
            open(os.path.expanduser("~/.flood-secret")).read()
        except OSError:
            pass
print("done")
"""


def flood_run(tb, work, n, base, extra=None):
    tb.dev("touch ~/.flood-secret")
    try:
        return run(tb, (extra or []) + ["--", "python3", "-c", FLOOD, str(n), base], work)
    finally:
        tb.dev("rm -f ~/.flood-secret")


def unexamined(err):
    return [l for l in report_lines(err) if "not examined" in l or "unexamined" in l]


@pytest.mark.parametrize("base", ["/usr/lib/node_modules", ".", "/usr/lib/gcc/../../lib/node_modules",
                                  "nothing/.."])
def test_refusal_amid_a_flood_of_failed_lookups_is_reported(helper, work, base):
    """200,000 failed lookups where the plan changes nothing (absolute under the read-only
    root, or relative in the project; with ".." as a compiler's search paths have them), one
    hidden file read in the middle: that file is reported with its rule, and nothing is
    dropped (were the lookups passed on, the sandbox's share would be exceeded)."""
    r, recs = flood_run(helper, work, 200000, base)
    assert r.rc == 0 and "done" in r.out, r
    files = [x for x in recs if x["kind"] == "file"]
    assert [x["path"] for x in files] == ["/home/dev/.flood-secret"], files
    assert files[0]["rule"] == 'filesystem.hide "~"' and files[0]["origin"].startswith("<built-in>/default.toml:")
    assert unexamined(r.err) == [], r


def test_another_sandboxs_flood_does_not_cost_this_runs_refusal(helper, work):
    """Two runs at once, both flooding; the other one with candidates (missing files in the
    hidden home), past its share: this run still reports its hidden file."""
    a = "/tmp/fa-%s.json" % uuid.uuid4().hex[:6]
    helper.dev("touch ~/.flood-secret ~/.flood-other")
    try:
        other = ("import os\nfor i in range(300000):\n"
                 "    try: os.stat(os.path.expanduser('~/.nothing-%d' % i))\n    except OSError: pass\n"
                 "    if i == 150000:\n"
                 "        try: open(os.path.expanduser('~/.flood-other'))\n        except OSError: pass\n")
        helper.dev("cd %s && (%s --report-json %s -- python3 -c %s > /dev/null 2>&1 &)"
                   % (work, SCUDO, a, shlex.quote(other)))
        r, recs = run(helper, ["--", "python3", "-c", FLOOD, "200000", "/usr/lib/node_modules"], work)
        assert wait_for(lambda: helper.dev("grep -q flood-other %s" % a).rc == 0, timeout=60)
    finally:
        # the other run ends before the next test (and the helper's stop at the module's end):
        # on a loaded machine its 300,000 calls can outlast this run ("[ ]": not pgrep's shell)
        other_ended = wait_for(lambda: helper.dev("pgrep -f -- '--report-json[ ]%s'" % a).rc != 0,
                               timeout=120)
        helper.dev("rm -f ~/.flood-secret ~/.flood-other")
        other_text = helper.dev("cat %s; rm -f %s" % (a, a)).out
    assert other_ended, "the other run did not end"
    assert r.rc == 0, r
    assert [x["path"] for x in recs if x["kind"] == "file"] == ["/home/dev/.flood-secret"], recs
    assert ".flood-secret" not in other_text, other_text


def test_one_line_per_refused_file(helper, work):
    """stat, access, then open of one hidden file: one line naming the three; the JSON file
    keeps each call."""
    prog = ("import os\np = os.path.expanduser('~/.oneline')\n"
            "for f in (os.stat, lambda p: os.access(p, os.R_OK) or os.stat('/nonexistent-for-sure/' + p), open):\n"
            "    try: f(p)\n    except OSError: pass\n")
    helper.dev("touch ~/.oneline")
    try:
        r, recs = run(helper, ["--", "python3", "-c", prog], work)
    finally:
        helper.dev("rm -f ~/.oneline")
    lines = [l for l in report_lines(r.err) if ".oneline" in l]
    assert len(lines) == 1, r
    assert re.match(r"scudo: file: refused stat, access, read of '/home/dev/\.oneline' \(ENOENT\) by pid \d+ "
                    r"\(python3\); by <built-in>/default\.toml:\d+ filesystem\.hide \"~\"$", lines[0]), lines
    assert sorted(x["op"] for x in recs if x["path"] == "/home/dev/.oneline") == ["access", "read", "stat"], recs


def test_end_line_about_dropped_candidates_obeys_log_target(helper, work):
    """A flood of candidates (a hidden directory, read over and over) exceeds the sandbox's
    share: the end line says how many candidates and which share, and goes to the log file
    log.target names, not to stderr."""
    log = "/home/dev/%s/scudo.log" % os.path.basename(work)
    helper.dev("mkdir -p ~/.config/scudo && printf '[sandbox]\\nlog.target = \"%s\"\\n' "
               "> ~/.config/scudo/config.toml" % log)
    prog = ("import os\nfor i in range(100000):\n"
            "    try: os.stat(os.path.expanduser('~/.hidden-%d' % i))\n    except OSError: pass\n")
    try:
        r = helper.scudo(["--", "python3", "-c", prog], cwd=work)
        text = helper.dev("cat %s" % log).out
    finally:
        helper.dev("rm -f ~/.config/scudo/config.toml %s" % log)
    assert r.rc == 0, r
    assert report_lines(r.err) == [], r
    m = re.search(r"scudo: file: (\d+) candidate refusals were not examined \(more at once than ([^)]*)\)", text)
    assert m and int(m.group(1)) > 0 and "share" in m.group(2), text


def test_npm_init_reports_nothing_and_drops_nothing(helper, work):
    if helper.dev("command -v npm").rc != 0:
        pytest.skip("no npm in the testbed")
    r, recs = run(helper, ["--", "npm", "init", "-y"], work)
    assert r.rc == 0 and helper.dev("test -f %s/package.json" % work).rc == 0, r
    assert unexamined(r.err) == [], r
    assert [x for x in recs if x["kind"] == "file"] == [], recs
