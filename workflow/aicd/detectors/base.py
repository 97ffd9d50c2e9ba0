"""The detector interface (scikit-learn style) and its registry.

A detector: fit(X, y) -> self; predict(X) -> label names; optionally predict_scores(X) ->
(n_rows, n_classes) with columns in `classes_` order. Adding one: a subclass decorated with
@register("kind"), then a config entry {kind: ..., features: ..., params: {...}}.

What the workflow needs to know about a kind is declared on its class, and the plan
(aicd.plan) reads it from there; no rule names a kind:
- `storage`: "file" (a skops file, the default: aicd.fitted_files) or "folder" (save_pretrained:
  override `save`);
- `max_threads`, `environment` (its jobs' conda environment, envs/{environment}.yaml), `gpu`
  and `mem_mb` (default resources; a config entry's `resources:` overrides them);
- `zero_shot`: learns nothing from the train split's labels (not a trained row of Tables 5-7);
- `binarise`: fitted and scored on human vs every other class (Fast-DetectGPT on Task 3);
- `explains`: "coefficients" (n-gram weights through a back-projecting feature set) or "shap";
- `score_kind`: what its score_<class> columns hold (aicd.scores: probability, margin, score);
- `applies_to_new_code`: its fitted model predicts new rows (extra test sets, `aicd detect`);
- `PARAMS`: its parameter spec (aicd.params), the one home of its defaults;
- `prepared_inputs(name, params)`: files another job makes for it (a causal LM it scores with);
- `covers_feature_rows`: predicts the rows its feature set scored, a sample where the set
  scored one (the zero-shot panel on a CPU run); its score file then covers a sample."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import AicdError
from ..params import ParamSpec


def pd_isna(values: np.ndarray) -> np.ndarray:
    return np.array([v is None or (isinstance(v, float) and v != v) for v in values], dtype=bool)

REGISTRY: dict[str, type[Detector]] = {}


def register(kind: str) -> Callable[[type[Detector]], type[Detector]]:
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
    needs_ids: bool = False         # fit/predict take the rows' ids (row_ids: every split's, set by the job)
    storage: str = "file"           # how the fitted detector is stored: "file" (a skops file) or "folder"
    max_threads: int = 1            # threads its jobs can use
    environment: str = "core"       # the conda environment of its jobs (envs/{environment}.yaml)
    gpu: int = 0                    # GPUs its jobs ask for by default
    mem_mb: int = 4000              # memory its jobs ask for by default (times the attempt)
    zero_shot: bool = False         # learns nothing from the training labels
    binarise: bool = False          # fitted and scored on human vs every other class
    explains: str | None = None     # "coefficients" | "shap": what the analyses read from it
    score_kind: str = "probability"  # what predict_scores returns (aicd.scores.SCORE_KINDS)
    applies_to_new_code: bool = True  # its fitted model predicts new rows
    PARAMS = ParamSpec("a detector")  # its parameters (aicd.params); `open` ones pass to a library
    uses_validation: bool = False   # fit() reads a validation split (else one is not carved from train)
    covers_feature_rows: bool = False  # predicts only the validation/test rows its feature set scored (a sample)
    wants_group_validation: bool = False  # what it tunes on validation must come from held-out groups
    work_dir: str | None = None     # scratch folder that outlives a killed job (checkpoints); set by the job
    cache_dir: str | None = None    # shared cache folder (e.g. tokenised splits); set by the job

    def __init__(self, seed: int = 0, threads: int = 1, **params):
        self.seed = seed
        self.threads = threads
        self.params = params
        self.classes_: np.ndarray | None = None
        self.prepared: dict[str, str] = {}  # prepared_inputs' files, set by the job

    @classmethod
    def environment_for(cls, params: dict) -> str:
        """The environment its jobs need with these params (an option may need torch)."""
        return cls.environment

    @classmethod
    def is_zero_shot(cls, params: dict) -> bool:
        """zero_shot with these params (a user's plug-in decides by the params it is given)."""
        return cls.zero_shot

    @classmethod
    def binarises(cls, params: dict) -> bool:
        """binarise with these params."""
        return cls.binarise

    @classmethod
    def prepared_inputs(cls, name: str, params: dict) -> dict[str, str]:
        """{input name: path under results/} that another job makes for this detector."""
        return {}

    def label_of(self, y: np.ndarray) -> np.ndarray:
        """The classes the detector is fitted and scored on: human vs the rest when `binarise`."""
        y = np.asarray(y, dtype=object)
        if not self.binarise:
            return y
        return np.where(y == "human", "human", np.where(pd_isna(y), None, "machine")).astype(object)

    def summary(self, gold=None) -> dict:
        """What the fitted detector reports beside its predictions (threshold, AUROC, ...)."""
        return {}

    def extra_columns(self) -> dict[str, np.ndarray]:
        """Per-row values of the last prediction that go into the predictions table."""
        return {}

    def setting(self, name: str):
        """A parameter: its configured value, else the spec's default."""
        return self.params.get(name, self.PARAMS.by_name[name].default if name in self.PARAMS.by_name else None)

    def fit(self, X: np.ndarray, y: np.ndarray, X_val: np.ndarray | None = None, y_val: np.ndarray | None = None) -> Detector:
        raise NotImplementedError

    def predict(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def predict_scores(self, X: np.ndarray) -> np.ndarray | None:
        return None

    def predict_with_scores(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Labels and scores in one pass (detectors whose inference is costly override this)."""
        return self.predict(X), self.predict_scores(X)

    def save(self, path) -> None:
        """Store the fitted detector at `path` (a skops file that loads without running code:
        aicd.fitted_files; folder-based detectors override)."""
        from ..fitted_files import save_fitted
        save_fitted(self, path)

    def check_params(self) -> None:
        """Raise TypeError/ValueError for parameters the detector cannot take (before fitting);
        the spec's check by default, which a kind extends with checks across parameters."""
        self.PARAMS.check(self.params)


def detector_class(kind: str) -> type[Detector]:
    if kind not in REGISTRY:
        raise AicdError(f"unknown detector kind {kind!r}; registered kinds: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[kind]


def build(kind: str, params: dict, seed: int, threads: int = 1) -> Detector:
    cls = detector_class(kind)
    try:
        detector = cls(seed=seed, threads=threads, **params)
        detector.check_params()
        return detector
    except (TypeError, ValueError) as err:
        raise AicdError(f"detector kind {kind!r}: bad parameters {params}: {err}") from None
