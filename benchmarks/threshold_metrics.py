"""Seconds to compute a score file's threshold metrics (AUROC, and at 1% and 5% FPR the TPR and
realised FPR with both intervals, the threshold's uncertainty included) at the paper's scale:
a million test rows, 50,000 validation human rows, breakdowns by subset (4), language (9),
domain (3) and generator (80), 1,000 resamples.

  python benchmarks/threshold_metrics.py [--rows 1000000] [--validation 50000]"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from aicd.scoring.bootstrap import RESAMPLES
from aicd.scoring.thresholds import FPRS, threshold_metrics


def tables(rows: int, validation: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    human = rng.random(rows) < 0.5
    machine = 1 / (1 + np.exp(-(rng.normal(0, 1, rows) + np.where(human, 0, 1.5))))
    test = pd.DataFrame({"gold": np.where(human, "human", "machine"), "score_human": (1 - machine).astype(np.float32),
                         "language": rng.choice(list("ABCDEFGHI"), rows), "subset": rng.choice(list("WXYZ"), rows),
                         "domain": rng.choice(list("abc"), rows),
                         "generator": np.where(human, "human", rng.choice([f"g{i}" for i in range(80)], rows))})
    val = 1 / (1 + np.exp(-rng.normal(0, 1, validation)))
    return test, pd.DataFrame({"id": np.arange(validation).astype(str), "domain": "a", "gold": "human",
                               "machine_score": val})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--validation", type=int, default=50_000)
    args = parser.parse_args()
    test, val = tables(args.rows, args.validation)
    started = time.perf_counter()
    threshold_metrics(test, val, FPRS, ("subset", "language", "domain", "generator"), RESAMPLES, 0)
    print(f"{args.rows:,} test rows, {args.validation:,} validation humans: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
