"""What a program leaves behind, against the next program and the runner: SysV IPC handed to
another owner, tmpfs inodes (a flood of empty files), and everything at its cap at once under a
memory hog. Real engines, real image."""

import json
import textwrap

import pytest

RUN = [{"stdin": ""}]
HELLO = ("Python", "print('still fine')\n")
KEYS = {"shm": 0x5152, "sem": 0x5153, "msg": 0x5154}

# Program A: a segment, a semaphore set and a message queue, each holding "secret-from-A" (or
# 42), each handed to root with IPC_SET (the creator uid stays A's); then shared memory and
# message queues filled up to their sysctl caps the same way, so a later program would get ENOSPC.
LEAVE_IPC = textwrap.dedent(f"""
    import ctypes, json
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    IPC_SET, IPC_STAT, SETVAL = 1, 2, 16

    def hand_to_root(ctl, ident, *semnum):
        buf = ctypes.create_string_buffer(512)
        ctl(ident, *semnum, IPC_STAT, buf)
        ctypes.c_uint32.from_buffer(buf, 4).value = 0  # struct ipc_perm: key, then the owner uid
        return ctl(ident, *semnum, IPC_SET, buf)

    class Msg(ctypes.Structure):
        _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 32)]

    shm = libc.shmget({KEYS['shm']}, 4096, 0o1666)
    ctypes.memmove(libc.shmat(shm, None, 0), b"secret-from-A", 13)
    sem = libc.semget({KEYS['sem']}, 1, 0o1666)
    libc.semctl(sem, 0, SETVAL, 42)
    msg = libc.msgget({KEYS['msg']}, 0o1666)
    libc.msgsnd(msg, ctypes.byref(Msg(1, b"secret-from-A")), 13, 0)
    handed = [hand_to_root(libc.shmctl, shm), hand_to_root(libc.semctl, sem, 0), hand_to_root(libc.msgctl, msg)]
    segments = queues = 0
    while True:
        ident = libc.shmget(0, 8 << 20, 0o1600)  # IPC_PRIVATE, until kernel.shmall says no
        if ident < 0 or hand_to_root(libc.shmctl, ident) != 0:
            break
        segments += 1
    while True:
        ident = libc.msgget(0, 0o1600)  # until kernel.msgmni says no
        if ident < 0 or hand_to_root(libc.msgctl, ident) != 0:
            break
        queues += 1
    print(json.dumps({{"handed": handed, "segments": segments, "queues": queues}}))
""")

# Program B: looks for A's objects, then makes its own segment and queue (and leaves them).
LOOK_FOR_IPC = textwrap.dedent(f"""
    import ctypes, json
    libc = ctypes.CDLL(None, use_errno=True)
    tables = {{kind: open(f"/proc/sysvipc/{{kind}}").read().splitlines()[1:] for kind in ("shm", "sem", "msg")}}
    print(json.dumps({{"shm": libc.shmget({KEYS['shm']}, 0, 0), "sem": libc.semget({KEYS['sem']}, 0, 0),
                      "msg": libc.msgget({KEYS['msg']}, 0), "tables": tables,
                      "new_shm": libc.shmget(0, 8 << 20, 0o1600), "new_msg": libc.msgget(0, 0o1600)}}))
""")


@pytest.fixture(scope="module")
def container(spare):
    """A container used directly, with the pool's limits: a breach recycles a pool's container,
    and here the next program must run in the very container the first one left."""
    return spare


def stdout(result, test=0):
    return result["tests"][test]["stdout"]


def test_sysv_ipc_handed_to_another_owner_is_removed_and_reported(container):
    from aicd.sandbox.languages import job_for

    first = container.run(job_for("Python", LEAVE_IPC, RUN))
    made = json.loads(stdout(first))
    assert first["status"] == "ok" and made["handed"] == [0, 0, 0], first
    assert made["segments"] >= 1 and made["queues"] >= 1, made  # the caps were really reached
    # The result stands, but it carries the breach: the pool recycles the container (unclean).
    assert first["clean"] is False and any("handed to another owner" in b for b in first["breaches"]), first
    assert "shm" in first["breaches"][0] and "sem 1" in first["breaches"][0] and "msg" in first["breaches"][0]
    assert first["unclean"] == first["breaches"]

    second = container.run(job_for("Python", LOOK_FOR_IPC, RUN))
    seen = json.loads(stdout(second))
    assert (seen["shm"], seen["sem"], seen["msg"]) == (-1, -1, -1), seen  # A's objects are gone
    assert seen["tables"] == {"shm": [], "sem": [], "msg": []}, seen
    assert seen["new_shm"] >= 0 and seen["new_msg"] >= 0, seen  # no ENOSPC left over from A
    # Objects a program leaves under its own name are removed without a breach.
    assert second["clean"] is True, second


