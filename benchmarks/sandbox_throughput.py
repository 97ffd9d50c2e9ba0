"""Programs per second through the sandbox, per language: hello-world and a small CPU-bound
program, with pooled containers (one `docker exec` per program), with one `docker run` per
program, and as a bare subprocess on the host where the host has the toolchain; one run.

  python benchmarks/sandbox_throughput.py [--n 20] [--run-n 2]

Needs a Docker daemon and the sandbox image (python -m aicd.sandbox images)."""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "containers" / "sandbox"))

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


def bare(language: str, code: str) -> bool:
    """Run once on the host with the same runner, if the host has the toolchain."""
    from aicd.sandbox.languages import job_for

    job = job_for(language, code, RUN)
    tools = ([job["compile"][0]] if job["compile"] else []) + ([] if job["run"][0].startswith("./") else [job["run"][0]])
    if any(shutil.which(t) is None for t in tools):
        return False
    with tempfile.TemporaryDirectory() as work:
        proc = subprocess.run([sys.executable, str(REPO / "containers" / "sandbox" / "runner.py")], input=json.dumps(
            {**job, "tests": [], "limits": {"wall_s": 30, "compile_s": 60}}), capture_output=True, text=True,
            env={"AICD_WORK": work, "PATH": "/usr/local/bin:/usr/bin:/bin"})
        return json.loads(proc.stdout)["status"] == "ok"


def rate(fn, n: int) -> float | None:
    started = time.perf_counter()
    for _ in range(n):
        if not fn():
            return None
    return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20, help="programs per pooled / bare cell")
    parser.add_argument("--run-n", type=int, default=2, help="programs per docker-run cell (each creates a container)")
    parser.add_argument("--languages", nargs="*", default=None, help="only these languages (default: all nine)")
    args = parser.parse_args()
    from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag
    from aicd.sandbox.languages import job_for
    from aicd.sandbox.pool import Container, Limits, docker, isolation_flags, owner_labels, trusted_result

    from aicd.sandbox.pool import remove_stale_containers

    remove_stale_containers()  # what an earlier, killed run left
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` removes this run's container
    image = context_tag(CONTEXT, LOCAL_BASE)
    limits = Limits(wall_s=30, compile_s=60)
    started = time.perf_counter()
    container = Container(image, limits, job="benchmark")
    print(f"image {image}; creating one pooled container took {time.perf_counter() - started:.1f} s")
    fmt = lambda v: f"{v:8.2f}" if v else "     n/a"  # noqa: E731
    print(f"{'language':<11} {'program':<6} {'pooled/s':>8} {'run/s':>8} {'bare/s':>8} {'pooled/bare':>11}")
    try:
        for language in args.languages or HELLO:
            for kind, code in (("hello", HELLO[language]), ("cpu", CPU[language])):
                job = job_for(language, code, RUN)
                pooled = rate(lambda: container.run(job)["status"] == "ok", args.n)
                run_rate = None
                if kind == "hello" and language in ("Python", "C"):
                    def one_run():
                        full = {**job, "nonce": "bench", "limits": {"wall_s": 30, "compile_s": 60}}
                        p = docker("run", "--rm", "-i", *owner_labels("benchmark"), *isolation_flags(limits), image,
                                   "python3", "/opt/aicd/runner.py", input=json.dumps(full), timeout=600)
                        return trusted_result(p, "bench")["status"] == "ok"
                    run_rate = rate(one_run, args.run_n)
                bare_rate = rate(lambda: bare(language, code), args.n)
                ratio = f"{bare_rate / pooled:11.2f}" if pooled and bare_rate else "        n/a"
                print(f"{language:<11} {kind:<6} {fmt(pooled)} {fmt(run_rate)} {fmt(bare_rate)} {ratio}", flush=True)
    finally:
        container.remove()


if __name__ == "__main__":
    main()
