"""The on-disk form of a feature set: one .npz holding X_{split} and ids_{split}."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import AicdError
from ..io import write_npz
from ..schema import SPLITS


def save(path: str | Path, matrices: dict[str, np.ndarray], ids: dict[str, np.ndarray], names: list[str]) -> None:
    arrays = {}
    for split in SPLITS:
        arrays[f"X_{split}"] = matrices[split]
        arrays[f"ids_{split}"] = np.asarray(ids[split], dtype=str)
    arrays["feature_names"] = np.asarray(names, dtype=str)
    write_npz(path, **arrays)


def load(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list[str]]:
    with np.load(path, allow_pickle=False) as data:
        matrices = {s: data[f"X_{s}"] for s in SPLITS}
        ids = {s: data[f"ids_{s}"] for s in SPLITS}
        names = data["feature_names"].tolist()
    return matrices, ids, names


def concat(parts: list[tuple[dict, dict, list]]) -> tuple[dict, dict, list]:
    """Column-wise concatenation of feature sets computed on the same rows."""
    first_ids = parts[0][1]
    for _, ids, _ in parts[1:]:
        for s in SPLITS:
            if not np.array_equal(ids[s], first_ids[s]):
                raise AicdError(f"cannot concatenate feature sets: row ids differ in split {s}")
    matrices = {s: np.hstack([m[s] for m, _, _ in parts]).astype(np.float32) for s in SPLITS}
    names = [n for _, _, part_names in parts for n in part_names]
    return matrices, first_ids, names
