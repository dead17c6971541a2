# SPDX-License-Identifier: MIT OR Apache-2.0
"""The runner: a command confined in a transient unit of dev's real user manager, with the
caller's streams, working directory, environment and exit status. Every check that something
is hidden or kept is made from outside the sandbox too."""
import json
import re
import shlex
import time

import pytest

from conftest import SCUDO, helper, wait_for

PTYRUN = helper("ptyrun.py")
Q = shlex.quote(SCUDO)
# Tests that name a process outside run in the PID namespace every sandbox gets and with a
# profile that turns it off, where the other layers must hold on their own.
PIDS = pytest.mark.parametrize("pids", ["", "--property PrivatePIDs=no"], ids=["own", "shared"])


def unit_pids(tb):
    """The pids (outside) of every process of the one scudo unit running, read from its cgroup."""
    units = [u for u in tb.user_units("scudo-*") if u.endswith(".service")]
    assert len(units) == 1, units
    cg = tb.dev("systemctl --user show -p ControlGroup --value %s" % units[0]).out.strip()
    return tb.root("cat /sys/fs/cgroup%s/cgroup.procs" % cg).out.split()


def test_secret_in_home_unreadable_and_unchanged(tb, work):
    tb.dev("echo topsecret > ~/.secret-token && chmod 600 ~/.secret-token")
    r = tb.scudo(["sh", "-c", "cat ~/.secret-token; echo overwritten > ~/.secret-token; ls -A ~"], cwd=work)
    assert "topsecret" not in r.out, r
    assert "No such file" in r.err, r
    # outside: the file is still there, unchanged
    assert tb.dev("cat ~/.secret-token").out == "topsecret\n"


def test_write_in_start_directory_visible_on_host(tb, work):
    r = tb.scudo(["sh", "-c", "echo made-inside > result.txt"], cwd=work)
    assert r.rc == 0, r
    assert tb.root("cat %s/result.txt" % work).out == "made-inside\n"


def test_rest_of_filesystem_read_only(tb, work):
    r = tb.scudo(["sh", "-c", "touch /etc/scudo-probe; echo rc=$?; touch /var/scudo-probe; echo rc=$?"], cwd=work)
    assert r.out.count("rc=1") == 2, r
    assert tb.root("ls /etc/scudo-probe 2>&1").rc != 0 and tb.root("ls /var/scudo-probe").rc != 0


def test_host_tmp_not_visible_and_private_tmp_discarded(tb, work):
    tb.dev("echo host > /tmp/host-file-$$; ls /tmp > /dev/null; echo host > /tmp/scudo-host-file")
    r = tb.scudo(["sh", "-c", "ls -A /tmp; echo inside > /tmp/inside-file; cat /tmp/inside-file"], cwd=work)
    assert r.rc == 0, r
    assert "scudo-host-file" not in r.out, r
    assert "inside" in r.out
    assert tb.root("test -e /tmp/inside-file").rc != 0


def test_runtime_dir_hidden(tb, work):
    r = tb.scudo(["sh", "-c", "ls -A $XDG_RUNTIME_DIR; test -S $XDG_RUNTIME_DIR/bus && echo BUS;"
                  "test -e $XDG_RUNTIME_DIR/systemd/private && echo PRIVATE; echo done"], cwd=work)
    assert r.rc == 0, r
    assert "BUS" not in r.out and "PRIVATE" not in r.out and "done" in r.out, r
    # and the outside still has them
    assert tb.dev("test -S $XDG_RUNTIME_DIR/bus").rc == 0


def test_cannot_reach_user_manager(tb, work):
    r = tb.scudo(["systemctl", "--user", "is-system-running"], cwd=work)
    assert r.rc != 0 and "running" not in r.out, r


def test_cannot_move_out_of_cgroup(tb, work):
    r = tb.scudo(["sh", "-c", "echo $$ > /sys/fs/cgroup/user.slice/cgroup.procs 2>&1 || echo refused;"
                  "cat /proc/self/cgroup"], cwd=work)
    assert "refused" in r.out, r
    assert "scudo-" in r.out, r


def test_no_new_privileges_and_no_capabilities(tb, work):
    r = tb.scudo(["sh", "-c", "grep -E '^(NoNewPrivs|CapBnd|CapEff)' /proc/self/status"], cwd=work)
    assert "NoNewPrivs:\t1" in r.out, r
    assert "CapBnd:\t0000000000000000" in r.out, r


def test_a_profile_naming_capabilities_leaves_the_bounding_set_empty(tb, work):
    r = tb.scudo(["--property", "CapabilityBoundingSet=CAP_NET_RAW CAP_SYS_ADMIN", "sh", "-c",
                  "grep -E '^CapBnd' /proc/self/status"], cwd=work)
    assert r.rc == 0, r
    assert "CapBnd:\t0000000000000000" in r.out, r


def test_exit_codes(tb, work):
    for code in (0, 1, 42):
        r = tb.scudo(["sh", "-c", "exit %d" % code], cwd=work)
        assert r.rc == code, r


