"""Wall time and peak memory of MinHash LSH deduplication at 10K, 100K and 1M rows, and a
projection for the paper's 2M rows on 16 cores.

Rows are trial programs with about half of their identifiers renamed per row (distinct
programs), plus near copies (every eleventh row; a comment line appended: Jaccard > 0.9) that dedup
must find. Signatures are
computed once (their cost is part of the per-row normalization throughput, measured in
dataset_throughput.py) and saved; each dedup run then loads them in a fresh subprocess, so
its peak RSS is its own.

  python benchmarks/dedup_scaling.py [--sizes 10000 100000 1000000] [--workdir /tmp/aicd-dedup]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow"))
sys.path.insert(0, str(HERE))
from features_throughput import DEFAULT_TRIAL, run_in_child  # noqa: E402


def make_signatures(trial: Path, rows: int, path: Path) -> float:
    """Distinct programs: a trial program with about half of its identifiers renamed to a
    row-unique name (Jaccard between two copies of one base ~0.2, like code sharing a template);
    every eleventh row is a near copy of the row before it (a comment line appended)."""
    import re
    import zlib

    import numpy as np
    import pandas as pd
    from aicd.normalize.minhash import signature

    base = pd.read_parquet(trial, columns=["code"])["code"].tolist()
    ident = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\b")
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(base), size=rows)
    sigs = np.empty((rows, 128), dtype=np.uint32)
    started = time.perf_counter()
    code = ""
    for i in range(rows):
        if i % 11 == 10:  # every eleventh row is a near copy of the row before: ~9% at every size
            sigs[i] = signature(code + "\n// near copy\n")
            continue
        code = ident.sub(lambda m, i=i: m.group(1) + f"_{i}" if (zlib.crc32(m.group(1).encode()) + i) % 2 else m.group(1),
                         base[picks[i]])
        sigs[i] = signature(code)
    np.save(path, sigs)
    return (time.perf_counter() - started) / rows


def run(path: Path, rows: int) -> dict:
    import numpy as np
    from aicd.normalize.dedup import near_duplicates, survivors
    from aicd.normalize.minhash import lsh_params

    with open(path, "rb") as fh:  # read just these rows (a memory map would count its pages too)
        np.lib.format.read_magic(fh)
        _, _, dtype = np.lib.format.read_array_header_1_0(fh)
        sigs = np.fromfile(fh, dtype=dtype, count=rows * 128).reshape(rows, 128)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    bands, per_band = lsh_params(0.8, 128)
    labels, stats = near_duplicates(sigs, 0.8, bands, per_band)
    keep = survivors(labels, np.ones(rows, dtype=np.int8), np.arange(rows).astype(str))
    seconds = time.perf_counter() - started
    return {"rows": rows, "seconds": seconds, "removed": int((~keep).sum()),
            "candidate_pairs": stats["candidate_pairs"], "clusters": stats["clusters_with_duplicates"],
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_before_mb": base}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--trial", type=Path, default=DEFAULT_TRIAL)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/aicd-dedup"))
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--make", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sig_path = args.workdir / f"signatures_{max(args.sizes)}.npy"
    if args.run:
        print(json.dumps(run(sig_path, args.run)))
        return
    if args.make:
        per_row = make_signatures(args.trial, max(args.sizes), sig_path)
        print(f"signatures: {per_row * 1000:.3f} ms/row ({1 / per_row:,.0f} rows/s, one core)")
        return
    args.workdir.mkdir(parents=True, exist_ok=True)
    if not sig_path.is_file():
        # in a child process: a child's peak RSS starts from its parent's, which must stay small
        subprocess.run([sys.executable, __file__, "--make", "--sizes", *map(str, args.sizes), "--workdir",
                        str(args.workdir), "--trial", str(args.trial)], check=True)
    print(f"machine: {os.cpu_count()} cores; dedup is one process (numpy sort per band)")
    results = []
    for rows in sorted(args.sizes):
        r = run_in_child([sys.executable, __file__, "--run", str(rows), "--sizes", *map(str, args.sizes),
                          "--workdir", str(args.workdir)])
        results.append(r)
        print(f"{r['rows']:>9,} rows: {r['seconds']:7.2f}s, peak RSS {r['peak_rss_mb']:7,.0f} MB, "
              f"{r['candidate_pairs']:,} candidate pairs, {r['clusters']:,} clusters, {r['removed']:,} removed "
              f"(planted: {r['rows'] // 11:,}); signatures loaded: {r['rss_before_mb']:,.0f} MB")
    if len(results) >= 2:
        a, b = results[-2], results[-1]
        exponent = __import__("math").log(b["seconds"] / a["seconds"]) / __import__("math").log(b["rows"] / a["rows"])
        t2m = b["seconds"] * (2_000_000 / b["rows"]) ** max(1.0, exponent)
        mem2m = b["peak_rss_mb"] * 2_000_000 / b["rows"]
        print(f"growth exponent {a['rows']:,} -> {b['rows']:,}: {exponent:.2f} (1.0 = linear)")
        print(f"projected 2M rows: dedup {t2m:.0f}s in one process, peak ~{mem2m:,.0f} MB")


if __name__ == "__main__":
    main()
