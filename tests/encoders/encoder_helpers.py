"""Small helpers shared by the encoder test modules (plain functions, not fixtures)."""

from aicd.detectors import build


def split(code_rows):
    """(train, validation, test) slices of the trial rows the `code_rows` fixture gives."""
    X, y = code_rows
    return (X[:200], y[:200]), (X[200:260], y[200:260]), (X[260:320], y[260:320])


def fit(model, params, train, val, work, cache, seed=0):
    det = build("encoder", {"model": model, **params}, seed=seed, threads=1)
    det.work_dir, det.cache_dir = str(work), str(cache)
    return det.fit(*train, *val)