def test_signal_death_is_128_plus_n(tb, work):
    r = tb.scudo(["sh", "-c", "kill -KILL $$"], cwd=work)
    assert r.rc == 128 + 9, r
    r = tb.scudo(["sh", "-c", "kill -SEGV $$"], cwd=work)
    assert r.rc == 128 + 11, r


def test_stdin_piped_through(tb, work):
    r = tb.scudo(["sh", "-c", "tr a-z A-Z; echo err >&2"], cwd=work, input=b"hello from stdin\n")
    assert r.rc == 0
    assert r.out == "HELLO FROM STDIN\n", r
    assert "err" in r.err


def test_large_output_and_binary_input(tb, work):
    data = bytes(range(256)) * 4096
    r = tb.dev("cd %s && head -c 1048576 /dev/urandom > blob && %s sha256sum < blob && sha256sum < blob"
               % (work, shlex.quote(SCUDO)))
    lines = r.out.split("\n")
    assert r.rc == 0 and lines[0] == lines[1], r
    assert len(data) > 0


def test_environment_passed(tb, work):
    r = tb.scudo(["sh", "-c", 'echo "$SCUDO_TEST_VAR|$WITH_SPACE"'], cwd=work,
                 extra_env="SCUDO_TEST_VAR=passed WITH_SPACE='a b'")
    assert r.out == "passed|a b\n", r


def test_environment_with_bash_function_still_runs(tb, work):
    r = tb.dev("cd %s && f() { echo x; }; export -f f; %s sh -c 'echo ran'" % (work, shlex.quote(SCUDO)))
    assert r.rc == 0 and r.out == "ran\n", r


def test_arguments_byte_for_byte(tb, work):
    r = tb.scudo(["printf", "%s|", "$HOME", "$$", "${X}", "a b", "", "%n", "\\"], cwd=work)
    assert r.out == "$HOME|$$|${X}|a b||%n|\\|", r


def test_shell_expansion_inside(tb, work):
    r = tb.scudo(["sh", "-c", "echo $$ $HOME"], cwd=work)
    pid, home = r.out.split()
    assert pid.isdigit() and home == "/home/dev", r


def test_working_directory(tb, work):
    tb.dev("mkdir -p %s/sub" % work)
    r = tb.scudo(["pwd"], cwd=work + "/sub")
    assert r.out == work + "/sub\n", r


def test_missing_command_127(tb, work):
    r = tb.scudo(["no-such-command-xyz"], cwd=work)
    assert r.rc == 127, r
    assert "no-such-command-xyz: command not found" in r.err


def test_not_executable_126(tb, work):
    tb.dev("printf '#!/bin/sh\\n' > %s/noexec" % work)
    r = tb.scudo(["./noexec"], cwd=work)
    assert r.rc == 126, r


def test_command_hidden_by_sandbox(tb, work):
    tb.dev("mkdir -p ~/mybin && printf '#!/bin/sh\\necho should-not-run\\n' > ~/mybin/tool && chmod +x ~/mybin/tool")
    r = tb.scudo(["/home/dev/mybin/tool"], cwd=work)
    assert r.rc == 127, r
    assert "should-not-run" not in r.out
    assert "cannot be executed inside the sandbox" in r.err


def test_no_user_bus_is_125(tb, work):
    r = tb.dev("cd %s && env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=/nonexistent %s sh -c 'echo ran'"
               % (work, shlex.quote(SCUDO)))
    assert r.rc == 125, r
    assert "ran" not in r.out
    assert "user manager" in r.err or "service manager" in r.err, r


def test_fs_write_read_hide_deny(tb, work):
    tb.dev("mkdir -p ~/data ~/ro ~/hidden-dir && echo d > ~/data/f && echo r > ~/ro/f && echo h > ~/hidden-dir/f"
           " && echo s > %s/.env && mkdir -p %s/secrets && echo k > %s/secrets/key" % (work, work, work))
    script = ("echo w >> ~/data/f && echo write-ok; cat ~/ro/f; echo x >> ~/ro/f || echo ro-refused;"
              "cat .env || echo env-refused; ls -A secrets; echo y > secrets/new || echo hide-ro")
    r = tb.scudo(["--fs-write", "/home/dev/data", "--fs-read", "/home/dev/ro", "--fs-deny", work + "/.env",
                  "--fs-hide", work + "/secrets", "sh", "-c", script], cwd=work)
    assert "write-ok" in r.out and "r\n" in r.out and "ro-refused" in r.out, r
    assert "env-refused" in r.out and "Permission denied" in r.err, r
    assert "key" not in r.out, r
    assert tb.dev("cat ~/data/f").out == "d\nw\n"
    assert tb.dev("cat ~/ro/f").out == "r\n"
    assert tb.dev("cat %s/.env" % work).out == "s\n"
    assert tb.dev("cat %s/secrets/key; ls %s/secrets" % (work, work)).out == "k\nkey\n"


def test_fs_option_relative_path_refused(tb, work):
    r = tb.scudo(["--fs-write", "relative/dir", "true"], cwd=work)
    assert r.rc == 125, r
    assert "relative" in r.err


