"""Inode caps checked before each new file, for the trusted runner where the engine sets none
(Podman refuses tmpfs `nr_inodes`; containers/sandbox/runner.py).

Counting a mount's inodes every few milliseconds lets a flood outrun the count: eight processes
make thousands of files between two counts. So the program runs under a seccomp filter that
hands every system call able to make an inode to the runner first (SECCOMP_RET_USER_NOTIF):
open and openat with O_CREAT or O_TMPFILE, creat, mkdir, mknod, symlink and their *at forms,
openat2 (its flags sit behind a pointer), bind (a Unix socket's file) and any call of another
ABI (32-bit or x32, whose numbers differ). The runner keeps count of the watched mounts' inodes
(cap_check) and lets the call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE, Linux 5.5) or, at a cap,
refuses it (ENOSPC) and stops the program. Only the count decides, never the call's arguments
(which the program could change after the check), so the check cannot be raced: a cap is
passed by at most the calls let through but not yet done when the mounts are counted again,
one per thread that runs.

The filter is installed in the program's process after it has become the program's user and
before exec; its listener descriptor goes to the runner over a socket and is closed in the
program (it is close-on-exec as well), which can therefore never answer for itself. A filter
the program adds itself cannot undo this one: the kernel applies the strictest."""

import ctypes
import errno
import os
import select
import socket
import struct

# Per architecture: AUDIT_ARCH, the seccomp system call, the calls that always create an inode
# (or may: bind, openat2), and the open calls with the index of their flags argument.
ARCHES = {
    "x86_64": (0xC000003E, 317, (85, 83, 133, 88, 258, 259, 266, 49, 437), {2: 1, 257: 2}),
    "aarch64": (0xC00000B7, 277, (34, 33, 36, 200, 437), {56: 2}),
}
X32_BIT = 0x40000000
O_CREAT, O_TMPFILE = 0o100, 0o20000000  # the same on both (asm-generic)
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 1 << 3
RET_ALLOW, RET_NOTIFY = 0x7FFF0000, 0x7FC00000
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # _IOWR('!', 0/1, struct seccomp_notif / _resp)
NOTIF_SIZE, FLAG_CONTINUE = 80, 1
PR_SET_NO_NEW_PRIVS = 38


def _assemble(program) -> bytes:
    """Classic BPF from (code, k, true target, false target) with targets as labels ("next",
    "allow", "notify", or a name given by a ("label", name) entry)."""
    labels, code = {}, []
    for entry in program:
        if entry[0] == "label":
            labels[entry[1]] = len(code)
        else:
            code.append(entry)
    labels |= {"allow": len(code), "notify": len(code) + 1}
    code += [(0x06, RET_ALLOW, "next", "next"), (0x06, RET_NOTIFY, "next", "next")]
    out = []
    for at, (op, k, true, false) in enumerate(code):
        def offset(target, at=at):
            return 0 if target == "next" else labels[target] - at - 1
        out.append(struct.pack("<HBBI", op, offset(true), offset(false), k))
    return b"".join(out)


def filter_program(machine: str) -> bytes:
    """Notify for the calls that can make an inode (see above); allow everything else."""
    arch, _, always, opens = ARCHES[machine]
    ld, jeq, jge, jset = 0x20, 0x15, 0x35, 0x45
    program = [(ld, 4, "next", "next"),                   # seccomp_data.arch
               (jeq, arch, "next", "notify"),             # another ABI: every call
               (ld, 0, "next", "next"),                   # seccomp_data.nr
               (jge, X32_BIT, "notify", "next")]          # x32 numbers
    program += [(jeq, nr, "notify", "next") for nr in always]
    for nr, index in opens.items():                       # the accumulator holds nr on entry
        program += [(jeq, nr, "next", f"after{nr}"),
                    (ld, 16 + 8 * index, "next", "next"),  # low half of args[index]: the flags
                    (jset, O_CREAT | O_TMPFILE, "notify", "allow"),
                    ("label", f"after{nr}")]
    return _assemble(program)


