# SPDX-License-Identifier: MIT OR Apache-2.0
"""Attacks on the sandbox: what a command run under the recommended profile tries in order to
read what it was not given, reach the session or the service manager, act on processes
outside, stay behind, or take more than its limits. Each attack is run from inside and its
failure checked from outside (as root in the testbed, or as dev without scudo): the command
fails AND the world outside is as it was. Passing tests document a defence and stay as
regression tests."""
import errno
import json
import os
import re
import shlex
import time

import pytest

from conftest import CONFINE, SCUDO, helper, wait_for

Q = shlex.quote(SCUDO)
PTYRUN = helper("ptyrun.py")


def put(tb, path, text, mode=None):
    """Writes a helper file as dev (a heredoc, so the text goes through as it is)."""
    r = tb.dev("cat > %s <<'SCUDO_EOF'\n%s\nSCUDO_EOF\n%s" % (shlex.quote(path), text,
                                                              "chmod %s %s" % (mode, shlex.quote(path)) if mode else ""))
    assert r.rc == 0, r


def host_exists(tb, path):
    return tb.root("test -e %s || test -L %s" % (shlex.quote(path), shlex.quote(path))).rc == 0


def alive(tb, pid):
    return tb.root("kill -0 %s 2>/dev/null && echo yes || echo no" % pid).out.strip() == "yes"


# The attacks on processes outside run twice: in the PID namespace every sandbox gets, where the
# pid of a process outside names nothing, and with a profile that turns it off, where the
# other layers (PrivateUsers=, the Landlock scope, the seccomp filter) must hold on their own.
PIDS = pytest.mark.parametrize("pids", ["own", "shared"])


def pid_args(pids):
    return [] if pids == "own" else ["--property", "PrivatePIDs=no"]


def start_outside(tb, work, cmd, name):
    """Starts CMD as dev outside any sandbox, in the background; returns its pid."""
    r = tb.dev("cd %s && { setsid %s </dev/null >/dev/null 2>&1 & echo $! > %s.pid; }; sleep 0.2; cat %s.pid"
               % (work, cmd, name, name))
    pid = r.out.strip().split()[-1]
    assert pid.isdigit(), r
    return pid


# ---------------------------------------------------------------------------------------------
# Writing where nothing may be written

def test_run_and_run_lock_are_not_the_sessions(tb, work):
    # systemd 252 leaves /run writable under ProtectSystem=strict once ProtectControlGroups=yes
    # is set (scudo always sets it); /run/lock is world-writable on Debian. Files left there
    # would outlive the run and be seen by the whole session: the sandbox's /run is an empty
    # one of its own.
    tag = work[-8:]
    # (the testbed's /run is world-writable, as /run/lock is everywhere)
    r = tb.scudo(["sh", "-c", "echo x > /run/planted-%s; mkdir -p /run/lock; echo x > /run/lock/planted-%s; "
                  "echo x > $XDG_RUNTIME_DIR/ok-%s && echo runtime-dir-writable" % (tag, tag, tag)], cwd=work)
    assert not host_exists(tb, "/run/planted-" + tag), r
    assert not host_exists(tb, "/run/lock/planted-" + tag), r
    # the hidden runtime directory is an empty one of the sandbox's own, still writable
    assert "runtime-dir-writable" in r.out, r
    assert not host_exists(tb, "/run/user/%s/ok-%s" % (tb.uid, tag))


def test_system_directories_not_writable(tb, work):
    tag = work[-8:]
    dirs = ["/etc", "/usr", "/usr/local/bin", "/var", "/var/lib", "/var/cache", "/opt", "/srv", "/root",
            "/home", "/boot"]
    script = "; ".join("echo x > %s/planted-%s 2>/dev/null && echo WROTE-%s" % (d, tag, d) for d in dirs)
    r = tb.scudo(["sh", "-c", script + "; echo done"], cwd=work)
    assert "done" in r.out and "WROTE" not in r.out, r
    for d in dirs:
        assert not host_exists(tb, "%s/planted-%s" % (d, tag)), d


def test_var_tmp_and_dev_shm_are_private(tb, work):
    tag = work[-8:]
    tb.dev("echo outside > /var/tmp/outside-%s" % tag)
    r = tb.scudo(["sh", "-c", "cat /var/tmp/outside-%s 2>/dev/null || echo unseen; echo in > /var/tmp/in-%s;"
                  " echo in > /dev/shm/in-%s; echo in > /dev/mqueue/in-%s 2>/dev/null; echo done"
                  % (tag, tag, tag, tag)], cwd=work)
    assert "unseen" in r.out and "done" in r.out, r
    for p in ("/var/tmp/in-", "/dev/shm/in-", "/dev/mqueue/in-", "/tmp/in-"):
        assert not host_exists(tb, p + tag), p
    assert tb.root("cat /var/tmp/outside-%s" % tag).out == "outside\n"


# ---------------------------------------------------------------------------------------------
# Reading what was not given

def test_other_users_and_root_only_files(tb, work):
    tb.root("id other >/dev/null 2>&1 || useradd -m other; echo other-secret > /home/other/secret;"
            " chmod 644 /home/other/secret; echo root-secret > /root/secret-%s; chmod 600 /root/secret-%s"
            % (work[-8:], work[-8:]))
    r = tb.scudo(["sh", "-c", "cat /home/other/secret; cat /root/secret-%s; cat /etc/shadow; echo x >> "
                  "/home/other/secret; echo done" % work[-8:]], cwd=work)
    assert "root-secret" not in r.out and "root:" not in r.out, r
    assert "done" in r.out, r
    # ProtectHome=read-only: other homes may be read as the user could, never written
    assert tb.root("cat /home/other/secret").out == "other-secret\n"


def test_hidden_home_survives_a_nested_user_namespace(tb, work):
    # Root in a user namespace of its own may mount and unmount, but not the mounts it inherited
    # together: the empty home stays over the real one.
    tb.dev("echo userns-secret > ~/.userns-secret")
    r = tb.scudo(["sh", "-c", "unshare -Urm sh -c 'umount -l /home/dev; umount -l /home; umount -l /run/user/{0};"
                  " cat /home/dev/.userns-secret; ls /run/user/{0}'; "
                  "unshare -Urm sh -c 'mount --bind / /mnt && cat /mnt/home/dev/.userns-secret'; echo done"
                  .format(tb.uid)], cwd=work)
    assert "userns-secret" not in r.out, r
    assert "done" in r.out, r
    assert tb.dev("cat ~/.userns-secret").out == "userns-secret\n"


def test_inherited_file_descriptors_not_passed(tb, work):
    tb.dev("echo fd-secret > ~/.fd-secret && chmod 600 ~/.fd-secret")
    r = tb.dev("cd %s && exec 5<~/.fd-secret 7>>~/.fd-secret; %s sh -c 'ls /proc/self/fd; cat <&5; cat /proc/self/fd/5;"
               " echo pwned >&7; echo done'" % (work, Q))
    assert "fd-secret" not in r.out and "done" in r.out, r
    assert tb.root("cat /home/dev/.fd-secret").out == "fd-secret\n"


@PIDS
def test_outside_process_fds_memory_and_maps_unreachable(tb, work, pids):
    tb.dev("echo mem-secret-%s > ~/.mem-secret" % work[-8:])
    put(tb, work + "/holder.py", "import time\nf = open('/home/dev/.mem-secret')\ns = f.read() * 1000\n"
        "time.sleep(60)\n")
    pid = start_outside(tb, work, "python3 %s/holder.py" % work, "holder")
    put(tb, work + "/reader.py", r'''
import ctypes, os, sys
pid = int(sys.argv[1])
for p in ("fd/3", "mem", "maps", "environ", "cwd/holder.py", "root/home/dev/.mem-secret", "map_files"):
    try:
        path = "/proc/%d/%s" % (pid, p)
        data = os.listdir(path) if p == "map_files" else open(path, "rb").read(4096)
        print("READ", p, data[:200])
    except OSError as e:
        print("refused", p, e.errno)
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(64)
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
remote = iovec(0x400000, 64)
n = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print("process_vm_readv", n, ctypes.get_errno())
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
print("ptrace_attach", libc.ptrace(PTRACE_ATTACH, pid, 0, 0), ctypes.get_errno())
print("ptrace_seize", libc.ptrace(PTRACE_SEIZE, pid, 0, 0), ctypes.get_errno())
pidfd = libc.syscall(434, pid, 0)                 # pidfd_open
print("pidfd_getfd", libc.syscall(438, pidfd, 3, 0) if pidfd >= 0 else "no-pidfd", ctypes.get_errno())
''')
    try:
        r = tb.scudo(pid_args(pids) + ["python3", "reader.py", pid], cwd=work)
        assert "mem-secret-" + work[-8:] not in r.out, r
        assert "READ fd/3" not in r.out and "READ mem" not in r.out and "READ environ" not in r.out, r
        assert "process_vm_readv -1" in r.out and "ptrace_attach -1" in r.out and "ptrace_seize -1" in r.out, r
        # (in a PID namespace of its own, there is no pid to open)
        assert "pidfd_getfd -1" in r.out or "pidfd_getfd no-pidfd 3" in r.out, r
        # outside: the process is still there and nobody traces it
        assert alive(tb, pid)
        assert "TracerPid:\t0" in tb.root("grep TracerPid /proc/%s/status" % pid).out
    finally:
        tb.root("kill %s" % pid)


