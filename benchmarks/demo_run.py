"""Wall time of the whole demo run (all Table 4 detectors on both demo tasks) from scratch,
in a temporary directory, as `make demo` runs it (the default workflow profile), and the
slowest jobs from snakemake's own benchmark files.

  python benchmarks/demo_run.py [--cores 2] [--trial PATH] [--jobs-tsv FILE] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from paper_scale import read_benchmark  # noqa: E402  wall from the file; memory and CPU from each job's meter

DEFAULT_TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--trial", type=Path, default=DEFAULT_TRIAL)
    parser.add_argument("--jobs-tsv", type=Path, help="also write every job's wall, CPU and peak RSS here")
    parser.add_argument("--keep", type=Path, help="run in this (empty or new) folder and keep it, logs included")
    args = parser.parse_args()
    if args.keep and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: the folder is not empty (the demo is timed from scratch)")
    shared = args.trial.resolve().parent.parent / "codeaid-interview-answers" / "codeaid_answers.parquet"
    codeaid = f", codeaid: {{files: {shared}}}" if shared.is_file() else ""  # relative in demo.yaml
    with tempfile.TemporaryDirectory() as scratch:
        tmp = str(args.keep.resolve()) if args.keep else scratch
        cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", tmp,
               "--cores", str(args.cores), "--configfile", str(REPO / "config" / "demo.yaml"),
               "--workflow-profile", str(REPO / "profiles" / "default"),
               "--config", f"sources={{trial: {{files: {args.trial.resolve()}}}{codeaid}}}"]
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(proc.stderr[-3000:])
        jobs = []
        for tsv in Path(tmp, "results", "benchmarks").rglob("*.tsv"):
            m = read_benchmark(tsv)
            if m is None:
                print(f"unreadable benchmark file, left out: {tsv}", file=sys.stderr)
                continue
            jobs.append((m["wall_s"], m["rss_mb"], str(tsv.relative_to(Path(tmp, "results", "benchmarks"))), m["cpu_s"]))
        if args.jobs_tsv:
            args.jobs_tsv.write_text("job\twall_s\tcpu_s\tmax_rss_mb\n" + "".join(
                f"{name}\t{s:.1f}\t{cpu:.1f}\t{rss:.0f}\n" for s, rss, name, cpu in sorted(jobs, reverse=True)))
        print(f"demo run from scratch: {wall:.0f} s wall on {args.cores} cores, {len(jobs)} jobs")
        print(f"sum of job times: {sum(j[0] for j in jobs):.0f} s, of their CPU {sum(j[3] for j in jobs):.0f} s; "
              f"largest job peak RSS {max(j[1] for j in jobs):.0f} MB")
        print("slowest jobs:")
        for s, rss, name, _ in sorted(jobs, reverse=True)[:8]:
            print(f"  {s:7.1f} s  {rss:7.0f} MB  {name}")
        print()
        print(Path(tmp, "results", "tables", "table4.md").read_text())


if __name__ == "__main__":
    main()