MACHINE = os.uname().machine
SUPPORTED = MACHINE in ARCHES
if SUPPORTED:  # built before any fork: the program's side only makes system calls
    LIBC = ctypes.CDLL(None, use_errno=True)
    LIBC.ioctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)
    _CODE = ctypes.create_string_buffer(filter_program(MACHINE))

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    _PROG = _Fprog((len(_CODE) - 1) // 8, ctypes.addressof(_CODE))  # create_string_buffer adds a NUL


def install_and_send(sock: socket.socket) -> None:
    """In the program's process, as its user, just before exec: install the filter and send its
    listener to the runner (then close it here). Raises OSError when the kernel refuses."""
    LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # the container's no-new-privileges has set it already
    listener = LIBC.syscall(ARCHES[MACHINE][1], SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                            ctypes.byref(_PROG))
    if listener < 0:
        raise OSError(ctypes.get_errno(), "seccomp user notification: " + os.strerror(ctypes.get_errno()))
    try:
        socket.send_fds(sock, [b"g"], [listener])
    finally:
        os.close(listener)


def receive(sock: socket.socket) -> int | None:
    """The listener the program's process sent (close-on-exec here too); None when it sent none
    (it failed before: its error comes through spawn's error pipe)."""
    try:
        _, fds, _, _ = socket.recv_fds(sock, 1, 1, socket.MSG_CMSG_CLOEXEC)
    except OSError:
        return None
    return fds[0] if fds else None


def inodes_used(caps: dict) -> dict:
    """{mount: inodes in use} of the watched mounts."""
    used = {}
    for mount in caps:
        try:
            st = os.statvfs(mount)
        except OSError:
            continue
        used[mount] = st.f_files - st.f_ffree
    return used


def cap_check(caps: dict):
    """full() for serve: the first watched mount at its cap (one more inode there would pass it),
    or None. Each call let through makes at most one inode, so the mounts are counted again only
    once as many calls went through as the fullest mount had room for: no statvfs per file, and
    the calls let through but not yet done are counted too."""
    room = [0]

    def full() -> str | None:
        if room[0] > 0:
            room[0] -= 1
            return None
        used = inodes_used(caps)
        for mount, count in used.items():
            if count >= int(caps[mount]):
                return mount
        room[0] = min((int(caps[mount]) - count for mount, count in used.items()), default=1) - 1
        return None

    return full


def serve(listener: int, full, stop, at_cap) -> None:
    """Answer the program's notifications until `stop` is set or no process is left under the
    filter: go on while full() (cap_check of the caps) finds no mount at its cap; at a
    cap, ENOSPC and at_cap(mount) (which stops the program), then ENOSPC for whatever is still in
    flight."""
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    notif = ctypes.create_string_buffer(NOTIF_SIZE)
    reply = ctypes.create_string_buffer(24)
    stopped = False
    while not stop.is_set():
        events = poller.poll(50)
        if not events:
            continue
        if not events[0][1] & select.POLLIN:
            return  # POLLHUP: every process under the filter has exited
        ctypes.memset(notif, 0, NOTIF_SIZE)  # the kernel wants it zeroed
        if LIBC.ioctl(listener, NOTIF_RECV, notif) < 0:
            if ctypes.get_errno() in (errno.EINTR, errno.ENOENT):  # interrupted, or the caller died
                continue
            return
        ident = struct.unpack_from("<Q", notif.raw)[0]
        mount = stopped or full()
        struct.pack_into("<QqiI", reply, 0, ident, 0, -errno.ENOSPC if mount else 0, 0 if mount else FLAG_CONTINUE)
        LIBC.ioctl(listener, NOTIF_SEND, reply)  # ENOENT: the caller died meanwhile
        if mount and not stopped:
            stopped = True
            at_cap(mount)
