"""The demo MiniLM's test-split prediction on CPU, the demo's critical path: the fitted model of a
finished demo (results/models/binary/minilm) predicting T1's test rows, as the detect job does
(tokenise, length-sorted batches, no_grad), in variants, one after the other in one process:

  fp32        the job as it was (float32 weights and activations)
  bf16        bfloat16 autocast (oneDNN's AMX / avx512_bf16 kernels where the CPU has them)
  int8        torch dynamic quantisation of the Linear layers (int8 weights, activations
              quantised per batch)
  ... x N threads for each (torch.set_num_threads)

Per variant: wall seconds and the process's CPU seconds (on a shared machine the CPU time is
the steadier figure; compare ratios within one run), padding waste (padded tokens over real
ones), agreement with fp32's labels, the largest score difference, and T1 macro-F1 x 100 on the
test rows (the Table 4 cell this job gives).

  python benchmarks/encoder_predict.py [--results results] [--threads 1 2] [--variants fp32 bf16 int8]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))


def padding_waste(det, X) -> float:
    real = padded = 0
    for _, batch in det.iter_batches(X):
        mask = batch["attention_mask"].numpy()
        real += int(mask.sum())
        padded += int(mask.size)
    return padded / max(real, 1)


def run(det, X, variant: str, threads: int):
    import torch

    torch.set_num_threads(threads)
    model = det.model_
    det.precision_ = "fp32"
    if variant == "bf16":
        det.precision_ = "bf16"
    elif variant == "int8":
        det.model_ = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        scores = det.predict_scores(X)
        return scores, time.perf_counter() - wall, time.process_time() - cpu
    finally:
        det.model_ = model


def main(argv=None) -> None:
    from aicd.detectors.encoder import EncoderDetector
    from aicd.outputs import Outputs
    from sklearn.metrics import f1_score

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", default="results")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--variants", nargs="+", default=["fp32", "bf16", "int8"])
    p.add_argument("--rows", type=int, default=None, help="the first N test rows only (a quick look)")
    args = p.parse_args(argv)
    root = Outputs(args.results)
    test = pd.read_parquet(root.split("binary", "test"), columns=["code", "target"])
    if args.rows:
        test = test.iloc[:args.rows]
    X, gold = test["code"].to_numpy(dtype=object), test["target"].to_numpy(dtype=object)
    det = EncoderDetector.load(root.model_folder("binary", "minilm"), device="cpu", threads=1)
    labels = list(det.classes_)
    print(f"{len(X)} test rows; padded/real tokens {padding_waste(det, X):.3f} (length-sorted batches of "
          f"{det.settings['eval_batch_size']}, window {det.settings['window']})")
    base = None
    print("| variant | threads | wall s | CPU s | rows/s (wall) | labels as fp32 | max |score diff| | T1 macro-F1 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for variant in args.variants:
        for threads in args.threads:
            scores, wall, cpu = run(det, X, variant, threads)
            pred = np.asarray(labels, dtype=object)[scores.argmax(1)]
            if base is None:
                base = (scores, pred)
            same = float((pred == base[1]).mean())
            diff = float(np.abs(scores - base[0]).max())
            f1 = 100 * f1_score(gold, pred, labels=labels, average="macro", zero_division=0)
            print(f"| {variant} | {threads} | {wall:.1f} | {cpu:.1f} | {len(X) / wall:.1f} | {same:.2%} | {diff:.4f} "
                  f"| {f1:.2f} |", flush=True)


if __name__ == "__main__":
    main()