def test_keyring_of_the_session_unreachable(tb, work):
    put(tb, work + "/keys.py", r'''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
USER, SESSION = -4, -3
KEYCTL_READ, KEYCTL_SEARCH = 11, 10
if sys.argv[1] == "add":
    kid = libc.syscall(248, b"user", b"scudo-key-secret", b"key-payload-123", 15, USER)   # add_key
    print(kid if kid > 0 else "errno %d" % ctypes.get_errno())
else:
    kid = int(sys.argv[2])
    buf = ctypes.create_string_buffer(64)
    print("read-by-id", libc.syscall(250, KEYCTL_READ, kid, buf, 64), ctypes.get_errno(), buf.value)
    found = libc.syscall(250, KEYCTL_SEARCH, USER, b"user", b"scudo-key-secret", 0)
    print("search-user", found, ctypes.get_errno())
    if found > 0:
        print("read-found", libc.syscall(250, KEYCTL_READ, found, buf, 64), buf.value)
''')
    kid = tb.dev("cd %s && python3 keys.py add" % work).out.strip()
    if kid == "errno %d" % errno.ENOSYS:
        pytest.skip("this kernel has no keyrings (add_key: ENOSYS outside the sandbox)")
    assert kid.isdigit() and int(kid) > 0, kid
    r = tb.scudo(["python3", "keys.py", "read", kid], cwd=work)
    assert "key-payload-123" not in r.out, r
    assert "search-user -1" in r.out, r
    # outside, the key is still the user's
    r2 = tb.dev("cd %s && python3 keys.py read %s" % (work, kid))
    assert "key-payload-123" in r2.out, r2


# ---------------------------------------------------------------------------------------------
# Acting on processes outside

@PIDS
def test_prlimit_cannot_kill_or_starve_processes_outside(tb, work, pids):
    # Same uid and gid are enough for prlimit(2) on another process, and no Landlock scope
    # covers it: RLIMIT_CPU=1 makes the kernel SIGKILL a process that has run a second.
    pid = start_outside(tb, work, "sh -c 'while :; do :; done'", "busy")
    try:
        time.sleep(1.5)
        r = tb.scudo(pid_args(pids) + ["sh", "-c", "prlimit --pid %s --cpu=1:1; echo cpu=$?; prlimit --pid %s --fsize=0:0;"
                      " echo fsize=$?; prlimit --pid %s --nofile=0:0; echo nofile=$?; prlimit --pid %s --cpu;"
                      " echo read=$?; prlimit --nofile=64:64 sh -c 'ulimit -n'" % (pid, pid, pid, pid)], cwd=work)
        assert "cpu=1" in r.out and "fsize=1" in r.out and "nofile=1" in r.out, r
        # reading another process's limits is harmless; in a PID namespace, there is none
        assert ("read=0" if pids == "shared" else "read=1") in r.out, r
        assert "\n64\n" in r.out, r           # and a command still sets its own
        time.sleep(1.5)
        assert alive(tb, pid), "the process outside was killed through its RLIMIT_CPU"
        limits = tb.root("cat /proc/%s/limits" % pid).out
        assert "Max cpu time              unlimited" in limits, limits
        assert "Max open files            0 " not in limits, limits
    finally:
        tb.root("kill %s" % pid)


COMPAT_PRLIMIT = r'''
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
        long ret;
        if (argv[1][0] == 'p') {        /* "probe": the i386 getpid (20), harmless */
                __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(20) : "memory");
                printf("getpid=%ld\n", ret);
                return 0;
        }
        uint64_t *lim = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        lim[0] = lim[1] = 1;
        /* the i386 prlimit64 (340) through int 0x80, from a 64-bit process */
        __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(340), "b"(atoi(argv[1])), "c"(0),
                          "d"((uint32_t)(uintptr_t) lim), "S"(0) : "memory");
        printf("compat=%ld\n", ret);
        /* the i386 setpriority (97): PRIO_USER, every process of the uid, nice 7 */
        __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(97), "b"(2), "c"(getuid()), "d"(7) : "memory");
        printf("setpriority-user=%ld\n", ret);
        /* the i386 ioprio_set (289): IOPRIO_WHO_USER, class idle */
        __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(289), "b"(3), "c"(getuid()), "d"(3 << 13) : "memory");
        printf("ioprio-user=%ld\n", ret);
        return 0;
}
'''


@PIDS
def test_prlimit_and_priority_through_the_32_bit_abi_refused(tb, work, pids):
    if os.uname().machine != "x86_64" or tb.dev("command -v gcc").rc != 0:
        pytest.skip("needs x86-64 and gcc")
    put(tb, work + "/compat.c", COMPAT_PRLIMIT)
    r = tb.dev("cd %s && gcc -O1 -o compat compat.c" % work)
    assert r.rc == 0, r
    # Outside any sandbox first, a call that changes nothing: where the kernel has no 32-bit
    # system calls (built without ia32 emulation, or with it off) int $0x80 kills any program
    # with SIGSEGV, and there is nothing for scudo to refuse. Any other answer is a failure.
    r = tb.dev("cd %s && ./compat probe; echo rc=$?" % work)
    if r.out.endswith("rc=%d\n" % (128 + 11)):
        pytest.skip("this kernel has no 32-bit system calls (int $0x80 dies with SIGSEGV outside the sandbox)")
    assert re.fullmatch(r"getpid=[1-9][0-9]*\nrc=0\n", r.out), r
    pid = start_outside(tb, work, "sh -c 'while :; do :; done'", "busy32")
    try:
        time.sleep(1.5)
        r = tb.scudo(pid_args(pids) + ["./compat", pid], cwd=work)
        assert "compat=-1\n" in r.out, r        # -EPERM
        assert "setpriority-user=-1\n" in r.out and "ioprio-user=-1\n" in r.out, r
        time.sleep(1.5)
        assert alive(tb, pid), r
        assert tb.root("ps -o ni= -p %s" % pid).out.strip() == "0", r
        assert "idle" not in tb.root("ionice -p %s" % pid).out, r
    finally:
        tb.root("kill %s" % pid)


@PIDS
def test_sigio_to_a_process_outside_refused(tb, work, pids):
    # F_SETOWN + O_ASYNC makes the kernel send SIGIO (default action: terminate) to any pid.
    if pids == "shared":
        tb.needs_landlock_scopes()
    pid = start_outside(tb, work, "sleep 60", "sigio")
    put(tb, work + "/sigio.py", r'''
import fcntl, os, sys
r, w = os.pipe()
try:
    fcntl.fcntl(r, fcntl.F_SETOWN, int(sys.argv[1]))
    fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
    os.write(w, b"x")
    print("armed")
except OSError as e:
    print("refused", e.errno)
''')
    try:
        r = tb.scudo(pid_args(pids) + ["python3", "sigio.py", pid], cwd=work)
        assert r.rc == 0, r
        time.sleep(0.5)
        assert alive(tb, pid), r
    finally:
        tb.root("kill %s" % pid)