def test_unknown_option_is_125(tb, work):
    r = tb.scudo(["--bogus-option", "true"], cwd=work)
    assert r.rc == 125 and "unknown" in r.err, r


def test_pty_isatty_and_dev_tty(tb, work):
    r = tb.dev("cd %s && python3 %s -- %s sh -c 'test -t 0 && test -t 1 && echo TTY-OK; echo via-dev-tty > /dev/tty;"
               "echo name=$(tty); ps -o tpgid= -p $$'" % (work, PTYRUN, shlex.quote(SCUDO)))
    res = json.loads(r.out)
    assert res["rc"] == 0, res
    assert "TTY-OK" in res["out"] and "via-dev-tty" in res["out"], res
    # ttyname() of the terminal it was given works inside, with the name it has outside
    assert re.search(r"name=/dev/pts/[0-9]+\b", res["out"]), res


def test_pty_ctrl_c_reaches_command(tb, work):
    r = tb.dev("cd %s && python3 %s --send-after READY '\\x03' -- %s sh -c "
               "'trap \"echo GOT-SIGINT; exit 7\" INT; echo READY; while :; do sleep 0.1; done'"
               % (work, PTYRUN, shlex.quote(SCUDO)))
    res = json.loads(r.out)
    assert "GOT-SIGINT" in res["out"], res
    assert res["rc"] == 7, res


def test_pty_ctrl_c_default_action(tb, work):
    r = tb.dev("cd %s && python3 %s --send-after READY '\\x03' -- %s sh -c 'echo READY; exec sleep 30'"
               % (work, PTYRUN, shlex.quote(SCUDO)))
    res = json.loads(r.out)
    assert res["rc"] == 130, res


def test_sigint_to_scudo_forwarded(tb, work):
    r = tb.dev("cd %s && (%s sh -c 'trap \"echo got-int; exit 3\" INT; echo started; sleep 20 & wait' > out.txt & "
               "P=$!; for i in $(seq 300); do grep -q started out.txt && break; sleep 0.1; done; kill -INT $P; wait $P;"
               " echo rc=$?); cat out.txt" % (work, shlex.quote(SCUDO)))
    assert "rc=3" in r.out and "got-int" in r.out, r


def test_scudo_sigkill_stops_unit(tb, work):
    r = tb.dev("cd %s && { %s sh -c 'echo $$ > pid; exec sleep 60' </dev/null >/dev/null 2>&1 & } ; "
               "for i in $(seq 300); do test -s %s/pid && break; sleep 0.1; done; "
               "systemctl --user list-units --no-legend 'scudo-*' | wc -l" % (work, shlex.quote(SCUDO), work))
    assert r.out.strip().split()[-1] != "0", r
    # (the pid the command wrote is its PID namespace's: its processes are found from outside)
    pids = unit_pids(tb)
    assert tb.root("ps -o comm= -p %s" % ",".join(pids)).out.split().count("sleep") == 1, pids
    tb.dev("pkill -KILL -x scudo")
    t0 = time.time()
    gone = wait_for(lambda: tb.user_units() == [], timeout=2.0)
    assert gone, "unit still there after %.1fs: %s" % (time.time() - t0, tb.user_units())
    for pid in pids:
        assert tb.root("kill -0 %s 2>/dev/null && echo alive || echo dead" % pid).out.strip() == "dead", pid


def test_no_units_or_cgroups_left_after_200_runs(tb, work):
    r = tb.dev("cd %s && for i in $(seq 200); do %s true || exit 1; done; echo finished"
               % (work, shlex.quote(SCUDO)), timeout=300)
    assert "finished" in r.out, r
    assert wait_for(lambda: tb.user_units() == [], timeout=10), tb.user_units()
    assert wait_for(lambda: tb.scudo_cgroups() == [], timeout=10), tb.scudo_cgroups()


def test_symlink_invocation(tb, work):
    tool = "linked-tool"
    tb.root("printf '#!/bin/sh\\necho real-tool \"$@\"; cat /home/dev/.link-secret 2>/dev/null || echo hidden\\n'"
            " > /usr/local/bin/%s && chmod 755 /usr/local/bin/%s" % (tool, tool))
    tb.dev("echo s3cret > ~/.link-secret; rm -rf ~/links; mkdir -p ~/links")
    r = tb.dev("%s link %s --dir ~/links && readlink ~/links/%s" % (shlex.quote(SCUDO), tool, tool))
    assert r.rc == 0, r
    assert r.out.strip() == tb.dev("realpath %s" % shlex.quote(SCUDO)).out.strip(), r
    r = tb.dev("cd %s && PATH=$HOME/links:$PATH %s --flag 'a b'" % (work, tool))
    assert r.out == "real-tool --flag a b\nhidden\n", r
    # unlink removes only our link
    r = tb.dev("%s unlink %s --dir ~/links; ls ~/links" % (shlex.quote(SCUDO), tool))
    assert r.rc == 0 and tool not in r.out, r


