"""What a hostile program can take from the host through the sandbox, and what stopping it costs,
on Docker and on rootless Podman (where the runner stands in for the cgroup; docs/sandbox.md,
"The engine"), with the default limits (640 MB, 5 s, 1 CPU, 128 processes):

  memfds        3 GB of memfds that no process maps or holds (sent over a Unix socket and closed,
                so they live only in flight; mapped one page each and closed; held by a
                descriptor): the status, the memory the runner counted at the stop, seconds to
                the stop, and the peak of the host's shared memory (/proc/meminfo Shmem) above
                its level before
  bomb          a fork bomb whose every process forks and spins, alone and beside a neighbour (a
                second container of the same pool) that computes to 70 % of its time limit in
                CPU time: the bomb's seconds and CPU seconds to its stop, the neighbour's status,
                wall and CPU time, and the longest a host thread waited for a 10 ms sleep
  memfd_create  memfds made per second (create, write 4 KB, close; 2,000 of them): made by the
                runner (Podman) or by the kernel (Docker)

  python benchmarks/sandbox_leaks.py [--engines docker podman] [--podman-user aicd-podman] [--image TAG]

Run as root, Podman runs as the unprivileged user (an /etc/subuid range); the image is copied
from Docker to that user's storage when it lacks it. Prints Markdown tables."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "sandbox"))

from test_fork_storms import FORK_BOMB, NEIGHBOUR  # noqa: E402  the tests' probes
from test_limits_hold import MEMFDS_3GB, MEMFDS_UNSEEN_3GB  # noqa: E402

RUN = [{"stdin": ""}]
MEMFD_RATE = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <stdio.h>
    #include <sys/mman.h>
    #include <time.h>
    #include <unistd.h>
    int main(void) {
        static char page[4096];
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < 2000; i++) {
            int fd = memfd_create("rate", MFD_CLOEXEC);
            if (fd < 0 || write(fd, page, sizeof page) != sizeof page) { perror("memfd"); return 1; }
            close(fd);
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("%.0f\\n", 2000 / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
        return 0;
    }
""")


class HostWatch:
    """A host thread that sleeps 10 ms at a time: the longest it waited for one, and the peak of
    the host's shared memory above its level at the start."""

    def __init__(self):
        self.stop, self.worst, self.base = threading.Event(), 0.0, self.shmem_mb()
        self.peak = self.base
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    @staticmethod
    def shmem_mb() -> float:
        with open("/proc/meminfo") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("Shmem:")) / 1024

    def run(self):
        last = time.monotonic()
        while not self.stop.wait(0.01):
            now = time.monotonic()
            self.worst, last = max(self.worst, now - last), now
            self.peak = max(self.peak, self.shmem_mb())

    def done(self) -> tuple[float, float]:
        self.stop.set()
        self.thread.join()
        return self.worst, self.peak - self.base


def timed(box, language, code, tests=RUN):
    from aicd.sandbox.languages import job_for

    watch = HostWatch()
    started = time.perf_counter()
    result = box.run(job_for(language, code, tests))
    return result, time.perf_counter() - started, *watch.done()


def memfd_rows(box, each_mb: int) -> list[str]:
    rows = []
    for label, code in (("in flight in a socket", MEMFDS_UNSEEN_3GB.replace("HOW(", "pass_on(")),
                        ("one page mapped each", MEMFDS_UNSEEN_3GB.replace("HOW(", "map_one_page(")),
                        ("held by a descriptor", MEMFDS_3GB)):
        result, seconds, _, shmem = timed(box, "C", code.replace("EACH_MB", str(each_mb)))
        test = result["tests"][0] if result["tests"] else {}
        counted = test.get("memory_counted_mb")
        how = f"counted {counted:.0f} MB" if counted else "OOM kill" if test.get("oom") else "not stopped"
        rows.append(f"| {box.engine.name} | {label} | {result['status']} | {how} | {seconds:.2f} s | {shmem:.0f} MB |")
    return rows


def bomb_rows(box, neighbour_box) -> list[str]:
    share = box.limits.wall_s * box.limits.cpus
    near = [{"stdin": str(0.7 * share)}]
    rows = []
    alone, seconds, worst, _ = timed(box, "C", FORK_BOMB)
    rows.append(f"| {box.engine.name} | alone | {alone['status']}, {seconds:.2f} s, "
                f"{alone['tests'][0].get('cpu_counted_s', 0):.2f} CPU s | – | {worst:.2f} s |")
    results = {}

    def neighbour():
        results["neighbour"] = timed(neighbour_box, "Python", NEIGHBOUR, near)

    thread = threading.Thread(target=neighbour)
    thread.start()
    bomb, seconds, worst, _ = timed(box, "C", FORK_BOMB)
    thread.join()
    fine, fine_s, _, _ = results["neighbour"]
    test = fine["tests"][0]
    rows.append(f"| {box.engine.name} | beside a neighbour | {bomb['status']}, {seconds:.2f} s, "
                f"{bomb['tests'][0].get('cpu_counted_s', 0):.2f} CPU s | {fine['status']}, {fine_s:.2f} s "
                f"({test['wall_s']:.2f} s run, {test.get('cpu_counted_s', 0):.2f} CPU s) | {worst:.2f} s |")
    return rows


def main() -> None:
    from sandbox_throughput import engine_arguments, two_boxes

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    engine_arguments(parser)
    args = parser.parse_args()
    from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag
    from aicd.sandbox.pool import Limits

    image, limits = args.image or context_tag(CONTEXT, LOCAL_BASE), Limits()
    each = max(limits.work_mb, limits.tmp_mb) - 8
    print(f"image {image}, {limits}; load average {os.getloadavg()[0]:.1f}\n")
    tables = {"memfds": [], "bomb": [], "rate": []}
    for name in args.engines:
        with two_boxes(name, image, limits, args.podman_user, "bench-leaks") as (engine, boxes):
            tables["memfds"] += memfd_rows(boxes[0], each)
            tables["bomb"] += bomb_rows(boxes[0], boxes[1])
            result, _, _, _ = timed(boxes[0], "C", MEMFD_RATE)
            rate = result["tests"][0]["stdout"].strip() if result["status"] == "ok" else result["status"]
            tables["rate"].append(f"| {engine.name} | {rate} |")
    print("\n| engine | 3 GB of memfds | status | stopped by | to the stop | host Shmem peak |\n|---|---|---|---|---:|---:|")
    print("\n".join(tables["memfds"]))
    print("\n| engine | fork bomb | bomb: status, to the stop, CPU | neighbour at 70 % of its time: status, wall "
          "| host thread's longest wait |\n|---|---|---|---|---:|")
    print("\n".join(tables["bomb"]))
    print("\n| engine | memfds made per second |\n|---|---:|")
    print("\n".join(tables["rate"]))
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
