# SPDX-License-Identifier: MIT OR Apache-2.0
"""Listens as root, outside every sandbox, and records what arrives: the tests' witness.

    net_listen.py --log FILE [--timeout SEC] tcp:ADDR:PORT udp:ADDR:PORT ...

Each accepted connection or received datagram appends "PROTO ADDR PORT" to FILE. Writes
"ready" to FILE.ready once every socket is bound.
"""
import argparse
import socket
import threading
import time


def parse(spec):
    proto, _, rest = spec.partition(":")
    if rest.startswith("["):
        host, _, port = rest[1:].partition("]:")
    else:
        host, _, port = rest.rpartition(":")
    return proto, host, int(port)


def record(path, line, lock):
    with lock, open(path, "a") as f:
        f.write(line + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("specs", nargs="+")
    args = ap.parse_args()
    lock = threading.Lock()
    for spec in args.specs:
        proto, host, port = parse(spec)
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        line = "%s %s %d" % (proto, host, port)
        if proto == "tcp":
            s.listen(128)

            def run(s=s, line=line):
                while True:
                    c, _ = s.accept()
                    record(args.log, line, lock)
                    c.close()
        else:
            def run(s=s, line=line):
                while True:
                    s.recvfrom(65535)
                    record(args.log, line, lock)
        threading.Thread(target=run, daemon=True).start()
    with open(args.log + ".ready", "w") as f:
        f.write("ready\n")
    time.sleep(args.timeout)


if __name__ == "__main__":
    main()
