"""The program's memory as a memory cgroup would charge it, for the trusted runner where the
engine sets no cgroup limit (rootless Podman on cgroup v1; containers/sandbox/runner.py).

A cgroup charges a container's anonymous memory, its shared memory (shared anonymous mappings,
memfds, SysV segments) and the pages of its tmpfs files, each page once; a library's pages are
file cache of the image, not the program's. So the count is, over every process of the program:

    anonymous memory (proportional set size: a page two forks share counts half in each), swap
  + shared memory the processes map (proportional too: each page once in all)
  + memfds held by a descriptor (their allocated size)
  + SysV segments no process has attached (their resident size)
  + the used blocks of the counted tmpfs mounts (work folder, /tmp, /dev/shm, and the runner's
    own for the program's memfds, gate.py; files held open, mapped or in flight included), less
    the pages of those files, and of the held memfds, that a process maps (already counted as
    shared memory)
  + where the program has made shared mappings: each shared anonymous object (MAP_SHARED |
    MAP_ANONYMOUS, or /dev/zero mapped shared) at the furthest end of it any mapping has reached
    while it lives, touched or not, less its mapped pages (counted as shared memory). Its pages
    stay when a process unmaps them or drops them (MADV_DONTNEED), and no count outside a cgroup
    sees them then: 3 GB touched in 64 MB steps, each dropped, showed a few MB.
  + where the program has made sockets: the data held in the socket buffers of its network
    namespace (socket_memory.py), which a cgroup charges too.

Walking every mapping (/proc/PID/smaps) is costly (milliseconds for a few hundred MB mapped),
so a check goes only as far as it must: the resident counters of /proc/PID/status give an upper
bound (shared pages counted in every process that maps them); where that passes the limit and
several processes run, smaps_rollup's proportional sizes; where that passes it too and files or
memfds could be counted twice, the mappings themselves. The runner needs CAP_SYS_PTRACE to read a
program's smaps and descriptors (the pool grants it where the runner counts memory)."""

import os
import stat

from socket_memory import socket_bytes

KB = 1024
# memfds, shared anonymous mappings and SysV segments live on the kernel's internal shmem mount:
# its device number, learnt from a memfd of our own.
try:
    _probe = os.memfd_create("aicd-meter-probe")
    SHMEM_DEV = os.fstat(_probe).st_dev
    os.close(_probe)
except (AttributeError, OSError):
    SHMEM_DEV = None
STATUS_KEYS = {"RssAnon:": "anon", "RssShmem:": "shmem", "VmSwap:": "swap"}
SHARED_ANON = "/dev/zero"  # the file of a shared anonymous mapping, as /proc/PID/maps names it
ROLLUP_KEYS = ("Pss_Anon:", "Pss_Shmem:", "SwapPss:", "Private_Hugetlb:", "Shared_Hugetlb:")


def _fields(path: str, keys) -> dict:
    """{key: kB} of the "Key:  N kB" lines of a /proc file (missing keys absent)."""
    out = {}
    with open(path) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2 and parts[0] in keys:
                out[parts[0]] = int(parts[1])
    return out


def status_upper_kb(status: dict) -> int:
    """From the /proc/PID/status fields the runner read anyway: resident anonymous and shared
    memory and swap (shared pages in full in every process that maps them: an upper bound)."""
    return sum(status.get(key, 0) for key in ("anon", "shmem", "swap"))


