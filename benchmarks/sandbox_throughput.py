"""Programs per second through the sandbox, per language (hello-world and a small CPU-bound
program), one long-lived container per path, the paths taking turns program by program:

  cli     the previous transport: a `docker run -i` client process holds the runner's stdin and
          stdout (the same container settings, as `docker run` flags)
  docker  the pool's transport: the `docker` SDK's attach socket to Docker's daemon
  podman  the same through rootless Podman's Docker-compatible service

and, for each path whose container's processes this host sees, the CPU milliseconds a program
cost its sandbox (the runner's own threads, the program and its compile, as the host's kernel
counts them): what others' load on the machine changes far less than programs per second.

  python benchmarks/sandbox_throughput.py [--n 20] [--languages Python C] [--podman-user aicd-podman] [--image TAG]
      [--baseline-image TAG] [--no-cli] [--no-podman] [--no-docker]

Needs Docker and the sandbox image (python -m aicd.sandbox images); for the Podman column,
Podman (run as root: a user with an /etc/subuid range, whose service is started here; the image
is copied from Docker when that user's storage lacks it)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))

HELLO = {
    "Python": 'print("hello")\n',
    "C": '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n',
    "C++": '#include <iostream>\nint main(){std::cout<<"hello\\n";}\n',
    "Java": 'public class Main { public static void main(String[] a) { System.out.println("hello"); } }\n',
    "Go": 'package main\nimport "fmt"\nfunc main() { fmt.Println("hello") }\n',
    "Rust": 'fn main() { println!("hello"); }\n',
    "PHP": '<?php echo "hello\\n";\n',
    "JavaScript": 'console.log("hello");\n',
    "C#": 'class P { static void Main() { System.Console.WriteLine("hello"); } }\n',
}
RUN = [{"stdin": ""}]  # one run with empty stdin, output not judged: the programs take no input
# Sum of i*i mod 7 for i < 3,000,000: a few ms compiled, ~0.5 s in CPython.
CPU = {
    "Python": "s = 0\nfor i in range(3000000):\n    s += i * i % 7\nprint(s)\n",
    "C": '#include <stdio.h>\nint main(void){long s=0;for(long i=0;i<3000000;i++)s+=i*i%7;printf("%ld\\n",s);}\n',
    "C++": '#include <cstdio>\nint main(){long s=0;for(long i=0;i<3000000;i++)s+=i*i%7;printf("%ld\\n",s);}\n',
    "Java": 'public class Main { public static void main(String[] a) { long s=0; for (long i=0;i<3000000;i++) s+=i*i%7; System.out.println(s); } }\n',
    "Go": 'package main\nimport "fmt"\nfunc main() { s := 0; for i := 0; i < 3000000; i++ { s += i * i % 7 }; fmt.Println(s) }\n',
    "Rust": 'fn main() { let mut s: i64 = 0; for i in 0..3000000i64 { s += i * i % 7; } println!("{}", s); }\n',
    "PHP": '<?php $s=0; for($i=0;$i<3000000;$i++){$s+=$i*$i%7;} echo $s, "\\n";\n',
    "JavaScript": 'let s=0; for (let i=0;i<3000000;i++) s+=i*i%7; console.log(s);\n',
    "C#": 'class P { static void Main() { long s=0; for (long i=0;i<3000000;i++) s+=i*i%7; System.Console.WriteLine(s); } }\n',
}


class CliContainer:
    """The previous transport, kept here to measure against: a `docker run -i --rm` client
    process whose stdin and stdout are the runner's, one JSON line each way per program."""

    def __init__(self, image: str, limits, runner_limits: dict):
        from aicd.sandbox.isolation import RUNNER_COMMAND, isolation_flags

        self.limits, self.runner_limits = limits, runner_limits
        self.name = f"aicd-bench-cli-{uuid.uuid4().hex[:8]}"
        self.proc = subprocess.Popen(
            ["docker", "run", "-i", "--rm", "--name", self.name, "--label", "aicd.sandbox=1", "--label",
             "aicd.job=benchmark", *isolation_flags(limits), image, *RUNNER_COMMAND],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout], daemon=True).start()
        ready = self.lines.get(timeout=600)
        assert json.loads(ready) == {"ready": True}, ready

    def run(self, job: dict) -> dict:
        from aicd.sandbox.pool import trusted_answer

        lim = self.limits
        job = {**job, "nonce": "bench", "limits": {"wall_s": lim.wall_s, "compile_s": lim.compile_s,
                                                   "output_bytes": lim.output_bytes, "rlimits": self.runner_limits}}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        return trusted_answer(self.lines.get(timeout=600), "bench")

    def remove(self) -> None:
        self.proc.stdin.close()
        subprocess.run(["docker", "rm", "-f", self.name], capture_output=True)
        self.proc.wait(timeout=120)


