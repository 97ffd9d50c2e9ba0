"""Accuracy of language identification (aicd.normalize.langid) with per-language recall and
the confusion of every miss, on:

  - the labelled trial rows (Python, C++, Java; human and LLM code);
  - human code in all nine languages gathered from this machine (the demo config's
    `local_code` roots), for several gathering seeds.

  python benchmarks/langid_accuracy.py [--per-language 200] [--seeds 1 2 3]

Each set is identified twice in the same process: as the workflow does it (parsing stopped
once the answer is settled) and exhaustively (every shortlisted grammar parsed), with the time
per row of each and how many answers differ (none should).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow"))
from features_throughput import DEFAULT_TRIAL  # noqa: E402

EXHAUSTIVE = {"decisive": float("inf")}


def show(name: str, result: dict, seconds: float) -> None:
    print(f"{name}: {result['n']:,} rows, accuracy {result['accuracy']:.4f} "
          f"({seconds / max(1, result['n']) * 1000:.1f} ms/row)")
    print("  recall: " + ", ".join(f"{lang} {v['recall']:.3f} (n={v['n']})" for lang, v in result["per_language"].items()))
    print("  misses: " + (", ".join(f"{k}: {n}" for k, n in result["misses"].items()) or "none"))


def both_ways(name: str, codes: list, languages: list) -> None:
    """The workflow's settings, then the exhaustive ones, on the same rows."""
    from aicd.normalize.langid import evaluate, identify_language

    started = time.perf_counter()
    show(f"{name} (workflow settings)", evaluate(codes, languages), time.perf_counter() - started)
    started = time.perf_counter()
    show(f"{name} (exhaustive: every shortlisted grammar parsed)", evaluate(codes, languages, **EXHAUSTIVE),
         time.perf_counter() - started)
    differ = sum(identify_language(c)[0] != identify_language(c, **EXHAUSTIVE)[0] for c in codes)
    print(f"  answers that differ between the two: {differ} of {len(codes):,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-language", type=int, default=200)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--trial", type=Path, default=DEFAULT_TRIAL)
    args = parser.parse_args()
    import pandas as pd
    import yaml
    from aicd.data.schema import canonical_language
    from aicd.sources.gather import gather

    if args.trial.is_file():
        raw = pd.read_parquet(args.trial, columns=["code", "language"])
        both_ways("trial", raw["code"].tolist(), raw["language"].map(canonical_language).tolist())
    roots = yaml.safe_load((HERE.parent / "config" / "demo.yaml").read_text())["sources"]["local_code"]["gather"]["roots"]
    for seed in args.seeds:
        rows, report = gather({"roots": roots, "per_language": args.per_language}, seed=seed)
        both_ways(f"installed code, seed {seed}", rows["code"].tolist(), rows["language"].tolist())
        if report["languages_without_samples"]:
            print(f"  (no files here for {report['languages_without_samples']})")


if __name__ == "__main__":
    main()
