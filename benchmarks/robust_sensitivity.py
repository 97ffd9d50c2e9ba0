"""How much an out-of-distribution score depends on WHICH training rows a detector saw.

For each split of aicd.splits.ood, fits the detector on --runs seeded, label-stratified
subsamples (--fraction of the split's train rows) and prints the test macro-F1 x 100 of each
run with their mean, standard deviation and range; --split-seeds repeats the full-train fit over
several split seeds (the seed decides which human rows go to validation and, for the
in-distribution and leave-one-family-out splits, which rows are tested; it also seeds the
detector). A bar that sits inside this spread
cannot be met or missed by a design change that moves the score by less (BENCHMARKS.md, robust detector).

  python benchmarks/robust_sensitivity.py [--detector robust] [--splits lolo:Python,codeaid]
                                          [--runs 10] [--fraction 0.9] [--split-seeds 0,4]
Detectors: the names of benchmarks/robust_ood.py. Single-threaded (set before numpy loads).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aicd.splits import ood  # noqa: E402
from robust_ood import CODEAID, DETECTORS, TRIAL, AstCache, run_one  # noqa: E402

DEFAULT_SPLITS = "lolo:Python,lolo:Java,lolo:C++,lofo:BigCode,codeaid"


def subsample(train: pd.DataFrame, fraction: float, seed: int) -> pd.DataFrame:
    """`fraction` of each label's rows, seeded."""
    return train.groupby("label", group_keys=False).sample(frac=fraction, random_state=seed)


def print_spread(name: str, scores: list[float]) -> None:
    s = 100 * np.asarray(scores)
    print(f"  {name:18s} mean {s.mean():5.1f}  sd {s.std():4.1f}  range {s.min():5.1f}-{s.max():5.1f}  | "
          + " ".join(f"{x:.1f}" for x in s), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trial", default=str(TRIAL))
    ap.add_argument("--codeaid", default=str(CODEAID))
    ap.add_argument("--detector", default="robust", choices=sorted(DETECTORS))
    ap.add_argument("--splits", default=DEFAULT_SPLITS, help=f"split names (default: {DEFAULT_SPLITS})")
    ap.add_argument("--runs", type=int, default=10, help="subsamples per split (default 10; 0: only --split-seeds)")
    ap.add_argument("--fraction", type=float, default=0.9, help="share of train rows per subsample (default 0.9)")
    ap.add_argument("--seed", type=int, default=0, help="split seed of the subsample runs (default 0)")
    ap.add_argument("--split-seeds", default="", help="also fit on the full train of these split seeds, e.g. 0,1,2,3,4,2026")
    args = ap.parse_args(argv)
    if not 0 < args.fraction <= 1:
        ap.error(f"--fraction must be in (0, 1], got {args.fraction}")
    if args.runs < 0:
        ap.error(f"--runs must be >= 0, got {args.runs}")
    try:
        seeds = [int(s) for s in args.split_seeds.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--split-seeds takes integers separated by commas, got {args.split_seeds!r}")
    if args.runs == 0 and not seeds:
        ap.error("nothing to do: --runs 0 and no --split-seeds")
    names = [s for s in args.splits.split(",") if s]
    if not Path(args.trial).is_file():
        ap.error(f"{args.trial} not found: this benchmark reads the shared trial data (../shared/data)")
    if "codeaid" in names and not Path(args.codeaid).is_file():
        ap.error(f"{args.codeaid} not found: the codeaid split needs the shared CodeAid data (or leave it out of --splits)")

    trial = ood.trial_samples(pd.read_parquet(args.trial))
    codeaid = ood.codeaid_samples(pd.read_parquet(args.codeaid)) if Path(args.codeaid).is_file() else None
    ast_cache = AstCache()

    def chosen(seed: int) -> dict:
        splits = ood.all_splits(trial, codeaid, seed=seed)
        unknown = sorted(set(names) - set(splits))
        if unknown:
            ap.error(f"unknown split(s) {unknown}; known: {', '.join(splits)}")
        return {name: splits[name] for name in names}

    if args.runs:
        print(f"{args.detector}: {args.runs} subsamples of {args.fraction:.0%} of train, split seed {args.seed}")
        for name, tables in chosen(args.seed).items():
            print_spread(name, [run_one(args.detector, dict(tables, train=subsample(tables["train"], args.fraction, run)),
                                        args.seed, ast_cache)["macro_f1"] for run in range(args.runs)])

    if seeds:
        print(f"{args.detector}: full train, split seeds {seeds}")
        by_split: dict[str, list[float]] = {name: [] for name in names}
        for seed in seeds:
            for name, tables in chosen(seed).items():
                by_split[name].append(run_one(args.detector, tables, seed, ast_cache)["macro_f1"])
        for name, scores in by_split.items():
            print_spread(name, scores)


if __name__ == "__main__":
    main()
