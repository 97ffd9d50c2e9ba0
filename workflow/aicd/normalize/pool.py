"""The deduplicated pool: every normalized table joined, filter rejections reported, near
duplicates removed (MinHash LSH, jointly over human and generated rows).

Survivor of a cluster: a human (original) row before any generated one, then the lowest id,
so the same inputs always give the same pool. Accounting:
rows in = rejected by a filter + removed as a near duplicate + rows in the pool."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..common.io import atomic_path
from ..data.schema import SAMPLE_COLUMNS
from . import filters
from .dedup import near_duplicates, survivors
from .minhash import FALSE_NEGATIVE_WEIGHT, NUM_PERM, THRESHOLD, detection_probability, lsh_params

log = logging.getLogger(__name__)

GROUPS = ["source", "language", "generator"]
POOL_COLUMNS = [*SAMPLE_COLUMNS, "language_origin", "minhash"]
# What the pool's decisions read: everything but the code itself.
META_COLUMNS = [c for c in POOL_COLUMNS if c != "code"] + ["reject"]


def signatures_of(df: pd.DataFrame) -> np.ndarray:
    if len(df) == 0:
        return np.zeros((0, 0), dtype=np.uint32)
    return np.frombuffer(b"".join(df["minhash"]), dtype=np.uint32).reshape(len(df), -1)


def build_pool(tables: list[pd.DataFrame], spec: dict) -> tuple[pd.DataFrame, dict, dict]:
    """(pool, filter report, dedup report). The tables may leave out `code`: the pool then
    names each survivor by (`_table`, `_row`), its table's index and row position, so the
    caller can copy the rows from disk one table at a time (see write_pool)."""
    marked = [t.assign(_table=i, _row=np.arange(len(t))) for i, t in enumerate(tables)]
    rows = (pd.concat(marked, ignore_index=True) if marked
            else pd.DataFrame(columns=[*POOL_COLUMNS, "reject", "_table", "_row"]))
    filter_report = _filter_report(rows)
    kept = rows[rows["reject"].isna()].reset_index(drop=True)
    threshold = float(spec.get("threshold", THRESHOLD))
    num_perm = int(spec.get("num_perm", NUM_PERM))
    bands, per_band = lsh_params(threshold, num_perm, float(spec.get("false_negative_weight", FALSE_NEGATIVE_WEIGHT)))
    sigs = signatures_of(kept)
    if len(kept):
        labels, stats = near_duplicates(sigs, threshold, bands, per_band)
        priority = kept["label"].ne("human").to_numpy().astype(np.int8)
        keep = survivors(labels, priority, kept["id"].astype(str).to_numpy())
    else:
        labels, stats, keep = np.zeros(0, dtype=int), {"rows": 0}, np.zeros(0, dtype=bool)
    removed = kept[~keep]
    pool = kept[keep].sort_values(["_table", "id", "_row"])
    if "code" in pool.columns:
        pool = pool[POOL_COLUMNS]
    pool = pool.reset_index(drop=True)
    dedup_report = {
        "threshold": threshold, "num_perm": num_perm, "bands": bands, "rows_per_band": per_band,
        "shingles": "token 5-grams" if not spec.get("shingle_size") else f"token {spec['shingle_size']}-grams",
        "survivor_rule": "human (original) before generated, then lowest id",
        "detection_probability": {str(j): round(detection_probability(j, bands, per_band), 3)
                                  for j in (0.7, 0.8, 0.85, 0.9, 0.95)},
        **stats,
        "rows_removed": int(len(removed)),
        "removed_by": {g: _counts(removed, g) for g in ["label", *GROUPS]},
        "pool_rows": int(len(pool)),
    }
    assert len(rows) == filter_report["rejected_total"] + len(removed) + len(pool), "row accounting broken"
    log.info("pool: %d rows in, %d rejected by filters, %d near duplicates removed, %d in the pool",
             len(rows), filter_report["rejected_total"], len(removed), len(pool))
    return pool, filter_report, dedup_report


POOL_SCHEMA = pa.schema([(c, pa.binary() if c == "minhash" else pa.string()) for c in POOL_COLUMNS])


def write_pool(paths: list, survivors_at: pd.DataFrame, target) -> int:
    """Copy the surviving rows (by `_table`, `_row`) from each normalized table into one
    parquet file, a table at a time: memory holds one table's code, not the whole pool's."""
    rows_written = 0
    with atomic_path(target) as tmp:
        with pq.ParquetWriter(tmp, POOL_SCHEMA) as writer:
            for i, path in enumerate(paths):
                at = survivors_at.loc[survivors_at["_table"] == i, "_row"].to_numpy()
                if len(at) == 0:
                    continue
                table = pd.read_parquet(path).iloc[at]
                table = table.assign(**{c: None for c in POOL_COLUMNS if c not in table.columns})
                table = table[POOL_COLUMNS].sort_values("id")
                writer.write_table(pa.Table.from_pandas(table, schema=POOL_SCHEMA, preserve_index=False))
                rows_written += len(table)
    return rows_written


def _counts(df: pd.DataFrame, column: str) -> dict:
    return {str(k): int(v) for k, v in df[column].fillna("(none)").value_counts().sort_index().items()}


def _filter_report(rows: pd.DataFrame) -> dict:
    rejected = rows[rows["reject"].notna()]
    cells = (rejected.fillna(dict.fromkeys(GROUPS, "(none)"))
             .groupby(["reject", *GROUPS]).size().reset_index(name="rows"))
    order = ["generation_failed", "execution_failed", "missing_code", "invalid_utf8", "code_not_text", "binary_content",
             "empty_code", "too_large", "missing_label", "unknown_label", "unsupported_language",
             *filters.LINE_FILTERS, "language_unidentified", *filters.FILTER_ORDER[len(filters.LINE_FILTERS):]]
    totals = rejected["reject"].value_counts()
    return {
        "rows_in": int(len(rows)),
        "kept": int(rows["reject"].isna().sum()),
        "rejected_total": int(len(rejected)),
        "order": "each row is counted once, under the first check it fails, in this order",
        "rejected": {r: int(totals.get(r, 0)) for r in order if r in totals} | {
            r: int(n) for r, n in totals.items() if r not in order},
        "rows_in_by_source": _counts(rows, "source"),
        "kept_by_source": _counts(rows[rows["reject"].isna()], "source"),
        "cells": cells.to_dict(orient="records"),
    }


def filter_markdown(report: dict, bounds: dict) -> str:
    lines = ["# Filter report", "",
             f"{report['rows_in']:,} rows in, {report['kept']:,} kept, {report['rejected_total']:,} rejected. "
             f"Each rejected row is counted once, under the first check it fails (in the order below).", "",
             "## Table 3 bounds", "", "| filter | bounds |", "|---|---|"]
    for name in ("ast_depth", "max_line_length", "avg_line_length", "lines_of_code", "alphanumeric_fraction"):
        lo, hi = bounds[name]
        lines.append(f"| {name} | {lo} – {hi} |")
    lines.append(f"| english (comments/docstrings) | confidence ≥ {bounds['english_confidence']} "
                 f"when ≥ {bounds['english_min_letters']} letters |")
    lines += ["", "## Rejections", "", "| reason | rows |", "|---|---:|"]
    lines += [f"| {r} | {n:,} |" for r, n in report["rejected"].items()]
    cells = pd.DataFrame(report["cells"])
    for group in GROUPS:
        lines += ["", f"## Rejections by reason × {group}", ""]
        if cells.empty:
            lines.append("(none)")
            continue
        pivot = cells.pivot_table(index=group, columns="reject", values="rows", aggfunc="sum", fill_value=0)
        lines.append(pivot.to_markdown())
    lines += ["", "Per reason × source × language × generator: `filter_report.json` (`cells`).", ""]
    return "\n".join(lines)


def dedup_markdown(report: dict) -> str:
    lines = ["# Deduplication report", "",
             f"MinHash LSH, Jaccard threshold {report['threshold']} on {report['shingles']}, "
             f"{report['num_perm']} permutations in {report['bands']} bands of {report['rows_per_band']} rows. "
             f"Survivor: {report['survivor_rule']}.", "",
             "Chance that a pair is compared, by true similarity (the LSH S-curve): "
             + ", ".join(f"{j}: {p:.1%}" for j, p in report["detection_probability"].items()) + ".", "",
             "| | rows |", "|---|---:|"]
    for key in ("rows", "candidate_pairs", "near_duplicate_pairs", "clusters_with_duplicates",
                "rows_in_such_clusters", "largest_cluster", "rows_removed", "pool_rows"):
        if key in report:
            lines.append(f"| {key.replace('_', ' ')} | {report[key]:,} |")
    for group, counts in report.get("removed_by", {}).items():
        if counts:
            lines += ["", f"Removed by {group}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items())]
    return "\n".join(lines) + "\n"
