"""Human reference code for calibration: programs of human authorship that no detector of a task
trained on, on which thresholds at a fixed false-positive rate are set (aicd.scoring.calibration).

The rule (docs/calibration.md): a reference row is never in the task's train or test split, nor a
near duplicate of one of their rows (MinHash, the dataset's dedup threshold). It comes from, in
this order of priority:

- `validation`: the task's validation split's human rows (`validation_humans`). No detector
  fits its weights on them; those that tune on validation (an early stop, a threshold) chose
  among a few settings there, as the deployment view's threshold does.
- `unsplit`: human rows of the pool that the task put in none of its splits (`unsplit_humans`;
  e.g. rows capped out by `max_rows`). A built task only.
- `library:NAME`: files of a gathered source (`library: NAME`, e.g. the demo's pinned library
  code, `local_code`) that the source did not read. The source gathers a seeded sample of its
  roots' files; the reference continues the same seeded order past them, so it never holds a
  file (or a definition cut from one) that the source holds, and it shares the source's
  packages, not its files. Up to `per_language` rows per language, through the dataset's Table 3
  filters.
- `source:NAME`: the human rows of other configured sources (`sources: [NAME]`), which must not
  be in the pool, through the same filters (their normalized tables).

Rows that are near duplicates of each other are kept once (the first by that priority). The
report counts every row taken and dropped, per origin and language."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..common.defaults import schema_default
from ..common.errors import AicdError
from ..data.families import HUMAN
from ..normalize.dedup import cross_pairs, near_duplicates, survivors
from ..normalize.minhash import (
    FALSE_NEGATIVE_WEIGHT,
    MINHASH_SEED,
    NUM_PERM,
    SHINGLE_SIZE,
    THRESHOLD,
    lsh_params,
    signature,
)
from ..normalize.pool import signatures_of
from ..outputs import SHOWN

log = logging.getLogger(__name__)

COLUMNS = ["id", "code", "language", "domain", "origin"]
SPLITS = ("train", "validation", "test")


def library_rows(source_table: pd.DataFrame, spec: dict, name: str, per_language: int, seed: int,
                 normalize_spec: dict) -> tuple[pd.DataFrame, dict]:
    """(rows with minhash, report) of the files of gathered source `name` that its table does not
    hold: its gather continued in the same seeded order, per_language rows per language at most,
    through the dataset's filters."""
    from ..normalize.rows import normalize_table
    from ..sources.gather import gather
    from ..sources.ingest import to_samples

    read = {str(p).rsplit("#", 1)[0] for p in source_table.get("source_row_id", pd.Series(dtype=str)).dropna()}
    gather_spec = dict(spec["gather"])
    held = source_table["language"].value_counts()
    # the source's own rows come first in the seeded order; a file it read in part is passed over
    # whole, so ask for its rows, ours, and a file's worth of slack
    extra = int(gather_spec.get("units_per_file", 3)) + int(held.max() if len(held) else 0)
    gather_spec["per_language"] = per_language + extra
    raw, gathered = gather(gather_spec, seed)
    raw = raw[~raw["path"].str.rsplit("#", n=1).str[0].isin(read)]
    raw = raw.groupby("language", sort=False).head(per_language).reset_index(drop=True)
    samples, _ = to_samples(raw, {**spec, "columns": {**(spec.get("columns") or {}), "source_row_id": "path"}}, name)
    normalized, norm_report = normalize_table(samples, f"reference {name}", normalize_spec, progress=False)
    kept = normalized[normalized["reject"].isna()]
    report = {"files_of_the_source_passed_over": len(read), "rows_gathered": int(len(raw)),
              "rejected": norm_report["rejected"], "inputs": gathered.get("inputs", {})}
    return kept.assign(origin=f"library:{name}"), report


def split_humans(tables: dict[str, pd.DataFrame], pool: pd.DataFrame | None, spec: dict) -> list[pd.DataFrame]:
    """The validation split's human rows, and the pool's human rows in no split, as asked."""
    out = []
    if spec.get("validation_humans", schema_default("calibration.reference.validation_humans")):
        val = tables["validation"]
        out.append(val[val["target"].astype(str) == HUMAN].assign(origin="validation"))
    if spec.get("unsplit_humans", schema_default("calibration.reference.unsplit_humans")) and pool is not None:
        placed = set().union(*(set(t["id"]) for t in tables.values()))
        rest = pool[~pool["id"].isin(placed) & (pool["label"] == "human")]
        out.append(rest.assign(origin="unsplit"))
    return out


def source_humans(name: str, normalized: pd.DataFrame) -> pd.DataFrame:
    kept = normalized[normalized["reject"].isna() & (normalized["label"] == "human")]
    return kept.assign(origin=f"source:{name}")


def with_signatures(rows: pd.DataFrame, pool: pd.DataFrame | None, minhash: dict) -> np.ndarray:
    """MinHash signatures of rows: the pool's where it has them, computed otherwise."""
    known = dict(zip(pool["id"], pool["minhash"])) if pool is not None and "minhash" in pool else {}
    if "minhash" in rows.columns:
        known.update({i: m for i, m in zip(rows["id"], rows["minhash"]) if isinstance(m, bytes)})
    blobs = [known[i] if isinstance(known.get(i), bytes) else signature(code, minhash.get("num_perm", NUM_PERM),
                                       minhash.get("shingle_size", SHINGLE_SIZE), minhash.get("seed", MINHASH_SEED)).tobytes()
             for i, code in zip(rows["id"], rows["code"])]
    return signatures_of(pd.DataFrame({"minhash": blobs}))


