"""Throughput and peak memory of the dataset stage's per-row work, single process (= per core):

  - normalization + Table 3 filters + MinHash signatures (aicd.normalize.rows.normalize_table
    with threads=1) on --rows rows (the trial programs cycled, each copy made unique);
  - language identification alone, for rows that arrive without a language;
  - one 2 MB row without a language (a trial program repeated): the line filters reject it
    before language identification would parse it with every grammar.

Each step runs in a fresh subprocess, so its peak RSS is its own.

  python benchmarks/dataset_throughput.py [--rows 100000] [--langid-rows 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow"))
sys.path.insert(0, str(HERE))
from features_throughput import DEFAULT_TRIAL, run_in_child  # noqa: E402

WORKDIR = Path("/tmp/aicd-dataset-bench")


def load_rows(trial: Path, rows: int):
    """The trial programs cycled to `rows` rows, each made unique by a trailing comment line
    (so every row is parsed, filtered and hashed as the real program would be)."""
    from aicd.data.schema import canonical_language

    df = pd.read_parquet(trial, columns=["code", "language"])
    langs = df["language"].map(canonical_language).tolist()
    codes = df["code"].tolist()
    out_code, out_lang = [], []
    for i in range(rows):
        lang = langs[i % len(df)]
        mark = "#" if lang == "Python" else "//"
        out_code.append(f"{codes[i % len(df)]}\n{mark} copy {i}\n")
        out_lang.append(lang)
    return out_code, out_lang


def pool_step() -> dict:
    """The pool job on the four normalized tables the normalize step left: read metadata and
    signatures, report, deduplicate, copy surviving code a table at a time."""
    from aicd.normalize.__main__ import main as normalize_main
    from aicd.outputs import Outputs

    tables = sorted(str(p) for p in WORKDIR.glob("normalized_*.parquet"))
    started = time.perf_counter()
    pool_file = Outputs(WORKDIR).pool()  # the pool stage writes it in the folder it is given
    normalize_main(["pool", "--tables", *tables, "--outdir", str(Path(pool_file).parent)])
    seconds = time.perf_counter() - started
    rows = sum(len(pd.read_parquet(t, columns=["id"])) for t in tables)
    pool = len(pd.read_parquet(pool_file, columns=["id"]))
    return {"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds, "pool_rows": pool,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def large_step(trial: Path, size: int = 2_000_000) -> dict:
    from aicd.normalize.rows import normalize_table

    code = pd.read_parquet(trial, columns=["code"])["code"].iat[0] + "\n"
    big = code * (size // len(code) + 1)
    table = pd.DataFrame({"id": ["big"], "code": [big], "label": ["human"]})
    started = time.perf_counter()
    _, report = normalize_table(table, "bench", threads=1, progress=False)
    return {"rows": 1, "seconds": time.perf_counter() - started, "bytes": len(big.encode()),
            "rejected": report["rejected"]}


def step(kind: str, trial: Path, rows: int) -> dict:

    codes, langs = load_rows(trial, rows)
    table = pd.DataFrame({"id": [f"r{i}" for i in range(len(codes))], "code": codes, "language": langs,
                          "label": ["machine" if i % 2 else "human" for i in range(len(codes))]})
    started = time.perf_counter()
    if kind == "normalize":
        from aicd.normalize.rows import normalize_table

        out, report = normalize_table(table, "bench", threads=1, progress=False)
        extra = {"kept": report["kept"], "rejected": report["rejected"]}
        WORKDIR.mkdir(parents=True, exist_ok=True)
        for k, part in enumerate(np.array_split(np.arange(len(out)), 4)):  # four tables for the pool step
            out.iloc[part].to_parquet(WORKDIR / f"normalized_{k}.parquet", index=False)
    else:
        from aicd.normalize.langid import identify_language

        right = sum(identify_language(c)[0] == lang for c, lang in zip(table["code"], table["language"]))
        extra = {"accuracy": right / len(table)}
    seconds = time.perf_counter() - started
    return {"rows": len(table), "seconds": seconds, "rows_per_s": len(table) / seconds,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--langid-rows", type=int, default=10_000)
    parser.add_argument("--trial", type=Path, default=DEFAULT_TRIAL)
    parser.add_argument("--step", choices=["normalize", "langid", "pool", "large"], help=argparse.SUPPRESS)
    parser.add_argument("--scale", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        result = {"pool": pool_step, "large": lambda: large_step(args.trial)}.get(
            args.step, lambda: step(args.step, args.trial, args.scale))()
        print(json.dumps(result))
        return
    if not args.trial.is_file():
        sys.exit(f"trial data not found at {args.trial}; pass --trial")
    print(f"machine: {os.cpu_count()} cores; one process per step")
    for kind, rows in (("normalize", args.rows), ("pool", args.rows), ("langid", args.langid_rows)):
        cmd = [sys.executable, __file__, "--step", kind, "--trial", str(args.trial), "--scale", str(rows)]
        r = run_in_child(cmd)
        what = {"normalize": "normalize+filters+MinHash", "pool": "pool job (dedup, reports, copy)",
                "langid": "language identification"}[kind]
        detail = {"normalize": lambda r: f"kept {r['kept']:,}, rejected {r['rejected']}",
                  "pool": lambda r: f"{r['pool_rows']:,} rows in the pool",
                  "langid": lambda r: f"accuracy {r['accuracy']:.4f}"}[kind](r)
        print(f"{what:26s} {r['rows']:>8,} rows {r['seconds']:7.1f}s ({r['rows_per_s']:7,.0f} rows/s/core); "
              f"peak RSS {r['peak_rss_mb']:,.0f} MB; {detail}")
    r = run_in_child([sys.executable, __file__, "--step", "large", "--trial", str(args.trial)])
    print(f"one {r['bytes'] / 1e6:.1f} MB row without a language: normalized in {r['seconds']:.2f}s, "
          f"rejected {r['rejected']}")


if __name__ == "__main__":
    main()
