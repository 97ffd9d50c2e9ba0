"""The full reproduction at the paper's scale, measured at small fractions and projected.

  python benchmarks/paper_scale.py run --fraction 0.005 [--stage release|dataset] [--cores 2]
  python benchmarks/paper_scale.py report [--stage release|dataset] [--markdown FILE]

`run` writes a synthetic AICD Bench at F x the paper's size (benchmarks/synthetic_release.py:
real code resampled and made distinct), then runs the workflow's own jobs on it from an empty
results folder, in /tmp/aicd-paper-scale/{stage}-{F}/ (--workdir to change):

- release: the release evaluation of T1-T3 from release-format files: task tables with
  language identification, features, every classical Table 4 row, the dummies, the robust
  detector, Fast-DetectGPT with the demo's code LM (trained by the workflow), scores and
  Tables 4-7 (no encoder fine-tuning, no LLM judges: they need a GPU or keys);
- dataset: the full build's dataset stage on F x 2.05M source rows: normalization (code checks,
  language identification for the rows that arrive without a language, Table 3 filters,
  MinHash signatures), the pool (MinHash dedup at 0.8) and the three task splits.

It records, per job, its wall from Snakemake's benchmark file and its peak memory (summed over
the job's processes) and CPU from the line aicd.common.memguard writes to the job's log (the benchmark
file's own figures, sampled every 30 s after 15 s, are the fallback), with the job's threads,
requested memory and its inputs and outputs from a dry run. `report` reads every fraction of a
stage and prints per rule and fraction the wall, CPU seconds and peak RSS, the growth exponent
between the two largest fractions (and a log-log fit over all), and the projection to F = 1
(`project`: time has a fixed part that stays and grows linearly beyond it unless faster growth
is measured; memory by the line through the two largest fractions, `project_rss`):
CPU-hours, the longest job, the largest peak RSS, the wall time on
one 16-core, 64 GB node under a critical-path list schedule of the real DAG (each job on its
rule's threads; memory from its projected peak RSS), and the mem_mb and runtime each rule's
jobs should ask a cluster for at F = 1."""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "workflow"))  # aicd.outputs names the targets
ROOT = Path("/tmp/aicd-paper-scale")
NODE_CORES, NODE_MEM_MB = 16, 64_000
SMALL_S = 5.0  # a job below this at the largest fraction is projected linearly: its exponent is noise
BASE_RSS_MB = 150.0  # an interpreter with pandas; RSS grows beyond it


# ------------------------------------------------------------------------ configs


def release_config(files: dict) -> dict:
    """config/config.yaml on the synthetic release: every non-GPU Table 4 row, no LLM stages."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    demo = yaml.safe_load((REPO / "config" / "demo.yaml").read_text())
    for task, splits in files.items():
        cfg["tasks"][task]["release"] = {"files": splits}
    cfg["detectors"] = {name: spec for name, spec in cfg["detectors"].items() if spec["kind"] != "encoder"}
    fdg = demo["detectors"]["fast_detectgpt"]
    fdg["params"]["train_lm"]["task"] = "T1"
    cfg["detectors"]["fast_detectgpt"] = {**fdg, "tasks": ["T1", "T3"]}
    for stage in ("generation", "judging", "execution"):
        cfg[stage]["enabled"] = False
    return cfg


def dataset_config(files: dict) -> dict:
    """config/config.yaml with tasks_from: pool over the synthetic sources (same names)."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["tasks_from"] = "pool"
    cfg["sources"] = {name: {"files": path, **({"defaults": {"language": "Python"}} if name == "swallowcode" else {})}
                      for name, path in files.items()}
    cfg["dataset"] = {"sources": list(files), "generations": False, "dedup": {"threshold": 0.8}}
    for stage in ("generation", "judging", "execution"):
        cfg[stage]["enabled"] = False
    # generation is off, but its protocols still name the real sources: point them at ours
    for spec in cfg["generation"]["protocols"].values():
        spec["sources"] = ["codenet"]
    return cfg