def test_unlink_leaves_foreign_files(tb):
    r = tb.dev("mkdir -p ~/links2 && echo mine > ~/links2/foo && %s unlink foo --dir ~/links2; echo rc=$?;"
               " cat ~/links2/foo" % shlex.quote(SCUDO))
    assert "rc=1" in r.out and "mine" in r.out, r


def test_link_beside_an_installers_link_says_what_to_do(tb):
    # an agent's installer keeps its own launcher of that name: scudo leaves it and names a
    # directory earlier on PATH instead, or says how to make one
    r = tb.dev("rm -rf ~/links3 ~/early && mkdir -p ~/links3 ~/early && ln -s /bin/true ~/links3/claude && "
               "PATH=$HOME/early:$HOME/links3:$PATH %s link claude --dir ~/links3; echo rc=$?; "
               "readlink ~/links3/claude" % shlex.quote(SCUDO))
    assert "rc=1" in r.out and r.out.splitlines()[-1] == "/bin/true", r
    assert "is not scudo's link (it leads to /usr/bin/true" in r.err, r
    assert "scudo link --dir /home/dev/early claude" in r.err, r
    r = tb.dev("PATH=$HOME/links3:/usr/bin:/bin %s link claude --dir ~/links3" % shlex.quote(SCUDO))
    assert r.rc != 0 and "mkdir -p ~/.local/scudo/bin && scudo link --dir ~/.local/scudo/bin claude" in r.err, r
    tb.dev("rm -rf ~/links3 ~/early")


def test_dry_run_starts_nothing(tb, work):
    r = tb.scudo(["--dry-run", "touch", "made-by-dry-run"], cwd=work)
    assert r.rc == 0 and "exec: /usr/bin/touch" in r.out, r
    assert tb.root("test -e %s/made-by-dry-run" % work).rc != 0


def test_nested_scudo_runs_in_place_and_refuses_widening(tb, work):
    inner = shlex.quote(SCUDO)
    r = tb.scudo(["sh", "-c", "%s --fs-write /home/dev true; echo widen=$?; "
                  "%s sh -c 'cat /proc/self/cgroup; ls -A ~'; echo nested=$?" % (inner, inner)], cwd=work)
    assert "widen=125" in r.out and "refused inside a scudo sandbox" in r.err, r
    assert "nested=0" in r.out, r
    # the nested command ran in the same unit as its parent, home still hidden
    assert r.out.count("scudo-") == 1, r
    assert ".bashrc" not in r.out, r


def test_scudo_sandbox_variable_outside_turns_nothing_off(tb, work):
    # Whether scudo runs nested is the kernel's to say (the cgroup it is in): a variable any
    # .env file can set must not make it run the command in place, unconfined.
    tb.dev("echo env-nested-secret > ~/.env-nested-secret")
    try:
        r = tb.scudo(["cat", "/home/dev/.env-nested-secret"], cwd=work, extra_env="SCUDO_SANDBOX=x")
        assert "env-nested-secret" not in r.out and r.rc != 0, r
        # nor does it refuse the options a nested run refuses
        r = tb.scudo(["--dry-run", "--fs-read", "/home/dev/.env-nested-secret", "true"], cwd=work,
                     extra_env="SCUDO_SANDBOX=scudo-0123456789abcdef.service")
        assert r.rc == 0 and "filesystem.read: /home/dev/.env-nested-secret" in r.out, r
    finally:
        tb.dev("rm -f ~/.env-nested-secret")


def test_nested_run_is_known_without_the_variable(tb, work):
    inner = shlex.quote(SCUDO)
    r = tb.scudo(["sh", "-c", "env -u SCUDO_SANDBOX %s --dry-run true; echo dry=$?; "
                  "env -u SCUDO_SANDBOX %s --fs-read /home/dev true; echo widen=$?; "
                  "env -u SCUDO_SANDBOX %s trust --yes .; echo trust=$?" % (inner, inner, inner)], cwd=work)
    assert "dry=0" in r.out and "nested in scudo-" in r.out and "would run /usr/bin/true in place" in r.out, r
    assert "widen=125" in r.out and "refused inside a scudo sandbox (scudo-" in r.err, r
    assert "trust=125" in r.out and "trust cannot be used inside a scudo sandbox" in r.err, r


def test_missing_fs_path_is_a_warning(tb, work):
    r = tb.scudo(["--fs-write", "/home/dev/does-not-exist", "sh", "-c", "echo ran"], cwd=work)
    assert r.rc == 0 and "ran" in r.out, r
    assert "'/home/dev/does-not-exist' does not exist, ignoring" in r.err, r


