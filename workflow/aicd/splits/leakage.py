"""Leakage guards on a task's splits, checked on every build:

- no near-duplicate pair (MinHash estimate >= threshold) between train (or validation) and test;
- no held-out generator in train or validation (T2);
- no out-of-domain source in train or validation (T3).

The pool is deduplicated, so the first guard holds by construction there; it is checked
again because splits may come from elsewhere (another pool, a config without dedup)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import AicdError
from ..normalize.dedup import cross_pairs
from ..normalize.minhash import lsh_params
from ..normalize.pool import signatures_of

EXAMPLES = 5


def check_leakage(tables: dict[str, pd.DataFrame], signatures: dict[str, bytes], info: dict,
                  threshold: float = 0.8, num_perm: int = 128,
                  false_negative_weight: float = 0.8) -> dict:
    """Report of each guard; raises AicdError naming the first violation."""
    report: dict = {}
    bands, rows = lsh_params(threshold, num_perm, false_negative_weight)
    test = tables["test"]
    for split in ("train", "validation"):
        other = tables[split]
        a = _sigs(other, signatures)
        b = _sigs(test, signatures)
        pairs = cross_pairs(a, b, threshold, bands, rows) if len(a) and len(b) else np.zeros((0, 2), int)
        report[f"near_duplicates_{split}_test"] = {
            "pairs": int(len(pairs)),
            "examples": [[other["id"].iat[i], test["id"].iat[j]] for i, j in pairs[:EXAMPLES]],
        }
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
