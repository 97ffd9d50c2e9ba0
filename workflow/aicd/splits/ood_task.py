"""One split of the out-of-distribution protocol (aicd.splits.ood) as a workflow task.

python -m aicd.splits ood --task T --spec '{"protocol": "leave_one_language_out", "hold_out": "Python"}'
    --train-source results/sources/trial.parquet [--test-source results/sources/codeaid.parquet]
    --out-train ... --out-validation ... --out-test ... --report R.json

Protocols: in_distribution, codeaid (test on --test-source), leave_one_language_out
(hold_out: a language), leave_one_family_out (hold_out: a family). Validation rows are always
group-held-out (see aicd.splits.ood); the class is the binary `label`."""

from __future__ import annotations

import argparse

import pandas as pd

from ..common.errors import AicdError
from ..common.io import write_json, write_parquet
from ..common.stagecli import json_arg
from . import ood
from .tasks import _report, require_rows

PROTOCOLS = ("in_distribution", "codeaid", "leave_one_language_out", "leave_one_family_out")


def ood_tables(spec: dict, train_source: pd.DataFrame, test_source: pd.DataFrame | None,
               seed: int) -> dict[str, pd.DataFrame]:
    protocol = spec.get("protocol")
    rows = train_source[train_source["label"].isin(["human", "machine"])].reset_index(drop=True)
    if protocol == "in_distribution":
        tables = ood.in_distribution(rows, seed, float(spec.get("test_fraction", 0.2)))
    elif protocol == "codeaid":
        if test_source is None:
            raise AicdError("protocol codeaid needs a test source (ood.test: a source name)")
        test = test_source[test_source["label"].isin(["human", "machine"])].reset_index(drop=True)
        tables = ood.codeaid(rows, test, seed)
    elif protocol == "leave_one_language_out":
        tables = ood.leave_one_language_out(rows, spec["hold_out"], seed)
    elif protocol == "leave_one_family_out":
        tables = ood.leave_one_family_out(rows, spec["hold_out"], seed)
    else:
        raise AicdError(f"unknown out-of-distribution protocol {protocol!r}; use one of {PROTOCOLS}")
    for table in tables.values():
        table["target"] = table["label"].astype(str)
    return tables


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.splits ood", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True)
    parser.add_argument("--spec", required=True, type=json_arg, help="the task's ood entry, as JSON")
    parser.add_argument("--train-source", required=True, help="sample table the model trains on (the trial data)")
    parser.add_argument("--test-source", help="sample table to test on (protocol codeaid)")
    parser.add_argument("--seed", type=int, default=0)
    for split in ("train", "validation", "test"):
        parser.add_argument(f"--out-{split}", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    train_source = pd.read_parquet(args.train_source)
    test_source = pd.read_parquet(args.test_source) if args.test_source else None
    tables = ood_tables(args.spec, train_source, test_source, args.seed)
    rows_in = len(train_source) + (len(test_source) if test_source is not None else 0)
    report = _report(args.task, tables, rows_in, {}, {"kind": "ood", **args.spec, "seed": args.seed})
    require_rows(args.task, tables, report)
    for split, table in tables.items():
        write_parquet(table, getattr(args, f"out_{split}"))
    write_json(report, args.report)

