# SPDX-License-Identifier: MIT OR Apache-2.0
"""Runs inside a sandbox with network rules and tries to get past them; one line per action.

    net_attack_probe.py ACTION...

    tcp:HOST:PORT / udp:HOST:PORT      connect / sendto, as in net_probe.py
    tfo:HOST:PORT                      TCP Fast Open: sendto(MSG_FASTOPEN) with no connect()
    udpcs:HOST:PORT/HOST2:PORT2        a UDP socket connected to HOST:PORT sends to HOST2:PORT2
    udpmsg:HOST:PORT                   sendmsg() with the destination in msg_name
    sock:FAMILY:TYPE:PROTO             just socket(), numbers
    mptcp:HOST:PORT                    connect an IPPROTO_MPTCP socket
    uring:HOST:PORT                    connect through io_uring (IORING_OP_CONNECT)
    vsock:CID:PORT                     connect an AF_VSOCK stream socket and send
    accept:PORT:SECONDS                listen on 0.0.0.0:PORT, accept one connection, send to it
    recvudp:PORT:SECONDS               bind UDP 0.0.0.0:PORT, print the first datagram's source
    procescape:CGROUP_REL              move into /sys/fs/cgroup/CGROUP_REL through another
                                       process's /proc/PID/root (another mount namespace)
    procsock:PATH                      connect to the AF_UNIX socket PATH through /proc/PID/root
    dnsraw:SERVER:HEX                  send a raw DNS query (hex) over UDP, print the rcode
    dnsforge:RESOLVER:NAME:ADDR        pose as RESOLVER: from port 53 of another loopback
                                       address, with RESOLVER as the source (IP_PKTINFO), send
                                       an answer "NAME A ADDR" to a socket of its own that is
                                       connected to RESOLVER and has asked it for NAME; print
                                       how the send went and what that socket got
                                       (source/last address of each datagram)
    dnsspoof:SERVER:NAME:SRC:PORT      from 127.0.0.2:PORT, a query for NAME to SERVER with the
                                       source SRC asked for (IP_PKTINFO): the answer would go
                                       to SRC:PORT, perhaps another program's socket
    sleep:SECONDS

Each line is "ACTION ok [detail]" or "ACTION err ERRNAME".
"""
import ctypes
import errno
import mmap
import os
import socket
import struct
import time

import net_probe
from net_probe import err, family, hostport

libc = ctypes.CDLL(None, use_errno=True)


def oserror():
    e = ctypes.get_errno()
    return OSError(e, os.strerror(e))


