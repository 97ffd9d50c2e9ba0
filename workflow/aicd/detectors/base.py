"""The detector interface (scikit-learn style) and its registry.

A detector: fit(X, y) -> self; predict(X) -> label names; optionally predict_scores(X) ->
(n_rows, n_classes) with columns in `classes_` order. Adding one: a subclass decorated with
@register("kind"), then a config entry {kind: ..., features: ..., params: {...}}. A detector that
reads code text rather than features sets `needs_text`; one stored as a folder (the encoders,
through save_pretrained) sets `model_suffix = ""` and overrides `save`."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import AicdError

REGISTRY: dict[str, type["Detector"]] = {}


def register(kind: str) -> Callable[[type["Detector"]], type["Detector"]]:
    def wrap(cls: type[Detector]) -> type[Detector]:
        if kind in REGISTRY:
            raise ValueError(f"detector kind {kind!r} registered twice")
        cls.kind = kind
        REGISTRY[kind] = cls
        return cls
    return wrap


class Detector:
    kind: str = ""
    needs_features: bool = True
    needs_text: bool = False        # fit/predict take the code strings instead of a feature matrix
    model_suffix: str = ".pkl"      # how the fitted detector is stored: a pickle file, or "" for a folder
    uses_validation: bool = False   # fit() reads a validation split (else one is not carved from train)
    wants_group_validation: bool = False  # what it tunes on validation must come from held-out groups
    work_dir: str | None = None     # scratch folder that outlives a killed job (checkpoints); set by the job
    cache_dir: str | None = None    # shared cache folder (e.g. tokenised splits); set by the job

    def __init__(self, seed: int = 0, threads: int = 1, **params):
        self.seed = seed
        self.threads = threads
        self.params = params
        self.classes_: np.ndarray | None = None

    def fit(self, X: np.ndarray, y: np.ndarray, X_val: np.ndarray | None = None, y_val: np.ndarray | None = None) -> "Detector":
        raise NotImplementedError

    def predict(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def predict_scores(self, X: np.ndarray) -> np.ndarray | None:
        return None

    def predict_with_scores(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Labels and scores in one pass (detectors whose inference is costly override this)."""
        return self.predict(X), self.predict_scores(X)

    def save(self, path) -> None:
        """Store the fitted detector at `path` (a pickle; folder-based detectors override)."""
        from ..io import write_pickle
        write_pickle(self, path)

    def check_params(self) -> None:
        """Raise TypeError/ValueError for parameters the detector cannot take (before fitting)."""


def build(kind: str, params: dict, seed: int, threads: int = 1) -> Detector:
    if kind not in REGISTRY:
        raise AicdError(f"unknown detector kind {kind!r}; registered kinds: {', '.join(sorted(REGISTRY))}")
    try:
        detector = REGISTRY[kind](seed=seed, threads=threads, **params)
        detector.check_params()
        return detector
    except (TypeError, ValueError) as err:
        raise AicdError(f"detector kind {kind!r}: bad parameters {params}: {err}") from None
