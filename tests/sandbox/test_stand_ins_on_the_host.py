"""The runner's stand-ins for the limits an engine cannot set, on this host's kernel with no
container (the same code runs in the image: containers/sandbox/gate.py and meter.py): every
call that can make an inode waits for the gate, which refuses the first past the cap; calls
that make none never wait; and the memory count takes each page once however many processes
map it, and memfds held by a descriptor in full."""

import errno
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest
from aicd.sandbox.isolation import CONTEXT

sys.path.insert(0, str(CONTEXT))
sys.dont_write_bytecode, _writes = True, sys.dont_write_bytecode  # no __pycache__ in the image's build context
import gate  # noqa: E402  the runner's modules, imported as the runner imports them
import meter  # noqa: E402

sys.dont_write_bytecode = _writes
sys.path.remove(str(CONTEXT))

MB = 1 << 20
pytestmark = pytest.mark.skipif(not gate.SUPPORTED, reason=f"no seccomp filter for {os.uname().machine}")


def under_the_gate(work, allowed: int, make_memfd=None, on_shared=None, options=None, **answers):
    """Run `work` in a child process under the gate (gate.Options, by default the inode gate with
    memfds made by make_memfd where given, else refused), answering as the runner does with a cap
    of `allowed` creations and `answers` (gate.Answers' others); (the child's exit code,
    notifications answered for inodes, at_cap calls)."""
    parent_end, child_end = socket.socketpair()
    program = gate.compiled(options or gate.Options(memfds=gate.EMULATE if make_memfd else gate.REFUSE))
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            parent_end.close()
            gate.install_and_send(child_end, program)
            child_end.close()
            code = work()
        finally:
            os._exit(code)
    child_end.close()
    listener = gate.receive(parent_end)
    parent_end.close()
    asked, capped, stop = [0], [], threading.Event()

    def full():
        asked[0] += 1
        return "/cap" if asked[0] > allowed else None

    answering = gate.Answers(full=full, at_cap=capped.append, make_memfd=make_memfd, on_shared=on_shared, **answers)
    server = threading.Thread(target=gate.serve, args=(listener, answering, stop))
    server.start()
    _, status = os.waitpid(pid, 0)
    stop.set()
    server.join(timeout=10)
    os.close(listener)
    return os.waitstatus_to_exitcode(status), asked[0], capped


def test_the_gate_refuses_the_first_new_file_past_the_cap_and_nothing_else(tmp_path):
    def work():
        made = 0
        for kind in ("file", "dir", "link", "tmpfile", "fifo") * 20:
            path = tmp_path / f"{kind}{made}"
            try:
                if kind == "file":
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
                elif kind == "dir":
                    os.mkdir(path)
                elif kind == "link":
                    os.symlink("target", path)
                elif kind == "tmpfile":
                    os.close(os.open(tmp_path, os.O_TMPFILE | os.O_WRONLY, 0o600))
                else:
                    os.mkfifo(path)
            except OSError as err:
                return 3 if err.errno == errno.ENOSPC and made == 40 else 4
            made += 1
        return 0

    code, asked, capped = under_the_gate(work, allowed=40)
    assert (code, asked, capped) == (3, 41, ["/cap"])  # 40 made, the 41st refused with ENOSPC


def test_hard_links_whiteouts_and_extended_attributes_wait_for_the_gate(tmp_path):
    """Each takes a share of a tmpfs's inode budget: link, linkat, renameat2 with RENAME_WHITEOUT
    and setxattr are handed to the runner like open and mkdir, and the first past the cap is
    refused; a plain rename, which makes nothing, never waits."""
    import ctypes

    base = tmp_path / "base"
    base.write_text("x")
    libc = ctypes.CDLL(None, use_errno=True)

    def work():
        os.rename(base, tmp_path / "moved")  # no new inode: not handed over
        os.rename(tmp_path / "moved", base)
        os.link(base, tmp_path / "l1")
        os.link(base, tmp_path / "l2", follow_symlinks=False)  # linkat
        os.setxattr(base, "user.note", b"x")
        whiteout = libc.renameat2(-100, str(base).encode(), -100, str(tmp_path / "w").encode(), 1 << 2)
        if whiteout != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.EPERM):  # no whiteouts here: ENOSPC
            return 3 if ctypes.get_errno() == errno.ENOSPC else 4
        return 5 if whiteout == 0 else 0

    code, asked, capped = under_the_gate(work, allowed=3)
    assert (code, asked, capped) == (3, 4, ["/cap"]), (code, asked, capped)  # the fourth, the whiteout, refused