@PIDS
def test_signals_through_pidfd_and_process_group_refused(tb, work, pids):
    if pids == "shared":
        tb.needs_landlock_scopes()    # without it, kill(-1, 9) would end the user manager
    pid = start_outside(tb, work, "sleep 60", "pg")
    try:
        r = tb.scudo(pid_args(pids) + ["python3", "-c", "import os, signal, sys\npid = int(sys.argv[1])\n"
                      "for f in (lambda: os.kill(pid, 9), lambda: os.killpg(pid, 9), lambda: os.kill(-1, 9),\n"
                      "          lambda: signal.pidfd_send_signal(os.pidfd_open(pid), 9)):\n"
                      "    try: f(); print('sent')\n"
                      "    except OSError as e: print('refused', e.errno)\n", pid], cwd=work)
        time.sleep(0.3)
        assert alive(tb, pid), r
    finally:
        tb.root("kill %s" % pid)


HOSTILE = r'''
# every process in view, and the one named outside: the OOM killer's victim, lowest CPU and I/O
# priority, one CPU; and every command line
for p in /proc/[0-9]* /proc/$1; do
  n=${p#/proc/}
  echo 1000 > $p/oom_score_adj 2>/dev/null
  renice -n 7 -p $n >/dev/null 2>&1
  ionice -c 3 -p $n 2>/dev/null
  taskset -p 1 $n >/dev/null 2>&1
  tr '\0' ' ' < $p/cmdline 2>/dev/null; echo
done
renice -n 7 -u $(id -u) >/dev/null 2>&1; echo renice-user=$?
ionice -c 3 -u $(id -u) 2>/dev/null; echo ionice-user=$?
echo done
'''


def process_state(tb, pid):
    """What a run could change of a process outside, read as root."""
    return {"oom": tb.root("cat /proc/%s/oom_score_adj" % pid).out.strip(),
            "nice": tb.root("ps -o ni= -p %s" % pid).out.strip(),
            "io": tb.root("ionice -p %s" % pid).out.strip(),
            "cpus": tb.root("taskset -p %s" % pid).out.split(":")[-1].strip()}


def test_other_processes_neither_seen_nor_touched(tb, work):
    # Without a PID namespace, the same uid is all it takes to make any process of the user the
    # OOM killer's victim, starve it of CPU and I/O, pin it to one CPU, and read its command
    # line (passwords on command lines: mysql -p...). With one, none of them has a pid inside.
    tag = work[-8:]
    put(tb, work + "/daemon.py", "import time\ntime.sleep(1000)\n")
    put(tb, work + "/hostile.sh", HOSTILE)
    pid = start_outside(tb, work, "python3 %s/daemon.py --password=hunter2-%s" % (work, tag), "daemon")
    try:
        before = process_state(tb, pid)
        assert "hunter2-" + tag in tb.root("tr '\\0' ' ' < /proc/%s/cmdline" % pid).out
        r = tb.scudo(["sh", "hostile.sh", pid], cwd=work)
        assert "done" in r.out, r
        assert "hunter2-" + tag not in r.out, r
        assert "renice-user=1" in r.out and "ionice-user=1" in r.out, r
        assert process_state(tb, pid) == before, r
        assert alive(tb, pid)
    finally:
        tb.root("kill %s" % pid)


@PIDS
def test_priorities_by_user_or_group_refused(tb, work, pids):
    # setpriority() and ioprio_set() by user reach every process of the uid, whatever the PID
    # namespace; by process group, every process of a group outside when there is none. A
    # command still sets its own.
    pid = start_outside(tb, work, "sleep 60", "prio")        # setsid: its own process group
    try:
        before = process_state(tb, pid)
        r = tb.scudo(pid_args(pids) + ["sh", "-c", "renice -n 7 -u $(id -u); echo user=$?; renice -n 7 -g %s;"
                      " echo group=$?; ionice -c 3 -u $(id -u); echo iouser=$?; ionice -c 3 -P %s; echo iogroup=$?;"
                      " renice -n 3 -p $$ >/dev/null; echo self=$?; ionice -c 3 -p $$; echo ioself=$?;"
                      " nice -n 5 sh -c 'ps -o ni= -p $$'" % (pid, pid)], cwd=work)
        for k in ("user", "group", "iouser", "iogroup"):
            assert "%s=1" % k in r.out, (k, r)
        assert "self=0" in r.out and "ioself=0" in r.out and "\n  8\n" in r.out, r
        assert process_state(tb, pid) == before, r
    finally:
        tb.root("kill %s" % pid)


# ---------------------------------------------------------------------------------------------
# The terminal

TIOCSTI_PROBE = r'''
import fcntl, termios
n = 0
for ch in "touch %s/INJECTED\n":
    try:
        fcntl.ioctl(0, termios.TIOCSTI, ch.encode()); n += 1
    except OSError as e:
        print("tiocsti-refused", e.errno); break
print("tiocsti", n)
'''

def test_tiocsti_cannot_type_into_the_callers_shell(tb, work):
    # stdin a terminal, stdout a pipe: the command's input is a pty of its own. Characters pushed
    # into the caller's terminal would be read by the shell after the run; pushed into its own
    # pty, by nobody.
    if tb.root("cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null").out.strip() == "0":
        pytest.skip("this kernel refuses TIOCSTI to every unprivileged process (dev.tty.legacy_tiocsti=0)")
    put(tb, work + "/tiocsti.py", TIOCSTI_PROBE % work)
    # An interactive shell on a terminal types the run, and only once the probe has printed its
    # count types "exit": pushed characters would come before it, and run.
    line = "%s python3 tiocsti.py | cat\\n" % Q
    r = tb.dev("cd %s && python3 %s --timeout 15 --send-after '$ ' %s --send-after 'tiocsti ' 'exit\\n' "
               "-- bash --norc --noprofile -i" % (work, PTYRUN, shlex.quote(line)))
    assert "tiocsti " in r.out, r
    time.sleep(0.5)
    assert not host_exists(tb, work + "/INJECTED"), r


KEYLOGGER = r'''
import os, pty, select, sys, time
scudo, work = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.chdir(work)
    os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], dict(os.environ, PS1="PROMPT> ", S=scudo))
out = b""
def wait_for(text, sec=10):
    global out
    end = time.time() + sec
    while time.time() < end and text not in out:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return text in out
def say(line):
    os.write(fd, line.encode() + b"\n")
wait_for(b"PROMPT>")
# Markers are computed ($((...))), so that the echo of a typed line is not taken for them.
say("$S sh -c 'echo reading >&2; exec cat /dev/fd/2 > stolen' </dev/null & sleep 2; echo R$((0+1))")
print("started", wait_for(b"R1"))
say("read -s pw; echo got=${#pw} G$((1+1))")
time.sleep(0.5)
say("hunter2")
print("read-by-the-shell", wait_for(b"got=7 G2", 5))
say("kill %1; wait; echo K$((1+2))")
wait_for(b"K3")
say("$S cat & sleep 2; jobs -l; kill -9 %+; wait; echo J$((2+2))")
print("jobs", wait_for(b"J4"))
say("exit")
time.sleep(0.3)
print("OUT", out.decode(errors="replace").replace("\r", ""))
'''


def test_background_command_cannot_read_the_terminal(tb, work):
    # `scudo cmd </dev/null &` from an interactive shell: given the caller's terminal as its
    # stdout and stderr, the command could open it for reading (/dev/fd/2) and, with no job
    # control to stop it (it is not its controlling terminal), take the next command line and a
    # password typed at `read -s`. It gets a pty of its own, into which nothing is typed.
    put(tb, work + "/keylogger.py", KEYLOGGER)
    r = tb.dev("cd %s && python3 keylogger.py %s %s" % (work, Q, work), timeout=90)
    assert "started True" in r.out and "reading" in r.out, r
    assert "read-by-the-shell True" in r.out, r
    stolen = tb.root("cat %s/stolen" % work)
    assert stolen.rc == 0 and "hunter2" not in stolen.out and "read -s" not in stolen.out, (stolen, r)
    # a background scudo whose input is the terminal is stopped as any background job that
    # reads or sets its terminal is (here SIGTTOU, setting it raw), and runs nothing meanwhile
    assert re.search(r"Stopped \(tty (output|input)\)\s+\$S cat", r.out), r


# ---------------------------------------------------------------------------------------------
# The session and the service manager

