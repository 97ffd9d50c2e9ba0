"""Cost of the bootstrap intervals on macro-F1 (bar: < 1 s per detector for a
100,000-row test set): the 95% interval of one detector's macro-F1 (1,000 resamples), the same
through classification_scores (the score JSON's whole computation), and the paired test of two
detectors. Synthetic labels, --classes classes, ~80% accuracy.

  python benchmarks/bootstrap_ci.py [--rows 100000] [--classes 4] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))


def timed(fn, repeats=3):
    best, value = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()

    import numpy as np
    from aicd.scoring.bootstrap import macro_f1_interval, paired_test
    from aicd.scoring.metrics import classification_scores

    rng = np.random.default_rng(0)
    labels = ["human", "machine", "hybrid", "adversarial"][:args.classes] + [f"c{i}" for i in range(4, args.classes)]
    gold = rng.choice(labels, args.rows).astype(object)
    noisy = lambda acc: np.where(rng.random(args.rows) < acc, gold, rng.choice(labels, args.rows)).astype(object)  # noqa: E731
    a, b = noisy(0.8), noisy(0.78)
    t_ci, ci = timed(lambda: macro_f1_interval(gold, a, labels, args.resamples, 0))
    t_all, scores = timed(lambda: classification_scores(gold, a, labels, args.resamples, 0))
    t_pair, pair = timed(lambda: paired_test(gold, a, b, labels, args.resamples, 0))
    print(f"{args.rows:,} rows, {args.classes} classes, {args.resamples} resamples (best of 3):")
    print(f"  macro-F1 interval            {t_ci:.3f} s   {scores['macro_f1']:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]")
    print(f"  classification_scores (all)  {t_all:.3f} s   (per-class metrics, confusion matrix and the interval)")
    print(f"  paired test A vs B           {t_pair:.3f} s   diff {pair['difference']:+.4f} "
          f"[{pair['difference_ci'][0]:+.4f}, {pair['difference_ci'][1]:+.4f}], p {pair['p_value']:.4f}")


if __name__ == "__main__":
    main()
