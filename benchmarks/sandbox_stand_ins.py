"""What the runner's stand-ins cost on rootless Podman (cgroup v1), where it enforces what the
engine cannot (docs/sandbox.md, "The engine"):

  gate     empty files a program makes per second, with the inode gate (each new file waits for
           the runner's count) and without it (counted every 10 ms), in one container
  meter    a program's run time beside the memory count, for programs that keep the count cheap
           (one process) and costly (four processes sharing mapped memory), with the count on
           and off
  userns   seconds to a ready container: the first in a user-namespace range (Podman copies the
           image for it) and the next ones, which reuse it

  python benchmarks/sandbox_stand_ins.py [--podman-user aicd-podman] [--repeats 5]

Run as root, Podman runs as the unprivileged user (an /etc/subuid range); the sandbox image must
be in that user's storage (python -m aicd.sandbox images, then the tests copy it, or docker save |
podman load). Prints Markdown tables."""

from __future__ import annotations

import argparse
import statistics
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "benchmarks"))

RUN = [{"stdin": ""}]
FILES = textwrap.dedent("""
    #define _GNU_SOURCE
    #include <fcntl.h>
    #include <stdio.h>
    #include <time.h>
    #include <unistd.h>
    int main(void) {
        struct timespec a, b;
        char path[64];
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < 2000; i++) {
            snprintf(path, sizeof path, "f%d", i);
            close(open(path, O_CREAT | O_WRONLY, 0600));
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("%.0f\\n", 2000 / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
        return 0;
    }
""")
ONE_PROCESS = textwrap.dedent("""
    x = bytearray(200 << 20)
    for i in range(0, len(x), 4096):
        x[i] = 1
    s = sum(i * i % 7 for i in range(2_000_000))
""")
SHARING = textwrap.dedent("""
    import mmap, os
    shared = mmap.mmap(-1, 100 << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    for i in range(0, len(shared), 4096):
        shared[i] = 1
    with open("data", "wb") as fh:
        fh.write(b"x" * (50 << 20))
    opened = open("data", "r+b")
    data = mmap.mmap(opened.fileno(), 0)
    kids = [os.fork() for _ in range(3)]
    s = sum(i * i % 7 for i in range(2_000_000))
    if 0 in kids:
        os._exit(0)
    for pid in kids:
        os.waitpid(pid, 0)
""")


def timed(box, language, code, repeats):
    """Median seconds of `repeats` runs (after one untimed), and the last result."""
    from aicd.sandbox.languages import job_for

    job = job_for(language, code, RUN)
    result = box.run(job)
    spent = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = box.run(job)
        spent.append(time.perf_counter() - started)
        assert result["status"] == "ok", result
    return statistics.median(spent), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--podman-user", default="aicd-podman")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag
    from aicd.sandbox.pool import Container, Limits
    from sandbox_throughput import podman_engine

    engine = podman_engine(args.podman_user)
    image, limits = context_tag(CONTEXT, LOCAL_BASE), Limits(wall_s=30, compile_s=60)
    print(f"{engine.describe()}, image {image}; runner stands in for {', '.join(engine.unenforced)}\n")
    starts, boxes = [], []
    try:
        for _ in range(3):
            started = time.perf_counter()
            boxes.append(Container(image, limits, job="bench-stand-ins", engine=engine))
            starts.append(time.perf_counter() - started)
        for box in boxes[1:]:
            box.remove()
        started = time.perf_counter()
        boxes[1:] = [Container(image, limits, job="bench-stand-ins", engine=engine)]
        reuse = time.perf_counter() - started
        print("| container | ready in |\n|---|---:|")
        for n, seconds in enumerate(starts, 1):
            print(f"| #{n} at once (a range of its own) | {seconds:.1f} s |")
        print(f"| #2 again, after #2 and #3 went (its range's copy reused) | {reuse:.1f} s |\n")
        box = boxes[0]
        rows = []
        for gate in (True, False):
            box.runner_limits["inode_gate"] = gate
            _, result = timed(box, "C", FILES, args.repeats)
            rows.append(("gate on" if gate else "gate off (counted every 10 ms)", result["tests"][0]["stdout"].strip()))
        box.runner_limits["inode_gate"] = True
        print("| inode count | files made per second (2,000 empty files) |\n|---|---:|")
        for label, rate in rows:
            print(f"| {label} | {int(rate):,} |")
        print("\n| program | memory count on | off | on ÷ off |\n|---|---:|---:|---:|")
        for label, code in (("one process, 200 MB", ONE_PROCESS), ("four processes sharing 150 MB mapped", SHARING)):
            on, _ = timed(box, "Python", code, args.repeats)
            saved = dict(box.runner_limits)
            box.runner_limits.pop("memory_mb")
            off, _ = timed(box, "Python", code, args.repeats)
            box.runner_limits.clear()
            box.runner_limits.update(saved)
            print(f"| {label} | {on:.2f} s | {off:.2f} s | {on / off:.2f} |")
    finally:
        for box in boxes:
            box.remove()
        engine.close()


if __name__ == "__main__":
    main()
