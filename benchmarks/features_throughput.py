"""Throughput and peak memory of the feature extractors.

Measures, each step in a fresh subprocess (so its peak RSS is its own):
  - TF-IDF (paper settings) + TruncatedSVD(500): fit_transform on the train rows, transform on all;
  - tree-sitter AST features: extraction on all rows;
on the demo data (the shared trial subset) and on a synthetic scale-up to --rows rows (trial
programs with identifiers renamed per copy, so the vocabulary keeps growing like real data).
Samples/s are per core: every step runs single-threaded (OMP/BLAS threads pinned to 1).

  python benchmarks/features_throughput.py [--rows 100000] [--trial PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
DEFAULT_TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"
SINGLE_THREAD = dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1")


def load_rows(trial: Path, rows: int | None):
    import numpy as np
    import pandas as pd

    df = pd.read_parquet(trial)[["code", "language"]]
    if rows is None:
        return df["code"].tolist(), df["language"].tolist()
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(df), size=rows)
    ident = re.compile(r"\b([a-z_][a-z0-9_]{2,})\b")
    codes, langs = [], []
    for n, i in enumerate(picks):
        suffix = f"_{n % 5000}"
        codes.append(ident.sub(lambda m, suffix=suffix: m.group(1) + suffix if hash(m.group(1)) % 3 == 0 else m.group(1), df["code"].iat[i]))
        langs.append(df["language"].iat[i])
    return codes, langs


def step(kind: str, trial: Path, rows: int | None) -> dict:
    codes, langs = load_rows(trial, rows)
    n = len(codes)
    n_train = int(n * 0.7)
    started = time.perf_counter()
    if kind == "tfidf":
        from aicd.features.tfidf import TfidfSvdFeaturizer

        f = TfidfSvdFeaturizer(seed=0)
        f.fit_transform(codes[:n_train])
        fit_s = time.perf_counter() - started
        t = time.perf_counter()
        f.transform(codes)
        transform_s = time.perf_counter() - t
        out = {"fit_rows": n_train, "fit_s": fit_s, "fit_rows_per_s": n_train / fit_s,
               "transform_rows": n, "transform_s": transform_s, "transform_rows_per_s": n / transform_s}
    else:
        from aicd.features.ast_features import extract

        for c, lang in zip(codes, langs):
            extract(c, lang)
        s = time.perf_counter() - started
        out = {"rows": n, "seconds": s, "rows_per_s": n / s}
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_in_child(cmd: list[str]) -> dict:
    """Run one step in a fresh single-threaded process (its peak RSS is its own); its last
    stdout line is a JSON object of figures."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **SINGLE_THREAD})
    if proc.returncode != 0:
        sys.exit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the synthetic scale-up")
    parser.add_argument("--trial", type=Path, default=DEFAULT_TRIAL)
    parser.add_argument("--step", choices=["tfidf", "ast"], help=argparse.SUPPRESS)
    parser.add_argument("--scale", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(step(args.step, args.trial, args.scale)))
        return
    if not args.trial.is_file():
        sys.exit(f"trial data not found at {args.trial}; pass --trial")
    print(f"machine: {os.cpu_count()} cores; single-threaded steps; trial data {args.trial.name}")
    for label, scale in (("demo data (5,906 rows)", None), (f"synthetic {args.rows:,} rows", args.rows)):
        for kind in ("tfidf", "ast"):
            cmd = [sys.executable, __file__, "--step", kind, "--trial", str(args.trial)]
            if scale:
                cmd += ["--scale", str(scale)]
            r = run_in_child(cmd)
            if kind == "tfidf":
                print(f"{label:28s} TF-IDF+SVD  fit {r['fit_rows']:>7,} rows {r['fit_s']:7.1f}s "
                      f"({r['fit_rows_per_s']:8,.0f} rows/s/core); transform {r['transform_rows']:>7,} rows "
                      f"{r['transform_s']:6.1f}s ({r['transform_rows_per_s']:8,.0f} rows/s/core); peak RSS {r['peak_rss_mb']:,.0f} MB")
            else:
                print(f"{label:28s} AST         {r['rows']:>7,} rows {r['seconds']:7.1f}s "
                      f"({r['rows_per_s']:8,.0f} rows/s/core); peak RSS {r['peak_rss_mb']:,.0f} MB")


if __name__ == "__main__":
    main()