def test_user_manager_unreachable_by_any_path(tb, work):
    tag = work[-8:]
    mpid = tb.dev("pgrep -u dev -x systemd | head -1").out.strip()
    rt = "/run/user/%s" % tb.uid
    addrs = ["unix:path=%s/bus" % rt, "unix:path=%s/systemd/private" % rt,
             "unix:path=/proc/%s/root%s/bus" % (mpid, rt),
             "unix:path=/proc/%s/root%s/systemd/private" % (mpid, rt),
             "unix:abstract=%s/bus" % rt]
    script = "; ".join("DBUS_SESSION_BUS_ADDRESS=%s systemd-run --user --unit=evil-%s-%d touch %s/PWNED-%d 2>&1;"
                       " busctl --address=%s call org.freedesktop.systemd1 /org/freedesktop/systemd1 "
                       "org.freedesktop.systemd1.Manager Reload 2>&1"
                       % (a, tag, i, work, i, a) for i, a in enumerate(addrs))
    r = tb.scudo(["sh", "-c", script + "; systemctl --user daemon-reload 2>&1; echo done"], cwd=work)
    assert "done" in r.out, r
    time.sleep(0.5)
    assert not any(host_exists(tb, "%s/PWNED-%d" % (work, i)) for i in range(len(addrs))), r
    assert tb.user_units("evil-%s-*" % tag) == [], r


BUS_PROFILES = ('[bus-names]\ndbus.session = "filtered"\ndbus.talk = ["org.freedesktop.systemd1"]\n'
                '[bus-none]\ndbus.session = "filtered"\n')


def test_filtered_session_bus_passes_only_the_names_listed(tb, work):
    # dbus.session = "filtered": xdg-dbus-proxy beside the sandbox, at $XDG_RUNTIME_DIR/bus
    # inside. The witness is a user unit that leaves a file when started: through the filtered
    # bus without org.freedesktop.systemd1 the command cannot start it; naming the manager in
    # dbus.talk (which no profile should do) lets it, which shows the witness works.
    tag = work[-8:]
    unit = "witness-%s.service" % tag
    tb.dev("mkdir -p ~/.config/systemd/user && printf '[Service]\\nType=oneshot\\nExecStart=/bin/touch %s/STARTED\\n' "
           "> ~/.config/systemd/user/%s && systemctl --user daemon-reload" % (work, unit))
    tb.dev("cd %s && printf '%s' > .scudo.toml && %s trust --yes .scudo.toml" % (work, BUS_PROFILES.replace("\n", "\\n"), Q))
    start = ("dbus-send --session --print-reply --dest=org.freedesktop.systemd1 /org/freedesktop/systemd1 "
             "org.freedesktop.systemd1.Manager.StartUnit string:%s string:replace >/dev/null 2>&1 && echo START-SENT; "
             "echo bus=$DBUS_SESSION_BUS_ADDRESS; dbus-send --session --print-reply --dest=org.freedesktop.DBus "
             "/org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null && echo DAEMON-ANSWERS" % unit)
    try:
        r = tb.scudo(["-p", "bus-none", "sh", "-c", start], cwd=work)
        assert r.rc == 0 and "DAEMON-ANSWERS" in r.out and "START-SENT" not in r.out, r
        assert "bus=unix:path=/run/user/%s/bus" % tb.uid in r.out, r
        time.sleep(0.5)
        assert not host_exists(tb, work + "/STARTED"), r
        # the same with the manager named: the witness starts
        r = tb.scudo(["-p", "bus-names", "sh", "-c", start], cwd=work)
        assert "START-SENT" in r.out, r
        assert wait_for(lambda: host_exists(tb, work + "/STARTED"), timeout=5), r
        # without dbus.session there is no bus at all
        r = tb.scudo(["sh", "-c", start], cwd=work)
        assert "DAEMON-ANSWERS" not in r.out, r
        # a caller whose $XDG_RUNTIME_DIR is not the manager's: the proxy is found all the same
        tb.dev("mkdir -p -m 700 %s/rt" % work)
        r = tb.scudo(["-p", "bus-none", "sh", "-c", start], cwd=work, extra_env="XDG_RUNTIME_DIR=%s/rt" % work)
        assert "DAEMON-ANSWERS" in r.out and "bus=unix:path=%s/rt/bus" % work in r.out, r
        # and nothing of the proxy is left: its unit, its runtime directory
        assert wait_for(lambda: tb.user_units("scudo-*") == [], timeout=10), tb.user_units("scudo-*")
        assert tb.dev("ls $XDG_RUNTIME_DIR | grep -c '^scudo-'").out.strip() == "0"
    finally:
        tb.dev("rm -f ~/.config/systemd/user/%s; systemctl --user daemon-reload; %s untrust %s/.scudo.toml"
               % (unit, Q, work))


def test_filtered_session_bus_goes_with_a_killed_scudo(tb, work):
    tb.dev("cd %s && printf '%s' > .scudo.toml && %s trust --yes .scudo.toml" % (work, BUS_PROFILES.replace("\n", "\\n"), Q))
    try:
        # Ctrl-C
        r = tb.dev("cd %s && { %s -p bus-none sh -c 'echo $$ > pid; exec sleep 60' </dev/null >/dev/null 2>&1 & P=$!; }; "
                   "for i in $(seq 300); do test -s %s/pid && break; sleep 0.1; done; "
                   "systemctl --user list-units --no-legend 'scudo-*-bus.service' | wc -l; kill -INT $P; wait $P; "
                   "echo rc=$?" % (work, Q, work))
        assert r.out.split()[0] == "1" and "rc=130" in r.out, r
        assert wait_for(lambda: tb.user_units("scudo-*") == [], timeout=10), tb.user_units("scudo-*")
        assert tb.dev("ls $XDG_RUNTIME_DIR | grep -c '^scudo-'").out.strip() == "0"
        tb.dev("rm -f %s/pid" % work)
        # SIGKILL
        r = tb.dev("cd %s && { %s -p bus-none sh -c 'echo $$ > pid; exec sleep 60' </dev/null >/dev/null 2>&1 & } ; "
                   "for i in $(seq 300); do test -s %s/pid && break; sleep 0.1; done; "
                   "systemctl --user list-units --no-legend 'scudo-*-bus.service' | wc -l" % (work, Q, work))
        assert r.out.strip().split()[-1] == "1", r
        tb.dev("pkill -KILL -x scudo")
        assert wait_for(lambda: tb.user_units("scudo-*") == [], timeout=10), tb.user_units("scudo-*")
        assert tb.dev("ls $XDG_RUNTIME_DIR | grep -c '^scudo-'").out.strip() == "0"
    finally:
        tb.dev("%s untrust %s/.scudo.toml" % (Q, work))


def test_system_bus_cannot_start_units(tb, work):
    # No system bus by default (test_attacks_harden.py); should a profile give it, neither the
    # system manager nor the user manager's own connection to it take orders from the sandbox.
    tag = work[-8:]
    mgr = tb.dev("busctl --system list --no-legend | awk '$3 == \"systemd\" && $4 == \"dev\" {print $1}'").out.split()
    dests = ["org.freedesktop.systemd1"] + mgr
    script = "; ".join("busctl --system call %s /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager "
                       "StartTransientUnit 'ssa(sv)a(sa(sv))' evil-%s-%d.service fail 1 ExecStart 'a(sasb)' 1 "
                       "/bin/touch 2 touch %s/PWNED-%d false 0 2>&1" % (d, tag, i, work, i)
                       for i, d in enumerate(dests))
    r = tb.scudo(["sh", "-c", script + "; echo done"], cwd=work)
    assert "done" in r.out, r
    time.sleep(0.5)
    assert not any(host_exists(tb, "%s/PWNED-%d" % (work, i)) for i in range(len(dests))), r
    assert "evil-" not in tb.root("systemctl list-units --all --no-legend 'evil-*'").out
    assert tb.user_units("evil-%s-*" % tag) == []


LISTENER = r'''
import os, socket, sys, time
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    os.unlink(path)
except OSError:
    pass
s.bind(path)
if len(sys.argv) > 3:
    os.chown(path, 0, int(sys.argv[3])); os.chmod(path, 0o660)
s.listen(5)
s.settimeout(float(sys.argv[2]))
open(path + ".ready", "w").close()
try:
    c, _ = s.accept()
    open(path + ".CONNECTED", "w").close()
except socket.timeout:
    pass
'''

CLIENT = ("import socket, sys\n"
          "for p in sys.argv[1:]:\n"
          "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
          "    try:\n"
          "        s.connect(p); print('connected', p)\n"
          "    except OSError as e:\n"
          "        print('refused', p, e.errno)\n")