def test_forks_past_the_process_limit_are_refused_with_eagain():
    """With room for 3 tasks the fourth fork waits for the runner's tick and fails with EAGAIN, as
    the kernel's limit would fail it, before the kernel allocated anything for it."""
    def work():
        children = []
        for _ in range(4):
            try:
                child = os.fork()
            except OSError as err:
                return 0 if err.errno == errno.EAGAIN and len(children) == 3 else 3
            if child == 0:
                os._exit(0)
            children.append(child)
        return 4

    made = []  # the children let through, which the count finds when it counts again (none exits here)
    room = gate.task_room(3, lambda: len(made))

    def has_room():
        if not room():
            return False
        made.append(1)
        return True

    code, _, _ = under_the_gate(work, 0, options=gate.Options(inodes=False, memfds=gate.ALLOW, tasks=True),
                                has_room=has_room)
    assert (code, len(made)) == (0, 3)


def test_inotify_past_the_share_is_refused():
    """A share of 2 instances and 3 watches: the third instance is EMFILE, the fourth watch
    ENOSPC (the kernel's answers at a user's limit)."""
    import ctypes

    def work():
        libc = ctypes.CDLL(None, use_errno=True)
        first = libc.inotify_init1(os.O_CLOEXEC)
        if first < 0 or libc.inotify_init1(os.O_CLOEXEC) < 0 or libc.inotify_init1(os.O_CLOEXEC) >= 0:
            return 3
        if ctypes.get_errno() != errno.EMFILE:
            return 4
        watched = [libc.inotify_add_watch(first, path, 2) for path in (b"/", b"/tmp", b"/usr", b"/etc")]
        return 0 if watched[3] < 0 and ctypes.get_errno() == errno.ENOSPC and min(watched[:3]) >= 0 else 5

    options = gate.Options(inodes=False, memfds=gate.ALLOW, inotify=True)
    assert under_the_gate(work, 0, options=options, inotify=[2, 3])[0] == 0


def test_sockets_are_told_and_the_socket_diagnostics_refused():
    """Where the runner counts memory each socket's family is told to it (from then on it counts
    the socket buffers), and the kernel's socket diagnostics, which it reads them from, are
    refused to the program."""
    told = []

    def work():
        socket.socket(socket.AF_UNIX).close()
        socket.socketpair()[0].close()
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()  # NETLINK_ROUTE
        try:
            socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4).close()  # NETLINK_SOCK_DIAG
            return 6
        except PermissionError:
            return 0

    code, _, _ = under_the_gate(work, 0, options=gate.Options(inodes=False, memfds=gate.EMULATE),
                                on_socket=told.append)
    assert code == 0 and told == [socket.AF_UNIX, socket.AF_UNIX, socket.AF_NETLINK], (code, told)


def test_the_cap_check_counts_again_once_the_room_it_saw_is_used():
    """Between two counts of the mounts, every call let through is taken as one inode more."""
    folder = tempfile.mkdtemp(dir="/dev/shm") if os.path.isdir("/dev/shm") else None
    if folder is None:
        pytest.skip("no /dev/shm tmpfs on this host")
    try:
        full = gate.cap_check({"/dev/shm": gate.inodes_used({"/dev/shm": 0})["/dev/shm"] + 3})
        answers = []
        for n in range(4):
            answers.append(full())
            open(os.path.join(folder, f"f{n}"), "w").close()
        assert answers == [None, None, None, "/dev/shm"], answers
    finally:
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)


def test_calls_that_make_no_inode_never_wait_for_the_gate(tmp_path):
    existing = tmp_path / "there"
    existing.write_text("x")

    def work():
        for _ in range(50):
            with open(existing) as fh:  # O_RDONLY
                fh.read()
            with open(existing, "r+") as fh:  # O_RDWR without O_CREAT
                fh.write("y")
            os.stat(existing)
        return 0

    assert under_the_gate(work, allowed=0) == (0, 0, [])