FLOOD = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <errno.h>
    #include <fcntl.h>
    #include <stdio.h>
    #include <time.h>
    #include <unistd.h>

    static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

    /* Empty files in dir until an error or `seconds` pass; returns the errno (0: time ran out). */
    static int flood(const char *dir, double seconds, long *made) {
        double end = now() + seconds;
        char path[256];
        for (long i = 0;; i++) {
            snprintf(path, sizeof path, "%s/e%d_%ld", dir, (int)getpid(), i);
            int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
            if (fd < 0) return errno;
            close(fd);
            ++*made;
            if (now() > end) return 0;
        }
    }

    int main(void) {
        long work = 0, tmp = 0, shm = 0;
        int e1 = flood(".", 1.0, &work), e2 = flood("/tmp", 0.4, &tmp), e3 = flood("/dev/shm", 0.4, &shm);
        printf("%d %ld %d %ld %d %ld\\n", e1, work, e2, tmp, e3, shm);
        return 0;
    }
""")


def test_a_flood_of_empty_files_is_the_programs_enospc(pool):
    """Files pile up over a job's tests (the job folder is emptied after the last): each folder
    hits its inode cap, the program sees "No space left on device", and the runner lives on in
    the same container."""
    assert pool.run_one(*HELLO, RUN)["status"] == "ok"  # the pool holds a container now
    started, recycled = pool.started, pool.recycled
    result = pool.run_one("C", FLOOD, [{"stdin": ""}] * 3)
    if not pool.engine.inode_caps:
        # Podman refuses nr_inodes: the runner counts the inodes and stops the flood at the work
        # folder's cap; a limit breach, so the next program gets a fresh container.
        assert result["status"] == "memory_limit" and result["tests"][0]["inode_limit"] == "/work", result
        assert pool.run_one(*HELLO, RUN)["tests"][0]["stdout"].strip() == "still fine"
        assert pool.recycled == recycled + 1
        return
    assert result["status"] == "ok" and result["clean"] is True, result
    lim = pool.limits
    for index in range(3):
        e1, work, e2, tmp, e3, _shm = map(int, stdout(result, index).split())
        assert (e1, e2, e3) == (28, 28, 28), stdout(result, index)  # ENOSPC in all three
        if index == 0:  # the first test fills the caps (less what the job itself holds)
            assert lim.inodes(lim.work_mb) - 16 < work <= lim.inodes(lim.work_mb), work
            assert lim.inodes(lim.tmp_mb) - 16 < tmp <= lim.inodes(lim.tmp_mb), tmp
        else:  # ... and they stay full until the job ends
            assert work == 0, stdout(result, index)
    assert pool.run_one(*HELLO, RUN)["tests"][0]["stdout"].strip() == "still fine"
    assert (pool.started, pool.recycled) == (started, recycled)  # the same container throughout


EVERYTHING_AT_ITS_CAP = textwrap.dedent("""
    import ctypes, os, sys
    if sys.stdin.read().strip() == "fill":
        for folder in (".", "/tmp", "/dev/shm"):
            try:
                with open(os.path.join(folder, "fill"), "wb") as fh:
                    while True:
                        fh.write(b"x" * (1 << 20))
            except OSError:
                pass
            n = 0
            try:
                while True:
                    open(os.path.join(folder, f"i{n}"), "w").close()
                    n += 1
            except OSError:
                pass
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        while True:
            ident = libc.shmget(0, 1 << 20, 0o1600)
            if ident < 0:
                break
            ctypes.memset(libc.shmat(ident, None, 0), 1, 1 << 20)
        print("filled")
    else:
        hog = []
        while True:
            hog.append(bytearray(16 << 20))
""")


def test_every_cap_full_and_a_memory_hog_still_leave_the_runner_alive(pool):
    """The worst case the limits budget for: the work folder, /tmp and /dev/shm full of data and
    inodes and SysV shared memory at kernel.shmall, all outliving the test that made them; then
    a program that takes all the memory left. The OOM killer takes the program, and the runner
    answers: never a sandbox_error."""
    result = pool.run_one("Python", EVERYTHING_AT_ITS_CAP, [{"stdin": "fill"}, {"stdin": "hog"}])
    assert result["status"] != "sandbox_error", result
    if not pool.engine.inode_caps:
        # Where the runner counts the inodes, filling the work folder's is the program's
        # memory_limit, and the hog never runs: run it on its own.
        assert result["tests"][0]["status"] == "memory_limit" and len(result["tests"]) == 1, result
        result = pool.run_one("Python", EVERYTHING_AT_ITS_CAP, [{"stdin": "hog"}])
        assert result["status"] in ("memory_limit", "runtime_error"), result
        assert pool.run_one(*HELLO, RUN)["tests"][0]["stdout"].strip() == "still fine"
        return
    assert result["tests"][0]["status"] == "ok" and stdout(result).strip() == "filled", result
    assert result["tests"][1]["status"] in ("memory_limit", "runtime_error"), result  # OOM kill or MemoryError
    assert pool.run_one(*HELLO, RUN)["tests"][0]["stdout"].strip() == "still fine"