def test_agent_sockets_unreachable(tb, work):
    # ssh-agent's default socket is in /tmp, gpg-agent's in the runtime directory; the address
    # is known to the attacker even with the variable removed.
    tag = work[-8:]
    put(tb, work + "/listen.py", LISTENER)
    put(tb, work + "/client.py", CLIENT)
    rt = "/run/user/%s" % tb.uid
    socks = ["/tmp/ssh-%s/agent.1" % tag, rt + "/gnupg/S.gpg-agent", rt + "/keyring/ssh",
             "/tmp/.X11-unix/X%s" % tag[:2].replace("a", "9")]
    tb.dev("mkdir -p /tmp/ssh-%s %s/gnupg %s/keyring /tmp/.X11-unix 2>/dev/null" % (tag, rt, rt))
    # The listeners wait a minute, far longer than the run and the control take on a busy
    # machine, and are stopped at the end.
    for s in socks:
        tb.dev("cd %s && (setsid python3 listen.py %s 60 </dev/null >/dev/null 2>&1 & echo $! > %s.pid)" % (work, s, s))
    try:
        assert wait_for(lambda: all(host_exists(tb, s + ".ready") for s in socks), timeout=30)
        r = tb.scudo(["python3", "client.py"] + socks, cwd=work,
                     extra_env="SSH_AUTH_SOCK=%s" % socks[0])
        assert "connected" not in r.out, r
        time.sleep(0.3)
        assert not any(host_exists(tb, s + ".CONNECTED") for s in socks), r
        # control: outside, the same client reaches them
        r = tb.dev("cd %s && python3 client.py %s" % (work, socks[0]))
        assert "connected" in r.out, r
    finally:
        tb.root("kill %s 2>/dev/null; rm -rf /tmp/ssh-%s %s/gnupg %s/keyring"
                % (" ".join("$(cat %s.pid)" % s for s in socks), tag, rt, rt))


def test_container_manager_socket_denied(tb, work):
    # A member of the docker group reaches root's docker.sock from inside as from outside;
    # through it, a container with / mounted. The recommended profile denies these sockets.
    put(tb, work + "/listen.py", LISTENER)
    put(tb, work + "/client.py", CLIENT)
    # the listener waits a minute, far longer than the run and the control take on a busy
    # machine, and is stopped at the end
    tb.root("rm -f /run/docker.sock*; cd %s && (setsid python3 listen.py /run/docker.sock 60 $(id -g dev) "
            "</dev/null >/dev/null 2>&1 & echo $! > /run/docker.sock.pid)" % work)
    try:
        assert wait_for(lambda: host_exists(tb, "/run/docker.sock.ready"), timeout=30)
        assert "srw-rw----" in tb.root("ls -l /run/docker.sock").out
        r = tb.scudo(["python3", "client.py", "/run/docker.sock", "/var/run/docker.sock"], cwd=work)
        assert "connected" not in r.out, r
        time.sleep(0.3)
        assert not host_exists(tb, "/run/docker.sock.CONNECTED"), r
        # control: dev reaches it outside
        r = tb.dev("cd %s && python3 client.py /run/docker.sock" % work)
        assert "connected" in r.out, r
    finally:
        tb.root("kill $(cat /run/docker.sock.pid) 2>/dev/null; rm -f /run/docker.sock /run/docker.sock.*")


def test_service_sockets_under_run_unreachable_unless_granted(tb, work):
    # GNU screen's /run/screen/S-dev, a database's /run/postgresql: connect() ignores read-only
    # mounts, and no list of services can be complete. /run is empty inside, with what commands
    # need given back; a profile names what else.
    put(tb, work + "/listen.py", LISTENER)
    put(tb, work + "/client.py", CLIENT)
    d = "/run/svc-" + work[-8:]
    sock = d + "/S-dev"
    tb.root("mkdir -p %s && chown dev %s" % (d, d))
    tb.dev("cd %s && (setsid python3 listen.py %s 60 </dev/null >/dev/null 2>&1 & echo $! > %s/pid)"
           % (work, sock, work))
    try:
        assert wait_for(lambda: host_exists(tb, sock + ".ready"), timeout=30)
        r = tb.scudo(["python3", "client.py", sock, "/var/run/svc-%s/S-dev" % work[-8:]], cwd=work)
        assert "connected" not in r.out, r
        time.sleep(0.3)
        assert not host_exists(tb, sock + ".CONNECTED"), r
        # what commands need is there: the journal's socket, the resolver's configuration
        r = tb.scudo(["sh", "-c", "logger scudo-run-test && cat /etc/resolv.conf >/dev/null && echo fine"], cwd=work)
        assert r.rc == 0 and "fine" in r.out, r
        # a profile gives one back
        put(tb, work + "/.scudo.toml", '[svc]\nmatch = ["python3"]\nextend = "sandbox"\nfilesystem.read = ["%s"]' % d)
        r = tb.scudo(["trust", "--yes", work + "/.scudo.toml"], cwd=work)
        assert r.rc == 0, r
        r = tb.scudo(["python3", "client.py", sock], cwd=work)
        assert "connected" in r.out, r
    finally:
        tb.root("kill $(cat %s/pid) 2>/dev/null; rm -rf %s" % (work, d))


def test_environment_secrets_from_caller_and_manager_removed(tb, work):
    tb.dev("systemctl --user set-environment SSH_AUTH_SOCK=/tmp/mgr-agent GPG_AGENT_INFO=/tmp/g "
           "NPM_TOKEN=mgr-npm-token")
    try:
        r = tb.dev("cd %s && SSH_AUTH_SOCK=/tmp/caller-agent GITHUB_TOKEN=gh-tok AWS_SECRET_ACCESS_KEY=aws "
                   "DB_PASSWORD=pw MY_API_KEY=k npm_config__authToken=npm-tok npm_config__auth=npm-basic "
                   "github_token=lower-tok PGPASSWORD=pg-pw MYSQL_PWD=my-pw SECRET_KEY=django Api_Key=mixed "
                   "DEPLOY_PRIVATE_KEY=pem KEEP_THIS=kept %s env" % (work, Q))
    finally:
        tb.dev("systemctl --user unset-environment SSH_AUTH_SOCK GPG_AGENT_INFO NPM_TOKEN")
    for leaked in ("agent", "gh-tok", "AWS_", "DB_PASSWORD", "MY_API_KEY", "mgr-npm-token", "DBUS_SESSION_BUS_ADDRESS",
                   "npm-tok", "npm-basic", "lower-tok", "pg-pw", "my-pw", "django", "mixed", "pem"):
        assert leaked not in r.out, (leaked, r)
    assert "KEEP_THIS=kept" in r.out, r     # and the rest is there


# ---------------------------------------------------------------------------------------------
# Devices

STANDARD_DEV = {"char", "fd", "full", "hugepages", "log", "mqueue", "null", "ptmx", "pts", "random", "shm",
                "stderr", "stdin", "stdout", "tty", "urandom", "zero"}


def test_devices_the_session_may_open_are_not_there(tb, work):
    # On a desktop, udev's uaccess gives the seat's user webcams, microphones, GPUs, security
    # keys and, on some distributions, /dev/uinput (which types into the desktop). Stand-in: a
    # device node dev may write outside. Inside, /dev holds only the standard nodes.
    node = "/dev/scudo-test-uaccess-%d" % os.getpid()
    tb.root("rm -f %s && mknod -m 0666 %s c 1 3" % (node, node))
    try:
        probe = "if echo x > %s; then echo WROTE; else echo refused; fi; ls /dev" % node
        assert "WROTE" in tb.dev(probe).out     # control: dev opens it outside
        r = tb.scudo(["sh", "-c", probe], cwd=work)
        assert r.rc == 0 and "refused" in r.out and "WROTE" not in r.out, r
        listed = set(r.out.split()) - {"refused"}
        assert listed <= STANDARD_DEV and {"null", "tty", "pts", "urandom"} <= listed, r
        # a profile that needs the device says so, and then it is there
        r = tb.scudo(["--property", "PrivateDevices=false", "sh", "-c", probe], cwd=work)
        assert "WROTE" in r.out, r
    finally:
        tb.root("rm -f %s" % node)
    assert not host_exists(tb, node)


