"""MinHash signatures of code on token shingles, and LSH banding parameters.

Tokens are identifiers/numbers (\\w+) and single punctuation characters; a shingle is
`shingle_size` consecutive tokens. Each token is hashed with CRC-32 (deterministic across
processes, unlike Python's hash), shingles are combined polynomially in 64 bits, and each of
`num_perm` permutations is a multiply-shift hash (a * x + b) >> 32 with a, b drawn from a
generator seeded from config. A signature is `num_perm` uint32 minima; the share of equal
positions between two signatures estimates the Jaccard similarity of their shingle sets."""

from __future__ import annotations

import re
import zlib
from functools import lru_cache

import numpy as np

from ..common.defaults import schema_default

# the config's defaults (dataset.minhash, dataset.dedup), for a call outside a run: a job gets
# the run's values from its spec
NUM_PERM = schema_default("dataset.minhash.num_perm")
SHINGLE_SIZE = schema_default("dataset.minhash.shingle_size")
MINHASH_SEED = schema_default("dataset.minhash.seed")
THRESHOLD = schema_default("dataset.dedup.threshold")
FALSE_NEGATIVE_WEIGHT = schema_default("dataset.dedup.false_negative_weight")

TOKEN = re.compile(r"\w+|[^\w\s]")
_MIX = np.uint64(0x100000001B3)  # FNV-1a 64-bit prime: mixes token hashes into a shingle hash
_TOKEN_HASHES: dict[str, int] = {}  # per-process memo of token -> CRC-32 (0 stored as 1)


@lru_cache(maxsize=8)
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 2**63, size=num_perm, dtype=np.uint64) | np.uint64(1)  # odd multipliers
    b = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64)
    return a, b


def shingle_hashes(code: str, size: int) -> np.ndarray:
    tokens = TOKEN.findall(code)
    if not tokens:
        return np.zeros(1, dtype=np.uint64)
    cache = _TOKEN_HASHES
    if len(cache) > 2_000_000:  # bound the memo; tokens repeat heavily (keywords, punctuation)
        cache.clear()
    th = np.fromiter((cache.get(t) or cache.setdefault(t, zlib.crc32(t.encode("utf-8")) or 1) for t in tokens),
                     dtype=np.uint64, count=len(tokens))
    width = max(1, len(th) - size + 1)
    out = th[:width].copy()
    with np.errstate(over="ignore"):
        for j in range(1, min(size, len(th))):
            out = out * _MIX ^ th[j:j + width]
    return np.unique(out)


def signature(code: str, num_perm: int = NUM_PERM, shingle_size: int = SHINGLE_SIZE, seed: int = MINHASH_SEED) -> np.ndarray:
    a, b = permutations(num_perm, seed)
    h = shingle_hashes(code, shingle_size)
    with np.errstate(over="ignore"):
        values = (h[:, None] * a[None, :] + b[None, :]) >> np.uint64(32)
    return values.min(axis=0).astype(np.uint32)


def estimated_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """Row-wise share of equal positions (arrays of shape (n, num_perm) or (num_perm,))."""
    return (sig_a == sig_b).mean(axis=-1)


@lru_cache(maxsize=16)
def lsh_params(threshold: float, num_perm: int, false_negative_weight: float = FALSE_NEGATIVE_WEIGHT) -> tuple[int, int]:
    """(bands, rows per band) minimising the weighted false-positive and false-negative areas
    of the LSH S-curve around the threshold (datasketch's criterion; its default weights are
    0.5/0.5, which gives 9 x 13 for 0.8 and finds only ~40% of pairs at exactly 0.8).
    Candidates are verified on their signatures, so a false positive costs a comparison,
    a false negative a duplicate left in: the default weight leans towards recall."""
    s = np.linspace(0.0, 1.0, 1001)
    below, above = s <= threshold, s >= threshold
    best, best_cost = (1, num_perm), np.inf
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            p = 1.0 - (1.0 - s ** rows) ** bands
            cost = ((1 - false_negative_weight) * np.trapezoid(p[below], s[below])
                    + false_negative_weight * np.trapezoid(1.0 - p[above], s[above]))
            if cost < best_cost:
                best, best_cost = (bands, rows), cost
    return best


def detection_probability(similarity: float, bands: int, rows: int) -> float:
    """Chance that a pair of this Jaccard similarity shares at least one band."""
    return 1.0 - (1.0 - similarity ** rows) ** bands
