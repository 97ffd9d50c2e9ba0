"""Build a task's train/validation/test tables: derived from a source, or a release."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from ..common.defaults import schema_default
from ..common.errors import AicdError
from ..data.schema import SPLITS
from ..normalize.minhash import FALSE_NEGATIVE_WEIGHT, NUM_PERM, THRESHOLD
from ..outputs import SHOWN
from ..sources.ingest import to_samples
from ..sources.loader import load_table
from .benchmark import build_task
from .leakage import check_leakage
from .release_language import identify_languages, release_subsets, subset_summary
from .stratified import assign_splits

log = logging.getLogger(__name__)

TARGETS = ("label", "family")


def derive_task(samples: pd.DataFrame, spec: dict, seed: int, task: str) -> tuple[dict[str, pd.DataFrame], dict]:
    """Task tables from one source's samples: the class is the `target` column."""
    target = spec.get("target", "label")
    if target not in TARGETS:
        raise AicdError(f"task {task}: target must be one of {TARGETS}, got {target!r}")
    usable = samples[target].notna()
    skipped = {f"{target}_unknown": int((~usable).sum())} if (~usable).any() else {}
    if skipped:
        log.warning("task %s: skipped %d rows whose %s is unknown", task, (~usable).sum(), target)
    rows = samples[usable].copy()
    rows["target"] = rows[target]
    by = ["target", *[c for c in spec.get("stratify", ["language"]) if c != "target"]]
    rows["split"] = assign_splits(rows, by, spec.get("fractions", {"train": 0.7, "validation": 0.1, "test": 0.2}), seed)
    tables = {s: rows[rows["split"] == s].drop(columns="split").reset_index(drop=True) for s in SPLITS}
    return tables, _report(task, tables, len(samples), skipped, {"kind": "derived", "seed": seed, "stratify": by})


def build_from_pool(pool: pd.DataFrame, spec: dict, seed: int, task: str) -> tuple[dict[str, pd.DataFrame], dict]:
    """The paper's task `spec["kind"]` from the pool, leakage-checked (signatures dropped after)."""
    missing = [c for c in ("id", "code", "label", "language", "domain", "source", "generator", "family", "minhash")
               if c not in pool.columns]
    if missing:
        raise AicdError(f"task {task}: the pool has no column(s) {missing}; build it with "
                        f"`python -m aicd.normalize pool` ({SHOWN.pool()})")
    tables, info = build_task(pool, spec, seed, task)
    signatures = dict(zip(pool["id"], pool["minhash"]))
    dedup = spec.get("dedup", {})
    leakage = check_leakage(tables, signatures, info, float(dedup.get("threshold", THRESHOLD)),
                            int(dedup.get("num_perm", NUM_PERM)),
                            float(dedup.get("false_negative_weight", FALSE_NEGATIVE_WEIGHT)), drop_test_duplicates=True)
    dropped = sum(r.get("dropped_from_test", 0) for r in leakage.values())
    if dropped:
        log.warning("task %s: %d test rows had a near duplicate in train or validation that the pool's dedup did not "
                    "compare (a large LSH bucket); they were dropped from test (report: leakage)", task, dropped)
    tables = {s: t.drop(columns=[c for c in ("minhash", "language_origin") if c in t.columns]) for s, t in tables.items()}
    skipped = info.pop("skipped")
    report = _report(task, tables, len(pool), skipped, {"kind": "built", **info})
    report["leakage"] = leakage
    return tables, report


