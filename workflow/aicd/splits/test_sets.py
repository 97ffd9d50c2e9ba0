"""Extra evaluation sets for a task: any labelled source, scored by detectors fitted once on
the task's train split (config: `tasks.<task>.test_sets: {name: {source: <source>}}`).

python -m aicd.splits test-set --task T --spec JSON --source results/sources/X.parquet
    --train results/tasks/T/train.parquet --out results/tasks/T/test_sets/NAME.parquet --report R.json

The set keeps the source's rows with the task's class column as `target`; a model's generations
come through the dataset stage (their `reject` column: rows a code check or a Table 3 filter
rejected are left out, counted as filtered:<reason>). A class outside the
task's label set is an error that names it and its count (a binary task cannot score `hybrid`
rows), unless the set says `outside_labels: drop` (then counted and reported). Rows removed
(no class, empty code, repeated ids, code also in the task's train split) are counted, and
the class balance before and after is reported so Table 4 can say how the set changed."""

from __future__ import annotations

import argparse
import logging

import pandas as pd

from ..common.errors import AicdError
from ..common.io import write_json, write_parquet
from ..common.stagecli import json_arg
from ..outputs import SHOWN

log = logging.getLogger("aicd.splits.test_sets")
TARGETS = ("label", "family")


def balance(table: pd.DataFrame, column: str) -> dict[str, int]:
    return {str(k): int(v) for k, v in table[column].astype(object).fillna("(none)").value_counts().sort_index().items()}


def _example(row: pd.Series, target: str) -> str:
    """A removed row as a report shows it: its id, class and (for generated code) protocol."""
    about = [str(row[c]) for c in (target, "protocol") if c in row.index and isinstance(row[c], str)]
    return f"{row['id']} ({', '.join(about)})" if about else str(row["id"])


def build_test_set(samples: pd.DataFrame, spec: dict, train: pd.DataFrame, task: str,
                   name: str) -> tuple[pd.DataFrame, dict]:
    """The evaluation table and its report. `spec`: {target, labels, outside_labels}."""
    target = spec.get("target", "label")
    if target not in TARGETS:
        raise AicdError(f"task {task}: target must be one of {TARGETS}, got {target!r}")
    if target not in samples.columns:
        raise AicdError(f"test set {name} of task {task}: the source has no {target!r} column")
    labels = [str(x) for x in spec.get("labels") or []]
    before = balance(samples, target)
    removed: dict[str, int] = {}
    examples: dict[str, str] = {}

    def drop(mask: pd.Series, reason: str) -> None:
        nonlocal rows
        n = int(mask.sum())
        if n:
            removed[reason] = removed.get(reason, 0) + n
            examples.setdefault(reason, _example(rows[mask].iloc[0], target))
            rows = rows[~mask]

    rows = samples
    if "reject" in rows.columns:  # a model's generations through the dataset stage: its filters decide
        for reason, _n in rows["reject"].dropna().astype(str).value_counts().sort_index().items():
            drop(rows["reject"].astype(object).eq(reason), f"filtered:{reason}")
    drop(rows[target].isna(), f"no_{target}")
    if labels:
        outside = ~rows[target].astype(str).isin(labels)
        if outside.any():
            counts = rows.loc[outside, target].astype(str).value_counts().sort_index()
            named = ", ".join(f"{k!r} ({v} rows)" for k, v in counts.items())
            if spec.get("outside_labels") != "drop":
                raise AicdError(f"test set {name} of task {task}: {named} outside the task's labels {labels}; "
                                f"map them in the source's label_map, or set tasks.{task}.test_sets.{name}."
                                "outside_labels: drop to leave them out (counted)")
            drop(outside, "outside_task_labels")
    drop(rows["code"].fillna("").astype(str).str.strip() == "", "empty_code")
    drop(rows["id"].duplicated(keep="first"), "repeated_id")
    # a row whose code is in train would score memorisation, not detection
    drop(rows["id"].isin(set(train["id"])), "also_in_train")
    table = rows.copy().reset_index(drop=True)
    table["target"] = table[target].astype(str)
    if "subset" not in table.columns or table["subset"].isna().all():
        # no breakdown of its own: the per-subset scores are then per language
        table["subset"] = table["language"].astype(object) if "language" in table.columns else None
    if table.empty:
        raise AicdError(f"test set {name} of task {task}: no rows left ({len(samples)} in; removed: "
                        f"{', '.join(f'{k} {v}' for k, v in removed.items()) or 'none'})")
    report = {"task": task, "test_set": name, "target": target, "rows_in": int(len(samples)),
              "rows": int(len(table)), "removed": removed, "removed_examples": examples,
              "balance_before": before, "balance_after": balance(table, "target")}
    if removed:
        log.warning("test set %s of task %s: removed %s; class balance %s -> %s", name, task, removed,
                    report["balance_before"], report["balance_after"])
    return table, report


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.splits test-set", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True)
    parser.add_argument("--name", required=True, help="the test set's name (its key under test_sets)")
    parser.add_argument("--spec", required=True, type=json_arg, help='{"target", "labels", "outside_labels"}')
    parser.add_argument("--source", required=True, help=f"the source's sample table ({SHOWN.source('X')})")
    parser.add_argument("--train", required=True, help="the task's train split (rows also there are removed)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    table, report = build_test_set(pd.read_parquet(args.source), args.spec,
                                   pd.read_parquet(args.train, columns=["id"]), args.task, args.name)
    write_parquet(table, args.out)
    write_json(report, args.report)
    log.info("test set %s of task %s: %d rows (%s)", args.name, args.task, len(table), report["balance_after"])