# Outside: another terminal of dev's (a pty held by a process of the session), with keystrokes
# typed into it and not read yet. It reports what is left to read and what was written to it.
TERMINAL_HOLDER = r"""
import json, os, sys, time
base = sys.argv[1]
m, s = os.openpty()
os.write(m, b"SECRET-KEYSTROKES\n")
with open(base + ".path.tmp", "w") as f:
    f.write(os.ttyname(s))
os.rename(base + ".path.tmp", base + ".path")
while not os.path.exists(base + ".done"):
    time.sleep(0.05)
os.set_blocking(m, False)
os.set_blocking(s, False)
def drain(fd):
    try:
        return os.read(fd, 4096).decode(errors="replace")
    except BlockingIOError:
        return ""
with open(base + ".result", "w") as f:
    json.dump({"written": drain(m), "pending": drain(s)}, f)
"""

# Inside: open that terminal by its name, read what waits there and write into it; then make a
# pty of its own, which must work.
TERMINAL_PROBE = r"""
import os, sys
target = open(sys.argv[1]).read().strip()
# /dev/pts inside: ptmx, the devpts of its own (.own), and names that lead into it
for n in sorted(os.listdir("/dev/pts")):
    p = "/dev/pts/" + n
    if n not in ("ptmx", ".own") and not (os.path.islink(p) and os.readlink(p).startswith(".own/")):
        print("FOREIGN", n)
try:
    fd = os.open(target, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
except OSError as e:
    print("CANNOT-OPEN", e.strerror)
else:
    try:
        print("STOLEN", os.read(fd, 100))
    except BlockingIOError:
        print("NOTHING-PENDING")
    os.write(fd, b"INJECTED")
m, s = os.openpty()
os.write(m, b"own\n")
print("OWN-PTY", os.read(s, 10))
try:
    os.symlink(target, "/dev/pts/planted")
    print("PTS-WRITABLE")
except OSError:
    pass
"""


def test_other_terminals_of_the_session_unreachable(tb, work):
    # systemd's PrivateDevices= binds the session's /dev/pts into the unit: every terminal of
    # the user, each of which the user may open. From there a command read what is typed into
    # another terminal (a sudo password) before its shell did, and wrote into it. scudo-confine
    # gives the command a devpts of its own instead; its own ptys work.
    put(tb, work + "/holder.py", TERMINAL_HOLDER)
    put(tb, work + "/probe.py", TERMINAL_PROBE)

    def terminal(name, *scudo_args):
        base = "%s/%s" % (work, name)
        start_outside(tb, work, "python3 holder.py %s" % base, name)
        assert wait_for(lambda: host_exists(tb, base + ".path")), name
        r = tb.scudo(list(scudo_args) + ["python3", "probe.py", base + ".path"], cwd=work)
        tb.dev("touch %s.done" % base)
        assert wait_for(lambda: host_exists(tb, base + ".result")), name
        return r, json.loads(tb.dev("cat %s.result" % base).out)

    r, seen = terminal("t1")
    assert r.rc == 0 and "CANNOT-OPEN" in r.out and "STOLEN" not in r.out, r
    assert "FOREIGN" not in r.out and "PTS-WRITABLE" not in r.out and "OWN-PTY b'own\\n'" in r.out, r
    assert "SECRET-KEYSTROKES" in seen["pending"] and "INJECTED" not in seen["written"], (r, seen)
    # Control: with the session's /dev (which a profile may ask for), the probe does reach it.
    r, seen = terminal("t2", "--property", "PrivateDevices=false")
    assert "STOLEN b'SECRET-KEYSTROKES\\n'" in r.out, r
    assert "INJECTED" in seen["written"] and "SECRET" not in seen["pending"], (r, seen)


# ---------------------------------------------------------------------------------------------
# Privileges and the cgroup

def test_setuid_binary_gives_nothing(tb, work):
    tb.root("cp /usr/bin/id /usr/local/bin/suid-id-test && chown root:root /usr/local/bin/suid-id-test && "
            "chmod 4755 /usr/local/bin/suid-id-test")
    try:
        assert "euid=0" in tb.dev("/usr/local/bin/suid-id-test").out   # control: it works outside
        r = tb.scudo(["sh", "-c", "/usr/local/bin/suid-id-test; su -c id root </dev/null; sudo -n id; "
                      "unshare -Ur sh -c 'cat /etc/shadow'; echo done"], cwd=work)
        assert "euid=0" not in r.out and "uid=0(root) gid=0(root) groups=0(root)\n" != r.out, r
        assert "root:" not in r.out, r
    finally:
        tb.root("rm -f /usr/local/bin/suid-id-test")


def test_cgroup_cannot_be_left_or_widened(tb, work):
    # Through /sys/fs/cgroup (read-only), and through a cgroup2 mounted afresh in a user and
    # cgroup namespace of its own: the namespace root's limits are not writable from inside
    # (nsdelegate) and nothing outside it is reachable.
    script = r'''
cg=$(cut -d: -f3 /proc/self/cgroup)
echo $$ > /sys/fs/cgroup/user.slice/cgroup.procs 2>/dev/null && echo MOVED
echo max > /sys/fs/cgroup$cg/memory.max 2>/dev/null && echo RAISED
echo max > /sys/fs/cgroup$cg/pids.max 2>/dev/null && echo RAISED
mkdir /sys/fs/cgroup$cg/sub 2>/dev/null && echo MADE
echo 1 > /sys/fs/cgroup$cg/cgroup.freeze 2>/dev/null && echo FROZE
unshare -Urm -C sh -c 'mount -t cgroup2 none /mnt 2>/dev/null || exit 0; echo mounted;
  echo max > /mnt/memory.max 2>/dev/null && echo RAISED-NS; echo max > /mnt/pids.max 2>/dev/null && echo RAISED-NS;
  mkdir /mnt/sub 2>/dev/null; echo $$ > /mnt/sub/cgroup.procs 2>/dev/null; cat /proc/self/cgroup'
cat /proc/self/cgroup
echo done
'''
    r = tb.scudo(["sh", "-c", script], cwd=work, timeout=30)
    assert "done" in r.out and "MOVED" not in r.out and "RAISED" not in r.out and "MADE" not in r.out, r
    assert "FROZE" not in r.out, r
    # every cgroup line printed is the unit's own (or below it, inside the fresh namespace)
    paths = [l.split(":", 2)[2] for l in r.out.splitlines() if l.startswith("0::")]
    assert paths and all(p.startswith("/") for p in paths), r
    assert "scudo-" in paths[-1], r


def controllers(tb):
    cg = tb.dev("systemctl --user show -P ControlGroup").out.strip()
    return tb.root("cat /sys/fs/cgroup%s/cgroup.controllers" % cg).out.split()


def test_memory_and_tasks_limits_hold_or_the_run_is_refused(tb, work):
    # Without the controller in the user manager's cgroup, systemd takes MemoryMax= and
    # TasksMax= and enforces nothing: the run must be refused, not run without its limits.
    have = controllers(tb)
    r = tb.scudo(["--property", "MemoryMax=64M", "--property", "MemorySwapMax=0", "python3", "-c",
                  "b = []\nfor i in range(64): b.append(bytearray(8 << 20))\nprint('ALLOCATED')"], cwd=work)
    assert "ALLOCATED" not in r.out and r.rc != 0, r
    if "memory" not in have:
        assert r.rc == 125 and "cgroup controller 'memory'" in r.err, r
    r = tb.scudo(["--property", "TasksMax=16", "sh", "-c",
                  "for i in $(seq 40); do sleep 5 & done 2>/dev/null; echo started=$(jobs -p | wc -l);"
                  " kill $(jobs -p) 2>/dev/null"], cwd=work, timeout=30)
    if "pids" not in have:
        assert r.rc == 125 and "cgroup controller 'pids'" in r.err and "started" not in r.out, r
    else:
        started = [l for l in r.out.splitlines() if l.startswith("started=")]
        assert started and int(started[0].split("=")[1]) <= 16, r
    # limits that are not cgroup attributes still run
    r = tb.scudo(["--property", "LimitNOFILE=77", "sh", "-c", "ulimit -n"], cwd=work)
    assert r.rc == 0 and r.out.strip() == "77", r
    assert wait_for(lambda: tb.user_units() == [], timeout=5), tb.user_units()


# ---------------------------------------------------------------------------------------------
# Staying alive, staying behind

