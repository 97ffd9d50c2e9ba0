"""Computing one feature set, written split by split and block by block (aicd.features.store):
a table-based featurizer fitted on train and applied to every split, or a concatenation of
already computed parts (their features and fitted featurizers). Memory holds the training
matrix once; validation and test go through in blocks of rows."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..common.errors import AicdError
from ..data.schema import SPLITS
from ..outputs import name_of
from . import store
from .registry import ConcatFeaturizer, build, load_featurizer

log = logging.getLogger("aicd.features")


def _with_sums(blocks, sums: np.ndarray):
    for block in blocks:
        sums += np.nansum(block, axis=0, dtype=np.float64)  # a sampled set holds NaN rows
        yield block


def compute(kind: str, params: dict, tables: dict[str, pd.DataFrame], seed: int, out: str | Path,
            threads: int = 1, cache_dir: str | None = None):
    """Fit a table-based featurizer on train, write every split's matrix to `out`; return
    (featurizer, names, rows per split, per-split column sums). `cache_dir`: where a kind that
    keeps per-text values between jobs keeps them (lm_stats)."""
    featurizer = build(kind, params, seed)
    featurizer.threads = threads
    if cache_dir and hasattr(featurizer, "cache_dir"):
        featurizer.cache_dir = cache_dir
    sizes = featurizer.sample_sizes() if hasattr(featurizer, "sample_sizes") else {}
    sums, rows = {}, {}
    with store.writer(out) as writer:
        started = time.perf_counter()
        train = (_sampled(featurizer, tables["train"], sizes["train"], seed, fit=True) if "train" in sizes
                 else featurizer.fit_transform(tables["train"]))
        names = featurizer.feature_names
        log.info("%s: fitted on %d train rows, %d features, %.0f s", kind, len(train), len(names),
                 time.perf_counter() - started)
        for split in SPLITS:
            table = tables[split]
            sums[split] = np.zeros(len(names))
            if split == "train":
                blocks = [train]
            elif split in sizes:
                blocks = [_sampled(featurizer, table, sizes[split], seed)]
            else:
                blocks = _transform_blocks(featurizer, table, split, kind)
            writer.matrix(f"X_{split}", len(table), len(names), _with_sums(blocks, sums[split]))
            writer.array(f"ids_{split}", table["id"].to_numpy(dtype=str))
            rows[split] = int(len(table))
            if split == "train":
                del train, blocks
        writer.array("feature_names", np.asarray(names, dtype=str))
    return featurizer, names, rows, sums


def _sampled(featurizer, table: pd.DataFrame, n: int, seed: int, fit: bool = False) -> np.ndarray:
    """The split's matrix with only a seeded sample of `n` rows featurized (stratified by class
    and language); the other rows hold NaN. For kinds whose every row is costly (a causal LM's
    statistics) and whose readers predict the rows they cover (aicd.detectors.zero_shot_lm)."""
    from ..splits.stratified import stratified_sample

    width = len(featurizer.feature_names)
    matrix = np.full((len(table), width), np.nan, dtype=np.float32)
    if n == 0 or table.empty:
        return matrix
    by = [c for c in ("target", "language") if c in table.columns]
    chosen = np.sort(table.index.get_indexer(stratified_sample(table, min(n, len(table)), seed, by).index))
    picked = table.iloc[chosen]
    matrix[chosen] = featurizer.fit_transform(picked) if fit else featurizer.transform(picked)
    log.info("%s: %d of %d rows featurized (a seeded sample), the rest NaN", featurizer.kind, len(chosen), len(table))
    return matrix


def _transform_blocks(featurizer, table: pd.DataFrame, split: str, kind: str):
    started = time.perf_counter()
    for start in range(0, len(table), store.CHUNK_ROWS):
        yield featurizer.transform(table.iloc[start:start + store.CHUNK_ROWS])
        done = min(start + store.CHUNK_ROWS, len(table))
        if done < len(table):
            log.info("%s %s: %d of %d rows (%.0f s)", kind, split, done, len(table), time.perf_counter() - started)


def concat_parts(parts: list[str], part_models: list[str], out: str | Path, trust_pickle: bool = False):
    """Write the column-wise concatenation of already computed feature sets to `out`, block by
    block; return (featurizer, names, rows per split)."""
    if len(parts) < 2:
        raise AicdError("a concat feature set needs at least two parts")
    models = part_models or [str(Path(p).with_name(name_of("featurizer"))) for p in parts]
    if len(models) != len(parts):
        raise AicdError(f"{len(parts)} --parts but {len(models)} --part-models: give one fitted featurizer per part")
    fitted = [load_featurizer(path, trust_pickle) for path in models]
    loaded = [store.load(p) for p in parts]
    first_ids = loaded[0][1]
    for _, ids, _ in loaded[1:]:
        for s in SPLITS:
            if not np.array_equal(ids[s], first_ids[s]):
                raise AicdError(f"cannot concatenate feature sets: row ids differ in split {s}")
    names = [n for _, _, part_names in loaded for n in part_names]
    featurizer = ConcatFeaturizer(fitted)
    if featurizer.feature_names != names:
        raise AicdError(f"the parts' featurizers do not match their {name_of('features')} (feature names differ): rebuild them")
    rows = {}
    with store.writer(out) as writer:
        for split in SPLITS:
            n = len(first_ids[split])
            blocks = (np.hstack([store.read(m[split], slice(i, i + store.CHUNK_ROWS)) for m, _, _ in loaded])
                      for i in range(0, n, store.CHUNK_ROWS))
            writer.matrix(f"X_{split}", n, len(names), blocks)
            writer.array(f"ids_{split}", first_ids[split])
            rows[split] = int(n)
        writer.array("feature_names", np.asarray(names, dtype=str))
    return featurizer, names, rows