def test_memfds_are_made_by_the_runner_and_shared_mmaps_are_told(tmp_path):
    """memfd_create returns a descriptor of the runner's making (an unnamed file in its folder,
    close-on-exec as asked), counted as a new inode; memfd_secret and calls of another ABI fail
    with ENOSYS; a shared mmap is told to the runner, a private one is not."""
    import ctypes
    import mmap

    folder = tmp_path / "memfds"
    folder.mkdir()
    told = []

    def make():
        return os.open(folder, os.O_TMPFILE | os.O_RDWR | os.O_EXCL, 0o600)

    def work():
        libc = ctypes.CDLL(None, use_errno=True)
        plain, cloexec = os.memfd_create("plain", 0), os.memfd_create("cloexec")  # Python's default: MFD_CLOEXEC
        os.write(plain, b"x" * 8192)
        if os.fstat(plain).st_dev != os.stat(folder).st_dev or not os.readlink(f"/proc/self/fd/{plain}").startswith(
                str(folder)):
            return 3
        if os.get_inheritable(plain) is not True or os.get_inheritable(cloexec) is not False:
            return 4
        ctypes.set_errno(0)
        if libc.syscall(447, 0) != -1 or ctypes.get_errno() != errno.ENOSYS:  # memfd_secret
            return 5
        for _ in range(3):
            mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS).close()
        mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS).close()
        return 0

    code, asked, capped = under_the_gate(work, allowed=10, make_memfd=make, on_shared=lambda: told.append(1))
    assert (code, asked, capped) == (0, 2, []), (code, asked, capped)  # two memfds, each an inode
    assert len(told) == 1  # the shared mapping; the private ones are never handed over


def test_without_the_runner_making_them_memfds_are_refused():
    def work():
        try:
            os.memfd_create("refused")
        except OSError as err:
            return 0 if err.errno == errno.ENOSYS else 3
        return 4

    assert under_the_gate(work, allowed=0) == (0, 0, [])


HOLDER = textwrap.dedent("""
    import mmap, os, sys, time
    MB = 1 << 20
    pids, keep = [os.getpid()], []
    if sys.argv[1] == "memfd":  # 64 MB written, held by a descriptor, never mapped
        fd = os.memfd_create("held")
        for _ in range(64):
            os.write(fd, b"\\1" * MB)
        keep.append(fd)
    else:  # 64 MB shared anonymous, touched here and in a forked child
        shared = mmap.mmap(-1, 64 * MB, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
        for i in range(0, len(shared), 4096):
            shared[i] = 1
        child = os.fork()
        if child == 0:
            for i in range(0, len(shared), 4096):
                shared[i] = 2
            time.sleep(600)
            os._exit(0)
        pids.append(child)
        time.sleep(0.5)
    print(*pids, flush=True)
    time.sleep(600)
""")


def hold(what):
    """A fresh interpreter (sharing no page with this one) holding `what`; (process, its pids)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, what], stdout=subprocess.PIPE, text=True)
    return proc, [int(p) for p in proc.stdout.readline().split()]


def processes_of(pids):
    out = {}
    for pid in pids:
        with open(f"/proc/{pid}/status") as fh:
            _, mem = meter.parse_status(fh.read())
        out[pid] = mem
    return out


def private_mb(pids) -> float:
    """The processes' own anonymous memory (the interpreter), proportionally."""
    return sum(meter.rollup_kb(pid) or 0 for pid in pids) / 1024 - sum(
        meter._fields(f"/proc/{pid}/smaps_rollup", ("Pss_Shmem:",)).get("Pss_Shmem:", 0) for pid in pids) / 1024


@pytest.mark.parametrize("what", ["memfd", "shared"])
def test_the_memory_count_takes_each_page_once(what):
    """64 MB held: a memfd only a descriptor shows, or a shared mapping two processes touch (its
    resident size 128 MB over the two). Decided against a cap just below it the count is exact;
    far above it, the cheap upper bound stands."""
    if meter.rollup_kb(os.getpid()) is None:
        pytest.skip("this kernel's smaps_rollup has no proportional split (Linux 5.9)")
    proc, pids = hold(what)
    try:
        processes = processes_of(pids)
        own = private_mb(pids)
        exact = meter.charged_mb(processes, [], limit_mb=64 + own - 8)
        assert 64 + own - 2 <= exact <= 64 + own + 2, (exact, own)
        upper = meter.charged_mb(processes, [], limit_mb=100_000)
        assert upper >= exact and (what == "memfd" or upper >= 128), (upper, exact)
    finally:
        for pid in pids[1:]:
            os.kill(pid, 9)
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("ending", ["reaped", "zombie"])
def test_a_process_that_exits_during_the_count_is_not_counted_from_its_old_counters(ending):
    """Its status read while it held 64 MB, the process then exits before the rest of the count
    (reaped, or a zombie its parent has not waited for): it holds nothing, and the count must not
    stop the program for the memory it read before (it did, under load, after the program's
    output)."""
    proc, pids = hold("shared")
    try:
        processes = processes_of(pids)
        assert meter.charged_mb(processes, [], limit_mb=100_000) >= 64
        os.kill(pids[1], 9)  # the forked child: its parent (the holder) does not wait for it
        if ending == "reaped":
            proc.kill()
            proc.wait()
        deadline = time.monotonic() + 10
        while meter.without_memory(pids[1:]) != {pids[1]} and time.monotonic() < deadline:
            time.sleep(0.01)
        assert meter.without_memory(pids) == ({pids[0], pids[1]} if ending == "reaped" else {pids[1]})
        counted = meter.charged_mb(processes, [], limit_mb=32)
        if ending == "reaped":  # nothing is left
            assert counted <= 32, counted
        else:  # the holder alone: its 64 MB (the child's share of them its own now) and its interpreter
            alone = 64 + private_mb(pids[:1])
            assert alone - 2 <= counted <= alone + 2, (counted, alone)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


