"""Near-duplicate detection with MinHash LSH, vectorised over all rows at once.

For each band the band's rows are hashed to one uint64 key, keys are sorted, and rows with
equal keys become candidate pairs: every pair of a bucket of at most FULL_BUCKET rows, and in a
larger bucket each row with the first of its bucket and with its neighbour (k pairs, not k^2:
such buckets are clusters of near-copies, which those pairs already link). A candidate is a
near duplicate when its estimated Jaccard similarity (equal signature positions) reaches the
threshold. Every pair in a small bucket matters: with first-and-neighbour pairs alone, two
near duplicates that were neither adjacent nor like the bucket's first row were never compared,
and the task splits' leakage guard (which compares other subsets) found them later.
Clusters are the connected components of those pairs. Memory: the signatures
(n x num_perm x 4 bytes) plus one uint64 per row per band in flight."""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

_MIX = np.uint64(0x100000001B3)
_CHUNK = 1 << 18
FULL_BUCKET = 64  # buckets up to this size give all their pairs (at most 2,016)


def candidate_pairs(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Unique (i, j), i < j, sharing at least one band bucket."""
    n = len(signatures)
    found = []
    for band in range(bands):
        cols = signatures[:, band * rows:(band + 1) * rows].astype(np.uint64)
        key = np.full(n, np.uint64(band + 1))
        with np.errstate(over="ignore"):
            for c in range(cols.shape[1]):
                key = (key ^ cols[:, c]) * _MIX
        order = np.argsort(key, kind="stable")
        sorted_keys = key[order]
        same = sorted_keys[1:] == sorted_keys[:-1]
        if not same.any():
            continue
        # bucket of each sorted position: start index and size
        starts_mask = np.concatenate(([True], ~same))
        bucket = np.cumsum(starts_mask) - 1
        bucket_start = np.flatnonzero(starts_mask)
        sizes = np.diff(np.append(bucket_start, n))
        pos = np.arange(1, n)
        member = pos[same]
        small = sizes[bucket[member]] <= FULL_BUCKET
        # small buckets: every pair (i < j) by offsets within the bucket
        for size in np.unique(sizes[(sizes > 1) & (sizes <= FULL_BUCKET)]):
            firsts = bucket_start[sizes == size]
            i, j = np.triu_indices(int(size), k=1)
            found.append(np.stack([order[(firsts[:, None] + i[None, :]).ravel()],
                                   order[(firsts[:, None] + j[None, :]).ravel()]], axis=1))
        # large buckets: each row with its neighbour and with the bucket's first row
        big = member[~small]
        if len(big):
            first = bucket_start[bucket[big]]
            neighbour = np.stack([order[big - 1], order[big]], axis=1)
            to_first = np.stack([order[first], order[big]], axis=1)
            found.append(neighbour)
            found.append(to_first[first != big - 1])
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.concatenate(found)
    pairs.sort(axis=1)
    return np.unique(pairs, axis=0)


def verified_pairs(signatures: np.ndarray, pairs: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Candidates whose estimated Jaccard >= threshold, with their similarities."""
    keep, sims = [], []
    for start in range(0, len(pairs), _CHUNK):
        chunk = pairs[start:start + _CHUNK]
        sim = (signatures[chunk[:, 0]] == signatures[chunk[:, 1]]).mean(axis=1)
        ok = sim >= threshold
        keep.append(chunk[ok])
        sims.append(sim[ok])
    if not keep:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0)
    return np.concatenate(keep), np.concatenate(sims)


def near_duplicates(signatures: np.ndarray, threshold: float, bands: int, rows: int) -> tuple[np.ndarray, dict]:
    """(cluster label per row, statistics). Rows without a near duplicate are singletons."""
    n = len(signatures)
    candidates = candidate_pairs(signatures, bands, rows)
    pairs, _ = verified_pairs(signatures, candidates, threshold)
    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    sizes = np.bincount(labels)
    stats = {
        "rows": int(n),
        "candidate_pairs": int(len(candidates)),
        "near_duplicate_pairs": int(len(pairs)),
        "clusters_with_duplicates": int((sizes > 1).sum()),
        "rows_in_such_clusters": int(sizes[sizes > 1].sum()),
        "largest_cluster": int(sizes.max()) if n else 0,
        "cluster_size_histogram": {str(k): int(v) for k, v in zip(*np.unique(sizes[sizes > 1], return_counts=True))},
    }
    return labels, stats


def survivors(labels: np.ndarray, priority: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Boolean mask: one row per cluster, the lowest (priority, id). Deterministic."""
    order = np.lexsort((ids, priority, labels))
    first = np.ones(len(order), dtype=bool)
    first[1:] = labels[order][1:] != labels[order][:-1]
    keep = np.zeros(len(labels), dtype=bool)
    keep[order[first]] = True
    return keep


def cross_pairs(sig_a: np.ndarray, sig_b: np.ndarray, threshold: float, bands: int, rows: int) -> np.ndarray:
    """Near-duplicate pairs (index in a, index in b) between two sets: the leakage check."""
    both = np.concatenate([sig_a, sig_b])
    na = len(sig_a)
    candidates = candidate_pairs(both, bands, rows)
    candidates = candidates[(candidates[:, 0] < na) & (candidates[:, 1] >= na)]  # pairs within a set do not leak
    pairs, _ = verified_pairs(both, candidates, threshold)
    return np.stack([pairs[:, 0], pairs[:, 1] - na], axis=1)