def load_release_task(spec: dict, task: str, langid_cache: str | Path | None = None,
                      threads: int = 1) -> tuple[dict[str, pd.DataFrame], dict]:
    """Task tables from a published release: each split loaded and checked on its own.

    Rows without a language (the AICD Bench release has only `code` and `label`) get one from
    aicd.normalize.langid, cached per split under `langid_cache` (release.identify_language:
    false turns this off). With `paper` ({kind, seen_languages, seen_domains}: the task's
    build entry) the test split gets the paper's subsets that can be rebuilt, and the report
    names, with the reason, those that cannot. Nothing is capped: every usable row is kept."""
    release = spec["release"]
    target = spec.get("target", "label")
    ingest_spec = {k: spec[k] for k in ("columns", "label_map", "label_audit", "defaults", "unmapped") if k in spec}
    ingest_spec["target"] = target
    identify = release.get("identify_language", schema_default("definitions.task.release.identify_language"))
    tables, split_reports, langid_reports = {}, {}, {}
    rows_in = 0
    for split in SPLITS:
        where = release.get("splits", {}).get(split, split)
        if "files" in release:
            files = release["files"].get(split)
            if split == "validation" and _no_rows(files):
                # optional: detectors that need validation rows carve them from train (seeded)
                tables[split] = tables["train"].iloc[0:0].copy()
                split_reports[split] = {"skipped": {"counts": {}}, "note": "no validation file given"}
                continue
            if files is None:
                raise AicdError(f"task {task}: release.files has no entry for split '{split}'")
            location = {"files": files}
        else:
            location = {k: release[k] for k in ("hub", "name", "revision") if k in release}
        raw = load_table(location, split=where)
        rows_in += len(raw)
        samples, split_reports[split] = to_samples(raw, ingest_spec, f"{task}/{split}")
        del raw
        if identify:
            cache = Path(langid_cache) / f"{split}.parquet" if langid_cache else None
            samples, langid_reports[split] = identify_languages(samples, cache, threads, f"{task}/{split}")
        samples["target"] = samples[target]
        tables[split] = samples
    tables["test"], subset_notes = release_subsets(tables["test"], spec.get("paper"), task)
    skipped: dict[str, int] = {}
    for rep in split_reports.values():
        for reason, n in rep["skipped"]["counts"].items():
            skipped[reason] = skipped.get(reason, 0) + n
    report = _report(task, tables, rows_in, skipped, {"kind": "release", "release": release})
    report["ingest"] = split_reports
    report["language_identification"] = langid_reports
    report["subset_notes"] = subset_notes
    if spec.get("paper"):
        report["paper_kind"] = spec["paper"].get("kind")
    return tables, report


def _no_rows(files) -> bool:
    """A validation entry that gives no rows: absent, null, [], or parquet files without rows."""
    if not files:
        return True
    paths = [files] if isinstance(files, str) else list(files)
    if not all(str(p).endswith(".parquet") and Path(p).is_file() for p in paths):
        return False
    import pyarrow.parquet as pq

    return all(pq.read_metadata(p).num_rows == 0 for p in paths)


def require_rows(task: str, tables: dict[str, pd.DataFrame], report: dict) -> None:
    """Train and test must have rows (validation may be empty): detectors fit on one and
    are scored on the other. The message says where the rows went."""
    empty = [s for s in ("train", "test") if tables[s].empty]
    if not empty:
        return
    sizes = ", ".join(f"{s} {len(t)}" for s, t in tables.items())
    skipped = ", ".join(f"{k} {v}" for k, v in report["skipped"].items()) or "none"
    raise AicdError(f"task {task}: the {' and '.join(empty)} split{'s are' if len(empty) > 1 else ' is'} empty "
                    f"({report['rows_in']} rows in; skipped: {skipped}; rows per split: {sizes}); give the task more "
                    "rows of its classes, or change its fractions or subsets in config")


def classes_by(table: pd.DataFrame, column: str) -> dict[str, dict[str, int]]:
    """value of `column` -> rows per class (target) there: what a reader needs to see a slice that
    holds one class (the report's data block)."""
    if column not in table or not table[column].notna().any():
        return {}
    known = table[table[column].notna()]
    counts = known.groupby([known[column].astype(str), known["target"].astype(str)]).size()
    out: dict[str, dict[str, int]] = {}
    for (value, target), n in sorted(counts.items()):
        out.setdefault(value, {})[target] = int(n)
    return out


def _report(task: str, tables: dict[str, pd.DataFrame], rows_in: int, skipped: dict, how: dict) -> dict:
    return {
        "task": task,
        **how,
        "rows_in": int(rows_in),
        "skipped": skipped,
        "splits": {
            s: {
                "rows": int(len(t)),
                "target": t["target"].value_counts().sort_index().to_dict(),
                "language": t["language"].astype(str).value_counts().sort_index().to_dict(),
                "subset": t["subset"].astype(str).value_counts().sort_index().to_dict() if "subset" in t else {},
                "classes_by": {col: classes_by(t, col) for col in ("domain", "language")},
            }
            for s, t in tables.items()
        },
        # per test subset: rows per class, and the class when only one occurs (its macro-F1 then
        # measures that class alone)
        "test_subsets": subset_summary(tables["test"]) if "test" in tables else {},
    }