def test_daemonised_children_die_with_a_killed_scudo(tb, work):
    r = tb.dev("cd %s && { %s sh -c 'setsid sh -c \"trap \\\"\\\" HUP TERM; echo \\$\\$ > daemon.pid; exec sleep 300\" "
               "</dev/null >/dev/null 2>&1 & sleep 60' </dev/null >/dev/null 2>&1 & echo $! > scudo.pid; } ;"
               " for i in $(seq 300); do test -s daemon.pid && break; sleep 0.1; done; cat daemon.pid"
               % (work, Q))
    dpid = r.out.strip().split()[-1]
    assert dpid.isdigit(), r
    tb.dev("kill -KILL $(cat %s/scudo.pid)" % work)
    # it ignores SIGTERM: the watcher's SIGKILL after a second of grace
    assert wait_for(lambda: not alive(tb, dpid), timeout=4), "daemonised child survived scudo's death"
    assert wait_for(lambda: tb.user_units() == [], timeout=10), tb.user_units()
    assert wait_for(lambda: tb.scudo_cgroups() == [], timeout=10), tb.scudo_cgroups()


def test_third_ctrl_c_kills_at_once(tb, work):
    r = tb.dev("cd %s && { %s sh -c 'trap \"\" INT TERM HUP; echo started; while :; do sleep 1; done' > out.txt 2>&1 & P=$!; } ;"
               " for i in $(seq 300); do grep -q started out.txt && break; sleep 0.1; done;"
               " kill -INT $P; sleep 0.3; kill -INT $P; sleep 0.3; kill -INT $P; S=$(date +%%s); wait $P;"
               " echo rc=$? took=$(( $(date +%%s) - S ))" % (work, Q), timeout=60)
    assert int(r.out.split("took=")[1].split()[0]) <= 2, r
    assert wait_for(lambda: tb.user_units() == [], timeout=10), tb.user_units()


def test_ctrl_c_leaves_nothing_running(tb, work):
    r = tb.dev("cd %s && { %s sh -c 'trap \"\" INT TERM HUP; (trap \"\" INT TERM HUP; echo $$ > child.pid; "
               "while :; do sleep 1; done) & echo started; wait' > out.txt 2>&1 & P=$!; } ;"
               " for i in $(seq 300); do grep -q started out.txt && break; sleep 0.1; done;"
               " kill -INT $P; sleep 0.5; kill -INT $P; S=$(date +%%s); wait $P; echo rc=$? took=$(( $(date +%%s) - S ))"
               % (work, Q), timeout=60)
    assert "rc=" in r.out, r
    # SIGTERM ignored: SIGKILL after the unit's 5 s stop timeout, not the manager's 90 s
    assert int(r.out.split("took=")[1].split()[0]) <= 8, r
    assert wait_for(lambda: tb.user_units() == [], timeout=5), tb.user_units()
    assert wait_for(lambda: tb.scudo_cgroups() == [], timeout=10), tb.scudo_cgroups()
    assert tb.root("pgrep -u dev -f 'while :; do sleep 1' || echo none").out.strip() == "none"


def test_untrusted_or_edited_project_file_grants_nothing(tb, work):
    tag = work[-8:]
    tb.dev("echo proj-secret > ~/.proj-secret-%s" % tag)
    # a project file the sandbox writes is not trusted: ignored
    r = tb.scudo(["sh", "-c", "printf '[sandbox]\\nfilesystem.read = [\"~\"]\\n[sandbox.unit]\\n"
                  "ProtectSystem = \"no\"\\n' > .scudo.toml"], cwd=work)
    assert r.rc == 0, r
    r = tb.dev("cd %s && %s cat ~/.proj-secret-%s </dev/null" % (work, Q, tag))
    assert "proj-secret" not in r.out and "not trusted" in r.err, r
    # a trusted one that the sandbox edits stops applying (trust is bound to the content)
    tb.dev("cd %s && printf '[sandbox]\\nenv = { TRUSTED = \"1\" }\\n' > .scudo.toml && %s trust --yes %s/.scudo.toml"
           % (work, Q, work))
    r = tb.scudo(["sh", "-c", "echo T=$TRUSTED; printf '[sandbox]\\nfilesystem.read = [\"~\"]\\n' > .scudo.toml"],
                 cwd=work)
    r = tb.dev("cd %s && %s cat ~/.proj-secret-%s </dev/null" % (work, Q, tag))
    assert "proj-secret" not in r.out, r
    # and the trust store is out of the sandbox's reach
    r = tb.scudo(["sh", "-c", "%s trust --yes %s/.scudo.toml; ls -A ~/.local/state 2>&1; echo done" % (Q, work)], cwd=work)
    r = tb.dev("cd %s && %s cat ~/.proj-secret-%s </dev/null" % (work, Q, tag))
    assert "proj-secret" not in r.out, r
    tb.dev("rm -f ~/.proj-secret-%s; %s untrust %s/.scudo.toml" % (tag, Q, work))


def test_trusted_project_file_cannot_be_edited_removed_or_renamed_inside(tb, work):
    # A trusted file that takes something away: were the sandbox able to change it, the next
    # run would find it untrusted, ignore it, and give that back.
    # and its hook file, which takes something away too
    tb.dev("cd %s && echo project-secret > secret.env && echo hook-secret > hook.env && "
           "echo 'scudo.fs.deny(\"hook.env\")' > deny.lua && "
           "printf '[sandbox]\\nfilesystem.deny = [\"secret.env\"]\\nhook = \"deny.lua\"\\n' "
           "> .scudo.toml && %s trust --yes %s/.scudo.toml" % (work, Q, work))
    before = tb.dev("sha256sum %s/.scudo.toml %s/deny.lua" % (work, work)).out
    try:
        r = tb.scudo(["explain", "cat"], cwd=work)
        for f in (".scudo.toml", "deny.lua"):
            assert re.search(r"read +%s/%s +<- scudo \(a project file it read stays as it is\)" % (work, f), r.out), r
        r = tb.scudo(["sh", "-c", "cat secret.env hook.env; echo '[sandbox]' > .scudo.toml; echo a=$?; "
                      "rm -f .scudo.toml; echo b=$?; mv .scudo.toml moved; echo c=$?; "
                      "ln -f .scudo.toml linked; echo d=$?; echo '-- x' >> deny.lua; echo e=$?; "
                      "mv deny.lua moved.lua; echo f=$?"], cwd=work)
        assert "project-secret" not in r.out and "hook-secret" not in r.out, r
        for k in "abcdef":
            assert "%s=0" % k not in r.out and "%s=" % k in r.out, r
        assert tb.dev("sha256sum %s/.scudo.toml %s/deny.lua" % (work, work)).out == before
        assert not host_exists(tb, work + "/moved") and not host_exists(tb, work + "/linked")
        # the next run still applies it, without a word about trust
        r = tb.scudo(["cat", "secret.env", "hook.env"], cwd=work)
        assert r.rc != 0 and "secret" not in r.out and "not trusted" not in r.err, r
    finally:
        tb.dev("%s untrust %s/.scudo.toml" % (Q, work))


def test_own_configuration_stays_read_only_with_a_symlinked_home(tb, work):
    # As on Fedora Silverblue (/home -> /var/home): $HOME is not its own canonical path. A
    # grant of ~/.config must still leave scudo's configuration and trust store read-only.
    tb.root("ln -sfn /home/dev /home/dev-link")
    try:
        for d, f in (("~/.config", "scudo/config.toml"), ("~/.local/state", "scudo/trusted")):
            tb.dev("mkdir -p %s/scudo" % d)
            before = tb.dev("cat %s/%s 2>/dev/null | sha256sum" % (d, f)).out.split()[0]
            grant = d.replace("~", "/home/dev-link")
            r = tb.scudo(["--fs-write", grant, "sh", "-c", "echo '[evil]' >> %s/%s; echo w=$?; ls %s" % (grant, f, grant)],
                         cwd=work, extra_env="HOME=/home/dev-link")
            assert "w=0" not in r.out and "scudo" in r.out, r     # the grant holds, the directory is in it
            assert tb.dev("cat %s/%s 2>/dev/null | sha256sum" % (d, f)).out.split()[0] == before, r
    finally:
        tb.root("rm -f /home/dev-link")