SUSPEND_PROBE = r'''
import os, pty, select, signal, subprocess, sys, time
pid, fd = pty.fork()
if pid == 0:
    # No fork in the loop: a ^Z that lands between a shell's vfork() and its child's exec()
    # stops the child while the shell waits for it, uninterruptibly and with every signal
    # blocked, so that nothing the shell's parent can see stops (outside a sandbox too: an
    # interactive bash waits the same way). On a loaded machine that window is wide.
    os.execv(sys.argv[1], [sys.argv[1], "python3", "-c",
                           "import time\nwhile True:\n print('tick', flush=True); time.sleep(0.05)"])
def read_for(sec):
    out, end = b"", time.time() + sec
    while time.time() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return out
def state():
    return open("/proc/%d/stat" % pid).read().split(")")[1].split()[0]
def freezer():
    units = subprocess.run(["systemctl", "--user", "list-units", "--no-legend", "--plain", "scudo-*"],
                           capture_output=True, text=True).stdout.split()
    u = [x for x in units if x.endswith(".service")][0]
    return subprocess.run(["systemctl", "--user", "show", "-P", "FreezerState", u],
                          capture_output=True, text=True).stdout.strip()
def read_until(text, sec):
    out, end = b"", time.time() + sec
    while time.time() < end and text not in out:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return out
def settle(want, sec=15):
    """(state, freezer state) once WANT holds of it, or when SEC have gone by."""
    end = time.time() + sec
    while True:
        s = (state(), freezer())
        if want(s) or time.time() > end:
            return s
        time.sleep(0.1)
assert b"tick" in read_until(b"tick", 30)
os.write(fd, b"\x1a")
s = settle(lambda s: s == ("T", "frozen"))
read_for(0.2)
print("state-after-ctrl-z", *s)
quiet = read_for(0.5)
print("ticks-while-frozen", quiet.count(b"tick"))
os.kill(pid, signal.SIGCONT)
s = settle(lambda s: s[0] in ("S", "R") and s[1] == "running")
print("state-after-cont", *s)
print("ticks-after-cont", read_until(b"tick", 15).count(b"tick"))
os.kill(pid, signal.SIGTERM)
os.waitpid(pid, 0)
'''


def test_ctrl_z_freezes_unit_and_suspends(tb, work):
    r = tb.dev("cd %s && python3 - %s <<'EOF'\n%s\nEOF" % (work, shlex.quote(SCUDO), SUSPEND_PROBE))
    assert "state-after-ctrl-z T frozen" in r.out, r
    assert "ticks-while-frozen 0" in r.out, r
    assert "state-after-cont S running" in r.out or "state-after-cont R running" in r.out, r
    assert "ticks-after-cont 0" not in r.out, r


def test_name_systemd_would_ignore_is_refused(tb, work):
    # systemd 252 skips unknown address families and system calls silently, which would
    # leave the sandbox weaker than the profile says: scudo refuses them before starting.
    for prop in ("RestrictAddressFamilies=AF_INTE", "SystemCallFilter=~@mountt", "SystemCallFilter=~nosuchcall"):
        r = tb.scudo(["--property", prop, "sh", "-c", "echo ran"], cwd=work)
        assert r.rc == 125, (prop, r)
        assert "ran" not in r.out and "bad value" in r.err, (prop, r)


def test_fast_exit_status_is_reliable(tb, work):
    # A command that ends before systemd has finished its start job must still report its own
    # status, on a terminal and without one.
    r = tb.dev("cd %s && for i in $(seq 25); do %s sh -c 'exit 7' </dev/null; echo -n \"$? \";"
               " python3 %s -- %s sh -c 'exit 7' | grep -o '\"rc\": [0-9a-z\"]*'; done"
               % (work, shlex.quote(SCUDO), PTYRUN, shlex.quote(SCUDO)), timeout=200)
    assert r.out.count('7 "rc": 7') == 25, r


# Listens until a connection comes, or until the file argv[1] exists (a minute at most): a
# connection made before that file is in the queue, so one more accept once it is there sees
# it, however busy the machine is.
ABSTRACT_LISTENER = r'''
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0scudo-test-abstract")
s.listen(1)
s.settimeout(0.1)
print("listening", flush=True)
end = time.time() + 60
while True:
    last = os.path.exists(sys.argv[1]) or time.time() > end
    try:
        s.accept()
        said = "CONNECTED"
    except socket.timeout:
        said = "no-connection" if last else None
    if said:
        s.close()           # the name is free again once this is printed
        print(said, flush=True)
        break
'''

ABSTRACT_CLIENT = ("import socket\n"
                   "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                   "try:\n"
                   "    s.connect('\\0scudo-test-abstract'); print('client-connected')\n"
                   "except OSError as e:\n"
                   "    print('client-refused', e.errno)\n")


def test_abstract_socket_outside_unreachable(tb, work):
    tb.needs_landlock_scopes()
    tb.dev("cat > %s/listen.py <<'EOF'\n%s\nEOF" % (work, ABSTRACT_LISTENER))
    tb.dev("cat > %s/client.py <<'EOF'\n%s\nEOF" % (work, ABSTRACT_CLIENT))
    # The client runs once the listener listens; then the listener is told to stop, and its
    # output read once it has ended.
    run = ("cd %s && rm -f {0}.stop && (python3 listen.py {0}.stop > {0} &) ; "
           "for i in $(seq 300); do grep -q listening {0} && break; sleep 0.1; done; %s python3 client.py; "
           "touch {0}.stop; for i in $(seq 300); do grep -qE 'CONNECTED|no-connection' {0} && break; sleep 0.1; done; "
           "cat {0}")
    # control: without scudo the client connects
    r = tb.dev(run.format("out1") % (work, ""))
    assert "client-connected" in r.out and "CONNECTED" in r.out, r
    r = tb.dev(run.format("out2") % (work, shlex.quote(SCUDO)))
    assert "client-refused 1" in r.out, r          # EPERM from the Landlock scope
    assert "no-connection" in r.out and "CONNECTED" not in r.out, r