def targets(stage: str, cfg: dict) -> list[str]:
    if stage == "release":
        return []  # the default target: Table 4, the report, Tables 5-7, the paper section
    from aicd.outputs import SHOWN  # the config's own root, where snakemake is asked for them

    return [SHOWN.pool()] + [SHOWN.split(t, s) for t in cfg["tasks"] for s in ("train", "validation", "test")]


# ------------------------------------------------------------------------ run


def snakemake(workdir: Path, cores: int, extra: list[str], tgt: list[str]) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(workdir / "config.yaml"), "--cores", str(cores),
           "--workflow-profile", str(REPO / "profiles" / "default"), *extra, *tgt]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


JOB_START = re.compile(r"^(?:local)?rule (\w+):$")


def planned_jobs(dry_run: str) -> list[dict]:
    """Jobs of a `snakemake -n` printout: rule, inputs, outputs, benchmark, threads, mem_mb."""
    jobs, job = [], None
    for line in dry_run.splitlines():
        match = JOB_START.match(line.strip()) if not line.startswith(" ") else None
        if match:
            job = {"rule": match.group(1), "input": [], "output": [], "threads": 1, "mem_mb": None, "benchmark": None}
            jobs.append(job)
            continue
        if job is None or ":" not in line or not line.startswith("    "):
            continue
        key, _, value = line.strip().partition(": ")
        if key in ("input", "output"):
            job[key] = [v.strip() for v in value.split(", ") if v.strip()]
        elif key == "benchmark":
            job["benchmark"] = value.strip()
        elif key == "threads":
            job["threads"] = int(value)
        elif key == "resources":
            found = re.search(r"\bmem_mb=(\d+)", value)
            job["mem_mb"] = int(found.group(1)) if found else None
    return jobs


METER = re.compile(r"memguard: job .*: peak memory ([\d,]+) MB summed over \d+ process(?:es)?, CPU ([\d,.]+) s")


def read_benchmark(path: Path) -> dict | None:
    """Wall from Snakemake's benchmark file; peak memory and CPU from the job's memguard line
    (aicd.common.memguard: sampled twice a second over the job's processes, and at least the job's own
    high-water mark) where its log has one, else from the benchmark file, which samples every
    30 s after the first 15 s and so misses short peaks and the CPU of short-lived workers."""
    try:
        with open(path) as fh:
            row = next(csv.DictReader(fh, delimiter="\t"))
    except (OSError, StopIteration):
        return None

    def number(key):
        try:
            return float(row.get(key) or 0)
        except ValueError:
            return 0.0

    measured = {"wall_s": number("s"), "cpu_s": number("cpu_time"), "rss_mb": number("max_rss"), "from": "benchmark"}
    parts = path.parts
    if "benchmarks" in parts:
        i = len(parts) - 1 - parts[::-1].index("benchmarks")
        log = Path(*parts[:i], "logs", *parts[i + 1:]).with_suffix(".log")
        found = METER.findall(log.read_text(errors="replace")) if log.is_file() else []
        if found:
            peak, cpu = (float(v.replace(",", "")) for v in found[-1])
            measured.update(rss_mb=peak, cpu_s=max(cpu, measured["cpu_s"]), **{"from": "memguard"})
    return measured


