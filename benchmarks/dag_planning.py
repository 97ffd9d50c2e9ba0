"""Planning cost of the workflow (bar: a synthetic 20,000-job dry run in < 30 s and
at most 6x a 4,000-job one), and the SLURM submission overhead per job.

Planning: the demo config with its LLM and sandbox stages off, its task T1 copied TASKS times
and its LR_{TF-IDF} detector copied DETECTORS times; every (task, detector) pair is a detect
and a score job. `snakemake -n --quiet` in an empty directory, wall time of the whole process
(parse, config validation, DAG), best of --repeats.

SLURM (--slurm, root, slurm-wlm and munge installed): the single-node cluster of the tests
(tests/workflow/slurm_cluster.py) is started, N trivial jobs (`touch`) are run once locally and
once through snakemake-executor-plugin-slurm, and the per-job difference is reported, with the
bare cost of one `sbatch --wrap true`. The cluster is stopped afterwards.

  python benchmarks/dag_planning.py [--repeats 2] [--slurm --slurm-jobs 20]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
       "PYTHONWARNINGS": "ignore"}


def synthetic_config(tasks: int, detectors: int) -> dict:
    config = yaml.safe_load((REPO / "config" / "demo.yaml").read_text())
    for key in ("generation", "judging", "execution"):
        config[key]["enabled"] = False
    binary = config["tasks"]["binary"]
    config["tasks"] = {f"t{i}": binary for i in range(tasks)}
    lr = config["detectors"]["lr_tfidf"]
    config["detectors"] = {f"lr{i}": {**lr, "title": f"LR {i}"} for i in range(detectors)}
    return config


def planned(config: dict) -> tuple[float, int, float]:
    """(wall seconds, jobs planned, CPU seconds of the snakemake process)."""
    import resource

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "config.yaml").write_text(yaml.safe_dump(config))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
                               "--directory", tmp, "--cores", "1", "-n", "--quiet", "rules",
                               "--configfile", str(Path(tmp, "config.yaml"))],
                              capture_output=True, text=True, env=ENV, timeout=900)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    total = next(int(line.split()[-1]) for line in proc.stdout.splitlines() if line.startswith("total"))
    return wall, total, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def slurm_overhead(jobs: int) -> None:
    sys.path.insert(0, str(REPO / "tests" / "workflow"))
    from slurm_cluster import PARTITION, Cluster, missing

    why = missing()
    if why:
        print(f"SLURM: skipped ({why})")
        return
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(Path(tmp) / "slurm")
        cluster.start()
        try:
            bare = []
            for _ in range(10):
                started = time.perf_counter()
                subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true"], check=True,
                               capture_output=True, timeout=60)
                bare.append(time.perf_counter() - started)
            snakefile = Path(tmp, "Snakefile")
            snakefile.write_text(
                f"rule all:\n    input: expand('out/{{i}}.txt', i=range({jobs}))\n\n"
                "rule one:\n    output: 'out/{i}.txt'\n    resources: mem_mb=200, runtime=5\n"
                "    shell: 'touch {output}'\n")
            walls = {}
            for mode, extra in (("local", ["--cores", "2"]),
                                ("slurm", ["--executor", "slurm", "--jobs", "100", "--slurm-no-account",
                                           "--slurm-status-command", "squeue",
                                           "--slurm-init-seconds-before-status-checks", "2",
                                           "--default-resources", f"slurm_partition={PARTITION}",
                                           "--latency-wait", "5"])):
                workdir = Path(tmp, f"run_{mode}")
                workdir.mkdir()
                started = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(snakefile), "-d", str(workdir),
                                       *extra], capture_output=True, text=True, env=ENV, timeout=1800)
                walls[mode] = time.perf_counter() - started
                if proc.returncode != 0:
                    raise SystemExit(proc.stderr[-3000:])
        finally:
            cluster.stop()
    print(f"SLURM: sbatch --wrap true {sum(bare) / len(bare) * 1000:.0f} ms per call (mean of {len(bare)})")
    print(f"SLURM: {jobs} trivial jobs: local {walls['local']:.1f} s, through the plugin {walls['slurm']:.1f} s, "
          f"overhead {(walls['slurm'] - walls['local']) / jobs:.2f} s per job (2 CPUs, all jobs submitted at once)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--slurm", action="store_true")
    parser.add_argument("--slurm-jobs", type=int, default=20)
    args = parser.parse_args()
    results = {}
    for name, (tasks, detectors) in {"4k": (4, 500), "20k": (10, 1000)}.items():
        config = synthetic_config(tasks, detectors)
        runs = [planned(config) for _ in range(args.repeats)]
        best = min(runs)
        results[name] = (best[0], best[1])
        print(f"{tasks} tasks x {detectors} detectors: {best[1]} jobs planned in {best[0]:.1f} s wall, "
              f"{best[2]:.1f} s CPU (best of {args.repeats}; load average {os.getloadavg()[0]:.1f})")
    print(f"ratio 20k/4k: {results['20k'][0] / results['4k'][0]:.2f} "
          f"(jobs ratio {results['20k'][1] / results['4k'][1]:.2f})")
    if args.slurm:
        slurm_overhead(args.slurm_jobs)


if __name__ == "__main__":
    main()
