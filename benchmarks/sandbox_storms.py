"""What a fork storm, socket buffers, a link flood and a neighbour exhausting its per-user limits
take from the host through the sandbox, on Docker and on rootless Podman (where the runner
stands in for the cgroup; docs/sandbox.md, "The engine"), with the default limits (640 MB, 5 s,
1 CPU, 128 processes, /tmp capped at 4,096 inodes), two containers of one pool:

  storms     a bomb whose processes spin, a bomb that forks for ever, a fork tree that retries
             every 100 us at the limit (alone, and the tree beside a neighbour that computes to
             70 % of its time limit): status, seconds from the program's start to its stop, the
             CPU time its processes took as the host's kernel counts it, the host's Slab rise and
             MemAvailable fall, the longest a host thread waited for a 10 ms sleep
  sockets    2 GB written to Unix socket pairs and held (both ends kept): status, the memory the
             runner counted at the stop, the host's MemAvailable fall
  neighbours one program makes inotify instances and 1 MB pipes until refused and holds them; the
             program in the other container asks for one of each: what each got
  links      four processes making hard links, or whiteouts, in /tmp: status, inodes at the stop
  host facts the host's load, disks, NUMA nodes and cgroup tree: how many paths show anything

  python benchmarks/sandbox_storms.py [--engines docker podman] [--podman-user aicd-podman] [--image TAG]

Run as root, Podman runs as the unprivileged user (an /etc/subuid range); the image is copied
from Docker to that user's storage when it lacks it. The probes are the tests' own
(tests/sandbox). Prints Markdown tables."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "sandbox"))

from sandbox_support import HostMemory, SandboxCpu, run, stdout  # noqa: E402  the tests' own probes and meters
from test_fork_storms import NEIGHBOUR, STORMS  # noqa: E402
from test_isolation import READ_HOST_FACTS  # noqa: E402
from test_limits_hold import LINK_FLOOD, SOCKET_BUFFERS_2GB  # noqa: E402
from test_neighbours import ASK, EXHAUST  # noqa: E402


def measured(box, code, stdin="", language="C"):
    """(result, seconds to the result, host memory, the run step's CPU as the host counts it)."""
    with HostMemory() as host, SandboxCpu(box) as cpu:
        started = time.perf_counter()
        result = run(box, language, code, [{"stdin": stdin}])
        seconds = time.perf_counter() - started
    return result, seconds, host, cpu.of_run(result)


def storm_rows(boxes) -> list[str]:
    rows = []
    for name, code in STORMS.items():
        result, _, host, cpu = measured(boxes[0], code)
        test = result["tests"][0]
        rows.append(f"| {boxes[0].engine.name} | {name} | {result['status']} | {test['wall_s']:.2f} s | {cpu:.2f} | "
                    f"{host.slab_rise_mb:.0f} MB | {host.available_fall_mb:.0f} MB | {host.longest_wait_s:.2f} s | – |")
    share = boxes[1].limits.wall_s * boxes[1].limits.cpus
    found = {}
    neighbour = threading.Thread(target=lambda: found.setdefault("n", run(
        boxes[1], "Python", NEIGHBOUR, [{"stdin": str(0.7 * share)}])))
    neighbour.start()
    result, _, host, cpu = measured(boxes[0], STORMS["fork tree"])
    neighbour.join()
    test, near = result["tests"][0], found["n"]["tests"][0]
    rows.append(f"| {boxes[0].engine.name} | fork tree beside a neighbour | {result['status']} | {test['wall_s']:.2f} s | "
                f"{cpu:.2f} | {host.slab_rise_mb:.0f} MB | {host.available_fall_mb:.0f} MB | "
                f"{host.longest_wait_s:.2f} s | {found['n']['status']}, {near['wall_s']:.2f} s |")
    return rows


def socket_row(box) -> str:
    result, _, host, _ = measured(box, SOCKET_BUFFERS_2GB.replace("HOW(", "keep("))
    test = result["tests"][0] if result["tests"] else {}
    counted = test.get("memory_counted_mb")
    how = f"counted {counted:.0f} MB" if counted else "OOM kill" if test.get("oom") else stdout(result).strip()
    return f"| {box.engine.name} | {result['status']} | {how} | {host.available_fall_mb:.0f} MB |"


def neighbour_row(boxes) -> str:
    found = {}
    holder = threading.Thread(target=lambda: found.setdefault("x", run(boxes[0], "Python", EXHAUST, [{"stdin": "3"}])))
    holder.start()
    time.sleep(1.5)
    asked = run(boxes[1], "Python", ASK)
    holder.join()
    instances, _, pipes = stdout(found["x"]).split()
    seen = json.loads(stdout(asked))
    return (f"| {boxes[0].engine.name} | {instances} instances, {pipes} pipes of 1 MB | "
            f"inotify {'ok' if seen['inotify'] >= 0 else 'refused'}, pipe {seen['pipe']:,} B, grown to 1 MB: "
            f"{'yes' if seen['grown'] >= 1 << 20 else 'no'} |")


def link_rows(box) -> list[str]:
    rows = []
    for make in ("link_", "whiteout"):
        result = run(box, "C", LINK_FLOOD.replace("MAKE(", make + "("))
        test = result["tests"][0]
        inodes = test.get("inodes_used", {}).get("/tmp") or stdout(result).split()[-1]
        rows.append(f"| {box.engine.name} | {make.rstrip('_')} | {result['status']} | {inodes} |")
    return rows


def host_facts_row(box) -> str:
    from aicd.sandbox.masks import HOST_DISKS, HOST_LOAD, HOST_NODES, disk_folders

    paths = [*HOST_LOAD, *HOST_DISKS, *disk_folders(), *HOST_NODES]
    seen = json.loads(stdout(run(box, "Python", READ_HOST_FACTS, [{"stdin": json.dumps(paths)}])))
    shown = [path for path, value in seen["seen"].items() if value not in ("", [], "No such file or directory")]
    folders = sum(len(found) for found in seen["cgroups"].values())
    return f"| {box.engine.name} | {len(shown)} of {len(paths)} | {folders} |"


TABLES = {
    "storms": "| engine | storm | status | to the stop | CPU s (host) | Slab rise | MemAvailable fall | host thread's "
              "longest wait | neighbour |\n|---|---|---|---:|---:|---:|---:|---:|---|",
    "sockets": "| engine | 2 GB in socket buffers | stopped by | MemAvailable fall |\n|---|---|---|---:|",
    "neighbours": "| engine | the first program made | what the second got meanwhile |\n|---|---|---|",
    "links": "| engine | flood | status | /tmp inodes at the end (cap 4,096) |\n|---|---|---|---:|",
    "facts": "| engine | host paths showing anything | cgroup folders seen |\n|---|---|---:|",
}


def main() -> None:
    from sandbox_throughput import engine_arguments, two_boxes

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    engine_arguments(parser)
    args = parser.parse_args()
    from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag
    from aicd.sandbox.pool import Limits

    image, limits = args.image or context_tag(CONTEXT, LOCAL_BASE), Limits()
    print(f"image {image}, {limits}; load average {os.getloadavg()[0]:.1f}\n")
    rows = {key: [] for key in TABLES}
    for name in args.engines:
        with two_boxes(name, image, limits, args.podman_user, "bench-storms") as (_, boxes):
            rows["storms"] += storm_rows(boxes)
            rows["sockets"].append(socket_row(boxes[0]))
            rows["neighbours"].append(neighbour_row(boxes))
            rows["links"] += link_rows(boxes[1])
            rows["facts"].append(host_facts_row(boxes[1]))
    for key, header in TABLES.items():
        print(f"\n{header}\n" + "\n".join(rows[key]))
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
