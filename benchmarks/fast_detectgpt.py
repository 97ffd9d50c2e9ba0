"""Fast-DetectGPT cost on CPU: the analytic criterion vs one batched forward pass of its scoring
model over the same samples (the criterion needs no perturbation sampling, so it should cost
little more than the forward pass). Prints, for the same length-sorted, already tokenised
batches at the window:

1. forward only: `model(input_ids, attention_mask).logits` under no_grad, samples/s;
2. forward + criterion as the detector computes it (backbone, then the LM head over the real
   positions in chunks, each reduced to the discrepancy while in cache), samples/s, and the ratio
   of the two times (the bar: at most 1.2); the unfused variant (full logits, then the criterion)
   for comparison;
3. the detector's whole `criteria(texts)` path (tokenising included), samples/s.

Each is timed `--repeats` times, alternating, and the fastest run is kept (the machine is shared).
The scoring model: `--model` (a causal LM folder or Hub id), else a small causal LM trained here
with aicd.lm's demo settings on the trial data's human code.

  python benchmarks/fast_detectgpt.py [--model DIR] [--window 256] [--rows 256] [--threads 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
DEFAULT_TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="causal LM folder or Hub id (default: train the demo's small LM here)")
    parser.add_argument("--trial", default=str(DEFAULT_TRIAL))
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    import torch
    from aicd.detectors.fast_detectgpt import FastDetectGPTDetector, criterion_from_logits

    torch.set_num_threads(args.threads)
    df = pd.read_parquet(args.trial)
    human = df["generator"] == "Human"
    model_dir = args.model
    if model_dir is None:
        from aicd.lm.train import save, train
        tmp = tempfile.mkdtemp(prefix="fdg_bench_")
        model, tok, report = train(df.loc[human, "code"].sample(1500, random_state=args.seed).tolist(),
                                   {"window": args.window}, seed=args.seed, threads=args.threads)
        save(model, tok, report, f"{tmp}/lm")
        model_dir = f"{tmp}/lm"
        print(f"trained the demo-size causal LM: {report['parameters']:,} parameters, {report['steps']} steps, "
              f"{report['train_seconds']} s")
    texts = df["code"].sample(args.rows, random_state=args.seed + 1).tolist()
    det = FastDetectGPTDetector(seed=0, threads=args.threads, model=model_dir, window=args.window,
                                batch_size=args.batch_size)
    det.load_models()
    ids = det.encode(texts)
    batches = list(det.batches(ids))
    tokens = sum(len(x) for x in ids)
    lm = det.model_
    print(f"model {model_dir}: {sum(p.numel() for p in lm.parameters()):,} parameters, vocabulary "
          f"{lm.config.vocab_size}; {args.rows} samples, window {args.window}, mean {tokens / len(ids):.0f} tokens")

    def forward_only():
        with torch.no_grad():
            for _, input_ids, mask in batches:
                lm(input_ids=input_ids, attention_mask=mask)

    def forward_and_criterion():  # the detector's path: backbone + chunked LM head + reduction
        with torch.no_grad():
            for _, input_ids, mask in batches:
                det._criterion_chunked(input_ids, mask)

    def unfused():  # full (B, T, V) logits, then the criterion on them (chunk_tokens: 0)
        with torch.no_grad():
            for _, input_ids, mask in batches:
                logits = lm(input_ids=input_ids, attention_mask=mask).logits[:, :-1]
                criterion_from_logits(logits, logits, input_ids[:, 1:], mask[:, 1:].bool())

    def whole_path():
        det.criteria(texts)

    forward_only()  # warm-up
    best = {"forward": np.inf, "criterion": np.inf, "unfused": np.inf, "detector": np.inf}
    for _ in range(args.repeats):
        for name, fn in (("forward", forward_only), ("criterion", forward_and_criterion), ("unfused", unfused),
                         ("detector", whole_path)):
            started = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - started)
    n = args.rows
    print(f"forward only:            {best['forward']:.2f} s  {n / best['forward']:.1f} samples/s")
    print(f"forward + criterion:     {best['criterion']:.2f} s  {n / best['criterion']:.1f} samples/s")
    print(f"ratio criterion/forward: {best['criterion'] / best['forward']:.3f}  (bar: <= 1.2)")
    print(f"unfused (full logits):   {best['unfused']:.2f} s  ratio {best['unfused'] / best['forward']:.3f}")
    print(f"detector criteria(texts): {best['detector']:.2f} s  {n / best['detector']:.1f} samples/s (tokenising included)")


if __name__ == "__main__":
    main()
