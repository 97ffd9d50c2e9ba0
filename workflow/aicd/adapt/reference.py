"""How the user's reference is shared between adapting and calibrating.

A threshold set on programs a model was fitted on sits too low for new programs (the fitted part
scores its own training rows as more human than it will score new human code), so the two never
share a program: a seeded ADAPT_SHARE of each language's reference programs is the *adapting*
part (the local model writes their counterparts; the pair part is fitted on them; every part's
weight is read on them), and the rest is the *calibrating* part, which the adapted detector
scores as new code and on which aicd.scoring.calibration sets the thresholds (itself split into
a fitting and a held-out part as always)."""

from __future__ import annotations

import numpy as np

from ..scoring.calibration import split_reference

ADAPT_SHARE = 0.5


def reference_parts(languages, share: float = ADAPT_SHARE, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(adapting indices, calibrating indices) of reference programs with these languages: each
    language split on its own, seeded by the seed and the language's position in sorted order."""
    languages = np.asarray(languages, dtype=object)
    adapting, calibrating = [], []
    for k, language in enumerate(sorted({str(v) for v in languages})):
        where = np.flatnonzero(languages.astype(str) == language)
        calibrate, adapt = split_reference(len(where), share, [seed, k])
        adapting.append(where[adapt])
        calibrating.append(where[calibrate])
    return _joined(adapting), _joined(calibrating)


def _joined(parts: list) -> np.ndarray:
    return np.sort(np.concatenate(parts)) if parts else np.array([], dtype=int)
