"""A finished run's critical path, from its own records: when each job started and finished
(snakemake's log: .snakemake/log/*.snakemake.log), its CPU seconds (the memory guard's last line
in each job's log, RESULTS/logs/**: every process of the job summed), the cores in use over time,
and how long the run had fewer jobs than cores.

On a machine other work shares, wall times stretch but CPU seconds barely move: compare runs by
their CPU, and read the timeline for the order jobs ran in (what waited for what).

  python benchmarks/demo_timeline.py --log .snakemake/log/LATEST.snakemake.log [--results results] [--cores 2]
"""

from __future__ import annotations

import argparse
import re
from datetime import datetime
from pathlib import Path

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$")
GUARD = re.compile(r"memguard: job (\S+) (.*?): peak memory ([\d,]+) MB .*CPU ([\d.]+) s")


def jobs_of(log: Path) -> list[dict]:
    jobs, ends, stamp, current = {}, {}, None, None
    for line in log.read_text().splitlines():
        m = STAMP.match(line)
        if m:
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
            continue
        m = re.match(r"^(?:local)?rule (\w+):", line)
        if m:
            current = {"rule": m.group(1), "start": stamp, "wildcards": "", "threads": 1}
            continue
        m = re.match(r"^\s+jobid: (\d+)", line)
        if m and current is not None:
            jobs[m.group(1)] = current
        m = re.match(r"^\s+wildcards: (.*)", line)
        if m and current is not None:
            current["wildcards"] = m.group(1)
        m = re.match(r"^\s+threads: (\d+)", line)
        if m and current is not None:
            current["threads"] = int(m.group(1))
        m = re.match(r"^Finished jobid: (\d+)", line)
        if m:
            ends[m.group(1)] = stamp
    for jobid, job in jobs.items():
        job["end"] = ends.get(jobid)
    return [j for j in jobs.values() if j["start"] and j["end"]]


def cpu_of(results: Path) -> dict:
    """(rule, wildcard values joined by spaces) -> CPU seconds, from the memory guard's lines."""
    out = {}
    for path in results.rglob("*.log"):
        for m in GUARD.finditer(path.read_text(errors="replace")):
            out[(m.group(1), m.group(2).strip())] = float(m.group(4))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("--results", type=Path, default=Path("results"))
    p.add_argument("--cores", type=int, default=2)
    args = p.parse_args(argv)
    jobs = jobs_of(args.log)
    cpu = cpu_of(args.results)
    t0 = min(j["start"] for j in jobs)
    t1 = max(j["end"] for j in jobs)
    print("| start s | end s | wall s | CPU s | threads | job |\n|---:|---:|---:|---:|---:|---|")
    for j in sorted(jobs, key=lambda j: (j["start"], j["end"])):
        values = " ".join(v.split("=", 1)[1] for v in j["wildcards"].split(", ") if "=" in v)
        seconds = cpu.get((j["rule"], values))
        print(f"| {(j['start'] - t0).seconds} | {(j['end'] - t0).seconds} | {(j['end'] - j['start']).seconds} | "
              f"{'' if seconds is None else f'{seconds:.1f}'} | {j['threads']} | {j['rule']} {values} |")
    span = (t1 - t0).seconds
    busy = [sum(j["threads"] for j in jobs if (j["start"] - t0).seconds <= s < (j["end"] - t0).seconds)
            for s in range(span)]
    under = sum(1 for b in busy if b < args.cores)
    print(f"\n{len(jobs)} jobs in {span} s; CPU of the jobs with a memory guard: {sum(cpu.values()):.0f} s; "
          f"seconds with fewer threads reserved than the {args.cores} cores: {under} ({under / max(span, 1):.0%})")


if __name__ == "__main__":
    main()
