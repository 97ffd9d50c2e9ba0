"""The memory the kernel holds in the sockets of the container's network namespace, for the
memory count (meter.py) where no cgroup charges it (rootless Podman on cgroup v1): data written
to a socket and not yet read lives in the kernel's socket buffers, outside every process's
counters and outside the tmpfs mounts. 261 Unix socket pairs holding 2 GB were `ok` against a
640 MB cap, and the host lost the memory.

Read from the kernel's socket diagnostics (NETLINK_SOCK_DIAG, which the container's seccomp
profile allows where the runner counts memory and the program's own filter refuses the program):
every socket of the namespace is listed, whether a process holds it, it is in flight in another
socket's queue, or no process holds it at all. Counted for each:

  Unix       what it has sent that is not read yet (its wmem_alloc: the sender is charged until
             the reader takes the data), and, for a stream whose sender has been closed (no
             longer listed), the data queued for reading (its rqueue)
  TCP        received and unread (rmem_alloc) and queued to send (wmem_queued)
  UDP        received and unread (rmem_alloc) and in transmission (wmem_alloc)

Datagrams of a Unix sender that has been closed are the one thing the listing cannot size (it
shows a datagram socket's first queued datagram only): at most `net.unix.max_dgram_qlen` of them
per receiving socket (docs/sandbox.md, "What this cannot promise")."""

import socket
import struct

NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY = 4, 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLMSG_HEADER = struct.Struct("=IHHII")      # length, type, flags, sequence, port
RTATTR = struct.Struct("=HH")               # length, type
# Unix: the request (family, protocol, pad, states, inode, what to show, cookie) and reply header
# (family, type, state, pad, inode, cookie); attributes PEER, RQLEN, MEMINFO.
UNIX_REQUEST, UNIX_REPLY = struct.Struct("=BBHIIIII"), struct.Struct("=BBBBIII")
UDIAG_SHOW_PEER, UDIAG_SHOW_RQLEN, UDIAG_SHOW_MEMINFO = 0x04, 0x10, 0x20
UNIX_DIAG_PEER, UNIX_DIAG_RQLEN, UNIX_DIAG_MEMINFO = 2, 4, 5
# inet: the request (family, protocol, extensions, pad, states, then a zeroed socket id of 48
# bytes) and the reply's fixed part (72 bytes); the SKMEMINFO extension.
INET_REQUEST, INET_REPLY_SIZE, INET_DIAG_SKMEMINFO = struct.Struct("=BBBBI48x"), 72, 7
# struct sk_meminfo's fields (SK_MEMINFO_*)
RMEM_ALLOC, WMEM_ALLOC, WMEM_QUEUED = 0, 2, 5
STREAMS = (socket.SOCK_STREAM, socket.SOCK_SEQPACKET)
ALL_STATES = 0xFFFFFFFF
INET = ((socket.AF_INET, socket.IPPROTO_TCP), (socket.AF_INET6, socket.IPPROTO_TCP),
        (socket.AF_INET, socket.IPPROTO_UDP), (socket.AF_INET6, socket.IPPROTO_UDP))


def _attributes(data: bytes, offset: int) -> dict:
    """{type: payload} of the rtattrs from offset to the end of one message."""
    found = {}
    while offset + RTATTR.size <= len(data):
        length, kind = RTATTR.unpack_from(data, offset)
        if length < RTATTR.size:
            break
        found[kind] = data[offset + RTATTR.size:offset + length]
        offset += (length + 3) & ~3
    return found


def _dump(sock: socket.socket, request: bytes):
    """The messages of one SOCK_DIAG_BY_FAMILY dump (OSError: refused, or an error reply)."""
    header = NLMSG_HEADER.pack(NLMSG_HEADER.size + len(request), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
    sock.sendto(header + request, (0, 0))
    while True:
        data, offset = sock.recv(1 << 16), 0
        while offset + NLMSG_HEADER.size <= len(data):
            length, kind = NLMSG_HEADER.unpack_from(data, offset)[:2]
            if kind == NLMSG_DONE:
                return
            if kind == NLMSG_ERROR:
                raise OSError(-struct.unpack_from("=i", data, offset + NLMSG_HEADER.size)[0], "sock_diag refused")
            yield data[offset + NLMSG_HEADER.size:offset + length]
            offset += (length + 3) & ~3


def _meminfo(payload: bytes | None, field: int) -> int:
    return struct.unpack_from("=I", payload, 4 * field)[0] if payload and len(payload) >= 4 * (field + 1) else 0


def unix_bytes(sock: socket.socket) -> int:
    """Unix sockets: what each listed one has sent and is not read yet, and what a stream whose
    sender is gone holds for its reader."""
    show = UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN | UDIAG_SHOW_MEMINFO
    listed, total = {}, 0
    for message in _dump(sock, UNIX_REQUEST.pack(socket.AF_UNIX, 0, 0, ALL_STATES, 0, show, 0xFFFFFFFF, 0xFFFFFFFF)):
        _, kind, _, _, inode, _, _ = UNIX_REPLY.unpack_from(message)
        attrs = _attributes(message, UNIX_REPLY.size)
        total += _meminfo(attrs.get(UNIX_DIAG_MEMINFO), WMEM_ALLOC)
        peer = struct.unpack("=I", attrs[UNIX_DIAG_PEER])[0] if len(attrs.get(UNIX_DIAG_PEER, b"")) == 4 else 0
        queued = struct.unpack_from("=I", attrs[UNIX_DIAG_RQLEN])[0] if len(attrs.get(UNIX_DIAG_RQLEN, b"")) >= 4 else 0
        listed[inode] = (kind, peer, queued)
    for kind, peer, queued in listed.values():
        if kind in STREAMS and queued and peer not in listed:  # its sender was closed: its data waits here
            total += queued
    return total


def inet_bytes(sock: socket.socket, families=(socket.AF_INET, socket.AF_INET6)) -> int:
    """TCP and UDP sockets of these families: received and unread, and queued or in transmission."""
    total = 0
    for family, protocol in INET:
        if family not in families:
            continue
        request = INET_REQUEST.pack(family, protocol, 1 << (INET_DIAG_SKMEMINFO - 1), 0, ALL_STATES)
        for message in _dump(sock, request):
            info = _attributes(message, INET_REPLY_SIZE).get(INET_DIAG_SKMEMINFO)
            sent = WMEM_QUEUED if protocol == socket.IPPROTO_TCP else WMEM_ALLOC
            total += _meminfo(info, RMEM_ALLOC) + _meminfo(info, sent)
    return total


def socket_bytes(families) -> int:
    """Bytes held in the socket buffers of this network namespace, for the address families the
    program has made sockets of (a dump of the TCP and UDP tables walks the kernel's whole hash
    tables, ~1 ms each: not done for a program that made only Unix sockets). 0 where the kernel's
    socket diagnostics are refused: an engine whose cgroup counts socket buffers does not allow
    them."""
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as sock:
            total = unix_bytes(sock) if socket.AF_UNIX in families else 0
            return total + inet_bytes(sock, [family for family in (socket.AF_INET, socket.AF_INET6) if family in families])
    except OSError:
        return 0
