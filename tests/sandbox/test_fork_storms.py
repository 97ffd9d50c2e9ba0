"""Fork storms on every engine: a bomb whose processes spin, a bomb that forks for ever, and a
fork tree that retries every 100 us at the process limit, alone and beside a neighbour in its
pool or in another pool. Each ends within its CPU share (the step's time limit times `cpus`),
the host's kernel memory (Slab: the tasks a storm makes, and those it is refused) stays within
SLAB_BOUND_MB of where it was, and the program beside it computes to near its own time limit
without a timeout. Where the pids controller counts processes (Docker) the kernel refuses the
forks; where the runner stands in (rootless Podman on cgroup v1) its gate refuses each fork past
the limit before the kernel allocates a task (containers/sandbox/gate.py). Real engines, real
image; the host's /proc/meminfo sampled while the storm runs."""

import textwrap
import threading
from dataclasses import replace

import pytest
from aicd.sandbox.pool import Container
from sandbox_support import RUN, SPARES, TEST_LIMITS, HostMemory, SandboxCpu, run, stdout, still_fine

# Every process forks for ever (the forks past the limit are refused, and tried again at once).
FORK_BOMB = "#define _GNU_SOURCE\n#include <unistd.h>\nint main(void){for(;;) fork();}\n"
# Every process forks until the limit refuses it, then spins: `pids` processes taking every core.
SPINNING_BOMB = "#define _GNU_SOURCE\n#include <unistd.h>\nint main(void){while (fork() >= 0) {} for(;;) {}}\n"
# Every process forks, and where the limit refuses it sleeps 100 us and forks again: before, on
# rootless Podman, hundreds of thousands of refused forks a second whose freed tasks the busy
# cores did not release (the host's Slab grew by 1.6-4.2 GB, MemAvailable fell as much, a host
# thread waited 12 s for a 10 ms sleep).
FORK_TREE = "#define _GNU_SOURCE\n#include <unistd.h>\nint main(void){for(;;) if (fork() < 0) usleep(100);}\n"
STORMS = {"fork bomb": FORK_BOMB, "spinning bomb": SPINNING_BOMB, "fork tree": FORK_TREE}
# What the host's Slab may grow by while one storm runs: the storm's own tasks (a few MB for
# `pids` of them) and the host's other work, with room to spare; the fork tree took 1.6-4.2 GB.
SLAB_BOUND_MB = 256
# How far past its share a storm's CPU time may be when it is stopped: the counts run every 10 ms
# (two in a row, the second at once, decide), and a storm on two CPUs passes its share by a few
# hundredths of a second between counts and the kill. Before, on rootless Podman, the storms
# took 2.6-7.5 CPU s against a share of 1.5 as the host counts them (/proc/PID/stat rounds each
# process's time down to 10 ms, and 128 processes hid up to a second from the runner's count).
SHARE_MARGIN_S = 0.25
# The storms' own container: the default 128 processes, and half a CPU, so that a storm can use
# its share (1.5 CPU s in 3 s) before its time limit however busy the host's two cores are; the
# neighbour beside it (the session's spare, of the same pool) has the tests' usual limits.
STORM_LIMITS = replace(TEST_LIMITS, pids=128, cpus=0.5)
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


def cpu_bound(box, test) -> float:
    """The CPU time a stopped program may have taken. Where the runner stands in for the CPU quota
    (rootless Podman), its share, the step's time limit times `cpus`: the runner stops it there.
    Where a cgroup's quota holds it (Docker), `cpus` for as long as it ran: the quota throttles it
    to that, and it is stopped at its time limit (later by as long as the stop takes on a busy host)."""
    if "cpu" in box.engine.unenforced:
        return box.limits.wall_s * box.limits.cpus
    return box.limits.cpus * max(test["wall_s"], box.limits.wall_s)


def assert_stopped_within_its_share(box, stopped, host, cpu):
    """The storm was stopped (a timeout, or its main process refused a thread or a fork), the CPU
    time its processes took as the host's kernel counts it (SandboxCpu) within its bound, and the
    host's Slab within SLAB_BOUND_MB."""
    assert stopped["status"] in ("timeout", "runtime_error"), stopped
    test = stopped["tests"][0]
    assert cpu.of_run(stopped) <= cpu_bound(box, test) + SHARE_MARGIN_S, (cpu.of_run(stopped), test)
    assert host.slab_rise_mb <= SLAB_BOUND_MB, (host.slab_rise_mb, host.available_fall_mb, test)


@pytest.fixture(scope="module")
def storm_box(engine, sandbox_image, spare):
    """A container with STORM_LIMITS, in the pool of the session's spare (its neighbour)."""
    box = Container(sandbox_image, STORM_LIMITS, job="test-fork-storms", pool_id=SPARES, engine=engine)
    try:
        yield box
    finally:
        box.remove()


@pytest.mark.parametrize("storm", STORMS)
def test_a_fork_storm_ends_within_its_cpu_share_and_pins_no_kernel_memory(storm_box, storm):
    """Alone in its container: stopped once its processes together have used its share (the
    spinning bomb), or at its time limit where its processes wait (a fork refused at the limit is
    answered at the runner's next tick), and the host's Slab stays within SLAB_BOUND_MB; the next
    program runs in the same container."""
    with HostMemory() as host, SandboxCpu(storm_box) as cpu:
        stopped = run(storm_box, "C", STORMS[storm])
    assert_stopped_within_its_share(storm_box, stopped, host, cpu)
    still_fine(storm_box)


def bomb_beside(box, bomb, neighbour, neighbours_limits, storm=FORK_BOMB):
    """(the storm's result, the neighbour's), run at the same time in `box` and beside it; each
    runs a job: a function of (language, code, tests). The neighbour computes until NEAR of its
    time limit in CPU time: its result must not depend on the storm's load."""
    results = {}
    share = neighbours_limits.wall_s * neighbours_limits.cpus
    near = [{"stdin": str(NEAR * share)}]

    def start(key, runs, language, code, tests):
        results[key] = runs(language, code, tests)

    threads = [threading.Thread(target=start, args=("bomb", bomb, "C", storm, RUN)),
               threading.Thread(target=start, args=("neighbour", neighbour, "Python", NEIGHBOUR, near))]
    with HostMemory() as host, SandboxCpu(box) as cpu:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert_stopped_within_its_share(box, results["bomb"], host, cpu)
    fine = results["neighbour"]
    assert fine["status"] == "ok" and stdout(fine).strip() == "neighbour fine", fine
    assert fine["tests"][0]["cpu_counted_s"] >= NEAR * share - 0.1, fine["tests"][0]  # it did compute that long
    return results["bomb"], fine


@pytest.mark.parametrize("storm", ["fork bomb", "fork tree"])
def test_a_fork_storm_leaves_its_neighbour_in_the_pool_alone(storm_box, spare, storm):
    """Two programs in two containers of one pool: the storm holds every process it may, and is
    stopped within its CPU share; the program beside it starts its threads and a process all the
    same, and computes to near its own time limit without a timeout."""
    bomb_beside(storm_box, lambda *job: run(storm_box, *job), lambda *job: run(spare, *job), spare.limits,
                STORMS[storm])


def test_a_fork_bomb_leaves_another_pool_alone(storm_box, pool):
    """Two jobs of the same user on one node: a bomb in one pool, a program in the other."""
    bomb_beside(storm_box, lambda *job: run(storm_box, *job), lambda *job: pool.run_one(*job), pool.limits)
    still_fine(storm_box)