def test_directory_swapped_for_a_symlink_while_the_sandbox_starts(tb, work):
    # Another sandbox that may write the start directory's parent swaps the start directory for
    # a symlink to a hidden one after scudo checked the plan: systemd follows symlinks when it
    # binds, so it would bind the hidden directory writable in its place. strace holds scudo
    # for 3 s where the policy engine ends (timer_delete), after the checks of the plan and
    # before the unit is built, and the swap happens then: as soon as strace has written the
    # call (at the start of the hold), however long scudo took to get there.
    tag = work[-8:]
    secret = "/home/dev/.swap-secret-" + tag
    tb.dev("mkdir -p %s %s/sub && echo TOPSECRET > %s/key" % (secret, work, secret))
    try:
        tb.dev("cd %s/sub && (strace -qq -f -tt -o ../trace -e trace=timer_delete "
               "-e inject=timer_delete:delay_exit=3000000 %s -T sh -c 'cat key; echo pwned > planted' "
               "> ../out 2> ../err; echo $? > ../rc) </dev/null >/dev/null 2>&1 & "
               "(for i in $(seq 400); do grep -q timer_delete %s/trace 2>/dev/null && break; sleep 0.05; done; "
               "cd %s && mv sub sub.orig && ln -s %s sub && date +%%T.%%N > swapped) "
               "</dev/null >/dev/null 2>&1 &" % (work, Q, work, work, secret))
        assert wait_for(lambda: host_exists(tb, work + "/rc"), timeout=30)
        out, err = tb.dev("cat %s/out" % work).out, tb.dev("cat %s/err" % work).out
        trace = tb.dev("cat %s/trace %s/swapped" % (work, work)).out
        assert "TOPSECRET" not in out, (out, err, trace)
        assert tb.dev("cat %s/rc" % work).out.strip() == "125", (out, err, trace)
        assert "changed into a symlink after it was checked" in err, err
        assert tb.dev("ls -A %s" % secret).out.split() == ["key"]
        assert tb.dev("cat %s/key" % secret).out.strip() == "TOPSECRET"
    finally:
        tb.dev("rm -rf %s" % secret)


def test_confine_refuses_mounts_other_than_checked(tb, work):
    # What scudo-confine checks once systemd has made the mounts, before the command runs: the
    # mount a path ended up with must be the one scudo identified. A unit of dev's own, made as
    # scudo makes them, with the checks right and then each one wrong.
    confine = CONFINE
    d = work + "/cc"
    tb.dev("mkdir -p {d}/bind {d}/hide {d}/deny {d}/plain && touch {d}/hidefile {d}/plainfile && "
           "ln -s {d}/plain {d}/link".format(d=d))
    ident = {p: tb.dev("stat -c %%d:%%i %s/%s" % (d, p)).out.strip() for p in ("bind", "hide", "plain")}

    def run(*checks):
        props = ("-p PrivateUsers=yes -p BindPaths={d}/bind -p TemporaryFileSystem={d}/hide "
                 "-p InaccessiblePaths={d}/deny -p BindReadOnlyPaths=/dev/null:{d}/hidefile").format(d=d)
        args = " ".join(shlex.quote("--check=" + c) for c in checks)
        return tb.dev("systemd-run --user --wait --pipe -q %s %s %s /bin/echo echo RAN-%s" % (props, confine, args, work[-8:]))

    r = run("=:%s:%s/bind" % (ident["bind"], d), "-:%s/missing" % d, "t:%s:%s/hide" % (ident["hide"], d),
            "n:%s/hidefile" % d, "x:%s/deny" % d, "x:%s/missing" % d)
    assert r.rc == 0 and "RAN-" in r.out, r
    for check in ["=:%s:%s/bind" % (ident["plain"], d),      # another directory bound there
                  "=:%s:%s/link" % (ident["plain"], d),      # a symlink in its place
                  "-:%s/plain" % d,                         # something where nothing was
                  "t:%s:%s/plain" % (ident["plain"], d),    # not hidden
                  "n:%s/plainfile" % d,
                  "x:%s/plain" % d,                         # not denied
                  "x:%s/link" % d,
                  "=:%s:%s/gone" % (ident["bind"], d)]:      # nothing bound at all
        r = run(check)
        assert r.rc == 125 and "RAN-" not in r.out and "not what scudo checked" in r.err, (check, r)
    r = run("=:12:%s/bind" % d)
    assert r.rc == 125 and "RAN-" not in r.out and "malformed" in r.err, r
    # and scudo's own units carry the checks of their mounts: the start directory's identity
    ident_work = tb.dev("stat -c %%d:%%i %s" % work).out.strip()
    tb.dev("cd %s && { %s sh -c 'echo $$ > pid; exec sleep 30' </dev/null >/dev/null 2>&1 & }; "
           "for i in $(seq 300); do test -s %s/pid && break; sleep 0.1; done" % (work, Q, work))
    try:
        units = tb.user_units("scudo-*")
        assert len(units) == 1, units
        r = tb.dev("systemctl --user show -p ExecStart --value %s" % units[0])
        assert "--check==:%s:%s " % (ident_work, work) in r.out and "--check=t:" in r.out, r
    finally:
        # (the pid it wrote is its own namespace's: the unit goes from outside)
        tb.dev("systemctl --user stop 'scudo-*.service'")
        assert wait_for(lambda: tb.user_units("scudo-*") == [], timeout=5)


def test_nested_scudo_cannot_widen_by_clearing_its_marker(tb, work):
    tb.dev("echo nested-secret > ~/.nested-secret")
    r = tb.scudo(["sh", "-c", "env -u SCUDO_SANDBOX %s --fs-read /home/dev cat /home/dev/.nested-secret; "
                  "echo a=$?; SCUDO_SANDBOX=other %s --fs-read /home/dev cat /home/dev/.nested-secret; echo b=$?;"
                  " env -u SCUDO_SANDBOX DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/%s/bus %s -P cat "
                  "/home/dev/.nested-secret; echo c=$?" % (Q, Q, tb.uid, Q)], cwd=work)
    assert "nested-secret" not in r.out, r
    for k in "abc":
        assert "%s=0" % k not in r.out, r


def test_weird_fs_option_paths_grant_nothing_extra(tb, work):
    # A newline, relative forms: refused or taken literally, never a grant of something else.
    tag = work[-8:]
    tb.dev("mkdir -p ~/.wd-%s" % tag)
    for bad in ["/home/dev/.wd-%s\n/home/dev" % tag, "/home/dev/.wd-%s\n" % tag, "../", "./", "",
                "/home/dev/.wd-%s:/home/dev" % tag]:
        r = tb.scudo(["--fs-write", bad, "sh", "-c", "echo x > /home/dev/.bashrc-%s; echo x > /home/dev/PWN-%s"
                      % (tag, tag)], cwd=work)
        assert not host_exists(tb, "/home/dev/PWN-" + tag), (bad, r)
        assert not host_exists(tb, "/home/dev/.bashrc-" + tag), (bad, r)
    tb.dev("rm -rf ~/.wd-%s" % tag)


def test_quoted_tilde_is_not_reported_ignored_while_granted(tb, work):
    # '~' is expanded by the policy engine: it must not be called missing and then granted.
    tag = work[-8:]
    r = tb.scudo(["--fs-write", "~", "sh", "-c", "echo x > /home/dev/tilde-%s" % tag], cwd=work)
    assert "does not exist, ignoring" not in r.err, r
    assert host_exists(tb, "/home/dev/tilde-" + tag), r
    r = tb.scudo(["--fs-read", "~/no-such-%s" % tag, "true"], cwd=work)
    assert "'~/no-such-%s' does not exist, ignoring" % tag in r.err, r
    tb.dev("rm -f ~/tilde-%s" % tag)


def test_planted_symlink_in_project_not_followed_by_a_later_grant(tb, work):
    # The command plants sub -> ~/.ssh-like directory; a later --fs-read of it must not bind
    # the target into the sandbox, nor a profile's write of it.
    tag = work[-8:]
    tb.dev("mkdir -p ~/.keys-%s && echo key-%s > ~/.keys-%s/id" % (tag, tag, tag))
    r = tb.scudo(["sh", "-c", "ln -s /home/dev/.keys-%s keys && ln /home/dev/.keys-%s/id hard 2>&1; echo planted"
                  % (tag, tag)], cwd=work)
    assert "planted" in r.out, r
    assert not host_exists(tb, work + "/hard"), r
    r = tb.scudo(["sh", "-c", "cat keys/id; echo x > keys/id; echo done"], cwd=work)
    assert "key-" + tag not in r.out and "done" in r.out, r
    assert tb.root("cat /home/dev/.keys-%s/id" % tag).out == "key-%s\n" % tag
    tb.dev("rm -rf ~/.keys-%s" % tag)