@PIDS
def test_cannot_signal_processes_outside(tb, work, pids):
    if pids:
        tb.needs_landlock_scopes()    # the PID namespace of its own refuses it on any kernel
    r = tb.dev("cd %s && { sleep 60 >/dev/null 2>&1 & } ; P=$!; %s %s sh -c \"kill -TERM $P; echo kill=\\$?\"; sleep 0.3;"
               " kill -0 $P && echo still-alive; kill $P" % (work, shlex.quote(SCUDO), pids))
    assert "kill=1" in r.out, r
    assert "still-alive" in r.out, r


def test_signals_inside_sandbox_still_work(tb, work):
    r = tb.scudo(["sh", "-c", "sleep 30 & kill -TERM $!; wait $!; echo status=$?"], cwd=work)
    assert "status=143" in r.out, r


def test_closed_stdin_and_non_utf8_argument(tb, work):
    r = tb.dev("cd %s && %s sh -c 'cat; echo done' <&-" % (work, shlex.quote(SCUDO)))
    assert r.rc == 0 and "done" in r.out, r
    r = tb.dev("cd %s && %s echo $'\\xff\\xfe'" % (work, shlex.quote(SCUDO)))
    assert r.rc == 125 and "not valid UTF-8" in r.err, r


@PIDS
def test_outside_processes_files_unreachable_through_proc(tb, work, pids):
    tb.dev("echo proc-secret > ~/.proc-secret")
    r = tb.dev("cd %s && { sleep 30 >/dev/null 2>&1 & } ; P=$!; %s %s sh -c \"cat /proc/$P/root/home/dev/.proc-secret;"
               " ls /proc/$P/cwd/; cat /proc/$P/environ; echo end\"; kill $P" % (work, shlex.quote(SCUDO), pids))
    assert "proc-secret" not in r.out, r
    assert "HOME=" not in r.out, r
    assert "end" in r.out, r


def test_dev_shm_and_ipc_private(tb, work):
    tb.dev("echo outside > /dev/shm/scudo-outside-shm")
    r = tb.scudo(["sh", "-c", "ls /dev/shm; echo inside > /dev/shm/scudo-inside-shm && echo shm-writable"],
                 cwd=work)
    assert "scudo-outside-shm" not in r.out and "shm-writable" in r.out, r
    assert tb.dev("test -e /dev/shm/scudo-inside-shm").rc != 0
    assert tb.dev("cat /dev/shm/scudo-outside-shm").out == "outside\n"


def test_other_homes_read_only(tb, work):
    tb.root("mkdir -p /home/shared && chmod 1777 /home/shared")
    r = tb.scudo(["sh", "-c", "touch /home/shared/planted && echo planted"], cwd=work)
    assert "planted" not in r.out and "Read-only" in r.err, r
    assert tb.root("test -e /home/shared/planted").rc != 0


def test_manager_environment_does_not_leak(tb, work):
    tb.dev("systemctl --user set-environment SCUDO_T_TOKEN=leaked SCUDO_T_KEEP=manager")
    try:
        r = tb.dev("cd %s && SCUDO_T_KEEP=caller %s sh -c 'echo token=$SCUDO_T_TOKEN keep=$SCUDO_T_KEEP'"
                   % (work, shlex.quote(SCUDO)))
    finally:
        tb.dev("systemctl --user unset-environment SCUDO_T_TOKEN SCUDO_T_KEEP")
    assert "token= keep=caller" in r.out, r


def test_denied_variables_removed(tb, work):
    r = tb.dev("cd %s && MY_API_KEY=k GITHUB_TOKEN=t PLAIN=p %s sh -c 'echo \"$MY_API_KEY|$GITHUB_TOKEN|$PLAIN\"'"
               % (work, shlex.quote(SCUDO)))
    assert r.out.strip() == "||p", r


def test_bare_environment_still_finds_the_bus(tb, work):
    r = tb.dev("cd %s && env -i %s /bin/sh -c 'echo ran; env'" % (work, shlex.quote(SCUDO)))
    assert r.rc == 0 and "ran" in r.out, r
    assert "HOME=" not in r.out, r


def test_second_signal_stops_the_unit(tb, work):
    # The command ignores SIGINT; the first one reaches it and does nothing, the second makes
    # scudo stop the unit.
    r = tb.dev("cd %s && { %s sh -c 'trap \"\" INT; echo started; sleep 30' > out.txt 2>&1 & } ; P=$!;"
               " for i in $(seq 300); do grep -q started out.txt && break; sleep 0.1; done;"
               " kill -INT $P; sleep 0.5; kill -INT $P; S=$(date +%%s); wait $P; echo rc=$? took=$(( $(date +%%s) - S ))"
               % (work, shlex.quote(SCUDO)))
    assert "rc=" in r.out, r
    took = int(r.out.split("took=")[1].split()[0])
    assert took <= 5, r
    assert wait_for(lambda: tb.user_units() == [], timeout=10), tb.user_units()


