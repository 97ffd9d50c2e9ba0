"""A validation split carved from train, for a detector that needs one when the task gives none
(seeded and stratified; the carved rows leave train). What was done is returned as a record
for the fitted model and the job's report."""

from __future__ import annotations

import logging

import numpy as np
from sklearn.model_selection import train_test_split

log = logging.getLogger("aicd.detectors")

CARVE_FRACTION = 0.1


def carve(y: np.ndarray, seed: int, fraction: float = CARVE_FRACTION) -> tuple[np.ndarray, np.ndarray, dict]:
    """(train row indices, validation row indices, record). Stratified when every class has at
    least two rows, else a plain seeded split (said in the record)."""
    n = len(y)
    idx = np.arange(n)
    n_val = max(1, int(round(n * fraction)))
    if n < 4 or n - n_val < 2:
        return idx, idx[:0], {"source": "none", "reason": f"train has only {n} rows: nothing carved", "rows": 0}
    _, counts = np.unique(y, return_counts=True)
    stratified = bool(counts.min() >= 2 and n_val >= len(counts))
    train_idx, val_idx = train_test_split(idx, test_size=n_val, random_state=seed,
                                          stratify=y if stratified else None)
    record = {"source": "carved from train", "fraction": fraction, "seed": seed, "stratified": stratified,
              "rows": int(len(val_idx)), "train_rows_left": int(len(train_idx))}
    log.info("no validation rows given: %d of %d train rows carved as validation (seed %d, %s)",
             len(val_idx), n, seed, "stratified" if stratified else "not stratified: a class has < 2 rows")
    return np.sort(train_idx), np.sort(val_idx), record
