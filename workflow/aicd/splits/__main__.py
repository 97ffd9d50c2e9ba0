"""python -m aicd.splits: write one task's train/validation/test tables.

  build     from the deduplicated pool (results/dataset/pool.parquet): the paper's T1/T2/T3
            with their test subsets, checked by the leakage guards
  derive    from a source table (results/sources/{source}.parquet), seeded and stratified
  release   from the published task splits (Hub or local files); rows without a language get
            one from aicd.normalize.langid, cached per split in --langid-cache
  ood       one split of the out-of-distribution protocol (aicd.splits.ood)
  test-set  an extra test set of a task from a labelled source (python -m aicd.splits test-set --help)
  perturb   a test set of the task's own test rows rewritten (python -m aicd.splits perturb --help)
  reference human reference code for calibration, in no train or test split (python -m aicd.splits reference --help)"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from ..common.errors import AicdError
from ..common.io import write_json, write_parquet
from ..common.stagecli import json_arg, run
from ..outputs import SHOWN
from .tasks import build_from_pool, derive_task, load_release_task, require_rows

SPLITS = ("train", "validation", "test")


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("ood", "test-set", "perturb", "reference"):
        from . import ood_task, perturbed_sets, reference, test_sets

        return {"ood": ood_task, "test-set": test_sets, "perturb": perturbed_sets,
                "reference": reference}[argv[0]].main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m aicd.splits", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["build", "derive", "release"])
    parser.add_argument("--task", required=True, help="task name (the config key)")
    parser.add_argument("--spec", required=True, type=json_arg, help="the task's config entry, as JSON")
    parser.add_argument("--source", help="derive: the source's sample table (parquet)")
    parser.add_argument("--pool", help="build: the deduplicated pool (parquet)")
    parser.add_argument("--seed", type=int, default=0, help="build/derive: split seed")
    parser.add_argument("--langid-cache", help="release: folder of {split}.parquet language caches (id -> language)")
    parser.add_argument("--threads", type=int, default=1, help="release: processes for language identification")
    parser.add_argument("--outdir", help="folder for {train,validation,test}.parquet (or name each file)")
    for split in SPLITS:
        parser.add_argument(f"--out-{split}", help=f"the {split} table (parquet); default OUTDIR/{split}.parquet")
    parser.add_argument("--report", required=True, help="output JSON report")
    args = parser.parse_args(argv)
    outputs = {split: getattr(args, f"out_{split}") or (args.outdir and str(Path(args.outdir) / f"{split}.parquet"))
               for split in SPLITS}
    if not all(outputs.values()):
        parser.error("name every output: --outdir, or --out-train, --out-validation and --out-test")
    if args.mode == "build":
        if not args.pool:
            parser.error("build needs --pool")
        pool = _nonempty(args.pool, args.task, "every input row was rejected or removed: see filter_report.md "
                         f"beside it and each source's report ({SHOWN.source_report('*')})")
        tables, report = build_from_pool(pool, args.spec, args.seed, args.task)
    elif args.mode == "derive":
        if not args.source:
            parser.error("derive needs --source")
        source = _nonempty(args.source, args.task, "every row of the source was skipped: see its .report.json")
        tables, report = derive_task(source, args.spec, args.seed, args.task)
    else:
        tables, report = load_release_task(args.spec, args.task, args.langid_cache, max(1, args.threads))
    require_rows(args.task, tables, report)
    for split, table in tables.items():
        write_parquet(table, outputs[split])
    write_json(report, args.report)


def _nonempty(path: str, task: str, why: str) -> pd.DataFrame:
    table = pd.read_parquet(path)
    if table.empty:
        raise AicdError(f"task {task}: {path} has no rows, so there is nothing to split; {why}")
    return table


if __name__ == "__main__":
    sys.exit(run(main))
