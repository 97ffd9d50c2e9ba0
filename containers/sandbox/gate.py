"""The program's own seccomp filter, for the trusted runner where the engine cannot cap tmpfs
inodes (Podman refuses `nr_inodes`) or the container's memory (rootless on cgroup v1;
containers/sandbox/runner.py): inode caps checked before each new file, and memfds made where the
runner counts them.

Inodes. Counting a mount's inodes every few milliseconds lets a flood outrun the count: eight
processes make thousands of files between two counts. So the filter hands every system call able
to make an inode to the runner first (SECCOMP_RET_USER_NOTIF): open and openat with O_CREAT or
O_TMPFILE, creat, mkdir, mknod, symlink and their *at forms, openat2 (its flags sit behind a
pointer) and bind (a Unix socket's file). The runner keeps count of the watched mounts' inodes
(cap_check) and lets the call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE, Linux 5.5) or, at a cap,
refuses it (ENOSPC) and stops the program. Only the count decides, never the call's arguments
(which the program could change after the check), so the check cannot be raced: a cap is
passed by at most the calls let through but not yet done when the mounts are counted again,
one per thread that runs.

Shared mappings. A shared anonymous mapping (or /dev/zero mapped shared) is a shmem object too,
whose pages stay when the program unmaps them or drops them with MADV_DONTNEED. Where the runner
counts memory, every mmap with MAP_SHARED is handed to it (and goes on at once): from then on its
count reads the program's mappings for such objects (meter.py). Other mmaps never wait.

Memfds. A memfd lives on the kernel's internal shmem mount, which no count outside a cgroup sees
once no process maps it or holds its descriptor: twelve 255 MB memfds sent over a Unix socket
and closed live only in flight, and one closed after mapping a single page shows only that page.
So memfd_create is handed to the runner too, which makes the memfd itself: an unnamed file
(O_TMPFILE) on a tmpfs of its own that the program cannot open by name and whose used blocks the
memory count reads, placed in the program as the call's result (SECCOMP_IOCTL_NOTIF_ADDFD with
SECCOMP_ADDFD_FLAG_SEND, Linux 5.14). Where the kernel cannot place a descriptor, memfd_create
fails with ENOSYS instead (none of the nine toolchains calls it: benchmarks/notes/sandbox.md).
memfd_secret, whose pages a count cannot see either, always fails with ENOSYS, as does every call
of another ABI (32-bit or x32, whose numbers differ and which no toolchain of the image uses).

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
# (or may: bind, openat2), the open calls with the index of their flags argument, memfd_create,
# memfd_secret and mmap.
ARCHES = {
    "x86_64": (0xC000003E, 317, (85, 83, 133, 88, 258, 259, 266, 49, 437), {2: 1, 257: 2}, 319, 447, 9),
    "aarch64": (0xC00000B7, 277, (34, 33, 36, 200, 437), {56: 2}, 279, 447, 222),
}
MAP_SHARED = 0x01  # the bit MAP_SHARED and MAP_SHARED_VALIDATE share; not in MAP_PRIVATE
X32_BIT = 0x40000000
O_CREAT, O_TMPFILE = 0o100, 0o20000000  # the same on both (asm-generic)
MFD_CLOEXEC = 1
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 1 << 3
RET_ALLOW, RET_NOTIFY, RET_ENOSYS = 0x7FFF0000, 0x7FC00000, 0x00050000 | errno.ENOSYS
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # _IOWR('!', 0/1, struct seccomp_notif / _resp)
NOTIF_ADDFD = 0x40182103                           # _IOW('!', 3, struct seccomp_notif_addfd)
NOTIF_SIZE, FLAG_CONTINUE, ADDFD_FLAG_SEND = 80, 1, 2
PR_SET_NO_NEW_PRIVS = 38
# What the filter does with memfd_create: hand it to the runner, which makes a counted one
# (Linux 5.14), refuse it, or let it be (where a cgroup counts memfds).
EMULATE, REFUSE, ALLOW = "emulate", "refuse", "allow"
MEMFD_ACTIONS = {EMULATE: "notify", REFUSE: "enosys", ALLOW: "allow"}


def _assemble(program) -> bytes:
    """Classic BPF from (code, k, true target, false target) with targets as labels ("next",
    "allow", "notify", "enosys", or a name given by a ("label", name) entry)."""
    labels, code = {}, []
    for entry in program:
        if entry[0] == "label":
            labels[entry[1]] = len(code)
        else:
            code.append(entry)
    labels |= {"allow": len(code), "notify": len(code) + 1, "enosys": len(code) + 2}
    code += [(0x06, RET_ALLOW, "next", "next"), (0x06, RET_NOTIFY, "next", "next"), (0x06, RET_ENOSYS, "next", "next")]
    out = []
    for at, (op, k, true, false) in enumerate(code):
        def offset(target, at=at):
            return 0 if target == "next" else labels[target] - at - 1
        out.append(struct.pack("<HBBI", op, offset(true), offset(false), k))
    return b"".join(out)


def filter_program(machine: str, inodes: bool = True, memfds: str = EMULATE) -> bytes:
    """ENOSYS for another ABI and memfd_secret; memfd_create handed to the runner (memfds=EMULATE),
    refused or allowed, and where it is not allowed (the runner counts memory) shared mmaps
    handed to it; with `inodes`, notify for the calls that can make an inode (see above); allow
    everything else."""
    arch, _, always, opens, memfd_create, memfd_secret, mmap = ARCHES[machine]
    ld, jeq, jge, jset = 0x20, 0x15, 0x35, 0x45
    program = [(ld, 4, "next", "next"),                   # seccomp_data.arch
               (jeq, arch, "next", "enosys"),             # another ABI
               (ld, 0, "next", "next"),                   # seccomp_data.nr
               (jge, X32_BIT, "enosys", "next"),          # x32 numbers
               (jeq, memfd_secret, "enosys", "next"),
               (jeq, memfd_create, MEMFD_ACTIONS[memfds], "next")]
    if memfds != ALLOW:
        program += [(jeq, mmap, "next", "after_mmap"),
                    (ld, 16 + 8 * 3, "next", "next"),     # low half of args[3]: the flags
                    (jset, MAP_SHARED, "notify", "allow"),
                    ("label", "after_mmap")]
    if inodes:
        program += [(jeq, nr, "notify", "next") for nr in always]
        for nr, index in opens.items():                   # the accumulator holds nr on entry
            program += [(jeq, nr, "next", f"after{nr}"),
                        (ld, 16 + 8 * index, "next", "next"),  # low half of args[index]: the flags
                        (jset, O_CREAT | O_TMPFILE, "notify", "allow"),
                        ("label", f"after{nr}")]
    return _assemble(program)


def notifies(inodes: bool, memfds: str) -> bool:
    """Whether such a filter hands calls to the runner (and so has a listener to send)."""
    return inodes or memfds == EMULATE


MACHINE = os.uname().machine
SUPPORTED = MACHINE in ARCHES
if SUPPORTED:  # built before any fork: the program's side only makes system calls
    LIBC = ctypes.CDLL(None, use_errno=True)
    LIBC.ioctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    _CODES, _PROGS = {}, {}
    for _inodes in (True, False):
        for _memfds in MEMFD_ACTIONS:
            _code = _CODES[_inodes, _memfds] = ctypes.create_string_buffer(filter_program(MACHINE, _inodes, _memfds))
            _PROGS[_inodes, _memfds] = _Fprog((len(_code) - 1) // 8, ctypes.addressof(_code))  # a NUL is added


def install_and_send(sock: socket.socket, inodes: bool = True, memfds: str = EMULATE) -> None:
    """In the program's process, as its user, just before exec: install the filter and send its
    listener to the runner (then close it here); a filter that notifies nothing has none, and a
    message without one goes. Raises OSError when the kernel refuses."""
    LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # the container's no-new-privileges has set it already
    listening = notifies(inodes, memfds)
    listener = LIBC.syscall(ARCHES[MACHINE][1], SECCOMP_SET_MODE_FILTER,
                            SECCOMP_FILTER_FLAG_NEW_LISTENER if listening else 0, ctypes.byref(_PROGS[inodes, memfds]))
    if listener < 0:
        raise OSError(ctypes.get_errno(), "seccomp filter: " + os.strerror(ctypes.get_errno()))
    if not listening:
        sock.send(b"g")
        return
    try:
        socket.send_fds(sock, [b"g"], [listener])
    finally:
        os.close(listener)


def receive(sock: socket.socket) -> int | None:
    """The listener the program's process sent (close-on-exec here too); None when it sent none
    (a filter that notifies nothing, or it failed before: its error comes through spawn's error
    pipe)."""
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


def place_memfd(listener: int, ident: int, make_memfd, flags: int) -> int | None:
    """Answer a memfd_create with a memfd the runner made (make_memfd() returns its descriptor),
    placed in the program as the call's result, close-on-exec where MFD_CLOEXEC asked for it.
    None when answered (or the caller has died meanwhile), else the errno to answer with."""
    try:
        fd = make_memfd()
    except OSError as err:
        return err.errno or errno.ENOMEM
    try:
        request = ctypes.create_string_buffer(struct.pack(
            "<QIIII", ident, ADDFD_FLAG_SEND, fd, 0, os.O_CLOEXEC if flags & MFD_CLOEXEC else 0), 24)
        if LIBC.ioctl(listener, NOTIF_ADDFD, request) < 0:
            error = ctypes.get_errno()
            return None if error == errno.ENOENT else error  # EMFILE: the program's table is full
        return None
    finally:
        os.close(fd)


def serve(listener: int, full, stop, at_cap, make_memfd=None, on_shared=None) -> None:
    """Answer the program's notifications until `stop` is set or no process is left under the
    filter. A call that can make an inode goes on while full() (cap_check of the caps) finds no
    mount at its cap; at a cap, ENOSPC and at_cap(mount) (which stops the program), then ENOSPC
    for whatever is still in flight. A memfd_create gets the descriptor of make_memfd() (an inode
    too, so at a cap it is refused the same way). A shared mmap calls on_shared() and goes on."""
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    notif = ctypes.create_string_buffer(NOTIF_SIZE)
    reply = ctypes.create_string_buffer(24)
    memfd_create, mmap = ARCHES[MACHINE][4], ARCHES[MACHINE][6]
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
        # struct seccomp_notif: id, pid, flags, then seccomp_data: nr, arch, ip, args[6] (from byte 32)
        ident, nr = struct.unpack_from("<Q", notif.raw)[0], struct.unpack_from("<i", notif.raw, 16)[0]
        if nr == mmap:
            if on_shared is not None:
                on_shared()
            mount = error = None
        else:
            mount = stopped or full()
            error = errno.ENOSPC if mount else None
        if nr == memfd_create and not mount:
            error = errno.ENOSYS if make_memfd is None else place_memfd(
                listener, ident, make_memfd, struct.unpack_from("<Q", notif.raw, 40)[0])
            if error is None:
                continue
        struct.pack_into("<QqiI", reply, 0, ident, 0, -error if error else 0, 0 if error else FLAG_CONTINUE)
        LIBC.ioctl(listener, NOTIF_SEND, reply)  # ENOENT: the caller died meanwhile
        if mount and not stopped:
            stopped = True
            at_cap(mount)