def run(args) -> None:
    from synthetic_release import base_pool, write_release, write_sources

    workdir = args.workdir or ROOT / f"{args.stage}-{args.fraction:g}"
    if (workdir / "results").exists() and not args.keep:
        subprocess.run(["rm", "-rf", str(workdir / "results"), str(workdir / ".snakemake")], check=True)
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    pool = base_pool(args.seed)
    data = workdir / "data"
    if args.stage == "release":
        cfg = release_config(write_release(args.fraction, data, args.seed, pool))
    else:
        cfg = dataset_config(write_sources(args.fraction, data, args.seed, pool))
    cfg["seed"] = 2026
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    print(f"synthetic data for F = {args.fraction:g} written in {time.perf_counter() - started:.0f} s: {data}", flush=True)
    tgt = targets(args.stage, cfg)
    # the dry run at the node's cores, so each job shows its rule's own threads (a real run
    # lowers them to --cores)
    dry = snakemake(workdir, NODE_CORES, ["-n"], tgt)
    if dry.returncode != 0:
        sys.exit(f"dry run failed:\n{dry.stderr[-3000:]}")
    jobs = planned_jobs(dry.stdout + dry.stderr)
    started = time.perf_counter()
    proc = snakemake(workdir, args.cores, ["--keep-going"], tgt)
    wall = time.perf_counter() - started
    (workdir / "snakemake.log").write_text(proc.stdout + proc.stderr)
    for job in jobs:
        job["measured"] = read_benchmark(workdir / job["benchmark"]) if job["benchmark"] else None
    rows = {f"{task}/{split}": len_parquet(path) for task, splits in (cfg["tasks"].items()) for split, path in
            (splits.get("release", {}).get("files", {}).items() if args.stage == "release" else [])}
    record = {"stage": args.stage, "fraction": args.fraction, "cores": args.cores, "wall_s": wall,
              "returncode": proc.returncode, "jobs": jobs, "rows": rows,
              "source_rows": {n: len_parquet(s["files"]) for n, s in cfg["sources"].items()} if args.stage == "dataset" else {}}
    (workdir / "measured.json").write_text(json.dumps(record, indent=1))
    failed = [j["benchmark"] for j in jobs if j["benchmark"] and j["measured"] is None]
    print(f"F = {args.fraction:g}: {len(jobs)} jobs, snakemake {wall:.0f} s wall on {args.cores} cores, "
          f"exit {proc.returncode}; {len(failed)} without a benchmark file{': ' + ', '.join(failed[:5]) if failed else ''}")
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        sys.exit(1)


def len_parquet(path: str) -> int:
    import pyarrow.parquet as pq

    return pq.read_metadata(path).num_rows


# ------------------------------------------------------------------------ projection


def exponent(f1: float, v1: float, f2: float, v2: float) -> float | None:
    if min(v1, v2) <= 0 or f1 == f2:
        return None
    return math.log(v2 / v1) / math.log(f2 / f1)