CLK_TCK = os.sysconf("SC_CLK_TCK")


def host_cpu_s(box) -> float | None:
    """The CPU time a container's init (tini) and runner have used, with all they have reaped, as
    the host's kernel counts it (the runner's own threads, and every program and compile it ran);
    None where the container's processes are not visible here (a CLI container, a remote engine)."""
    ident = getattr(box, "id", None)
    try:
        init = box.engine.client.api.inspect_container(ident)["State"]["Pid"]
        with open(f"/proc/{init}/task/{init}/children") as fh:
            pids = [init, *map(int, fh.read().split())]
        total = 0
        for pid in pids:
            with open(f"/proc/{pid}/stat") as fh:
                total += sum(int(x) for x in fh.read().rsplit(")", 1)[1].split()[11:15])
        return total / CLK_TCK
    except (AttributeError, OSError, KeyError, TypeError, ValueError):
        return None


def rates(boxes: dict, job: dict, n: int) -> tuple[dict, dict]:
    """Programs per second on each path, the paths taking turns program by program, so that a
    change in the machine's load falls on all of them alike, after one untimed program each
    (None: a program did not pass); and the CPU milliseconds each program cost its sandbox, as
    the host's kernel counts them (host_cpu_s), which others' load changes far less than the
    wall clock (None where not visible)."""
    spent, cpu = dict.fromkeys(boxes, 0.0), dict.fromkeys(boxes, 0.0)
    passed = dict.fromkeys(boxes, True)
    for box in boxes.values():  # untimed: a fresh container's first compile reads the toolchain from disk
        box.run(job)
    for _ in range(n):
        for path, box in boxes.items():
            before, started = host_cpu_s(box), time.perf_counter()
            passed[path] &= box.run(job)["status"] == "ok"
            spent[path] += time.perf_counter() - started
            after = host_cpu_s(box)
            cpu[path] = None if None in (before, after, cpu[path]) else cpu[path] + after - before
    return ({path: n / spent[path] if passed[path] else None for path in boxes},
            {path: 1000 * cpu[path] / n if cpu[path] is not None else None for path in boxes})


def engine_arguments(parser) -> None:
    """--engines, --podman-user and --image, as the storm and leak benchmarks take them."""
    parser.add_argument("--engines", nargs="*", default=["docker", "podman"])
    parser.add_argument("--podman-user", default="aicd-podman")
    parser.add_argument("--image", default=None, help="default: this checkout's context tag")


@contextlib.contextmanager
def two_boxes(name: str, image: str, limits, podman_user: str | None, job: str):
    """(engine, two containers of one pool) on Docker or rootless Podman (the image copied there
    first where it lacks it), removed and closed on the way out."""
    from aicd.sandbox.engine import connect
    from aicd.sandbox.images import copy_image, image_exists
    from aicd.sandbox.pool import Container

    engine = connect("docker") if name == "docker" else podman_engine(podman_user)
    if name == "podman" and not image_exists(image, engine):
        copy_image(image, connect("docker"), engine)
    boxes = []
    try:
        boxes = [Container(image, limits, job=job, pool_id=job, engine=engine) for _ in range(2)]
        print(f"{engine.describe()}: the runner stands in for {', '.join(engine.unenforced) or 'nothing'}",
              flush=True)
        yield engine, boxes
    finally:
        for box in boxes:
            box.remove()
        engine.close()


def podman_engine(user: str | None):
    """Rootless Podman: as root, a service run as `user`; otherwise this user's own."""
    from aicd.sandbox.engine import SERVICE_PREFIX, connect_podman, scratch_folder, start_podman_service

    if os.geteuid() != 0:
        return connect_podman()
    scratch = scratch_folder(SERVICE_PREFIX)  # removed by a later run if this one is killed
    shutil.chown(scratch, user)
    service, url, _ = start_podman_service(["runuser", "-u", user, "--"], scratch)
    engine = connect_podman(url)
    engine.service, engine.scratch = service, scratch
    return engine


