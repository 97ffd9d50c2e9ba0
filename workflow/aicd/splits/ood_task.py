"""One split of the out-of-distribution protocol (aicd.splits.ood) as a workflow task.

python -m aicd.splits ood --task T --spec '{"protocol": "leave_one_language_out", "hold_out": "Python"}'
    --train-source results/sources/trial.parquet [--test-source results/sources/codeaid.parquet]
    --out-train ... --out-validation ... --out-test ... --report R.json

python -m aicd.splits ood --task T --spec '{"protocol": "leave_one_collection_out", "hold_out": "codeaid",
    "collections": {"trial": ["trial"], "codeaid": ["codeaid"]}}' --sources trial=results/sources/trial.parquet
    codeaid=results/sources/codeaid.parquet --out-train ... --out-validation ... --out-test ... --report R.json

Protocols: in_distribution, codeaid (test on --test-source), leave_one_language_out
(hold_out: a language), leave_one_family_out (hold_out: a family): validation rows
group-held-out (see aicd.splits.ood); leave_one_collection_out (hold_out: a collection, each
collection one or more of --sources; aicd.splits.loco). The class is the binary `label`."""

from __future__ import annotations

import argparse

import pandas as pd

from ..common.errors import AicdError
from ..common.io import write_json, write_parquet
from ..common.stagecli import json_arg
from . import ood
from .tasks import _report, require_rows

PROTOCOLS = ("in_distribution", "codeaid", "leave_one_language_out", "leave_one_family_out", "leave_one_collection_out")


def loco_tables(spec: dict, sources: dict[str, pd.DataFrame], seed: int) -> tuple[dict[str, pd.DataFrame], dict]:
    """The leave-one-collection-out split of `spec` (collections: name -> source names) from the
    sources' tables; (tables, what the report adds: rows per collection, rows left out)."""
    from . import loco

    collections, dropped = {}, {}
    for name, names in (spec.get("collections") or {}).items():
        absent = [s for s in names if s not in sources]
        if absent:
            raise AicdError(f"collection {name}: no table given for source(s) {absent} (--sources NAME=PATH)")
        collections[name], left = loco.collection_rows(name, [sources[s] for s in names], seed, spec.get("max_rows"))
        if left:
            dropped[name] = left
    tables, report = loco.leave_one_collection_out(collections, spec.get("hold_out"), seed,
                                                   float(spec.get("validation_fraction", loco.VALIDATION_FRACTION)))
    return tables, {**report, "left_out": dropped}


def ood_tables(spec: dict, train_source: pd.DataFrame, test_source: pd.DataFrame | None,
               seed: int) -> dict[str, pd.DataFrame]:
    protocol = spec.get("protocol")
    rows = train_source[train_source["label"].isin(["human", "machine"])].reset_index(drop=True)
    if protocol == "in_distribution":
        tables = ood.in_distribution(rows, seed, float(spec.get("test_fraction", ood.TEST_FRACTION)))
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
    parser.add_argument("--train-source", help="sample table the model trains on (the trial data)")
    parser.add_argument("--test-source", help="sample table to test on (protocol codeaid)")
    parser.add_argument("--sources", nargs="*", default=[], metavar="NAME=PATH",
                        help="protocol leave_one_collection_out: every source of its collections")
    parser.add_argument("--seed", type=int, default=0)
    for split in ("train", "validation", "test"):
        parser.add_argument(f"--out-{split}", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    if args.spec.get("protocol") == "leave_one_collection_out":
        sources = dict(_named_path(s) for s in args.sources)
        sources = {name: pd.read_parquet(path) for name, path in sources.items()}
        tables, how = loco_tables(args.spec, sources, args.seed)
        rows_in = sum(len(t) for t in sources.values())
    else:
        if not args.train_source:
            raise AicdError(f"protocol {args.spec.get('protocol')!r} needs --train-source (the table trained on)")
        train_source = pd.read_parquet(args.train_source)
        test_source = pd.read_parquet(args.test_source) if args.test_source else None
        tables, how = ood_tables(args.spec, train_source, test_source, args.seed), {}
        rows_in = len(train_source) + (len(test_source) if test_source is not None else 0)
    report = _report(args.task, tables, rows_in, {}, {"kind": "ood", **args.spec, "seed": args.seed, **how})
    require_rows(args.task, tables, report)
    for split, table in tables.items():
        write_parquet(table, getattr(args, f"out_{split}"))
    write_json(report, args.report)



def _named_path(arg: str) -> tuple[str, str]:
    name, sep, path = arg.partition("=")
    if not sep or not name or not path:
        raise AicdError(f"--sources takes NAME=PATH, got {arg!r}")
    return name, path
