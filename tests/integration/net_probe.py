# SPDX-License-Identifier: MIT OR Apache-2.0
"""Runs inside a sandbox: tries what it is told and prints one line per action.

    net_probe.py ACTION...

    tcp:HOST:PORT          connect (HOST may be IPv6 in brackets)
    udp:HOST:PORT          sendto without connecting
    udpc:HOST:PORT         connect, then send
    resolve:NAME           getaddrinfo, prints the addresses
    dnsudp:SERVER:NAME     a raw A query with sendto/recvfrom: prints rcode and reply source
    dnstcp:SERVER:NAME     a raw A query over TCP: prints rcode and getpeername
    dnsvia:SERVER:NAME     as dnsudp, on a connected socket (as glibc does), and also prints
                           the local port the query went from
    icmp                   socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)
    detach                 tries to detach the BPF programs from its own cgroup
    escape:CGROUP_DIR      tries to move itself into CGROUP_DIR (absolute, under /sys/fs/cgroup)
    sleep:SECONDS

Each line is "ACTION ok [detail]" or "ACTION err ERRNAME".
"""
import ctypes
import errno
import os
import socket
import struct
import sys
import time


def hostport(s):
    if s.startswith("["):
        host, _, port = s[1:].partition("]:")
        return host, int(port)
    host, _, port = s.rpartition(":")
    return host, int(port)


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def err(e):
    if isinstance(e, OSError) and e.errno:
        return errno.errorcode.get(e.errno, str(e.errno))
    return type(e).__name__ + ":" + str(e)


def dns_query(name, qtype=1, extra=b"", arcount=0):
    q = struct.pack("!HHHHHH", 0x4242, 0x0100, 1, 0, 0, arcount)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", qtype, 1) + extra


def show_addr(a):
    if len(a) >= 4:   # IPv6 tuple
        return "[%s]:%d" % (a[0], a[1])
    return "%s:%d" % a


def tcp_connect(arg):
    """A TCP socket connected to HOST:PORT."""
    h, p = hostport(arg)
    s = socket.socket(family(h), socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect((h, p))
    return s


def act(a):
    kind, _, arg = a.partition(":")
    if kind == "tcp":
        tcp_connect(arg).close()
        return ""
    if kind == "udp":
        h, p = hostport(arg)
        s = socket.socket(family(h), socket.SOCK_DGRAM)
        s.sendto(b"probe", (h, p))
        return ""
    if kind == "udpc":
        h, p = hostport(arg)
        s = socket.socket(family(h), socket.SOCK_DGRAM)
        s.connect((h, p))
        s.send(b"probe")
        return ""
    if kind == "resolve":
        infos = socket.getaddrinfo(arg, 80, proto=socket.IPPROTO_TCP)
        return " ".join(sorted(set(i[4][0] for i in infos)))
    if kind in ("dnsudp", "dnstcp"):
        server, _, name = arg.rpartition(":")
        server = server.strip("[]")
        if kind == "dnsudp":
            s = socket.socket(family(server), socket.SOCK_DGRAM)
            s.settimeout(3)
            s.sendto(dns_query(name), (server, 53))
            msg, src = s.recvfrom(4096)
            return "rcode=%d from=%s" % (msg[3] & 15, show_addr(src))
        s = socket.socket(family(server), socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect((server, 53))
        q = dns_query(name)
        s.sendall(struct.pack("!H", len(q)) + q)
        n = struct.unpack("!H", s.recv(2))[0]
        msg = b""
        while len(msg) < n:
            msg += s.recv(n - len(msg))
        return "rcode=%d peer=%s" % (msg[3] & 15, show_addr(s.getpeername()))
    if kind == "dnsvia":
        server, _, name = arg.rpartition(":")
        server = server.strip("[]")
        s = socket.socket(family(server), socket.SOCK_DGRAM)
        s.settimeout(3)
        s.connect((server, 53))
        s.send(dns_query(name))
        msg, src = s.recvfrom(4096)
        return "rcode=%d from=%s port=%d" % (msg[3] & 15, show_addr(src), s.getsockname()[1])
    if kind == "icmp":
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP).close()
        return ""
    if kind == "detach":
        return detach()
    if kind == "escape":
        with open(os.path.join(arg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        return ""
    if kind == "sleep":
        time.sleep(float(arg))
        return ""
    raise ValueError("unknown action " + a)


def own_cgroup():
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return "/sys/fs/cgroup" + line[3:].strip()
    raise OSError(errno.ENOENT, "no cgroup2")


def detach():
    """BPF_PROG_DETACH(cgroup fd, connect4, no program fd): what works against an exclusive
    attachment; then BPF_PROG_GET_FD_BY_ID for ids 1..64 to get a program fd."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(own_cgroup(), os.O_RDONLY | os.O_DIRECTORY)
    results = []
    for attach_type in (4, 10, 2):   # INET4_CONNECT, INET6_CONNECT, INET_SOCK_CREATE
        attr = struct.pack("IIII", fd, 0, attach_type, 0) + b"\0" * 112
        buf = ctypes.create_string_buffer(attr, len(attr))
        r = libc.syscall(321, 9, buf, len(attr))   # bpf(BPF_PROG_DETACH)
        results.append("detach%d=%s" % (attach_type, "ok" if r == 0 else errno.errorcode.get(ctypes.get_errno())))
    got = 0
    for prog_id in range(1, 65):
        attr = struct.pack("I", prog_id) + b"\0" * 124
        buf = ctypes.create_string_buffer(attr, len(attr))
        if libc.syscall(321, 13, buf, len(attr)) >= 0:   # BPF_PROG_GET_FD_BY_ID
            got += 1
    results.append("prog_fds=%d" % got)
    return " ".join(results)


def main(act=act):
    """Runs each action given as an argument; net_attack_probe.py has actions of its own."""
    for a in sys.argv[1:]:
        try:
            detail = act(a)
            print(("%s ok %s" % (a, detail)).rstrip(), flush=True)
        except Exception as e:
            print("%s err %s" % (a, err(e)), flush=True)


if __name__ == "__main__":
    main()
