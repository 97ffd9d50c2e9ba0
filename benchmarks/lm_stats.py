"""Cost and agreement of the causal-LM token statistics (aicd.lm.stats) on the trial data.

1. Throughput: `TokenStats(model).compute(rows)` over the same seeded sample of trial rows at
   every combination of dtype (float32, bfloat16), window (128, 256), batch size (1, 8, 16) and
   torch threads (1, 2): rows/s (wall) and CPU-seconds per row (resource.getrusage of this
   process, user + system: on a machine shared with other jobs the wall time stretches with the
   load, the CPU time much less; with 2 threads it includes the threads' spin-waits). Model
   loading and one warm-up batch are outside the timing.
2. Agreement: every criterion's AUROC (human vs machine, machine the positive class, the score as
   `criterion` returns it: higher = machine) on a fixed seeded sample of `--auroc-rows` trial rows,
   once per dtype, with the largest score difference between the two dtypes.

Labels come from the `generator` column ("Human" = human): in the trial file `label == 1` means
human, the opposite of the task's published map.

  python benchmarks/lm_stats.py --model DIR [--rows 32] [--auroc-rows 400] [--seed 2026]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
DEFAULT_TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(stats, texts) -> tuple[np.ndarray, float, float]:
    """(statistics, wall s, CPU s) of one compute() after a warm-up batch."""
    stats.compute(texts[:stats.batch_size])
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = stats.compute(texts)
    return out, time.perf_counter() - wall, cpu_seconds() - cpu


def throughput(model: str, texts: list[str]) -> None:
    from aicd.lm.stats import TokenStats
    print(f"\n### Throughput: {len(texts)} trial rows per cell\n")
    print("| dtype | window | batch | threads | mean tokens scored | rows/s (wall) | CPU-s/row | load avg (1 min) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for dtype in ("float32", "bfloat16"):
        for window in (128, 256):
            for batch in (1, 8, 16):
                for threads in (1, 2):
                    stats = TokenStats(model, window=window, batch_size=batch, device="cpu", dtype=dtype,
                                       threads=threads)
                    out, wall, cpu = timed(stats, texts)
                    print(f"| {dtype} | {window} | {batch} | {threads} | {np.nanmean(out[:, 0]):.1f} | "
                          f"{len(texts) / wall:.2f} | {cpu / len(texts):.3f} | {os.getloadavg()[0]:.1f} |", flush=True)
                    del stats


def agreement(model: str, texts: list[str], machine: np.ndarray, window: int, batch: int, threads: int) -> None:
    from aicd.lm.stats import CRITERIA, TokenStats, criterion
    from sklearn.metrics import roc_auc_score
    scores, cost = {}, {}
    for dtype in ("float32", "bfloat16"):
        stats = TokenStats(model, window=window, batch_size=batch, device="cpu", dtype=dtype, threads=threads)
        out, wall, cpu = timed(stats, texts)
        scores[dtype] = {name: criterion(name, out) for name in CRITERIA}
        cost[dtype] = (len(texts) / wall, cpu / len(texts), int(np.isnan(out[:, 0]).sum()))
        del stats
    print(f"\n### AUROC, {len(texts)} seeded trial rows ({int(machine.sum())} machine, {int((~machine).sum())} human), "
          f"window {window}, batch {batch}, {threads} thread{'s' if threads != 1 else ''}\n")
    for dtype, (rate, per_row, nan) in cost.items():
        print(f"- {dtype}: {rate:.2f} rows/s (wall), {per_row:.3f} CPU-s/row, {nan} rows too short to score")
    print("\n| criterion | AUROC float32 | AUROC bfloat16 | max abs score difference | scores |")
    print("|---|---:|---:|---:|---|")
    for name in CRITERIA:
        a, b = scores["float32"][name], scores["bfloat16"][name]
        ok = np.isfinite(a) & np.isfinite(b)
        aurocs = [roc_auc_score(machine[ok], s[ok]) for s in (a, b)]
        print(f"| {name} | {aurocs[0]:.4f} | {aurocs[1]:.4f} | {np.abs(a[ok] - b[ok]).max():.4f} | "
              f"{int(ok.sum())} of {len(texts)} finite |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="causal LM folder (save_pretrained) or Hub id")
    parser.add_argument("--trial", default=str(DEFAULT_TRIAL))
    parser.add_argument("--rows", type=int, default=32, help="rows per throughput cell")
    parser.add_argument("--auroc-rows", type=int, default=400)
    parser.add_argument("--auroc-window", type=int, default=256)
    parser.add_argument("--auroc-batch", type=int, default=8)
    parser.add_argument("--auroc-threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args()

    import torch
    import transformers
    from aicd.lm.stats import cpu_has_bf16
    df = pd.read_parquet(args.trial).sort_values("row_id")
    print(f"model {args.model}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, native bfloat16: "
          f"{cpu_has_bf16()}; torch {torch.__version__}, transformers {transformers.__version__}; load average at "
          f"start {os.getloadavg()[0]:.1f} (a machine shared with other jobs: compare CPU-s/row, and cells within "
          "one run)")
    if not args.skip_throughput:
        sample = df.sample(args.rows, random_state=args.seed)
        throughput(args.model, sample["code"].tolist())
    sample = df.sample(args.auroc_rows, random_state=args.seed + 1)
    agreement(args.model, sample["code"].tolist(), (sample["generator"] != "Human").to_numpy(),
              args.auroc_window, args.auroc_batch, args.auroc_threads)


if __name__ == "__main__":
    main()