def test_ending_signal_reaches_a_stopped_process(tb, work):
    # A process of the command stopped where its parent cannot tell (here by SIGSTOP, as a ^Z
    # between a shell's vfork() and exec() does), the command waiting for it with SIGTERM
    # ignored: the SIGTERM passed on holds until the process is continued, so scudo continues
    # it (SIGCONT, as systemd's stop does), and the command ends on the first signal.
    r = tb.dev("cd %s && { %s sh -c 'sleep 60 & p=$!; kill -STOP $p; trap \"\" TERM; echo started; wait $p;"
               " echo waited' > out.txt 2>&1 & } ; P=$!;"
               " for i in $(seq 300); do grep -q started out.txt && break; sleep 0.1; done;"
               " kill -TERM $P; S=$(date +%%s); for i in $(seq 200); do kill -0 $P 2>/dev/null || break;"
               " sleep 0.1; done; kill -0 $P 2>/dev/null && echo still-running; kill -KILL $P 2>/dev/null;"
               " wait $P; echo took=$(( $(date +%%s) - S )); cat out.txt"
               % (work, shlex.quote(SCUDO)), timeout=90)
    assert "started" in r.out and "still-running" not in r.out, r
    assert "waited" in r.out, r
    assert wait_for(lambda: tb.user_units() == [], timeout=10), tb.user_units()


def put(tb, path, text):
    r = tb.dev("cat > %s <<'SCUDO_EOF'\n%s\nSCUDO_EOF" % (shlex.quote(path), text))
    assert r.rc == 0, r


# ---------------------------------------------------------------------------------------------
# The PID namespace

def test_own_pid_namespace_and_proc(tb, work):
    # The command is pid 2, under scudo-confine's init (pid 1, not readable), in a /proc that
    # shows the sandbox's processes only; a profile may turn it off.
    r = tb.dev("cd %s && { setsid sleep 61 </dev/null >/dev/null 2>&1 & echo $!; }" % work)
    outside = r.out.strip()
    probe = ("echo pid=$$; echo procs=$(ls -d /proc/[0-9]* | wc -l); cat /proc/1/comm;"
             " cat /proc/1/environ >/dev/null 2>&1 || echo environ-refused; pgrep -x sleep || echo no-sleep")
    try:
        r = tb.scudo(["sh", "-c", probe], cwd=work)
        assert r.rc == 0 and "pid=2\n" in r.out and "scudo-confine\n" in r.out, r
        assert "environ-refused" in r.out and "no-sleep" in r.out, r
        assert int(r.out.split("procs=")[1].split()[0]) <= 5, r
        r = tb.scudo(["--property", "PrivatePIDs=no", "sh", "-c", probe], cwd=work)
        assert r.rc == 0 and "pid=2\n" not in r.out and outside in r.out.split(), r
    finally:
        tb.root("kill %s" % outside)
    # and explain says which
    r = tb.scudo(["explain", "true"], cwd=work)
    assert "processes: a PID namespace and /proc of the sandbox's own" in r.out, r
    r = tb.scudo(["explain", "--property", "PrivatePIDs=no", "true"], cwd=work)
    assert "processes: the session's" in r.out and "<- --property" in r.out, r
    assert "PrivatePIDs" in tb.scudo(["explain", "--list-properties"], cwd=work).out


SIGNAL_COUNTER = r'''
import signal, sys, time
counts = {}
def count(sig, frame):
    counts[sig] = counts.get(sig, 0) + 1
    with open("counts", "w") as f:
        f.write(" ".join("%s=%d" % (signal.Signals(s).name, n) for s, n in sorted(counts.items())) + "\n")
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):
    signal.signal(s, count)
open("ready", "w").close()
end = time.time() + 20
while time.time() < end and signal.SIGTERM not in counts:
    time.sleep(0.05)
time.sleep(0.5)         # time for a second copy of any of them to come in
sys.exit(10 * counts.get(signal.SIGINT, 0) + counts.get(signal.SIGTERM, 0))
'''


def test_signals_reach_the_command_once(tb, work):
    # Ctrl-C (SIGINT to scudo), a signal to the unit's main process, then the stop of a second
    # Ctrl-C (SIGTERM and SIGHUP): each reaches the command, once, through the PID namespace's
    # init, and the command's own exit status comes back.
    put(tb, work + "/counter.py", SIGNAL_COUNTER)
    r = tb.dev("cd %s && { %s python3 counter.py </dev/null & P=$!; } ; "
               "for i in $(seq 300); do test -e ready && break; sleep 0.1; done; "
               "kill -INT $P; for i in $(seq 300); do grep -q SIGINT=1 counts 2>/dev/null && break; sleep 0.1; done; "
               "systemctl --user kill --kill-whom=main -s USR1 'scudo-*.service'; "
               "for i in $(seq 300); do grep -q SIGUSR1=1 counts && break; sleep 0.1; done; "
               "kill -INT $P; wait $P; echo rc=$?; cat counts" % (work, Q), timeout=90)
    assert "rc=11" in r.out, r
    assert "SIGHUP=1 SIGINT=1 SIGUSR1=1 SIGTERM=1" in r.out, r
    assert wait_for(lambda: tb.user_units() == [], timeout=10), tb.user_units()