def drop_overlap(candidates: pd.DataFrame, tables: dict[str, pd.DataFrame], pool: pd.DataFrame | None,
                 spec: dict) -> tuple[pd.DataFrame, dict]:
    """Candidates less those in, or near duplicates of, the train and test splits (and, for
    rows not taken from validation, of validation), then kept once among themselves."""
    dedup, minhash = spec.get("dedup") or {}, spec.get("minhash") or {}
    threshold = float(dedup.get("threshold", THRESHOLD))
    bands, rows = lsh_params(threshold, int(dedup.get("num_perm", NUM_PERM)),
                             float(dedup.get("false_negative_weight", FALSE_NEGATIVE_WEIGHT)))
    mine = with_signatures(candidates, pool, minhash)
    dropped = np.zeros(len(candidates), dtype=bool)
    report: dict = {}
    not_validation = (candidates["origin"] != "validation").to_numpy()
    for split in SPLITS:
        table = tables[split]
        exact = candidates["id"].isin(set(table["id"])).to_numpy().copy()
        if split == "validation":
            exact &= not_validation
        near = np.zeros(len(candidates), dtype=bool)
        if len(table) and len(candidates):
            pairs = cross_pairs(mine, with_signatures(table, pool, minhash), threshold, bands, rows)
            near[np.unique(pairs[:, 0])] = True
        if split == "validation":
            near &= not_validation
        report[f"in_or_near_{split}"] = _by_origin(candidates, (exact | near) & ~dropped)
        dropped |= exact | near
    kept = candidates[~dropped].reset_index(drop=True)
    if len(kept) > 1:
        labels, _ = near_duplicates(mine[~dropped], threshold, bands, rows)
        first = survivors(labels, kept["priority"].to_numpy(), kept["id"].astype(str).to_numpy())
        report["near_duplicates_within"] = _by_origin(kept, ~first)
        kept = kept[first].reset_index(drop=True)
    return kept, report


def _by_origin(rows: pd.DataFrame, mask) -> dict:
    return {str(k): int(v) for k, v in rows[np.asarray(mask, dtype=bool)]["origin"].value_counts().sort_index().items()}


def build_reference(tables: dict[str, pd.DataFrame], spec: dict, seed: int, task: str, pool: pd.DataFrame | None = None,
                    library: tuple[str, pd.DataFrame] | None = None,
                    sources: dict[str, pd.DataFrame] | None = None) -> tuple[pd.DataFrame, dict]:
    """(reference rows: id, code, language, domain, origin; report) for one task. `spec`: the
    config's calibration.reference with the dataset's dedup, minhash and filters settings (and,
    with `library`, the library source's own entry under library_spec)."""
    parts = split_humans(tables, pool, spec)
    report: dict = {"task": task, "rule": __doc__.split("\n\n", 1)[1].strip(), "library": None}
    if library is not None:
        name, source_table = library
        per_language = int(spec.get("per_language", schema_default("calibration.reference.per_language")))
        rows, report["library"] = library_rows(source_table, spec["library_spec"], name, per_language, seed,
                                               spec.get("normalize") or {})
        parts.append(rows)
    for name, normalized in (sources or {}).items():
        parts.append(source_humans(name, normalized))
    if not parts:
        raise AicdError(f"task {task}: calibration.reference names no human code (no validation humans, unsplit "
                        "rows, library or sources): set one in config")
    candidates = pd.concat([p.assign(priority=k) for k, p in enumerate(parts) if len(p)], ignore_index=True) \
        if any(len(p) for p in parts) else pd.DataFrame(columns=[*COLUMNS, "priority"])
    report["candidates"] = _by_origin(candidates, np.ones(len(candidates), dtype=bool))
    kept, report["dropped"] = drop_overlap(candidates, tables, pool, spec)
    out = kept[COLUMNS].copy()
    out["domain"] = out["domain"].astype(object).where(out["domain"].notna(), None)
    report["rows"] = int(len(out))
    report["by_origin_language"] = {f"{o} / {lang}": int(n) for (o, lang), n in
                                    out.groupby(["origin", "language"]).size().sort_index().items()}
    report["by_language"] = {str(k): int(v) for k, v in out["language"].value_counts().sort_index().items()}
    log.info("task %s: %d reference rows (%s)", task, len(out), report["by_language"])
    return out.sort_values(["origin", "id"]).reset_index(drop=True), report


def main(argv=None) -> None:
    import argparse
    from pathlib import Path

    from ..common.io import write_json, write_parquet
    from ..common.stagecli import json_arg

    parser = argparse.ArgumentParser(prog="python -m aicd.splits reference", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True)
    parser.add_argument("--spec", required=True, type=json_arg, help="calibration.reference with the dataset's "
                        "dedup, minhash and normalize settings (and library_spec: the library source's entry)")
    parser.add_argument("--tasks-dir", required=True, help="the task's folder: train, validation, test.parquet")
    parser.add_argument("--pool", help="the deduplicated pool (a built task): MinHash signatures, unsplit rows")
    parser.add_argument("--library", nargs=2, metavar=("NAME", "TABLE"), help="the library source and its table")
    parser.add_argument("--source", nargs=2, action="append", default=[], metavar=("NAME", "NORMALIZED"),
                        help=f"another source's normalized table ({SHOWN.normalized('sources', 'NAME')})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    tables = {s: pd.read_parquet(Path(args.tasks_dir) / f"{s}.parquet") for s in SPLITS}
    pool = pd.read_parquet(args.pool, columns=["id", "code", "label", "language", "domain", "minhash"]) \
        if args.pool else None
    library = (args.library[0], pd.read_parquet(args.library[1])) if args.library else None
    sources = {name: pd.read_parquet(path) for name, path in args.source}
    out, report = build_reference(tables, args.spec, args.seed, args.task, pool, library, sources)
    write_parquet(out, args.out)
    write_json(report, args.report)
