"""No per-user kernel limit is shared between two programs of a pool, nor with the user who runs
the engine. The kernel keeps inotify instances and pipe buffers per user: where two containers'
programs had one uid (Docker rootful: 10001 in every container), one program that used up its own
left its neighbour no inotify instance and 8 KB pipes that could not grow; rootless, every
container's inotify instances also count against the engine's user, whose 128 one program could
take. Now each container's program has a uid of its own (rootless Podman: a user namespace of its
own), and rootless, each program may make only its share of the user's inotify instances and
watches (aicd.sandbox.isolation.user_limit_share). Real engines, real image."""

import json
import os
import subprocess
import textwrap
import threading
import time

from sandbox_support import PODMAN_USER, run, stdout

# Makes inotify instances until refused, then pipes grown to 1 MB until refused (the user's
# pipe-user-pages-soft, 64 MB by default), and holds them for the seconds read from stdin.
EXHAUST = textwrap.dedent("""
    import ctypes, fcntl, os, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    instances = 0
    while libc.inotify_init1(os.O_CLOEXEC) >= 0:
        instances += 1
    refused = ctypes.get_errno()
    pipes = 0
    while True:
        _, end = os.pipe()
        try:
            fcntl.fcntl(end, fcntl.F_SETPIPE_SZ, 1 << 20)
        except OSError:
            break
        pipes += 1
    print(instances, refused, pipes, flush=True)
    time.sleep(float(sys.stdin.read()))
""")
# What a program gets that asks for one inotify instance and one pipe, grown to 1 MB.
ASK = textwrap.dedent("""
    import ctypes, fcntl, json, os
    libc = ctypes.CDLL(None, use_errno=True)
    instance = libc.inotify_init1(os.O_CLOEXEC)
    refused = ctypes.get_errno() if instance < 0 else 0
    _, end = os.pipe()
    size = fcntl.fcntl(end, fcntl.F_GETPIPE_SZ)
    try:
        grown = fcntl.fcntl(end, fcntl.F_SETPIPE_SZ, 1 << 20)
    except OSError as err:
        grown = -err.errno
    print(json.dumps({"inotify": instance, "refused": refused, "pipe": size, "grown": grown}))
""")
EMFILE = 24
ENGINE_USERS_ASK = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
                    "print(libc.inotify_init1(os.O_CLOEXEC), ctypes.get_errno())")


def engine_users_inotify(engine) -> list[int]:
    """[fd or -1, errno] of one inotify instance asked for by the user who runs the engine: the
    tests' rootless Podman runs as PODMAN_USER when they run as root; otherwise it is this user."""
    command = ["python3", "-c", ENGINE_USERS_ASK]
    if engine.name == "podman" and os.geteuid() == 0:
        command = ["runuser", "-u", PODMAN_USER, "--", *command]
    return [int(x) for x in subprocess.run(command, capture_output=True, text=True, check=True, cwd="/").stdout.split()]


def test_a_program_that_exhausts_its_user_limits_leaves_its_neighbour_and_the_engines_user_theirs(pair):
    """One program in a pool of two makes inotify instances and 1 MB pipes until the kernel (or,
    rootless, the runner's share) refuses it, and holds them; meanwhile the program in the other
    container gets an inotify instance and a 64 KB pipe that grows to 1 MB, and so does the user
    running the engine."""
    exhausting, beside = pair
    hold_s = 0.8 * exhausting.limits.wall_s
    results = {}
    worker = threading.Thread(target=lambda: results.setdefault(
        "exhaust", run(exhausting, "Python", EXHAUST, [{"stdin": str(hold_s)}])))
    worker.start()
    time.sleep(hold_s / 2)  # the first program has made all it may by now (in 0.1-0.3 s), and holds it
    engine_user = engine_users_inotify(exhausting.engine)
    asked = run(beside, "Python", ASK)
    worker.join()
    exhausted = results["exhaust"]
    assert exhausted["status"] == "ok", exhausted
    instances, refused, pipes = map(int, stdout(exhausted).split())
    assert instances >= 1 and refused == EMFILE, stdout(exhausted)  # it did use up its inotify instances
    seen = json.loads(stdout(asked))
    assert asked["status"] == "ok" and seen["inotify"] >= 0, (seen, stdout(exhausted))
    assert seen["pipe"] == 65536 and seen["grown"] >= 1 << 20, (seen, pipes)  # not 8 KB, and it may grow
    assert engine_user[0] >= 0, (engine_user, stdout(exhausted))
