"""Throughput of `aicd detect` after the model is loaded: files read, languages named,
featurized and labelled, over a folder of --files code files. By default the model is a TF-IDF
(paper settings) logistic regression; --features takes a feature set's config entry as JSON (a
list of entries: their concat) and --detector a detector's. The model is fitted here by the
workflow's own jobs (python -m aicd.features, python -m aicd.detectors) on --train rows of the
shared trial subset; the files are other rows of it, written with their language's extension.
Bars: >= 500 files/s on 2 cores (TF-IDF LR); >= 200 rows/s for the formatting-invariance
default. Wall and CPU seconds (this process's user + system, threads included) are printed: on a
shared machine the wall time stretches with the load, the CPU time much less. The featurizers'
parsing workers (--threads > 1) run under the forkserver, outside this process: their CPU is not
counted, so measure CPU per file with --threads 1. With the LM
statistics (--features '{"kind": "lm_stats", "params": {"model": "package:smollm2-135m-instruct"}}')
give small --train and --files and --repeats 1: the LM reads every file, every repeat.

  python benchmarks/detect_throughput.py [--files 1000] [--train 2000] [--trial PATH] [--threads 2]
      [--features '{"kind": "canon_tfidf", "params": {"identifiers": "bound"}}'] [--detector '{"kind": "logistic_regression"}']
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
DEFAULT_TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"
EXT = {"Python": ".py", "C++": ".cpp", "Java": ".java"}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def set_threads(model, threads: int) -> None:
    """The loaded featurizer's parsing processes (aicd detect's own setting)."""
    featurizer = getattr(model, "featurizer", None)
    for part in getattr(featurizer, "parts", [featurizer]):
        if part is not None and hasattr(part, "threads"):
            part.threads = threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--trial", default=str(DEFAULT_TRIAL))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--features", default='{"kind": "tfidf"}', help="a feature set's entry as JSON, or a list of them")
    parser.add_argument("--detector", default='{"kind": "logistic_regression"}', help="a detector's entry as JSON")
    parser.add_argument("--threads", type=int, default=2, help="processes of the featurizers that parse")
    args = parser.parse_args()
    specs = json.loads(args.features)
    specs = specs if isinstance(specs, list) else [specs]

    import pandas as pd
    from aicd.detectors.__main__ import main as detectors_main
    from aicd.detectors.apply import detect, read_files
    from aicd.detectors.bundle import load_bundle
    from aicd.features.__main__ import main as features_main
    from aicd.outputs import beside

    raw = pd.read_parquet(args.trial).sort_values("row_id").reset_index(drop=True)
    if len(raw) < args.train + args.files:
        sys.exit(f"the trial file has {len(raw)} rows; need --train + --files <= that")
    table = pd.DataFrame({"id": [f"r{r}" for r in raw["row_id"]], "code": raw["code"], "language": raw["language"],
                          "target": ["human" if g == "Human" else "machine" for g in raw["generator"]]})
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        table.iloc[:args.train].to_parquet(tmp / "train.parquet")
        table.iloc[args.train:args.train + 50].to_parquet(tmp / "test.parquet")
        parts = []
        for i, spec in enumerate(specs):
            features_main(["--spec", json.dumps(spec), "--train", str(tmp / "train.parquet"),
                           "--out", str(tmp / f"part{i}.npz"), "--model", str(tmp / f"part{i}.skops"),
                           "--report", str(tmp / f"part{i}.json"), "--threads", str(args.threads)])
            parts.append(i)
        if len(parts) > 1:
            features_main(["--spec", json.dumps({"kind": "concat"}), "--parts", *[str(tmp / f"part{i}.npz") for i in parts],
                           "--part-models", *[str(tmp / f"part{i}.skops") for i in parts], "--out", beside(tmp, "features"),
                           "--model", beside(tmp, "featurizer"), "--report", str(tmp / "features.json")])
        else:
            (tmp / "part0.npz").rename(beside(tmp, "features"))
            (tmp / "part0.skops").rename(beside(tmp, "featurizer"))
        detectors_main(["fit", "--spec", args.detector, "--train", str(tmp / "train.parquet"),
                        "--test", str(tmp / "test.parquet"), "--features", beside(tmp, "features"),
                        "--featurizer", beside(tmp, "featurizer"), "--out", str(tmp / "p.parquet"),
                        "--model", str(tmp / "model.skops")])
        folder = tmp / "code"
        folder.mkdir()
        files = table.iloc[args.train:args.train + args.files]
        for row in files.itertuples():
            (folder / f"{row.id}{EXT[row.language]}").write_bytes(row.code.encode("utf-8"))
        started = time.perf_counter()
        model = load_bundle(tmp / "model.skops")
        set_threads(model, args.threads)
        load_seconds = time.perf_counter() - started
        best, best_cpu = float("inf"), float("inf")
        for _ in range(args.repeats):
            started, cpu = time.perf_counter(), cpu_seconds()
            result = detect(model, read_files([str(folder)]))
            best = min(best, time.perf_counter() - started)
            best_cpu = min(best_cpu, cpu_seconds() - cpu)
        assert len(result) == args.files
    print(f"aicd detect, features {args.features}, detector {args.detector}, {args.files} files "
          f"({', '.join(f'{k} {v}' for k, v in files['language'].value_counts().items())}), "
          f"model fitted on {args.train} rows")
    print(f"  load {load_seconds:.2f} s; read + featurize + predict {best:.3f} s (best of {args.repeats}): "
          f"{args.files / best:.1f} files/s; {best_cpu:.2f} CPU-s ({args.files / best_cpu:.1f} files per CPU-s)")


if __name__ == "__main__":
    main()
