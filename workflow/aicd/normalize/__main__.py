"""python -m aicd.normalize: the dataset stage.

  rows   normalize one table (results/sources/{name}.parquet or results/generations/{model}.parquet):
         code checks, code extraction, language identification, Table 3 filters, MinHash
         signatures -> results/dataset/normalized/{kind}/{name}.parquet (+ .report.json)
  pool   join the normalized tables, report filter rejections, remove near duplicates
         -> results/dataset/pool.parquet, filter_report.{json,md}, dedup_report.{json,md}"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from ..common.errors import AicdError
from ..common.io import write_json, write_parquet, write_text
from ..common.stagecli import json_arg, run
from ..outputs import SHOWN, beside
from .pool import META_COLUMNS, build_pool, dedup_markdown, filter_markdown, write_pool
from .rows import default_threads, merged_spec, normalize_table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.normalize", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rows = sub.add_parser("rows", help="normalize one table")
    rows.add_argument("--table", required=True, help="input parquet (sample schema)")
    rows.add_argument("--name", required=True, help="table name for reports (source or model)")
    rows.add_argument("--spec", type=json_arg, default={}, help="dataset config slice, as JSON")
    rows.add_argument("--execution", help=f"this table's sandbox results ({SHOWN.execution()})")
    rows.add_argument("--threads", type=int, default=default_threads(), help="worker processes")
    rows.add_argument("--out", required=True)
    rows.add_argument("--report", required=True)
    pool = sub.add_parser("pool", help="filter report + deduplicated pool")
    pool.add_argument("--tables", nargs="*", default=[], help="normalized tables")
    pool.add_argument("--spec", type=json_arg, default={}, help="dataset config slice, as JSON")
    pool.add_argument("--outdir", required=True, help=str(Path(SHOWN.pool()).parent))
    args = parser.parse_args(argv)

    if args.command == "rows":
        if not Path(args.table).is_file():
            raise AicdError(f"input table not found: {args.table}")
        execution = pd.read_parquet(args.execution, columns=["id", "status"]) if args.execution else None
        table, report = normalize_table(pd.read_parquet(args.table), args.name, args.spec, args.threads,
                                        execution=execution)
        write_parquet(table, args.out)
        write_json(report, args.report)
    else:
        spec = merged_spec(args.spec)
        # Decisions on metadata and signatures only; the code is copied a table at a time.
        tables = [pd.read_parquet(p, columns=META_COLUMNS) for p in args.tables]
        survivors_at, filter_report, dedup_report = build_pool(tables, {**spec.get("dedup", {}), **spec["minhash"]})
        out = args.outdir
        written = write_pool(args.tables, survivors_at, beside(out, "pool"))
        assert written == dedup_report["pool_rows"], "pool rows lost while copying"
        write_json(filter_report, beside(out, "dataset_report", "filter_report", "json"))
        write_text(filter_markdown(filter_report, spec["filters"]), beside(out, "dataset_report", "filter_report", "md"))
        write_json(dedup_report, beside(out, "dataset_report", "dedup_report", "json"))
        write_text(dedup_markdown(dedup_report), beside(out, "dataset_report", "dedup_report", "md"))


if __name__ == "__main__":
    sys.exit(run(main))
