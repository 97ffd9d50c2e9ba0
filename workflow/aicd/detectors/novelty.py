"""How far a row lies from the rows a detector was trained on, in the detector's feature space:
the mean distance to its k nearest training rows (a seeded sample of them, standardised, in the
sample's 32 principal directions), over the median of the same for the sample's own rows (each
left out of its own neighbours). About 1 in distribution; 2 or more: unlike anything it was
trained on, so its label deserves less trust. Written to prediction files (`ood_score`) and
shown by `aicd detect`, for detectors that read a feature matrix."""

from __future__ import annotations

import numpy as np

SAMPLE = 2000
COMPONENTS = 32
K = 10


class Novelty:
    def __init__(self, X_train, seed: int = 0, sample: int = SAMPLE, components: int = COMPONENTS, k: int = K):
        rng = np.random.default_rng(seed)
        n = len(X_train)
        idx = np.sort(rng.choice(n, min(sample, n), replace=False))
        S = np.array(X_train[idx], dtype=np.float64)
        self.mean, self.std = S.mean(axis=0), S.std(axis=0) + 1e-9
        Z = (S - self.mean) / self.std
        _, _, vt = np.linalg.svd(Z, full_matrices=False)
        self.basis = vt[: min(components, len(vt))].T
        self.reference = Z @ self.basis
        self.k = max(1, min(k, len(self.reference) - 1))
        own = self._knn(self.reference, leave_out_self=True)
        self.scale = float(np.median(own)) or 1.0

    def _knn(self, P: np.ndarray, leave_out_self: bool = False) -> np.ndarray:
        out = np.empty(len(P))
        ref_sq = (self.reference ** 2).sum(axis=1)
        for start in range(0, len(P), 4096):
            block = P[start:start + 4096]
            d2 = (block ** 2).sum(axis=1)[:, None] + ref_sq[None, :] - 2 * block @ self.reference.T
            if leave_out_self:
                d2[np.arange(len(block)), np.arange(start, start + len(block))] = np.inf
            near = np.partition(np.maximum(d2, 0), self.k - 1, axis=1)[:, : self.k]
            out[start:start + len(block)] = np.sqrt(near).mean(axis=1)
        return out

    def score(self, X) -> np.ndarray:
        """X: rows in the training feature space (a memory map is read a block at a time)."""
        from ..features.store import blocks

        out = np.empty(len(X), dtype=np.float32)
        start = 0
        for block in blocks(X, 8192):  # its float64 temporaries stay ~100 MB at 1,500 columns
            P = ((block.astype(np.float64) - self.mean) / self.std) @ self.basis
            out[start:start + len(P)] = self._knn(P) / self.scale
            start += len(P)
        return out
