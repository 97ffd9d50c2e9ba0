"""The program's own seccomp filter, for the trusted runner where the engine cannot cap tmpfs
inodes (Podman refuses `nr_inodes`), the container's memory or its processes (rootless on cgroup
v1; containers/sandbox/supervision.py): inode caps checked before each new inode, processes
before each new one, memfds made where the runner counts them, and the runner told of what its
memory count must read (shared mappings, sockets).

Inodes. Counting a mount's inodes every few milliseconds lets a flood outrun the count: eight
processes make thousands of files between two counts. So the filter hands every system call able
to make an inode on a tmpfs to the runner first (SECCOMP_RET_USER_NOTIF): open and openat with
O_CREAT or O_TMPFILE, creat, mkdir, mknod, symlink, link and their *at forms, openat2 (its flags
sit behind a pointer), renameat2 with RENAME_WHITEOUT (the whiteout is a new inode), bind (a Unix
socket's file) and the setxattr calls (a tmpfs charges extended attributes to the same inode
budget; a hard link takes a share of it too). The runner keeps count of the watched mounts'
inodes (cap_check) and lets the call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE, Linux 5.5) or, at a
cap, refuses it (ENOSPC) and stops the program. Only the count decides, never the call's
arguments (which the program could change after the check), so the check cannot be raced: a cap
is passed by at most the calls let through but not yet done when the mounts are counted again,
one per thread that runs.

Processes. Without the pids controller only RLIMIT_NPROC holds the program's processes, and a
fork it refuses has already allocated a task: a fork tree that retries every 100 us at the limit
made hundreds of thousands a second, whose freed tasks waited for an RCU grace period the busy
cores did not give (the host's Slab grew by 3.8 GB, 2.9 GB of it task structs). So clone, fork
and vfork (clone3 gives ENOSYS under the container's profile: glibc falls back to clone) are
handed to the runner, which counts the program's tasks (task_room) and lets the call go on while
there is room; at the limit it answers EAGAIN, as the kernel would, but only at its next tick
(REFUSAL_TICK_S): a fork loop at the limit then waits instead of spinning in the kernel.

inotify. Rootless, every container's inotify instances and watches also count against the user
who runs the engine (the kernel counts them up the chain of user namespaces), whose limit
(max_user_instances, 128 by default) would otherwise be one program's to exhaust. Where the
runner is given a share, inotify_init and inotify_add_watch are handed to it and refused past it
(EMFILE, ENOSPC: the kernel's answers at a user's limit).

Shared mappings and sockets. A shared anonymous mapping (or /dev/zero mapped shared) is a shmem
object too, whose pages stay when the program unmaps them or drops them with MADV_DONTNEED; data
written to a socket lives in the kernel's socket buffers. Where the runner counts memory, every
mmap with MAP_SHARED and every socket and socketpair is handed to it (and goes on at once): from
then on its count reads the program's mappings for such objects (meter.py), and the socket
buffers of the container's network namespace (socket_memory.py). Other mmaps never wait. The
kernel's socket diagnostics that the runner reads (NETLINK_SOCK_DIAG) are refused to the program.

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
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Calls:
    """System call numbers of one architecture, as the filter and its answers need them."""

    audit_arch: int
    seccomp: int
    makes_inode: tuple        # always make an inode, or may (bind, openat2): every call notified
    opens: dict               # {open call: the index of its flags argument}
    renameat2: int            # flags in args[4]
    memfd_create: int
    memfd_secret: int
    mmap: int
    forks: tuple              # clone, fork, vfork
    socket: int
    socketpair: int
    inotify_inits: tuple
    inotify_add_watch: int


ARCHES = {
    # creat mkdir mknod symlink link mkdirat mknodat symlinkat linkat bind openat2 setxattr lsetxattr
    # fsetxattr setxattrat
    "x86_64": Calls(0xC000003E, 317, (85, 83, 133, 88, 86, 258, 259, 266, 265, 49, 437, 188, 189, 190, 463),
                    {2: 1, 257: 2}, 316, 319, 447, 9, (56, 57, 58), 41, 53, (253, 294), 254),
    # mkdirat mknodat symlinkat linkat bind openat2 setxattr lsetxattr fsetxattr setxattrat
    "aarch64": Calls(0xC00000B7, 277, (34, 33, 36, 37, 200, 437, 5, 6, 7, 463), {56: 2}, 276, 279, 447, 222, (220,),
                     198, 199, (26,), 27),
}
MAP_SHARED = 0x01  # the bit MAP_SHARED and MAP_SHARED_VALIDATE share; not in MAP_PRIVATE
RENAME_WHITEOUT = 1 << 2
X32_BIT = 0x40000000
O_CREAT, O_TMPFILE = 0o100, 0o20000000  # the same on both (asm-generic)
AF_NETLINK, NETLINK_SOCK_DIAG = 16, 4
MFD_CLOEXEC = 1
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 1 << 3
RET_ALLOW, RET_NOTIFY, RET_ERRNO = 0x7FFF0000, 0x7FC00000, 0x00050000
RETURNS = {"allow": RET_ALLOW, "notify": RET_NOTIFY, "enosys": RET_ERRNO | errno.ENOSYS, "eperm": RET_ERRNO | errno.EPERM}
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # _IOWR('!', 0/1, struct seccomp_notif / _resp)
NOTIF_ADDFD = 0x40182103                           # _IOW('!', 3, struct seccomp_notif_addfd)
NOTIF_SIZE, FLAG_CONTINUE, ADDFD_FLAG_SEND = 80, 1, 2
PR_SET_NO_NEW_PRIVS = 38
# What the filter does with memfd_create: hand it to the runner, which makes a counted one
# (Linux 5.14), refuse it, or let it be (where a cgroup counts memfds).
EMULATE, REFUSE, ALLOW = "emulate", "refuse", "allow"
MEMFD_ACTIONS = {EMULATE: "notify", REFUSE: "enosys", ALLOW: "allow"}
# A fork refused at the process limit is answered at the runner's next tick, this often.
REFUSAL_TICK_S = 0.01
LD, JEQ, JGE, JSET = 0x20, 0x15, 0x35, 0x45  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, JGE|K, JSET|K


@dataclass(frozen=True)
class Options:
    """What a program's filter hands to the runner: calls that make an inode (inodes), memfds
    (memfds: EMULATE, REFUSE or ALLOW; anything but ALLOW also tells shared mmaps and sockets,
    the runner counting memory), forks (tasks) and inotify instances and watches (inotify)."""

    inodes: bool = True
    memfds: str = EMULATE
    tasks: bool = False
    inotify: bool = False

    @property
    def notifies(self) -> bool:
        """Whether the filter hands any call to the runner (and so has a listener to send)."""
        return self.inodes or self.tasks or self.inotify or self.memfds != ALLOW


def _assemble(program) -> bytes:
    """Classic BPF from (code, k, true target, false target) with targets as labels ("next", a
    name of RETURNS, or a name given by a ("label", name) entry)."""
    labels, code = {}, []
    for entry in program:
        if entry[0] == "label":
            labels[entry[1]] = len(code)
        else:
            code.append(entry)
    for name, action in RETURNS.items():
        labels[name] = len(code)
        code.append((0x06, action, "next", "next"))
    out = []
    for at, (op, k, true, false) in enumerate(code):
        def offset(target, at=at):
            return 0 if target == "next" else labels[target] - at - 1
        out.append(struct.pack("<HBBI", op, offset(true), offset(false), k))
    return b"".join(out)


def _on_argument(nr: int, index: int, mask: int, label: str, when_set: str = "notify", otherwise: str = "allow"):
    """nr with args[index] & mask: when_set, else otherwise; another call goes on to `label`
    with the accumulator still holding its number."""
    return [(JEQ, nr, "next", label), (LD, 16 + 8 * index, "next", "next"), (JSET, mask, when_set, otherwise),
            ("label", label)]


def _memory_rules(calls: Calls) -> list:
    """Where the runner counts memory: shared mmaps and sockets told; its socket diagnostics
    refused to the program."""
    return [*_on_argument(calls.mmap, 3, MAP_SHARED, "after_mmap"),
            (JEQ, calls.socketpair, "notify", "next"),
            (JEQ, calls.socket, "next", "after_socket"),
            (LD, 16, "next", "next"),                                  # args[0]: the family
            (JEQ, AF_NETLINK, "next", "notify"),
            (LD, 16 + 8 * 2, "next", "next"),                          # args[2]: the protocol
            (JEQ, NETLINK_SOCK_DIAG, "eperm", "notify"),
            ("label", "after_socket")]


def filter_program(machine: str, options: Options = Options()) -> bytes:
    """ENOSYS for another ABI and memfd_secret; memfd_create handed to the runner (EMULATE),
    refused or allowed, and where it is not allowed (the runner counts memory) shared mmaps and
    sockets handed to it; forks and inotify calls handed to it where asked; with `inodes`, every
    call that can make an inode (see above); everything else allowed."""
    calls = ARCHES[machine]
    program = [(LD, 4, "next", "next"),                   # seccomp_data.arch
               (JEQ, calls.audit_arch, "next", "enosys"),  # another ABI
               (LD, 0, "next", "next"),                   # seccomp_data.nr
               (JGE, X32_BIT, "enosys", "next"),          # x32 numbers
               (JEQ, calls.memfd_secret, "enosys", "next"),
               (JEQ, calls.memfd_create, MEMFD_ACTIONS[options.memfds], "next")]
    if options.memfds != ALLOW:
        program += _memory_rules(calls)
    if options.tasks:
        program += [(JEQ, nr, "notify", "next") for nr in calls.forks]
    if options.inotify:
        program += [(JEQ, nr, "notify", "next") for nr in (*calls.inotify_inits, calls.inotify_add_watch)]
    if options.inodes:
        program += [(JEQ, nr, "notify", "next") for nr in calls.makes_inode]
        program += _on_argument(calls.renameat2, 4, RENAME_WHITEOUT, "after_rename")
        for nr, index in calls.opens.items():
            program += _on_argument(nr, index, O_CREAT | O_TMPFILE, f"after{nr}")
    return _assemble(program)


MACHINE = os.uname().machine
SUPPORTED = MACHINE in ARCHES
if SUPPORTED:  # the program's side only makes system calls: everything it uses is built before fork
    LIBC = ctypes.CDLL(None, use_errno=True)
    LIBC.ioctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_COMPILED: dict = {}


def compiled(options: Options):
    """The filter of `options`, built once and kept (in the runner, before it forks the program):
    (its sock_fprog, its code buffer, whether it has a listener)."""
    if options not in _COMPILED:
        code = ctypes.create_string_buffer(filter_program(MACHINE, options))
        _COMPILED[options] = (_Fprog((len(code) - 1) // 8, ctypes.addressof(code)), code, options.notifies)  # a NUL is added
    return _COMPILED[options]


def install_and_send(sock: socket.socket, program) -> None:
    """In the program's process, as its user, just before exec: install the filter (`compiled`)
    and send its listener to the runner (then close it here); a filter that notifies nothing has
    none, and a message without one goes. Raises OSError when the kernel refuses."""
    fprog, _, listening = program
    LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # the container's no-new-privileges has set it already
    listener = LIBC.syscall(ARCHES[MACHINE].seccomp, SECCOMP_SET_MODE_FILTER,
                            SECCOMP_FILTER_FLAG_NEW_LISTENER if listening else 0, ctypes.byref(fprog))
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


def task_room(cap: int, count):
    """has_room() for serve: whether one more task keeps the program within `cap`, count() being
    its tasks now. Each fork let through makes at most one task, so the tasks are counted again
    only once as many forks went through as there was room for (tasks that exited meanwhile are
    found then)."""
    room = [0]

    def has_room() -> bool:
        if room[0] > 0:
            room[0] -= 1
            return True
        left = cap - count()
        room[0] = max(0, left - 1)
        return left > 0

    return has_room


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


@dataclass
class Answers:
    """How the runner answers the program's notifications (serve): full() for a new inode
    (cap_check), at_cap(mount) once one is refused (stops the program), make_memfd() for a
    memfd (None: refused), on_shared() for a shared mmap, on_socket(family) for a new socket,
    has_room() for a fork (task_room; None: forks are not handed over), and the inotify
    instances and watches the program may still make (inotify: [instances, watches])."""

    full: object = None
    at_cap: object = None
    make_memfd: object = None
    on_shared: object = None
    on_socket: object = None
    has_room: object = None
    inotify: list | None = None


class _Server:
    """The answering loop's state: the listener, the answers, and the forks held for refusal."""

    def __init__(self, listener: int, answers: Answers):
        self.listener, self.answers, self.calls = listener, answers, ARCHES[MACHINE]
        self.reply = ctypes.create_string_buffer(24)
        self.stopped = False           # a cap was reached: every later new inode is refused too
        self.held: list[int] = []      # forks to refuse at the next tick
        self.full_until = 0.0          # forks found no room: none is counted again before this

    def send(self, ident: int, error: int | None) -> None:
        """Answer one notification: go on (None) or fail with `error`."""
        struct.pack_into("<QqiI", self.reply, 0, ident, 0, -error if error else 0, 0 if error else FLAG_CONTINUE)
        LIBC.ioctl(self.listener, NOTIF_SEND, self.reply)  # ENOENT: the caller died meanwhile

    def flush(self) -> None:
        for ident in self.held:
            self.send(ident, errno.EAGAIN)
        self.held = []

    def fork(self, ident: int) -> None:
        """A fork within the limit goes on; past it, it is held for the next tick's EAGAIN."""
        now = time.monotonic()
        if now >= self.full_until and self.answers.has_room():
            self.send(ident, None)
            return
        if now >= self.full_until:
            self.full_until = now + REFUSAL_TICK_S
        self.held.append(ident)

    def inotify(self, ident: int, nr: int) -> None:
        kind = 1 if nr == self.calls.inotify_add_watch else 0
        left = self.answers.inotify
        if left[kind] <= 0:
            self.send(ident, errno.ENOSPC if kind else errno.EMFILE)
            return
        left[kind] -= 1
        self.send(ident, None)

    def new_inode(self, ident: int, nr: int, args: bytes) -> None:
        """A call that can make an inode: on while no mount is at its cap; at a cap ENOSPC, and the
        program is stopped. A memfd_create is an inode too, and gets the runner's memfd."""
        mount = self.stopped or (self.answers.full() if self.answers.full else None)
        error = errno.ENOSPC if mount else None
        if nr == self.calls.memfd_create and not mount:
            make = self.answers.make_memfd
            error = errno.ENOSYS if make is None else place_memfd(self.listener, ident, make,
                                                                  struct.unpack_from("<Q", args, 8)[0])
            if error is None:
                return
        self.send(ident, error)
        if mount and not self.stopped:
            self.stopped = True
            self.answers.at_cap(mount)

    def answer(self, notif) -> None:
        # struct seccomp_notif: id, pid, flags, then seccomp_data: nr, arch, ip, args[6] (from byte 32)
        ident, nr = struct.unpack_from("<Q", notif.raw)[0], struct.unpack_from("<i", notif.raw, 16)[0]
        args, calls = notif.raw[32:80], self.calls
        if nr == calls.mmap:
            if self.answers.on_shared:
                self.answers.on_shared()
            self.send(ident, None)
        elif nr in (calls.socket, calls.socketpair):
            if self.answers.on_socket:
                self.answers.on_socket(struct.unpack_from("<Q", args)[0] & 0xFFFFFFFF)  # args[0]: the family
            self.send(ident, None)
        elif nr in calls.forks:
            self.fork(ident)
        elif nr in calls.inotify_inits or nr == calls.inotify_add_watch:
            self.inotify(ident, nr)
        else:
            self.new_inode(ident, nr, args)


def serve(listener: int, answers: Answers, stop) -> None:
    """Answer the program's notifications (Answers) until `stop` is set or no process is left
    under the filter; forks held for refusal are refused every REFUSAL_TICK_S, and at the end."""
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    notif = ctypes.create_string_buffer(NOTIF_SIZE)
    server = _Server(listener, answers)
    try:
        while not stop.is_set():
            if server.held and time.monotonic() >= server.full_until:
                server.flush()
            events = poller.poll(int(REFUSAL_TICK_S * 1000) if server.held else 50)
            if not events:
                continue
            if not events[0][1] & select.POLLIN:
                return  # POLLHUP: every process under the filter has exited
            ctypes.memset(notif, 0, NOTIF_SIZE)  # the kernel wants it zeroed
            if LIBC.ioctl(listener, NOTIF_RECV, notif) < 0:
                if ctypes.get_errno() in (errno.EINTR, errno.ENOENT):  # interrupted, or the caller died
                    continue
                return
            server.answer(notif)
    finally:
        server.flush()
