"""The limits hold on every engine, where the kernel enforces them (Docker: cgroups, tmpfs inode
caps) and where the runner stands in (rootless Podman on cgroup v1: memory counted as a cgroup
charges it, RLIMIT_NPROC in each container's own user namespace, inodes counted before each new
file): shared memory and memfds are memory, one program's fork bomb leaves a neighbour's program
alone in its pool and in another pool, a flood of files from many processes stops at the cap, a
child OOM-killed under a parent that exits 0 is the program's memory_limit, and memory that is
mapped and held at once is counted once. Real engines, real image."""

import json
import socket
import textwrap
import threading

import pytest
from aicd.sandbox.languages import job_for
from aicd.sandbox.pool import Container
from sandbox_support import HELLO, RUN, SPARES, stdout

SHARED_3GB = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <stdio.h>
    #include <sys/mman.h>
    int main(void) {
        size_t n = 3UL << 30;
        char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { perror("mmap"); return 1; }
        for (size_t i = 0; i < n; i += 4096) p[i] = 1;
        puts("held 3 GB");
        return 0;
    }
""")

SHARED_3GB_DROPPED = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <stdio.h>
    #include <sys/mman.h>
    int main(void) {
        size_t n = 3UL << 30, part = 64UL << 20;
        char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { perror("mmap"); return 1; }
        for (size_t at = 0; at < n; at += part) {
            for (size_t i = at; i < at + part; i += 4096) p[i] = 1;
            if (madvise(p + at, part, MADV_DONTNEED)) { perror("madvise"); return 1; }
        }
        puts("held 3 GB");
        return 0;
    }
""")

# memfds of EACH_MB MB (under RLIMIT_FSIZE, the largest tmpfs's size), 3 GB in all, held by a
# descriptor, never mapped
MEMFDS_3GB = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <stdio.h>
    #include <string.h>
    #include <sys/mman.h>
    #include <unistd.h>
    static char block[1 << 20];
    int main(void) {
        memset(block, 1, sizeof block);
        for (int f = 0; f < 3072 / EACH_MB; f++) {
            int fd = memfd_create("hold", 0);
            for (int mb = 0; mb < EACH_MB; mb++)
                if (write(fd, block, sizeof block) != sizeof block) { perror("write"); return 1; }
        }
        puts("held 3 GB");
        return 0;
    }
""")

# memfds of EACH_MB MB, 3 GB in all, that no process maps or holds: each sent over a Unix socket
# (SCM_RIGHTS) and closed, so it lives only in flight (HOW = pass_on), or mapped one page and
# closed, so its one mapped page is all a process shows of it (HOW = map_one_page)
MEMFDS_UNSEEN_3GB = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <stdio.h>
    #include <string.h>
    #include <sys/mman.h>
    #include <sys/socket.h>
    #include <unistd.h>
    static char block[1 << 20];
    static void pass_on(int sock, int fd) {
        char byte = 0;
        struct iovec iov = {&byte, 1};
        union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        if (sendmsg(sock, &msg, 0) != 1) { perror("sendmsg"); _exit(1); }
    }
    static void map_one_page(int sock, int fd) {
        (void)sock;
        if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) { perror("mmap"); _exit(1); }
    }
    int main(void) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) { perror("socketpair"); return 1; }
        memset(block, 1, sizeof block);
        for (int f = 0; f < 3072 / EACH_MB; f++) {
            int fd = memfd_create("hold", 0);
            if (fd < 0) { perror("memfd_create"); return 1; }
            for (int mb = 0; mb < EACH_MB; mb++)
                if (write(fd, block, sizeof block) != sizeof block) { perror("write"); return 1; }
            HOW(sv[0], fd);
            close(fd);
        }
        puts("held 3 GB");
        sleep(1);
        return 0;
    }
""")