def sockaddr(host, port):
    """struct sockaddr_in / sockaddr_in6 bytes."""
    if ":" in host:
        return struct.pack("<H", socket.AF_INET6) + struct.pack("!HI", port, 0) + \
            socket.inet_pton(socket.AF_INET6, host) + struct.pack("<I", 0)
    return struct.pack("<H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton(host) + b"\0" * 8


def uring_connect(host, port):
    """IORING_OP_CONNECT with raw system calls: io_uring_setup, mmap, io_uring_enter."""
    s = socket.socket(family(host), socket.SOCK_STREAM)
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(425, 4, params)                    # io_uring_setup
    if fd < 0:
        raise oserror()
    p = params.raw
    sq_entries, cq_entries = struct.unpack_from("II", p, 0)
    sq_off = struct.unpack_from("IIIIIIIIQ", p, 40)     # head tail mask entries flags dropped array
    cq_off = struct.unpack_from("IIIIIIIIQ", p, 80)     # head tail mask entries overflow cqes
    sq = mmap.mmap(fd, sq_off[6] + sq_entries * 4, offset=0)
    cq = mmap.mmap(fd, cq_off[5] + cq_entries * 16, offset=0x8000000)
    sqes = mmap.mmap(fd, sq_entries * 64, offset=0x10000000)
    addr = ctypes.create_string_buffer(sockaddr(host, port))
    sqe = struct.pack("<BBHiQQIIQ", 16, 0, 0, s.fileno(), len(addr.raw), ctypes.addressof(addr), 0, 0, 7)
    sqes[0:64] = sqe + b"\0" * (64 - len(sqe))
    tail = struct.unpack_from("I", sq, sq_off[1])[0]
    mask = struct.unpack_from("I", sq, sq_off[2])[0]
    struct.pack_into("I", sq, sq_off[6] + (tail & mask) * 4, 0)
    struct.pack_into("I", sq, sq_off[1], tail + 1)
    n = libc.syscall(426, fd, 1, 1, 1, None, 0)          # io_uring_enter(GETEVENTS)
    if n < 0:
        raise oserror()
    head = struct.unpack_from("I", cq, cq_off[0])[0]
    cmask = struct.unpack_from("I", cq, cq_off[2])[0]
    _, res, _ = struct.unpack_from("<Qii", cq, cq_off[5] + (head & cmask) * 16)
    os.close(fd)
    if res < 0:
        raise OSError(-res, os.strerror(-res))
    s.send(b"uring")
    s.close()
    return ""


def other_roots():
    """/proc/PID/root of processes in another mount namespace that we may follow."""
    mine = os.readlink("/proc/self/ns/mnt")
    out = []
    for pid in sorted((int(d) for d in os.listdir("/proc") if d.isdigit()), reverse=True):
        try:
            if os.readlink("/proc/%d/ns/mnt" % pid) != mine:
                os.stat("/proc/%d/root/" % pid)
                out.append(pid)
        except OSError:
            continue
    return out


def act(a):
    kind, _, arg = a.partition(":")
    if kind == "tcp":
        s = net_probe.tcp_connect(arg)
        s.send(b"tcp")
        s.close()
        return ""
    if kind == "udpmsg":
        h, p = hostport(arg)
        s = socket.socket(family(h), socket.SOCK_DGRAM)
        s.sendmsg([b"probe"], [], 0, (h, p))
        return ""
    if kind == "tfo":
        h, p = hostport(arg)
        s = socket.socket(family(h), socket.SOCK_STREAM)
        s.settimeout(3)
        s.sendto(b"tfo", socket.MSG_FASTOPEN, (h, p))
        s.close()
        return ""
    if kind == "udpcs":
        first, _, second = arg.partition("/")
        h, p = hostport(first)
        h2, p2 = hostport(second)
        s = socket.socket(family(h), socket.SOCK_DGRAM)
        s.connect((h, p))
        s.sendto(b"probe", (h2, p2))
        return ""
    if kind == "sock":
        f, t, p = (int(x) for x in arg.split(":"))
        socket.socket(f, t, p).close()
        return ""
    if kind == "mptcp":
        h, p = hostport(arg)
        s = socket.socket(family(h), socket.SOCK_STREAM, 262)
        s.settimeout(3)
        s.connect((h, p))
        s.close()
        return ""
    if kind == "uring":
        h, p = hostport(arg)
        return uring_connect(h, p)
    if kind == "vsock":
        cid, port = (int(x) for x in arg.split(":"))
        s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect((cid, port))
        s.send(b"vsock")
        s.close()
        return ""
    if kind == "accept":
        port, secs = arg.split(":")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", int(port)))
        s.listen(1)
        s.settimeout(float(secs))
        c, peer = s.accept()
        c.sendall(b"exfiltrated")
        time.sleep(0.2)
        c.close()
        return "%s:%d" % peer
    if kind == "recvudp":
        port, secs = arg.split(":")
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", int(port)))
        s.settimeout(float(secs))
        data, peer = s.recvfrom(100)
        return "%s:%d %s" % (peer[0], peer[1], data.decode(errors="replace"))
    if kind == "procescape":
        tried = []
        for pid in other_roots():
            try:
                with open("/proc/%d/root/sys/fs/cgroup/%s/cgroup.procs" % (pid, arg), "w") as f:
                    f.write(str(os.getpid()))
                return "via pid %d" % pid
            except OSError as e:
                tried.append(err(e))
        raise OSError(errno.ENOENT, "no way: %s" % ",".join(sorted(set(tried))))
    if kind == "procsock":
        tried = []
        for pid in other_roots():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                s.connect("/proc/%d/root%s" % (pid, arg))
                return "via pid %d" % pid
            except OSError as e:
                tried.append(err(e))
            finally:
                s.close()
        raise OSError(errno.ENOENT, "no way: %s" % ",".join(sorted(set(tried))))
    if kind == "dnsraw":
        server, _, hexq = arg.rpartition(":")
        server = server.strip("[]")
        s = socket.socket(family(server), socket.SOCK_DGRAM)
        s.settimeout(3)
        s.sendto(bytes.fromhex(hexq), (server, 53))
        msg, src = s.recvfrom(4096)
        return "rcode=%d" % (msg[3] & 15)
    if kind == "dnsforge":
        return dns_forge(*arg.split(":"))
    if kind == "dnsspoof":
        return dns_spoof(*arg.split(":"))
    return net_probe.act(a)     # udp, sleep: as there


def dns_spoof(server, name, src, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.2", int(port)))
    s.settimeout(1)
    pktinfo = struct.pack("=I4s4s", 0, socket.inet_aton(src), b"\0" * 4)
    try:
        s.sendmsg([net_probe.dns_query(name)], [(socket.IPPROTO_IP, 8, pktinfo)], 0, (server, 53))
        sent = "ok"
    except OSError as e:
        sent = err(e)
    try:
        msg, frm = s.recvfrom(4096)
        got = "%s:%d/rcode=%d" % (frm[0], frm[1], msg[3] & 15)
    except socket.timeout:
        got = "nothing"
    return "send=%s got=%s" % (sent, got)


def dns_forge(resolver, name, addr):
    victim = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    victim.settimeout(1)
    victim.connect((resolver, 53))
    q = net_probe.dns_query(name)
    victim.send(q)                      # a real query: an answer is expected on this socket
    forger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    forger.bind(("127.0.0.2", 53))      # needs net.ipv4.ip_unprivileged_port_start <= 53
    answer = struct.pack("!HHHHHH", 0x4242, 0x8180, 1, 1, 0, 0) + q[12:] + \
        struct.pack("!HHHIH", 0xC00C, 1, 1, 3600, 4) + socket.inet_aton(addr)
    pktinfo = struct.pack("=I4s4s", 0, socket.inet_aton(resolver), b"\0" * 4)
    try:
        forger.sendmsg([answer], [(socket.IPPROTO_IP, 8, pktinfo)], 0, victim.getsockname())   # IP_PKTINFO
        sent = "ok"
    except OSError as e:
        sent = err(e)
    got = []
    try:
        while True:
            msg, src = victim.recvfrom(4096)
            # where it came from, and the address of its last record
            got.append("%s:%d/%s" % (src[0], src[1], socket.inet_ntoa(msg[-4:])))
    except socket.timeout:
        pass
    return "send=%s got=%s" % (sent, ",".join(got) or "nothing")


if __name__ == "__main__":
    net_probe.main(act)
