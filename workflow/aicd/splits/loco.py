"""Leave one collection out: every labelled collection held out in turn, detectors trained on the
others, so that each number says what a detector does on code from a setting it never saw.

A *collection* is one or more sources that belong together (the trial's contest code; CodeAid's
interview answers; the course's Java; Advent of Code; the local model's code beside the gathered
library code). The rule, for the collection H held out:

- every collection is first cut to its human and machine rows (hybrid and adversarial rows are
  counted and left out: the protocol is binary) and, where `max_rows` is set, to a seeded sample
  stratified by class and language (the same rows in every fold: a collection's sample does not
  depend on which collection is held out);
- test: every (sampled) row of H, `subset` = its language;
- validation: from each *other* collection a seeded share (`validation_fraction`, stratified by
  class and language; again the same rows in every fold), never a row of H;
- train: the rest of the other collections;
- a training or validation row whose content id (language + code) also occurs in H is left out
  and counted (the same program in two collections would otherwise be trained on and tested).

Each training row keeps its `collection`, so a detector that chooses anything by leaving one
training collection out (aicd.detectors.fused) can group by it.

A fold's *default reference* (default_reference_rows; aicd.scoring.loco reads it) is human code
the fold's detector did not train on and that is not of the held-out collection: the
validation split's human rows (all from the training collections) and, where given, gathered
library code that no collection holds; a row that is a program of the test or train split is
left out and counted."""

from __future__ import annotations

import logging

import pandas as pd

from ..common.errors import AicdError
from .stratified import assign_splits, stratified_sample

log = logging.getLogger("aicd.splits")

BINARY = ("human", "machine")
STRATA = ["label", "language"]
# the share of each training collection that validates where the task's ood entry gives no
# validation_fraction: a constant, not a schema default, because the schema would fill it into
# every ood entry (of every protocol) and the split report that echoes the entry
VALIDATION_FRACTION = 0.2


def collection_rows(name: str, tables: list[pd.DataFrame], seed: int, max_rows: int | None = None
                    ) -> tuple[pd.DataFrame, dict]:
    """(the collection's human and machine rows, tagged `collection`; what was left out, counted)."""
    rows = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=["id", "label", "language"])
    dropped = {}
    other = ~rows["label"].isin(BINARY)
    if other.any():
        dropped["not_human_or_machine"] = {str(k): int(v) for k, v in rows.loc[other, "label"].value_counts().items()}
    rows = rows[~other]
    repeated = rows["id"].duplicated()
    if repeated.any():
        dropped["same_program_twice"] = int(repeated.sum())
    rows = rows[~repeated]
    if max_rows is not None and len(rows) > max_rows:
        dropped["sampled_out"] = int(len(rows) - max_rows)
        rows = stratified_sample(rows, max_rows, seed, STRATA)
    rows = rows.sort_values("id").reset_index(drop=True)
    rows["collection"] = name
    return rows, dropped


def check_collections(collections: dict[str, pd.DataFrame], hold_out: str) -> None:
    if hold_out not in collections:
        raise AicdError(f"leave_one_collection_out: no collection named {hold_out!r} "
                        f"(collections: {', '.join(collections) or 'none'})")
    if len(collections) < 2:
        raise AicdError("leave_one_collection_out needs at least two collections: one to hold out, one to train on")
    held = collections[hold_out]
    missing = [c for c in BINARY if not (held["label"] == c).any()]
    if missing:
        raise AicdError(f"collection {hold_out!r} has no {' or '.join(missing)} rows, so no AUROC or FPR can be "
                        f"read on it: give it both classes (e.g. the local model's generations beside the "
                        f"gathered library code), or do not hold it out")


def leave_one_collection_out(collections: dict[str, pd.DataFrame], hold_out: str, seed: int = 0,
                             validation_fraction: float = VALIDATION_FRACTION) -> tuple[dict[str, pd.DataFrame], dict]:
    """({train, validation, test}, report) with `hold_out` the test collection; `collections`:
    name -> collection_rows' table."""
    check_collections(collections, hold_out)
    test = collections[hold_out].copy()
    test["subset"] = test["language"].astype(str)
    held_ids = set(test["id"])
    train, validation, overlap = [], [], {}
    for name, rows in collections.items():
        if name == hold_out:
            continue
        shared = rows["id"].isin(held_ids)
        if shared.any():
            overlap[name] = int(shared.sum())
        split = assign_splits(rows, STRATA, {"train": 1 - validation_fraction, "validation": validation_fraction},
                              seed)
        train.append(rows[(split == "train") & ~shared])
        validation.append(rows[(split == "validation") & ~shared])
    tables = {"train": pd.concat(train, ignore_index=True), "validation": pd.concat(validation, ignore_index=True),
              "test": test.reset_index(drop=True)}
    for table in tables.values():
        table["target"] = table["label"].astype(str)
    report = {"hold_out": hold_out, "collections": {n: _counts(t) for n, t in collections.items()},
              "left_out_as_in_held_out_collection": overlap}
    if overlap:
        log.warning("%d training rows are programs of the held-out collection %s and are left out (%s)",
                    sum(overlap.values()), hold_out, overlap)
    return tables, report


def default_reference_rows(tables: dict[str, pd.DataFrame], library: pd.DataFrame | None = None
                           ) -> tuple[pd.DataFrame, dict]:
    """(id, language, origin of the fold's default reference: its validation humans, then the
    library rows; what was left out, counted)."""
    val = tables["validation"]
    parts = [val.loc[val["label"] == "human", ["id", "language"]].assign(origin="validation")]
    if library is not None and len(library):
        parts.append(library.loc[library["label"] == "human", ["id", "language"]].assign(origin="library"))
    rows = pd.concat(parts, ignore_index=True)
    rows["language"] = rows["language"].astype(str)
    report = {}
    for split in ("test", "train"):
        clash = rows["id"].isin(set(tables[split]["id"]))
        if clash.any():
            report[f"in_{split}"] = int(clash.sum())
            rows = rows[~clash]
    if report:
        log.warning("default reference: %s rows are programs of the fold's test or train split: left out", report)
    return rows.drop_duplicates("id").reset_index(drop=True), report


def _counts(rows: pd.DataFrame) -> dict:
    return {str(k): int(v) for k, v in rows["label"].value_counts().sort_index().items()}