# The first thread exits (a zombie leader: /proc/PID reads no memory) while another allocates 640 MB.
LEADER_GONE_THREAD_HOGS = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <pthread.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <unistd.h>
    static void *hog(void *unused) {
        for (int i = 0; i < 40; i++) {
            char *p = malloc(16 << 20);
            if (!p) { puts("refused"); fflush(stdout); _exit(3); }
            memset(p, 1, 16 << 20);
            usleep(20000);
        }
        puts("held 640 MB");
        fflush(stdout);
        _exit(0);
    }
    int main(void) {
        pthread_t t;
        pthread_create(&t, 0, hog, 0);
        pthread_exit(0);
    }
""")

CHILD_OOM_PARENT_FINE = textwrap.dedent("""
    import os, sys
    child = os.fork()
    if child == 0:
        hog = []
        while True:
            hog.append(b"\\1" * (16 << 20))
    _, status = os.waitpid(child, 0)
    print("child ended", status)
    sys.exit(0)
""")

COUNTED_ONCE = textwrap.dedent("""
    import mmap, os, time
    MB = 1 << 20
    fd = os.memfd_create("both")               # held by a descriptor and mapped: 100 MB, once
    os.ftruncate(fd, 100 * MB)
    held = mmap.mmap(fd, 100 * MB)
    with open("data", "wb") as fh:             # a tmpfs file of the work folder, mapped: 50 MB, once
        fh.write(b"x" * (50 * MB))
    data = open("data", "r+b")
    mapped = mmap.mmap(data.fileno(), 0)
    shared = mmap.mmap(-1, 50 * MB, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)  # 50 MB, four processes
    for region in (held, mapped, shared):
        for i in range(0, len(region), 4096):
            region[i] = 1
    children = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            for i in range(0, len(shared), 4096):
                shared[i] = 2
            time.sleep(0.8)
            os._exit(0)
        children.append(pid)
    time.sleep(0.8)
    print(sum(os.waitpid(pid, 0)[1] == 0 for pid in children), "children fine")
""")

FLOOD_EIGHT = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <dirent.h>
    #include <fcntl.h>
    #include <stdio.h>
    #include <sys/wait.h>
    #include <unistd.h>
    int main(void) {
        for (int c = 0; c < 8; c++)
            if (fork() == 0) {
                char path[64];
                for (long i = 0;; i++) {
                    snprintf(path, sizeof path, "/tmp/f%d_%ld", c, i);
                    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
                    if (fd < 0) _exit(0);
                    close(fd);
                }
            }
        while (wait(NULL) > 0) {}
        long n = 0;
        DIR *tmp = opendir("/tmp");
        for (struct dirent *e; (e = readdir(tmp));) n++;
        printf("%ld\\n", n - 2);
        return 0;
    }
""")


@pytest.fixture(scope="module")
def pair(engine, sandbox_image, pool, spare):
    """Two containers of one pool of two, used directly (a breach here does not recycle them: on
    Docker's vfs each new container costs 10-40 s, and the runner must answer in the very
    container a hostile program used): a fresh one, and the session's spare of the same pool.
    The session pool is another pool: another job of the same user on the same node."""
    box = Container(sandbox_image, pool.limits, job="test-limits-hold", pool_id=SPARES, engine=engine, pool_size=2)
    try:
        yield box, spare
    finally:
        box.remove()


def run(box, language, code, tests=RUN):
    return box.run(job_for(language, code, tests))


def still_fine(box):
    after = run(box, *HELLO)
    assert after["status"] == "ok" and stdout(after).strip() == "still fine", after


