# SPDX-License-Identifier: MIT OR Apache-2.0
"""Run inside a sandbox that delegates: hostile requests forged by hand on its broker's socket
(src/broker/broker-protocol.h). Prints one line per case: its name and the broker's answer."""
import os
import socket
import struct

PATH = "/run/user/%d/scudo/broker" % os.getuid()
MAGIC = 0x42444353
RUN, SIGNAL = 1, 2
NAMES = {16: "IN_PLACE", 17: "SUSPEND", 18: "EXIT", 19: "BUSY"}


def header(kind, size, value, magic=MAGIC, version=1):
    return struct.pack("=IHHII", magic, version, kind, size, value)


def run_msg(body, argc, **kw):
    return header(RUN, 16 + len(body), argc, **kw) + body


def ask(msg, fds=(0, 1, 2)):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(PATH)
    s.settimeout(30)
    if msg is not None:
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))] if fds else []
        s.sendmsg([msg], anc)
    try:
        r = s.recv(64)
    except OSError as e:
        return "error %s" % e
    finally:
        s.close()
    if len(r) != 16:
        return "short %d" % len(r)
    _, _, kind, _, value = struct.unpack("=IHHII", r)
    return "%s %d" % (NAMES.get(kind, str(kind)), value)


body = b"tool.sh\0exit\0" + b"7\0"
cases = [
    ("good", run_msg(body, 3), (0, 1, 2)),
    ("no-fds", run_msg(body, 3), ()),
    ("four-fds", run_msg(body, 3), (0, 1, 2, 2)),
    ("bad-magic", run_msg(body, 3, magic=1), (0, 1, 2)),
    ("bad-version", run_msg(body, 3, version=9), (0, 1, 2)),
    ("bad-count", run_msg(body, 5), (0, 1, 2)),
    ("huge", run_msg(b"a\0" * 70000, 70000), (0, 1, 2)),
    ("not-nul-terminated", run_msg(b"tool.sh", 1), (0, 1, 2)),
    ("bad-utf8", run_msg(b"tool.sh\0\xff\xfe\0", 2), (0, 1, 2)),
    ("signal-first", header(SIGNAL, 16, 2), (0, 1, 2)),
    ("silent", None, ()),
]
for name, msg, fds in cases:
    print(name, ask(msg, fds), flush=True)
