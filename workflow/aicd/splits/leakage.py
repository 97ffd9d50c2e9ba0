"""Leakage guards on a task's splits, checked on every build:

- no near-duplicate pair (MinHash estimate >= threshold) between train (or validation) and test;
- no held-out generator in train or validation (T2);
- no out-of-domain source in train or validation (T3).

The pool is deduplicated, so the first guard holds there but for pairs that its LSH never
compared (in a bucket larger than aicd.normalize.dedup.FULL_BUCKET): a build drops those test
rows and reports them (`drop_test_duplicates`), up to MAX_DROPPED of the test rows; more than
that means the pool was not deduplicated, and the guard fails, as it does for splits from
elsewhere."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..common.errors import AicdError
from ..normalize.dedup import cross_pairs
from ..normalize.minhash import FALSE_NEGATIVE_WEIGHT, NUM_PERM, THRESHOLD, lsh_params
from ..normalize.pool import signatures_of

EXAMPLES = 5
MAX_DROPPED = 0.01  # share of test rows a build may drop as near duplicates the dedup missed


def check_leakage(tables: dict[str, pd.DataFrame], signatures: dict[str, bytes], info: dict,
                  threshold: float = THRESHOLD, num_perm: int = NUM_PERM,
                  false_negative_weight: float = FALSE_NEGATIVE_WEIGHT,
                  drop_test_duplicates: bool = False) -> dict:
    """Report of each guard; raises AicdError naming the first violation. With
    drop_test_duplicates, test rows with a near duplicate in train or validation are removed
    from tables["test"] (in place) and counted in the report instead."""
    report: dict = {}
    bands, rows = lsh_params(threshold, num_perm, false_negative_weight)
    for split in ("train", "validation"):
        other, test = tables[split], tables["test"]
        a = _sigs(other, signatures)
        b = _sigs(test, signatures)
        pairs = cross_pairs(a, b, threshold, bands, rows) if len(a) and len(b) else np.zeros((0, 2), int)
        found = {"pairs": int(len(pairs)),
                 "examples": [[other["id"].iat[i], test["id"].iat[j]] for i, j in pairs[:EXAMPLES]]}
        if drop_test_duplicates and len(pairs) and len(np.unique(pairs[:, 1])) <= MAX_DROPPED * len(test):
            drop = np.unique(pairs[:, 1])
            tables["test"] = test.drop(index=test.index[drop])
            found = {"pairs": 0, "dropped_from_test": int(len(drop)), "examples": found["examples"]}
        report[f"near_duplicates_{split}_test"] = found
    trainval = pd.concat([tables["train"], tables["validation"]])
    held = info.get("held_out_generators")
    if held is not None:
        leaked = trainval[trainval["generator"].isin(held)]
        report["held_out_generators_in_train"] = {"rows": int(len(leaked)),
                                                  "generators": sorted(leaked["generator"].unique())}
    ood = info.get("out_of_domain_sources")
    if ood is not None:
        leaked = trainval[trainval["source"].isin(ood)]
        report["out_of_domain_sources_in_train"] = {"rows": int(len(leaked)),
                                                    "sources": sorted(leaked["source"].unique())}
    for guard, result in report.items():
        count = result.get("pairs", result.get("rows", 0))
        if count:
            raise AicdError(f"leakage guard failed: {guard}: {count} ({result}). The splits were not written.")
    return report


def _sigs(table: pd.DataFrame, signatures: dict[str, bytes]) -> np.ndarray:
    missing = [i for i in table["id"] if i not in signatures]
    if missing:
        raise AicdError(f"{len(missing)} rows have no MinHash signature in the pool (e.g. {missing[0]})")
    return signatures_of(pd.DataFrame({"minhash": table["id"].map(signatures)}))