def test_a_fresh_container_holds_nothing_of_the_host_or_the_image(pair):
    """Its first program (before any cleanup) finds /tmp and /dev/shm empty (Podman copied the
    image's /tmp, with Java's hsperfdata_root, into the tmpfs), and /etc/hosts, /etc/hostname
    and /etc/resolv.conf of the sandbox's own: no entry, name or nameserver of the host. On
    Podman, the engine's storage and the container's id no longer show in the mount table for
    them."""
    code = textwrap.dedent("""
        import json, os
        print(json.dumps({"tmp": os.listdir("/tmp"), "shm": os.listdir("/dev/shm"),
                          **{name: open("/etc/" + name).read() for name in ("hosts", "hostname", "resolv.conf")},
                          "mounts": [line.split()[3] for line in open("/proc/self/mountinfo")
                                     if line.split()[4].startswith("/etc/")]}))
    """)
    result = run(pair[0], "Python", code)
    assert result["status"] == "ok", result
    seen = json.loads(stdout(result))
    assert seen["tmp"] == [] and seen["shm"] == [], seen
    assert seen["hostname"].strip() == "sandbox", seen
    for line in seen["hosts"].splitlines():
        if line.strip() and not line.startswith("#"):
            address, *names = line.split()
            assert address in ("127.0.0.1", "::1", "127.0.1.1", "fe00::0", "ff00::0", "ff02::1", "ff02::2"), line
            assert socket.gethostname() not in names, line
    servers = [line.split()[1] for line in seen["resolv.conf"].splitlines() if line.startswith("nameserver")]
    assert set(servers) <= {"127.0.0.1"}, seen["resolv.conf"]  # never the host's
    if pair[0].engine.name == "podman":
        assert not any("overlay-containers" in root or "userdata" in root for root in seen["mounts"]), seen["mounts"]


# ---- neighbours: a fork bomb beside another program, in one pool and in two ----------------

# Every process forks and spins, as long as it may: `pids` processes taking every core.
FORK_BOMB = "#define _GNU_SOURCE\n#include <unistd.h>\nint main(void){for(;;) fork();}\n"
# Waits until the bomb beside it has taken what it can, starts threads and a process, then
# computes until its own CPU time is NEAR of its time limit (whatever the wall clock says).
NEAR = 0.7
NEIGHBOUR = textwrap.dedent("""
    import os, subprocess, sys, threading, time
    time.sleep(1.0)
    threads = [threading.Thread(target=time.sleep, args=(0.1,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    echo = subprocess.run(["echo", "neighbour fine"], capture_output=True, text=True).stdout.strip()
    target = float(sys.stdin.read())
    while sum(os.times()[:4]) < target:  # its own CPU time and its children's (the echo)
        pass
    print(echo)
""")