def row(language: str, kind: str, measured: dict, cpu_ms: dict, engines) -> str:
    """One line of the table: programs per second on each path, the SDK against the CLI, each
    engine against its baseline image, then the CPU ms per program and each engine's ratio."""
    ratio = measured["docker"] / measured["cli"] if measured.get("docker") and measured.get("cli") else None
    cells = " ".join(f"{r:9.2f}" if r else "      n/a" for r in measured.values())
    cells += "".join(f" {e.name}÷base {measured[e.name] / measured[e.name + '-base']:.2f}" for e in engines
                     if measured.get(f"{e.name}-base") and measured.get(e.name))
    cells += f" {ratio:8.2f}" if ratio else ""
    cells += "  cpu " + " ".join(f"{ms:.1f}" if ms is not None else "n/a" for ms in cpu_ms.values())
    return f"{language:<11} {kind:<6} {cells}" + "".join(
        f" {e.name}÷base {cpu_ms[e.name] / cpu_ms[e.name + '-base']:.2f}" for e in engines
        if cpu_ms.get(f"{e.name}-base") and cpu_ms.get(e.name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20, help="programs per cell")
    parser.add_argument("--languages", nargs="*", default=None, help="only these languages (default: all nine)")
    parser.add_argument("--podman-user", default="aicd-podman",
                        help="run as root: the user whose rootless Podman is measured (an /etc/subuid range)")
    parser.add_argument("--no-podman", action="store_true", help="leave the Podman column out")
    parser.add_argument("--no-cli", action="store_true", help="leave the cli column out")
    parser.add_argument("--no-docker", action="store_true",
                        help="leave the docker columns out (Docker still supplies the image to Podman)")
    parser.add_argument("--image", default=None, help="the sandbox image (default: this checkout's context tag)")
    parser.add_argument("--baseline-image", default=None,
                        help="also run this image (say, main's) on each engine, taking turns with --image: "
                             "the runner's cost, each engine's column ÷ its baseline's")
    args = parser.parse_args()
    from aicd.sandbox.engine import connect
    from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag, copy_image, image_exists
    from aicd.sandbox.isolation import runner_limits
    from aicd.sandbox.languages import job_for
    from aicd.sandbox.pool import Container, Limits

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` removes this run's containers
    image = args.image or context_tag(CONTEXT, LOCAL_BASE)
    limits = Limits(wall_s=30, compile_s=60)
    docker = connect("docker")
    engines = [docker] + ([] if args.no_podman else [podman_engine(args.podman_user)])
    for tag in [image] + ([args.baseline_image] if args.baseline_image else []):
        if len(engines) > 1 and not image_exists(tag, engines[1]):
            started = time.perf_counter()
            copy_image(tag, docker, engines[1])
            print(f"copied {tag} to Podman in {time.perf_counter() - started:.0f} s")
    boxes = {}
    try:
        started = time.perf_counter()
        if not args.no_cli:
            boxes["cli"] = CliContainer(image, limits, runner_limits(docker, limits))
        print(f"image {image}; cli container ready in {time.perf_counter() - started:.1f} s")
        for engine in engines[1:] if args.no_docker else engines:
            started = time.perf_counter()
            boxes[engine.name] = Container(image, limits, job="benchmark", engine=engine)
            print(f"{engine.describe()}: container ready in {time.perf_counter() - started:.1f} s; "
                  f"runner stands in for: {', '.join(engine.unenforced) or 'nothing'}")
            if args.baseline_image:
                boxes[f"{engine.name}-base"] = Container(args.baseline_image, limits, job="benchmark", engine=engine)
        paths = list(boxes)
        print(f"{'language':<11} {'program':<6} " + " ".join(f"{p + '/s':>9}" for p in paths) + f" {'sdk÷cli':>8}"
              + "  CPU ms per program: " + " ".join(paths))
        for language in args.languages or HELLO:
            for kind, code in (("hello", HELLO[language]), ("cpu", CPU[language])):
                print(row(language, kind, *rates(boxes, job_for(language, code, RUN), args.n), engines), flush=True)
    finally:
        for box in boxes.values():
            box.remove()
        for engine in engines:
            engine.close()


if __name__ == "__main__":
    main()