LEADER_GONE = textwrap.dedent("""
    #include <pthread.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <unistd.h>
    static void *hold(void *unused) {
        char *p = malloc(64 << 20);
        memset(p, 1, 64 << 20);
        puts("holding");
        fflush(stdout);
        sleep(60);
        return p;
    }
    int main(void) {
        pthread_t t;
        pthread_create(&t, 0, hold, 0);
        pthread_exit(0);
    }
""")


def test_a_zombie_leaders_memory_is_read_from_a_thread_that_lives_on(tmp_path):
    """The first thread exits while another holds 64 MB: /proc/PID reads no memory (nor
    mappings, nor descriptors), and the count saw none; it reads them from a live thread."""
    (tmp_path / "leader.c").write_text(LEADER_GONE)
    subprocess.run(["cc", "-pthread", "-o", str(tmp_path / "leader"), str(tmp_path / "leader.c")], check=True,
                   capture_output=True)
    proc = subprocess.Popen([str(tmp_path / "leader")], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "holding"
        deadline = time.monotonic() + 10
        while meter.memory_view(proc.pid) == f"/proc/{proc.pid}" and time.monotonic() < deadline:
            time.sleep(0.01)  # until the first thread has exited
        with open(f"/proc/{proc.pid}/status") as fh:
            assert "RssAnon" not in fh.read()  # what the count read before
        assert meter.memory_view(proc.pid).startswith(f"/proc/{proc.pid}/task/")
        _, mem = meter.status_of(proc.pid)
        assert mem["anon"] >= 64 << 10, mem
        assert meter.without_memory([proc.pid]) == set()
        assert meter.charged_mb({proc.pid: mem}, [], limit_mb=32) >= 64
        proc.kill()
        proc.wait()
        assert meter.memory_view(proc.pid) is None and meter.status_of(proc.pid) is None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_shared_anonymous_mapping_counts_at_its_size_when_its_pages_are_dropped():
    """64 MB shared anonymous memory touched, then dropped from the mapping (MADV_DONTNEED): the
    object keeps its pages, the processes' counters show none, and the count takes the object at
    its size; a mapping shrunk later still counts at the end it reached."""
    import mmap

    region = mmap.mmap(-1, 64 * MB, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    for i in range(0, len(region), 4096):
        region[i] = 1
    region.madvise(mmap.MADV_DONTNEED)
    me = processes_of([os.getpid()])
    reached = {}
    assert meter.shared_anon_ends([os.getpid()], reached) >= 64 * MB
    without = meter.charged_mb(me, [], limit_mb=100_000)
    with_objects = meter.charged_mb(me, [], limit_mb=100_000, shared={})
    assert with_objects - without >= 63, (without, with_objects)
    region.close()
    assert meter.shared_anon_ends([os.getpid()], reached) == 0 and reached == {}  # unmapped: gone


def test_a_mapped_tmpfs_file_counts_once(tmp_path):
    """A file on a counted mount, mapped and touched: the mount's used blocks hold it, its
    mapping is not counted again."""
    import mmap

    shm = tempfile.mkdtemp(dir="/dev/shm") if os.path.isdir("/dev/shm") else None
    if shm is None:
        pytest.skip("no /dev/shm tmpfs on this host")
    try:
        path = os.path.join(shm, "data")
        with open(path, "wb") as fh:
            fh.write(b"x" * (32 * MB))
        with open(path, "r+b") as fh:
            mapped = mmap.mmap(fh.fileno(), 0)
            for i in range(0, len(mapped), 4096):
                mapped[i] = 1
            before = meter.tmpfs_bytes(["/dev/shm"]) / MB
            me = processes_of([os.getpid()])
            own = private_mb([os.getpid()])
            exact = meter.charged_mb(me, ["/dev/shm"], limit_mb=before + own - 8)
            mapped.close()
        assert before + own - 2 <= exact <= before + own + 2, (exact, before, own)
    finally:
        for name in os.listdir(shm):
            os.unlink(os.path.join(shm, name))
        os.rmdir(shm)