def bomb_beside(box, bomb, neighbour):
    """(the bomb's result, the neighbour's), run at the same time in `box` and beside it; each
    runs a job: a function of (language, code, tests). The neighbour computes until NEAR of its
    time limit in CPU time: its result must not depend on the bomb's load."""
    results = {}
    near = [{"stdin": str(NEAR * box.limits.wall_s * box.limits.cpus)}]

    def start(key, runs, language, code, tests):
        results[key] = runs(language, code, tests)

    threads = [threading.Thread(target=start, args=("bomb", bomb, "C", FORK_BOMB, RUN)),
               threading.Thread(target=start, args=("neighbour", neighbour, "Python", NEIGHBOUR, near))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stopped = results["bomb"]
    assert stopped["status"] in ("timeout", "runtime_error"), stopped
    # Within one CPU second of its share (the time limit times cpus), counted for the whole
    # sandbox (it ran 1.89 CPUs for its whole wall limit with a process count alone, before).
    share = box.limits.wall_s * box.limits.cpus
    assert stopped["tests"][0]["cpu_counted_s"] <= share + 1.0, stopped["tests"][0]
    fine = results["neighbour"]
    assert fine["status"] == "ok" and stdout(fine).strip() == "neighbour fine", fine
    assert fine["tests"][0]["cpu_counted_s"] >= NEAR * share - 0.1, fine["tests"][0]  # it did compute that long
    return stopped, fine


def test_a_fork_bomb_leaves_its_neighbour_in_the_pool_alone(pair):
    """Two programs in the two containers of one pool: the bomb holds every process it may and
    every core, and is stopped at its CPU share; the program beside it starts its threads and a
    process all the same, and computes to near its own time limit without a timeout."""
    bomb_beside(pair[0], lambda *job: run(pair[0], *job), lambda *job: run(pair[1], *job))


def test_a_fork_bomb_leaves_another_pool_alone(pair, pool):
    """Two jobs of the same user on one node: a bomb in one pool, a program in the other."""
    bomb_beside(pair[0], lambda *job: run(pair[0], *job), lambda *job: pool.run_one(*job))
    still_fine(pair[0])


def test_every_container_has_its_own_user_namespace_where_the_runner_counts_processes(pair):
    """Rootless Podman: each container's uids map to host uids of its own (--userns=auto); on
    Docker (rootful) the cgroup counts processes and containers share the host's uids."""
    code = "import os\nprint(open('/proc/self/uid_map').read().split()[1], os.readlink('/proc/self/ns/user'))\n"
    first, second = run(pair[0], "Python", code), run(pair[1], "Python", code)
    assert first["status"] == second["status"] == "ok", (first, second)
    if pair[0].engine.name == "podman" and "pids" in pair[0].engine.unenforced:
        assert stdout(first) != stdout(second), (stdout(first), stdout(second))  # other host uids, other namespace
    elif pair[0].engine.name == "docker" and not pair[0].engine.rootless:
        assert stdout(first).split()[0] == "0"  # the host's own uids


# ---- memory: shared, memfds, a child killed for it, and each page once ---------------------

class SharedMemoryBox:
    """A container of its own for the programs that hold shared memory (memfds, shared
    mappings): where a cgroup caps memory and the runner could not take itself out of the OOM
    killer's reach (a host that withholds CAP_SYS_RESOURCE: `oom_guarded` False), such a program,
    killed, frees its memory only at its exit, and an allocation of the runner's before that
    makes the runner the OOM killer's next victim (docs/sandbox.md): the result is then
    sandbox_error, and the next program gets a fresh container."""

    def __init__(self, engine, image, limits):
        self.engine, self.image, self.limits = engine, image, limits
        self.box = self.fresh()

    def fresh(self) -> Container:
        box = Container(self.image, self.limits, job="test-shared-memory", pool_id=SPARES, engine=self.engine)
        self.guarded = run(box, *HELLO)["oom_guarded"]
        return box

    def run(self, language, code) -> dict:
        result = run(self.box, language, code)
        self.lost = result["status"] == "sandbox_error" and not self.box.alive()
        if self.lost:
            assert not self.engine.rootless and "memory" not in self.engine.unenforced and not self.guarded, result
            self.box.remove()
            self.box = self.fresh()
        return result


@pytest.fixture(scope="module")
def shared_memory_box(engine, sandbox_image, pool):
    holder = SharedMemoryBox(engine, sandbox_image, pool.limits)
    try:
        yield holder
    finally:
        holder.box.remove()


def assert_stopped_near_the_cap(box, result, reserved_mb=None):
    """memory_limit near the cap: by the cgroup's OOM killer, or by the runner's count, which
    stops a program at a shared anonymous mapping of reserved_mb MB before it touches a page (it
    counts such a mapping at its size: its pages, once dropped, no count can see). A
    SharedMemoryBox may have lost its runner instead (its docstring)."""
    if isinstance(box, SharedMemoryBox):
        if box.lost:
            return  # the unguarded runner was the OOM killer's next victim: SharedMemoryBox.run checked where
        box = box.box
    assert result["status"] == "memory_limit", result
    test = result["tests"][0]
    counted = test.get("memory_counted_mb")
    if counted is not None:  # the runner's count stopped it (no memory cgroup)
        cap = box.limits.memory_mb
        assert cap <= counted <= cap * 1.25 or (reserved_mb and abs(counted - reserved_mb) < 16), test  # 0.1 MB
    else:  # the cgroup's OOM killer did
        assert test["oom"] or not test["oom_known"], test
    still_fine(box)  # in the same container: the runner answers


def test_a_shared_anonymous_mapping_is_memory(shared_memory_box):
    """3 GB MAP_SHARED | MAP_ANONYMOUS, every page touched: a cgroup charges it as shared memory;
    the runner's count (resident less shared pages, before) let all 3 GB through."""
    box = shared_memory_box
    assert_stopped_near_the_cap(box, box.run("C", SHARED_3GB), reserved_mb=3072)


def test_a_shared_anonymous_mapping_whose_pages_are_dropped_is_memory(shared_memory_box):
    """3 GB MAP_SHARED | MAP_ANONYMOUS touched 64 MB at a time, each part dropped from the mapping
    (MADV_DONTNEED) once touched: the object keeps every page, which a cgroup charges; a count of
    what the processes map showed a few MB while the host's shared memory rose by 3 GB."""
    result = shared_memory_box.run("C", SHARED_3GB_DROPPED)
    assert "held 3 GB" not in stdout(result), result
    assert_stopped_near_the_cap(shared_memory_box, result, reserved_mb=3072)


def test_memfds_are_memory(shared_memory_box):
    """3 GB of memfds, written and held by a descriptor only: no mapping shows them."""
    box = shared_memory_box
    each = max(box.limits.work_mb, box.limits.tmp_mb) - 8
    assert_stopped_near_the_cap(box, box.run("C", MEMFDS_3GB.replace("EACH_MB", str(each))))


@pytest.mark.parametrize("how", ["pass_on", "map_one_page"])
def test_memfds_no_process_maps_or_holds_are_memory(shared_memory_box, how):
    """3 GB of memfds that only a socket's queue holds (sent and closed: in flight), or that one
    mapped page each keeps alive: a cgroup charges every page; before, rootless Podman's count
    saw none of them (`ok`, holding 3,060 MB). The next program finds the container clean."""
    box = shared_memory_box
    each = max(box.limits.work_mb, box.limits.tmp_mb) - 8
    code = MEMFDS_UNSEEN_3GB.replace("EACH_MB", str(each)).replace("HOW(", how + "(")
    result = box.run("C", code)
    assert "held 3 GB" not in stdout(result), result
    assert_stopped_near_the_cap(box, result)
    assert result["clean"] or result["status"] == "sandbox_error", result


def test_a_child_killed_for_memory_is_the_programs_memory_limit(pair):
    """The parent exits 0 after its child was OOM-killed (or stopped by the runner's count): the
    program went past its memory, whatever its exit code says."""
    result = run(pair[1], "Python", CHILD_OOM_PARENT_FINE)
    assert result["status"] == "memory_limit", result
    still_fine(pair[1])


def test_a_thread_that_outlives_its_first_thread_is_held_to_the_cap(pair):
    """The first thread exits and another allocates 640 MB against a cap of 320: /proc/PID of a
    zombie leader reads no memory, so the runner's count saw none (`ok`, holding 640 MB, up to
    RLIMIT_DATA in each of 128 processes); it now reads a live thread's."""
    assert pair[1].limits.memory_mb == 320
    result = run(pair[1], "C", LEADER_GONE_THREAD_HOGS)
    assert "held 640 MB" not in stdout(result), result
    assert_stopped_near_the_cap(pair[1], result)
    still_fine(pair[1])


def test_memory_mapped_and_held_at_once_is_counted_once(pair):
    """About 240 MB in all (a memfd mapped and held, a work-folder file mapped, a shared mapping
    four processes touch, four interpreters) against a cap of 320: counted twice or per process
    it would pass the cap."""
    assert pair[1].limits.memory_mb == 320
    result = run(pair[1], "Python", COUNTED_ONCE)
    assert result["status"] == "ok" and stdout(result).strip() == "3 children fine", result


def test_a_flood_from_eight_processes_stops_at_the_inode_cap(pair):
    """Eight processes making empty files in /tmp as fast as they can: the kernel's cap (the
    program sees ENOSPC) or the runner's count before each file (the program is stopped,
    memory_limit) holds within 5%; counted every 10 ms it overshot by a third."""
    box = pair[1]
    cap = box.limits.inodes(box.limits.tmp_mb)
    result = run(box, "C", FLOOD_EIGHT)
    if box.engine.inode_caps:
        assert result["status"] == "ok", result
        assert cap - 16 < int(stdout(result)) <= cap, (cap, stdout(result))
    else:
        test = result["tests"][0]
        assert result["status"] == "memory_limit" and test["inode_limit"] == "/tmp", result
        assert cap * 0.95 <= test["inodes_used"]["/tmp"] <= cap * 1.05, (cap, test["inodes_used"])
    still_fine(box)
