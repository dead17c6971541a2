# SPDX-License-Identifier: MIT OR Apache-2.0
"""A tiny authoritative DNS server for the network tests (UDP and TCP, standard library only).

    net_dns_server.py --listen 127.0.0.153 --port 53 --log FILE \
        allowed.test=127.0.0.4 v6.test=::1 both.test=127.0.0.5,::1 short.test=127.0.0.6/2 \
        alias.test=CNAME:allowed.test

NAME=ADDR[,ADDR...][/TTL] answers A and AAAA queries with those addresses (TTL default 300);
NAME=CNAME:TARGET answers with a CNAME and the target's records. Any other name gets NXDOMAIN.
Names in answers are compressed as real servers do (an owner that was written before is a
pointer to it); --no-compress writes every name out in full. Every query is appended to the
log as "PROTO NAME TYPE PEER", so a test can tell from outside which names reached the
resolver and from which socket (and with --raw-log FILE, every query's bytes after its id
in hex, to see what else reached it). Runs until killed, or --timeout seconds.
"""
import argparse
import ipaddress
import socket
import struct
import threading
import time

TYPES = {1: "A", 28: "AAAA", 5: "CNAME"}


def parse_zone(specs):
    zone = {}
    for spec in specs:
        name, _, value = spec.partition("=")
        name = name.lower().rstrip(".")
        if value.startswith("CNAME:"):
            zone[name] = ("CNAME", value[6:].lower().rstrip("."), 300)
            continue
        ttl = 300
        if "/" in value:
            value, _, t = value.rpartition("/")
            ttl = int(t)
        zone[name] = ("ADDR", [ipaddress.ip_address(a) for a in value.split(",")], ttl)
    return zone


def encode_name(name):
    out = b""
    for label in name.split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def read_qname(msg, pos):
    labels = []
    while True:
        n = msg[pos]
        if n == 0:
            return ".".join(labels), pos + 1
        labels.append(msg[pos + 1:pos + 1 + n].decode(errors="replace"))
        pos += 1 + n


class Writer:
    """A message being built, with RFC 1035 name compression: a name written before (as a
    whole; suffixes are not looked for) becomes a pointer to where it was written."""

    def __init__(self, head, compress):
        self.out = head
        self.compress = compress
        self.seen = {}

    def name(self, name):
        key = name.lower()
        if self.compress and key in self.seen:
            return struct.pack("!H", 0xC000 | self.seen[key])
        if len(self.out) < 0x3FFF:
            self.seen.setdefault(key, len(self.out))
        return encode_name(name)

    def record(self, owner, rtype, ttl, rdata_name=None, rdata=b""):
        self.out += self.name(owner)
        if rdata_name is not None:
            start = len(self.out) + 10
            rdata = encode_name(rdata_name)
            if self.compress:
                self.seen.setdefault(rdata_name.lower(), start)
        self.out += struct.pack("!HHIH", rtype, 1, ttl, len(rdata)) + rdata


def answer(zone, msg, compress=True):
    ident, flags, qd = struct.unpack("!HHH", msg[:6])
    qname, pos = read_qname(msg, 12)
    qtype, qclass = struct.unpack("!HH", msg[pos:pos + 4])
    question = msg[12:pos + 4]
    name = qname.lower()
    if name not in zone:
        # "*.suffix" entries answer any name below suffix
        for key in zone:
            if key.startswith("*.") and name.endswith(key[1:]):
                name = key
                break
    records = []
    rcode = 0
    seen = set()
    while name in zone and name not in seen:
        seen.add(name)
        kind, data, ttl = zone[name]
        if kind == "CNAME":
            records.append((qname.lower() if name.startswith("*.") else name, 5, ttl, data))
            name = data
            continue
        owner = qname.lower() if name.startswith("*.") else name
        for a in data:
            if a.version == 4 and qtype == 1:
                records.append((owner, 1, ttl, a.packed))
            elif a.version == 6 and qtype == 28:
                records.append((owner, 28, ttl, a.packed))
        break
    if name not in zone:
        rcode = 3
    w = Writer(struct.pack("!HHHHHH", ident, 0x8400 | (flags & 0x0100) | 0x0080 | rcode, 1, len(records), 0, 0),
               compress)
    w.seen[qname.lower()] = 12          # the question, as it was asked
    w.out += question
    for owner, rtype, ttl, rdata in records:
        if rtype == 5:
            w.record(owner, rtype, ttl, rdata_name=rdata)
        else:
            w.record(owner, rtype, ttl, rdata=rdata)
    return w.out, qname, TYPES.get(qtype, str(qtype))


def log(path, line):
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


RAW_LOG = None
COMPRESS = True


def serve_udp(sock, zone, logfile, delay):
    while True:
        msg, peer = sock.recvfrom(65535)
        log(RAW_LOG, "udp " + msg[2:].hex())
        try:
            out, qname, qtype = answer(zone, msg, COMPRESS)
        except Exception:
            continue
        log(logfile, "udp %s %s %s:%d" % (qname, qtype, peer[0], peer[1]))
        if delay:
            time.sleep(delay)
        sock.sendto(out, peer)


def serve_tcp_conn(conn, zone, logfile):
    with conn:
        while True:
            head = conn.recv(2)
            if len(head) < 2:
                return
            n = struct.unpack("!H", head)[0]
            msg = b""
            while len(msg) < n:
                chunk = conn.recv(n - len(msg))
                if not chunk:
                    return
                msg += chunk
            log(RAW_LOG, "tcp " + msg[2:].hex())
            out, qname, qtype = answer(zone, msg, COMPRESS)
            log(logfile, "tcp %s %s" % (qname, qtype))
            conn.sendall(struct.pack("!H", len(out)) + out)


def serve_tcp(sock, zone, logfile):
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=serve_tcp_conn, args=(conn, zone, logfile), daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", default="127.0.0.153")
    ap.add_argument("--port", type=int, default=53)
    ap.add_argument("--log")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--raw-log", help="also log every query's bytes after the id, in hex")
    ap.add_argument("--no-compress", action="store_true", help="write every name in answers in full")
    ap.add_argument("zone", nargs="*")
    args = ap.parse_args()
    global RAW_LOG, COMPRESS
    RAW_LOG = args.raw_log
    COMPRESS = not args.no_compress
    zone = parse_zone(args.zone)
    family = socket.AF_INET6 if ":" in args.listen else socket.AF_INET
    u = socket.socket(family, socket.SOCK_DGRAM)
    u.bind((args.listen, args.port))
    t = socket.socket(family, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind((args.listen, args.port))
    t.listen(64)
    threading.Thread(target=serve_udp, args=(u, zone, args.log, args.delay), daemon=True).start()
    threading.Thread(target=serve_tcp, args=(t, zone, args.log), daemon=True).start()
    time.sleep(args.timeout)


if __name__ == "__main__":
    main()
