#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Holds a run just before its unit's start and sends it a signal there, then lets it go on.

  held_start.py SIGNAL -- SCUDO [ARG...]

The run is started on a fresh terminal, in a process group of its own in the background of
it: setting the terminal raw, which scudo does just before StartTransientUnit, stops it
(SIGTTOU) as it would any background job. Once it is stopped, SIGNAL is sent; then its group
is made the terminal's foreground one and it is continued. Prints one JSON line: whether it
was held, whether a unit existed while it was, its exit status and how long it took from the
continue (or the timeout)."""
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time


def state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def units():
    r = subprocess.run(["systemctl", "--user", "list-units", "--all", "--plain", "--no-legend", "scudo-*"],
                       capture_output=True, text=True)
    return [u.split()[0] for u in r.stdout.splitlines() if u.strip() and "scudo-shim" not in u]


def main():
    sig = getattr(signal, sys.argv[1])
    cmd = sys.argv[3:]
    master, slave = pty.openpty()
    leader = os.fork()
    if leader == 0:
        os.setsid()
        os.close(master)
        os.close(os.open(os.ttyname(slave), os.O_RDWR))   # the session's controlling terminal
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGTTOU, signal.SIG_DFL)     # an ignored signal stays so past exec
            os.setpgid(0, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            os.execv(cmd[0], cmd)
        os.setpgid(child, child)
        res = {"held": False}
        end = time.time() + 60
        while time.time() < end and state(child) not in ("T", "gone"):
            time.sleep(0.01)
        res["held"] = state(child) == "T"
        res["units_while_held"] = units()
        os.kill(child, sig)
        os.tcsetpgrp(slave, child)
        t0 = time.time()
        os.kill(child, signal.SIGCONT)
        status = None
        while time.time() < t0 + 40:
            pid, st = os.waitpid(child, os.WNOHANG)
            if pid:
                status = st
                break
            time.sleep(0.05)
        res["took"] = round(time.time() - t0, 2)
        res["rc"] = os.waitstatus_to_exitcode(status) if status is not None else None
        if status is None:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
        print(json.dumps(res), flush=True)
        os._exit(0)
    os.close(slave)
    # what the run prints is read and dropped: a full pty would hold it up
    while True:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                if not os.read(master, 4096):
                    break
            except OSError:
                break
        pid, _ = os.waitpid(leader, os.WNOHANG)
        if pid:
            break


if __name__ == "__main__":
    main()