def test_init_reaps_orphans_and_ends_what_is_left(tb, work):
    # An orphan is reaped (no zombie); what the command leaves running when it ends gets the
    # SIGTERM systemd would send it, and nothing stays. (The orphan's /proc entry goes once it
    # is reaped; the time is counted from the command's end, not scudo's start.)
    r = tb.dev("cd %s && %s sh -c 'sh -c \"sleep 0.1 & echo \\$! > orphan; exit 0\";"
               " for i in $(seq 200); do test -e /proc/$(cat orphan) || break; sleep 0.05; done;"
               " echo zombies=$(ps -eo stat= | grep -c ^Z); setsid sleep 301 & date +%%s%%N > ended; exit 7';"
               " echo rc=$? took=$(( ($(date +%%s%%N) - $(cat ended)) / 1000000 ))" % (work, Q), timeout=60)
    assert "zombies=0" in r.out and "rc=7" in r.out, r
    assert int(r.out.split("took=")[1].split()[0]) < 4000, r
    assert tb.root("pgrep -u dev -f 'sleep 301' || echo none").out.strip() == "none"
    assert wait_for(lambda: tb.user_units() == [], timeout=10), tb.user_units()


# ---------------------------------------------------------------------------------------------
# Terminals: a pty of its own in place of every stream that is a terminal, only of those

STREAMS = r'''
S="$1"
"$S" sh -c 'echo READY >&2; read x; printf "got:%s\n\001\377" "$x"; test -t 0 && test ! -t 1 && test -t 2 &&
  echo streams-ok >&2' > out.bin
echo rc1=$?
printf 'piped\n' | "$S" sh -c 'cat; test -t 0 || echo stdin-pipe; test -t 1 && echo stdout-tty'
echo rc2=$?
"$S" sh -c 'echo to-out; echo to-err >&2' 2> err.txt
echo rc3=$?
"$S" sh -c 'test -t 0 && echo stdin-tty; echo to-pipe' | cat
echo rc4=$?
'''


def test_pty_replaces_only_the_streams_that_are_terminals(tb, work):
    put(tb, work + "/streams.sh", STREAMS)
    r = tb.dev("cd %s && python3 %s --send-after READY 'typed\\r' -- sh streams.sh %s" % (work, PTYRUN, Q))
    res = json.loads(r.out)
    out = res["out"].replace("\r", "")
    # > file: the file gets the bytes as printed; the input typed still reaches the command
    assert "streams-ok" in out and "rc1=0" in out, res
    assert tb.root("od -An -c %s/out.bin" % work).out.split() == "g o t : t y p e d \\n 001 377".split(), res
    # cmd | scudo cat
    assert "piped\nstdin-pipe\nstdout-tty\nrc2=0" in out, res
    # 2> file: stderr stays apart
    assert "to-out\nrc3=0" in out and "to-err" not in out, res
    # (scudo's own notice that file refusals go unreported where scudo-bpfd is not installed
    # is scudo's stderr, and so the file's)
    err = [l for l in tb.root("cat %s/err.txt" % work).out.splitlines()
           if not l.startswith("scudo: file refusals are not reported")]
    assert err == ["to-err"], res
    # | cat: stdout a pipe, stdin still a terminal
    assert "stdin-tty\nto-pipe\nrc4=0" in out, res


WINSIZE = r'''
import fcntl, os, pty, select, struct, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    os.execv(sys.argv[1], [sys.argv[1], "sh", "-c",
             "stty size; trap 'stty size; exit 0' WINCH; echo READY; while :; do sleep 0.1; done"])
out, end = b"", time.time() + 15
while time.time() < end:
    if select.select([fd], [], [], 0.05)[0]:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
        if b"READY" in out and b"resized" not in out:
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
            out += b"resized"
print(out.decode(errors="replace").replace("\r", ""))
print("rc", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
'''


def test_pty_window_size_and_changes(tb, work):
    put(tb, work + "/winsize.py", WINSIZE)
    r = tb.dev("cd %s && python3 winsize.py %s" % (work, Q), timeout=60)
    assert "40 100\nREADY" in r.out and "50 120\n" in r.out and "rc 0" in r.out, r


def test_no_pty_refused_with_a_terminal(tb, work):
    # -T hands the streams over as they are: a terminal among them the command could read.
    r = tb.dev("cd %s && python3 %s -- %s -T sh -c 'echo ran'" % (work, PTYRUN, Q))
    res = json.loads(r.out)
    assert res["rc"] == 125 and "ran" not in res["out"] and "--no-pty" in res["out"], res
    r = tb.scudo(["-T", "sh", "-c", "echo ran"], cwd=work)
    assert r.rc == 0 and r.out == "ran\n", r