def loglog_fit(points: list[tuple[float, float]]) -> float | None:
    pts = [(math.log(f), math.log(v)) for f, v in points if v > 0]
    if len(pts) < 2:
        return None
    mx, my = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def growth_line(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(intercept, slope) of value = a + b * F by Theil-Sen: the median of the pairwise slopes,
    then the median intercept. One outlier fraction (a cold cache, a job sharing the cores)
    moves a least-squares line; it barely moves this one. Two fractions: the line through them."""
    pairs = [(v2 - v1) / (f2 - f1) for i, (f1, v1) in enumerate(points) for f2, v2 in points[i + 1:] if f2 != f1]
    if not pairs:
        return min(v for _, v in points), 0.0
    slope = statistics.median(pairs)
    return statistics.median(v - slope * f for f, v in points), slope


MAX_EXPONENT = 3.0  # beyond it a "measured" exponent is two close fractions' noise


def project(points: list[tuple[float, float]], small: float, floor: float = 0.0) -> tuple[float, float | None]:
    """(value at F = 1, exponent used; None: linear), from two or more fractions.

    The growth line (growth_line) gives the fixed part, its intercept (interpreter start,
    imports, a model loaded once; kept within [floor, the smallest value]), and the growth per
    unit of F, its slope (never below zero: nothing shrinks with more rows). The projection is
    that line at F = 1, unless the part beyond the fixed one grows faster than linearly and that
    is a measurement: the value is not below `small`, the growing part is at least half of it
    at both of the two largest fractions, and it grew faster than linearly at each step of the
    last three; then its exponent between the two largest is used. At the sizes
    this machine can run, fixed costs dominate most jobs, and an exponent read there is noise
    that extrapolated by 100x gave absurd figures; the price is that faster-than-linear growth
    hidden behind a large fixed cost is projected linearly (too low)."""
    points = sorted(points)
    lowest = min(v for _, v in points)
    base, slope = growth_line(points)
    base = min(max(base, floor), max(floor, lowest))
    (f1, v1), (f2, v2) = points[-2], points[-1]
    grow1, grow2 = v1 - base, v2 - base
    k = exponent(f1, grow1, f2, grow2)
    # consistently_superlinear covers the last step, so k is defined and above 1 there
    if v2 >= small and grow1 >= 0.5 * v1 and grow2 >= 0.5 * v2 and consistently_superlinear(points[-3:], base):
        k = min(k, MAX_EXPONENT)
        return base + grow2 * (1 / f2) ** k, k
    return base + max(slope, 0.0), None


def consistently_superlinear(points: list[tuple[float, float]], base: float) -> bool:
    """The growing part rises faster than linearly between every two consecutive fractions
    given: one jump at the largest fraction (a job that shared the cores) is not growth."""
    steps = [exponent(fa, va - base, fb, vb - base) for (fa, va), (fb, vb) in zip(points, points[1:])]
    return all(k is not None and k > 1.0 for k in steps)


def project_rss(measured: list[dict], fractions: list[float]) -> float:
    """Peak RSS at F = 1: the line through the two largest fractions. Memory is not noisy the
    way time is (a job sharing the cores slows it, but does not grow it), but its fixed part
    changes shape at the smallest fractions (worker pools start once a split has two chunks,
    prediction and scoring blocks fill up to their size), so its growth is read where both
    fractions are past those steps. A benchmark-file reading below an interpreter's size caught
    the shell before Python started (the file samples at intervals): it is no reading. With
    fewer than two readings, the largest one stands (such jobs are tiny). Never below the
    largest reading: a flat or falling last step is a lower bound, not a shrinking job."""
    largest = max((m["rss_mb"] for m in measured), default=0.0)
    points = sorted((f, m["rss_mb"]) for f, m in zip(fractions, measured)
                    if m.get("from") == "memguard" or m["rss_mb"] >= BASE_RSS_MB)
    if len(points) < 2:
        return largest
    (f1, v1), (f2, v2) = points[-2:]
    return max(largest, v2 + max(0.0, (v2 - v1) / (f2 - f1)) * (1.0 - f2))


def job_key(job: dict) -> str:
    return job["benchmark"] or f"{job['rule']}:{','.join(job['output'][:1])}"


def schedule(jobs: list[dict], cores: int, mem_mb: float) -> float:
    """Wall time of a list schedule: a job starts when its inputs exist and its threads and
    memory fit; among the ready jobs the one with the longest path to the end goes first."""
    producer = {out: i for i, job in enumerate(jobs) for out in job["output"]}
    deps = [{producer[p] for p in job["input"] if p in producer} - {i} for i, job in enumerate(jobs)]
    children = defaultdict(set)
    for i, d in enumerate(deps):
        for j in d:
            children[j].add(i)
    tail: dict[int, float] = {}

    def longest(i: int) -> float:
        if i not in tail:
            tail[i] = jobs[i]["node_wall_s"] + max((longest(c) for c in children[i]), default=0.0)
        return tail[i]

    sys.setrecursionlimit(10000)
    for i in range(len(jobs)):
        longest(i)
    done, running, now = set(), [], 0.0
    free_cores, free_mem = cores, mem_mb
    waiting = set(range(len(jobs)))
    while waiting or running:
        ready = sorted((i for i in waiting if deps[i] <= done), key=lambda i: -tail[i])
        for i in ready:
            rss = jobs[i]["node_rss_mb"]
            # a projection past the node's memory (or not finite) runs alone: it is reported apart
            need_c, need_m = min(jobs[i]["threads"], cores), min(rss, mem_mb) if math.isfinite(rss) else mem_mb
            if need_c <= free_cores and need_m <= free_mem:
                free_cores -= need_c
                free_mem -= need_m
                waiting.discard(i)
                running.append((now + jobs[i]["node_wall_s"], i, need_c, need_m))
        if not running:
            if free_cores == cores and math.isclose(free_mem, mem_mb):
                stuck = sorted(waiting, key=lambda j: -tail[j])[0]
                raise RuntimeError(f"a job can never start: {jobs[stuck]['rule']} needs {jobs[stuck]['threads']} threads, {jobs[stuck]['node_rss_mb']} MB, waits on {len(deps[stuck] - done)}")
            free_cores, free_mem = cores, mem_mb  # float drift of the memory sums: the node is empty
            continue
        running.sort()
        end, i, c, m = running.pop(0)
        now = end
        done.add(i)
        free_cores += c
        free_mem += m
    return now


def load(stage: str, root: Path) -> list[dict]:
    records = []
    for path in sorted(root.glob(f"{stage}-*/measured.json")):
        rec = json.loads(path.read_text())
        if rec["returncode"] == 0:
            records.append(rec)
    return sorted(records, key=lambda r: r["fraction"])


def report(args) -> None:
    records = load(args.stage, args.root)
    if len(records) < 2:
        sys.exit(f"need two or more finished fractions of the {args.stage} stage under {args.root} (paper_scale.py run)")
    fractions = [r["fraction"] for r in records]
    by_job: dict[str, list] = defaultdict(list)
    template = {}
    for rec in records:
        for job in rec["jobs"]:
            if job["measured"]:
                by_job[job_key(job)].append((rec["fraction"], job["measured"], job))
                template[job_key(job)] = job
    # jobs measured at every fraction are projected; the DAG is the largest fraction's
    projected = []
    for key, series in by_job.items():
        if len(series) < 2:
            continue
        job = dict(template[key])
        job["threads"] = args.threads.get(job["rule"], job["threads"])  # what-if: the rule on more threads
        cores_here = records[-1]["cores"]
        wall, k_wall = project([(f, m["wall_s"]) for f, m, _ in series], SMALL_S)
        cpu, k_cpu = project([(f, max(m["cpu_s"], 0.01)) for f, m, _ in series], SMALL_S)
        rss = project_rss([m for _, m, _ in series], [f for f, _, _ in series])
        last = series[-1][1]
        used_here = min(job["threads"], cores_here)
        per_thread = min(1.0, (last["cpu_s"] / last["wall_s"]) / used_here) if last["wall_s"] > 0 else 1.0
        node_threads = min(job["threads"], NODE_CORES)
        job.update(series=series, proj_wall_here_s=wall, proj_cpu_s=cpu, proj_rss_mb=rss, k_wall=k_wall, k_cpu=k_cpu,
                   node_wall_s=max(wall * used_here / node_threads if per_thread < 0.5 else
                                                cpu / max(1.0, per_thread * node_threads), 0.0),
                   node_rss_mb=rss)
        projected.append(job)
    planned = records[-1]["jobs"]
    keys = {job_key(j) for j in projected}
    missing = [job_key(j) for j in planned if j["benchmark"] and job_key(j) not in keys]
    lines = print_tables(args.stage, records, fractions, projected, missing)
    if args.markdown:
        Path(args.markdown).write_text("\n".join(lines) + "\n")
        print(f"\nwritten: {args.markdown}")


def release_rows(record: dict) -> int:
    """Rows of T1-T3 together. Records written before the rows were keyed by task kept only the
    last task's splits: those count F x Table 1, as the synthetic release was written."""
    from synthetic_release import TABLE1

    if all("/" in key for key in record["rows"]):
        return sum(record["rows"].values())
    return sum(round(record["fraction"] * n) for splits in TABLE1.values() for n in splits.values())


def print_tables(stage: str, records: list, fractions: list, projected: list, missing: list) -> list[str]:
    out: list[str] = []

    def emit(line: str = "") -> None:
        print(line)
        out.append(line)

    rows = {r["fraction"]: release_rows(r) if stage == "release" else sum(r["source_rows"].values()) for r in records}
    emit(f"### {stage} stage: fractions {', '.join(f'{f:g} ({rows[f]:,} rows)' for f in fractions)}; "
         f"measured on {records[-1]['cores']} cores")
    emit()
    emit("| rule | jobs | " + " | ".join(f"F={f:g} wall / CPU s / max RSS MB" for f in fractions)
         + " | exponent (wall, CPU; last two / all) | F=1: CPU h, longest job h, max RSS GB |")
    emit("|---|---:|" + "---:|" * len(fractions) + "---|---|")
    by_rule = defaultdict(list)
    for job in projected:
        by_rule[job["rule"]].append(job)
    worst_k = []
    for rule, jobs in sorted(by_rule.items(), key=lambda kv: -sum(j["proj_cpu_s"] for j in kv[1])):
        cells = []
        totals = {}
        for f in fractions:
            ms = [m for j in jobs for ff, m, _ in j["series"] if ff == f]
            wall, cpu, rss = sum(m["wall_s"] for m in ms), sum(m["cpu_s"] for m in ms), max((m["rss_mb"] for m in ms), default=0)
            totals[f] = (wall, cpu)
            cells.append(f"{wall:,.1f} / {cpu:,.1f} / {rss:,.0f}")
        f1, f2 = fractions[-2], fractions[-1]
        kw = exponent(f1, totals[f1][0], f2, totals[f2][0])
        kc = exponent(f1, totals[f1][1], f2, totals[f2][1])
        kall = loglog_fit([(f, totals[f][1]) for f in fractions])
        if totals[f2][0] >= SMALL_S and kw is not None:
            worst_k.append((max(kw, kc or 0), rule))
        fmt = lambda k: f"{k:.2f}" if k is not None else "–"  # noqa: E731
        emit(f"| {rule} | {len(jobs)} | " + " | ".join(cells)
             + f" | {fmt(kw)}, {fmt(kc)} / {fmt(kall)} | {sum(j['proj_cpu_s'] for j in jobs) / 3600:,.2f}, "
               f"{max(j['node_wall_s'] for j in jobs) / 3600:,.2f}, {max(j['proj_rss_mb'] for j in jobs) / 1024:,.1f} |")
    emit()
    total_cpu = sum(j["proj_cpu_s"] for j in projected) / 3600
    longest = max(projected, key=lambda j: j["node_wall_s"])
    biggest = max(projected, key=lambda j: j["proj_rss_mb"])
    try:
        wall = schedule(projected, NODE_CORES, NODE_MEM_MB)
    except RuntimeError as err:  # said, not raised: the tables above stand on their own
        wall = float("nan")
        emit(f"(no node schedule: {err})")
    emit(f"Projection to F = 1 ({'the release evaluation' if stage == 'release' else 'the dataset stage on 2.05M rows'}):")
    emit(f"- total CPU: {total_cpu:,.1f} CPU-hours over {len(projected)} jobs")
    emit(f"- longest single job on the node: {longest['node_wall_s'] / 3600:,.2f} h ({job_key(longest)}, "
         f"{longest['threads']} threads)")
    emit(f"- largest peak RSS: {biggest['proj_rss_mb'] / 1024:,.1f} GB ({job_key(biggest)})")
    emit(f"- wall on one {NODE_CORES}-core, {NODE_MEM_MB // 1000} GB node (critical-path list schedule of the DAG): "
         f"{wall / 3600:,.2f} h")
    if worst_k:
        k, rule = max(worst_k)
        emit(f"- fastest-growing rule between the two largest fractions (wall or CPU, rules of ≥ {SMALL_S:g} s): "
             f"{rule}, n^{k:.2f}")
    over = sorted({j['rule'] for j in projected if j['node_wall_s'] > 7200})
    fat = sorted({j['rule'] for j in projected if j['proj_rss_mb'] > (16_000 if stage == 'release' else 32_000)})
    emit(f"- rules with a job over 2 h: {', '.join(over) or 'none'}; over the memory bar: {', '.join(fat) or 'none'}")
    if missing:
        emit(f"- not measured at every fraction (left out): {', '.join(missing[:8])}")
    emit()
    for line in resources_at_full_scale(projected):
        emit(line)
    return out


MEM_MARGIN, TIME_MARGIN = 1.25, 1.5  # what a cluster job asks for, over the projection


def resource_group(job: dict) -> str:
    """A rule, or a rule and the detector (feature set, test set) its benchmark file names:
    results/benchmarks/<rule>/<task>/<name>.tsv."""
    parts = Path(job["benchmark"]).with_suffix("").parts if job["benchmark"] else ()
    return f"{job['rule']} {parts[-1]}" if len(parts) >= 5 else job["rule"]


def resources_at_full_scale(projected: list) -> list[str]:
    """What each rule's jobs (each detector's, for the per-detector rules) should ask a cluster
    for at F = 1: the largest projected peak RSS over its jobs x 1.25, rounded up to 1,000 MB,
    and the longest projected wall on the node x 1.5, rounded up to 30 minutes."""
    groups: dict[str, list] = defaultdict(list)
    for job in projected:
        groups[resource_group(job)].append(job)
    lines = [f"Resources at F = 1 (largest projected peak RSS x {MEM_MARGIN:g} up to 1,000 MB; longest projected "
             f"wall on the node x {TIME_MARGIN:g} up to 30 min):", "",
             "| rule (detector or feature set) | jobs | projected peak RSS MB | mem_mb | projected wall h | runtime (min) |",
             "|---|---:|---:|---:|---:|---:|"]

    def ask(value: float, margin: float, step: float, least: float) -> str:
        return f"{max(least, math.ceil(value * margin / step) * step):,.0f}" if math.isfinite(value) else "–"

    for key, jobs in sorted(groups.items(), key=lambda kv: -max(j["node_wall_s"] for j in kv[1])):
        rss = max(j["proj_rss_mb"] for j in jobs)
        wall = max(j["node_wall_s"] for j in jobs)
        lines.append(f"| {key} | {len(jobs)} | {rss:,.0f} | {ask(rss, MEM_MARGIN, 1000, 1000)} | {wall / 3600:,.2f} | "
                     f"{ask(wall / 60, TIME_MARGIN, 30, 30)} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="make the synthetic data at one fraction and run the workflow on it")
    r.add_argument("--fraction", type=float, required=True, help="share of the paper's rows, e.g. 0.005")
    r.add_argument("--stage", choices=["release", "dataset"], default="release")
    r.add_argument("--cores", type=int, default=2)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--workdir", type=Path, default=None)
    r.add_argument("--keep", action="store_true", help="keep an earlier results folder (resume)")
    p = sub.add_parser("report", help="growth exponents and the projection to F = 1 from the finished runs")
    p.add_argument("--stage", choices=["release", "dataset"], default="release")
    p.add_argument("--root", type=Path, default=ROOT)
    p.add_argument("--markdown", help="also write the tables to this file")
    p.add_argument("--threads", action="append", default=[], metavar="RULE=N",
                   help="project RULE's jobs on N threads instead of the threads they were planned with "
                        "(its measured per-thread efficiency kept)")
    args = parser.parse_args(argv)
    if args.cmd == "report":
        try:
            args.threads = {rule: int(n) for rule, n in (item.split("=", 1) for item in args.threads)}
        except ValueError:
            parser.error("--threads takes RULE=N, e.g. --threads normalize=8")
    if args.cmd == "run":
        if not 0 < args.fraction <= 1:
            parser.error("--fraction must be in (0, 1]")
        run(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
