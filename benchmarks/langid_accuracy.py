"""Accuracy of language identification (aicd.normalize.langid) with per-language recall and
the confusion of every miss, on:

  - the labelled trial rows (Python, C++, Java; human and LLM code);
  - human code in all nine languages gathered from this machine (the demo config's
    `local_code` roots), for several gathering seeds.

  python benchmarks/langid_accuracy.py [--per-language 200] [--seeds 1 2 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow"))
from features_throughput import DEFAULT_TRIAL  # noqa: E402


def show(name: str, result: dict, seconds: float) -> None:
    print(f"{name}: {result['n']:,} rows, accuracy {result['accuracy']:.4f} "
          f"({seconds / max(1, result['n']) * 1000:.1f} ms/row)")
    print("  recall: " + ", ".join(f"{lang} {v['recall']:.3f} (n={v['n']})" for lang, v in result["per_language"].items()))
    print("  misses: " + (", ".join(f"{k}: {n}" for k, n in result["misses"].items()) or "none"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-language", type=int, default=200)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--trial", type=Path, default=DEFAULT_TRIAL)
    args = parser.parse_args()
    import pandas as pd
    import yaml

    from aicd.normalize.langid import evaluate
    from aicd.schema import canonical_language
    from aicd.sources.gather import gather

    if args.trial.is_file():
        raw = pd.read_parquet(args.trial, columns=["code", "language"])
        started = time.perf_counter()
        result = evaluate(raw["code"].tolist(), raw["language"].map(canonical_language).tolist())
        show("trial", result, time.perf_counter() - started)
    roots = yaml.safe_load((HERE.parent / "config" / "demo.yaml").read_text())["sources"]["local_code"]["gather"]["roots"]
    for seed in args.seeds:
        rows, report = gather({"roots": roots, "per_language": args.per_language}, seed=seed)
        started = time.perf_counter()
        result = evaluate(rows["code"].tolist(), rows["language"].tolist())
        show(f"installed code, seed {seed}", result, time.perf_counter() - started)
        if report["languages_without_samples"]:
            print(f"  (no files here for {report['languages_without_samples']})")


if __name__ == "__main__":
    main()
