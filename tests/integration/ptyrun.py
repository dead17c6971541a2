#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Runs a command on a fresh pseudo-terminal, the way a user's terminal would, and reports
what happened as JSON: everything it printed and its exit status.

  ptyrun.py [--send-after TEXT BYTES]... [--timeout S] -- CMD [ARG...]

--send-after waits until TEXT has appeared in the output, then types BYTES (Python escapes
allowed, e.g. '\\x03' for Ctrl-C). Used by the integration tests to drive scudo as a user
at a terminal would: isatty, /dev/tty, Ctrl-C."""
import json
import os
import pty
import select
import sys
import time


def main():
    args = sys.argv[1:]
    sends, timeout = [], 20.0
    while args and args[0] != "--":
        if args[0] == "--send-after":
            sends.append((args[1].encode(), args[2].encode().decode("unicode_escape").encode("latin-1")))
            args = args[3:]
        elif args[0] == "--timeout":
            timeout = float(args[1])
            args = args[2:]
        else:
            sys.exit("ptyrun: unknown option %s" % args[0])
    cmd = args[1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    out = b""
    end = time.time() + timeout
    status = None
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                break
            out += data
        if sends and sends[0][0] in out:
            os.write(fd, sends[0][1])
            sends.pop(0)
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            status = st
            # collect what is left
            try:
                while select.select([fd], [], [], 0.1)[0]:
                    data = os.read(fd, 65536)
                    if not data:
                        break
                    out += data
            except OSError:
                pass
            break
    if status is None:
        # the pty closed: give the process what is left of the time to exit
        while time.time() < end:
            p, st = os.waitpid(pid, os.WNOHANG)
            if p:
                status = st
                break
            time.sleep(0.05)
    if status is None:
        os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        rc = "timeout"
    else:
        rc = os.waitstatus_to_exitcode(status)
    print(json.dumps({"rc": rc, "out": out.decode(errors="replace")}))


main()