def parse_status(text: str) -> tuple:
    """(real uid, {anon, shmem, swap} in kB) of a /proc/PID/status text."""
    uid, mem = None, {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[0] == "Uid:":
            uid = int(parts[1])
        elif parts[0] in STATUS_KEYS:
            mem[STATUS_KEYS[parts[0]]] = int(parts[1])
    return uid, mem


def _has_address_space(folder: str) -> bool:
    try:
        with open(f"{folder}/statm") as fh:
            return any(int(size) for size in fh.read().split())
    except (OSError, ValueError):
        return False


def memory_view(pid) -> str | None:
    """The /proc folder that shows a process's memory, mappings and descriptors: its own, or,
    where its first thread has exited while others live (a zombie leader: /proc/PID then reads
    no memory, no mapping, no descriptor, though its threads hold them all), a live thread's;
    None where no thread has an address space (the process is gone)."""
    if _has_address_space(f"/proc/{pid}"):
        return f"/proc/{pid}"
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in threads:
        if tid != str(pid) and _has_address_space(f"/proc/{pid}/task/{tid}"):
            return f"/proc/{pid}/task/{tid}"
    return None


def view_file(pid, name: str, views: dict | None = None) -> str:
    """The path of a /proc file of the process where memory_view shows it (OSError: gone);
    views: {pid: memory_view(pid)} read once for a whole count, where the caller has it."""
    view = views[pid] if views is not None and pid in views else memory_view(pid)
    if view is None:
        raise FileNotFoundError(f"/proc/{pid}: no thread with an address space")
    return f"{view}/{name}"


def status_of(pid) -> tuple | None:
    """(real uid, memory fields) of a process (parse_status), its memory read where memory_view
    shows it; None where the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            uid, mem = parse_status(fh.read())
        if not mem:  # no address space at /proc/PID: gone, or a zombie leader whose threads live on
            view = memory_view(pid)
            if view is not None:
                with open(f"{view}/status") as fh:
                    mem = parse_status(fh.read())[1]
    except (OSError, ValueError, IndexError):
        return None
    return uid, mem


def held_memfds(pids, views: dict | None = None) -> dict:
    """{(device, inode): bytes} of the regular files on the shmem mount (memfds) that the
    processes hold open, each counted once however many hold it."""
    held = {}
    if SHMEM_DEV is None:
        return held
    for pid in pids:
        try:
            folder = view_file(pid, "fd", views)
            fds = os.listdir(folder)
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"{folder}/{fd}")
            except OSError:
                continue
            if st.st_dev == SHMEM_DEV and stat.S_ISREG(st.st_mode):
                held[(st.st_dev, st.st_ino)] = st.st_blocks * 512
    return held


def unattached_sysv_bytes() -> int:
    """Resident bytes of the SysV segments of this IPC namespace that no process has attached
    (attached ones are mapped, so counted as shared memory)."""
    try:
        with open("/proc/sysvipc/shm") as fh:
            header = fh.readline().split()
            nattch, rss = header.index("nattch"), header.index("rss")
            return sum(int(cols[rss]) for cols in (line.split() for line in fh) if cols and int(cols[nattch]) == 0)
    except (OSError, ValueError, IndexError):
        return 0


def tmpfs_bytes(mounts) -> int:
    total = 0
    for mount in mounts:
        try:
            st = os.statvfs(mount)
        except OSError:
            continue
        total += (st.f_blocks - st.f_bfree) * st.f_frsize
    return total


def shared_anon_ends(pids, reached: dict, views: dict | None = None) -> int:
    """Bytes: the shared anonymous objects the processes map now, each at the furthest end of it
    that a mapping has reached while it lived (`reached`, {(device, inode): bytes}, kept from count
    to count for the step: an object a process has shrunk by unmapping still holds what it held)."""
    live = set()
    for pid in pids:
        try:
            fh = open(view_file(pid, "maps", views))
        except OSError:
            continue
        with fh:
            for line in fh:
                cols = line.split(None, 5)
                if len(cols) < 6 or cols[1][3] != "s" or not cols[5].startswith(SHARED_ANON):
                    continue
                start, end = (int(x, 16) for x in cols[0].split("-"))
                key = (cols[3], int(cols[4]))
                reached[key] = max(reached.get(key, 0), int(cols[2], 16) + end - start)
                live.add(key)
    for gone in set(reached) - live:
        del reached[gone]
    return sum(reached.values())


def rollup_kb(pid, views: dict | None = None) -> int | None:
    """Proportional anonymous and shared memory, swap and huge pages of one process (None: gone)."""
    try:
        found = _fields(view_file(pid, "smaps_rollup", views), ROLLUP_KEYS)
    except OSError:
        return None
    if "Pss_Anon:" not in found:  # kernels before 5.9 split no Pss: the status counters stand
        return None
    return sum(found.values())


def _device_key(st_dev: int) -> str:
    return f"{os.major(st_dev):02x}:{os.minor(st_dev):02x}"


def mapped_twice_kb(pids, mounts, held, objects=(), views: dict | None = None) -> int:
    """The proportional pages of the mappings of counted tmpfs files, of held memfds and of the
    shared anonymous `objects` ({(device, inode)}): counted once by the mount's used blocks, the
    memfd's size or the object's end, once more as shared memory."""
    devices = set()
    for mount in mounts:
        try:
            devices.add(_device_key(os.stat(mount).st_dev))
        except OSError:
            continue
    held_keys = {(_device_key(dev), ino) for dev, ino in held} | set(objects)
    total = 0
    for pid in pids:
        try:
            fh = open(view_file(pid, "smaps", views))
        except OSError:
            continue
        with fh:
            counting, shared, pss, anon = False, False, 0, 0
            for line in fh:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):  # a mapping's header line
                    total += _twice(counting, shared, pss, anon)
                    cols = line.split()
                    counting = cols[3] in devices or (cols[3], int(cols[4])) in held_keys
                    shared, pss, anon = cols[1][3] == "s", 0, 0
                elif counting and first == "Pss:":
                    pss = int(line.split()[1])
                elif counting and first == "Anonymous:":
                    anon = int(line.split()[1])
            total += _twice(counting, shared, pss, anon)
    return total


def _twice(counting: bool, shared: bool, pss: int, anon: int) -> int:
    """A private mapping's written pages are anonymous (counted as such, not twice)."""
    if not counting:
        return 0
    return pss if shared else max(0, pss - anon)


def without_memory(pids) -> set:
    """The processes that hold no address space now: reaped, a zombie whose threads are gone too,
    or past the point of their exit that releases it (/proc/PID/statm reads zeros from then on)."""
    return {pid for pid in pids if memory_view(pid) is None}


def charged_mb(processes: dict, mounts, limit_mb: float, shared: dict | None = None,
               sockets: frozenset | None = None) -> float:
    """The program's memory in MB, as exact as deciding `> limit_mb` needs: processes is
    {pid: status fields (parse_status)}; mounts the tmpfs mounts whose files are the program's;
    shared, where the program has made shared mappings, the step's shared_anon_ends record;
    sockets, where it has made sockets, their address families (their buffers are counted).

    A count over the limit is taken again without the processes that have released their memory
    since their status was read. A process exiting during the count keeps its counters as read
    before (its mapped files among them), while its files are read after, unmapped: counted
    twice, a program that stayed within its limit was stopped after printing its output."""
    held_in_sockets = socket_bytes(sockets) if sockets else 0
    while True:
        counted = _charged_mb(processes, mounts, limit_mb, shared) + held_in_sockets / (1 << 20)
        gone = without_memory(processes) if counted > limit_mb else set()
        if not gone:
            return counted
        processes = {pid: mem for pid, mem in processes.items() if pid not in gone}


def _charged_mb(processes: dict, mounts, limit_mb: float, shared: dict | None) -> float:
    """One count of charged_mb's, each step taken only when the one before cannot decide."""
    limit = limit_mb * (1 << 20)
    views = {pid: memory_view(pid) for pid in processes}  # each process's /proc folder, once a count
    held = held_memfds(processes, views)
    objects = shared_anon_ends(processes, shared, views) if shared is not None else 0
    files = tmpfs_bytes(mounts) + sum(held.values()) + objects  # what a mapping of these would count twice
    extra = files + unattached_sysv_bytes()
    estimate = sum(status_upper_kb(mem) for mem in processes.values()) * KB + extra
    if estimate <= limit:
        return estimate / (1 << 20)
    if len(processes) > 1:  # pages shared between processes: proportional sizes (one process: the same)
        proportional = 0
        for pid, mem in processes.items():
            kb = rollup_kb(pid, views)
            proportional += status_upper_kb(mem) if kb is None else kb
        estimate = proportional * KB + extra
        if estimate <= limit:
            return estimate / (1 << 20)
    if estimate - files > limit:  # over, whatever is counted twice (nothing, without files or memfds)
        return (estimate - files) / (1 << 20)
    return (estimate - mapped_twice_kb(processes, mounts, held, shared or (), views) * KB) / (1 << 20)
