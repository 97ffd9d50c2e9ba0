"""The detector interface (scikit-learn style) and its registry.

A detector: fit(X, y) -> self; predict(X) -> label names; optionally predict_scores(X) ->
(n_rows, n_classes) with columns in `classes_` order. Adding one: a subclass decorated with
@register("kind") (REGISTRY, an aicd.common.registry.Registry), then a config entry {kind: ...,
features: ..., params: {...}}. `Detector` is an abstract base class: a kind without fit or
predict is refused when it registers, naming the kind and the missing methods. A kind from an
outside package registers through the entry point group `aicd.detectors` or is named in a
config as `kind: package.module:Class` (aicd.common.registry).

What the workflow needs to know about a kind is declared on its class, and everything reads it
in one form, `Kind.traits(params)` (a `Traits`; a fitted detector's own is `detector.declared`):
the plan (aicd.plan), the job (label_of, the fitted model) and the report (through the plan);
no rule names a kind. The class attributes are the declarations; a kind whose params change
one of them (a user's score function is zero-shot and binarised; an option that needs torch)
returns the change from `declare(params)`:
- `inputs`: what fit/predict take: "features" (the matrix of the entry's feature set), "text"
  (the code strings), "ids" (the rows' ids, every split's also in `row_ids`, set by the job:
  predictions made elsewhere) or "nothing" (an empty matrix, a row per row); checked when the
  kind registers;
- `storage`: "file" (a skops file, the default: aicd.models.fitted_files) or "folder" (save_pretrained:
  override `save`);
- `max_threads`, `environment` (its jobs' conda environment, envs/{environment}.yaml), `gpu`
  and `mem_mb` (default resources; a config entry's `resources:` overrides them);
- `zero_shot`: learns nothing from the train split's labels (not a trained row of Tables 5-7);
- `binarise`: fitted and scored on human vs every other class (Fast-DetectGPT on Task 3);
- `dummy`: a dummy baseline (Table 4 underlines it where it beats every trained row; never
  averaged in Tables 5-7);
- `explains`: "coefficients" (n-gram weights through a back-projecting feature set) or "shap";
- `applies_to_new_code`: its fitted model predicts new rows (extra test sets, `aicd detect`);
- `covers_feature_rows`: predicts the rows its feature set scored, a sample where the set
  scored one (the zero-shot panel on a CPU run); its score file then covers a sample;
- `VERSION`: the version of the kind's method, written into every score file it makes: raise it
  when a change to the kind changes what it predicts for the same inputs and settings (a new
  default, a fixed bug in fit or predict), not for a refactor that changes no prediction;
- `score_kind`: what its score_<class> columns hold (aicd.data.scores: probability, margin, score);
- `PARAMS`: its parameter spec (aicd.common.params), the one home of its defaults;
- `prepared_inputs(name, params)`: files another job makes for it (a causal LM it scores with);
- `stored_types`: the types (module.Name) beyond its own class that its fitted object holds,
  trusted when a fitted model file is read (aicd.models.fitted_files)."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields, replace

import numpy as np

from ..common.errors import AicdError
from ..common.params import ParamSpec
from ..common.registry import Registry, did_you_mean
from ..models.fitted_files import trust_kind_types, type_name


def pd_isna(values: np.ndarray) -> np.ndarray:
    return np.array([v is None or (isinstance(v, float) and v != v) for v in values], dtype=bool)


INPUTS = ("features", "text", "ids", "nothing")  # what a kind's fit/predict take (Detector.inputs)


@dataclass(frozen=True)
class Traits:
    """What a detector kind is with given params (module docstring): the one form in which the
    plan, the job and the report read a kind's declarations."""

    kind: str
    version: int
    inputs: str
    storage: str
    max_threads: int
    environment: str
    gpu: int
    mem_mb: int
    zero_shot: bool
    binarise: bool
    dummy: bool
    explains: str | None
    applies_to_new_code: bool
    covers_feature_rows: bool


class Detector(ABC):
    kind: str = ""                  # its registered name (set by register)
    VERSION: int = 1                # the version of its method (module docstring: when to raise it)
    inputs: str = "features"        # what fit/predict take: one of INPUTS (module docstring)
    stored_types: tuple[str, ...] = ()  # types (module.Name) its fitted object holds beyond its own class
    storage: str = "file"           # how the fitted detector is stored: "file" (a skops file) or "folder"
    max_threads: int = 1            # threads its jobs can use
    environment: str = "core"       # the conda environment of its jobs (envs/{environment}.yaml)
    gpu: int = 0                    # GPUs its jobs ask for by default
    mem_mb: int = 4000              # memory its jobs ask for by default (times the attempt)
    zero_shot: bool = False         # learns nothing from the training labels
    binarise: bool = False          # fitted and scored on human vs every other class
    dummy: bool = False             # a dummy baseline (random, majority)
    explains: str | None = None     # "coefficients" | "shap": what the analyses read from it
    score_kind: str = "probability"  # what predict_scores returns (aicd.data.scores.SCORE_KINDS)
    applies_to_new_code: bool = True  # its fitted model predicts new rows
    PARAMS = ParamSpec("a detector")  # its parameters (aicd.common.params); `open` ones pass to a library
    uses_validation: bool = False   # fit() reads a validation split (else one is not carved from train)
    covers_feature_rows: bool = False  # predicts only the validation/test rows its feature set scored (a sample)
    wants_group_validation: bool = False  # what it tunes on validation must come from held-out groups
    work_dir: str | None = None     # scratch folder that outlives a killed job (checkpoints); set by the job
    cache_dir: str | None = None    # shared cache folder (tokenised splits; per-text features); set by the job
    feature_names: list | None = None  # the feature set's column names ("features" kinds), set by the job

    def __init__(self, seed: int = 0, threads: int = 1, **params):
        self.seed = seed
        self.threads = threads
        self.params = params
        self.classes_: np.ndarray | None = None
        self.prepared: dict[str, str] = {}  # prepared_inputs' files, set by the job

    @classmethod
    def traits(cls, params: dict | None = None) -> Traits:
        """What this kind is with these params: its class attributes, as `declare` changes them."""
        declared = {f.name: getattr(cls, f.name) for f in fields(Traits) if f.name != "version"}
        return replace(Traits(version=cls.VERSION, **declared), **cls.declare(dict(params or {})))

    @classmethod
    def declare(cls, params: dict) -> dict:
        """{declaration: value} that these params change (a user's plug-in is zero-shot with a
        score function; an option may need torch); nothing by default."""
        return {}

    @property
    def declared(self) -> Traits:
        """This detector's traits, with its own params."""
        return self.traits(self.params)

    @classmethod
    def prepared_inputs(cls, name: str, params: dict) -> dict[str, str]:
        """{input name: path under results/} that another job makes for this detector."""
        return {}

    def label_of(self, y: np.ndarray) -> np.ndarray:
        """The classes the detector is fitted and scored on: human vs the rest when `binarise`."""
        y = np.asarray(y, dtype=object)
        if not self.declared.binarise:
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

    @abstractmethod
    def fit(self, X: np.ndarray, y: np.ndarray, X_val: np.ndarray | None = None, y_val: np.ndarray | None = None) -> Detector:
        """Fit on the train split (and the validation split where the kind reads one); returns self."""

    @abstractmethod
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Label names, one per row."""

    def predict_scores(self, X: np.ndarray) -> np.ndarray | None:
        return None

    def predict_with_scores(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Labels and scores in one pass (detectors whose inference is costly override this)."""
        return self.predict(X), self.predict_scores(X)

    def save(self, path) -> None:
        """Store the fitted detector at `path` (a skops file that loads without running code:
        aicd.models.fitted_files; folder-based detectors override)."""
        from ..models.fitted_files import save_fitted
        save_fitted(self, path)

    def check_params(self) -> None:
        """Raise TypeError/ValueError for parameters the detector cannot take (before fitting);
        the spec's check by default, which a kind extends with checks across parameters."""
        self.PARAMS.check(self.params)


def _admit(kind: str, cls: type) -> None:
    """A kind's declarations checked as it registers; a kind stored in a file is trusted in fitted
    model files with the types it declares it holds."""
    where = f"detector kind {kind!r} ({type_name(cls)})"
    if not (isinstance(cls, type) and issubclass(cls, Detector)):
        raise AicdError(f"{where}: a detector kind is a subclass of aicd.detectors.base.Detector")
    if not isinstance(cls.VERSION, int) or isinstance(cls.VERSION, bool) or cls.VERSION < 1:
        raise AicdError(f"{where}: VERSION = {cls.VERSION!r}; declare the kind's version as a whole number from 1")
    legacy = [name for name in ("needs_features", "needs_text", "needs_ids") if hasattr(cls, name)]
    if legacy:
        raise AicdError(f"{where} declares {', '.join(legacy)}: what fit/predict take is one choice now, "
                        f"inputs = one of {', '.join(map(repr, INPUTS))}")
    overrides = [name for name in ("environment_for", "is_zero_shot", "binarises") if hasattr(cls, name)]
    if overrides:
        raise AicdError(f"{where} defines {', '.join(overrides)}: a kind whose params change a declaration returns "
                        "the change from declare(params), e.g. {'zero_shot': True}")
    if cls.inputs not in INPUTS:
        raise AicdError(f"{where}: inputs = {cls.inputs!r}{did_you_mean(cls.inputs, INPUTS)}; declare one of "
                        f"{', '.join(map(repr, INPUTS))}")
    if inspect.isabstract(cls):
        raise AicdError(f"{where} does not define {', '.join(sorted(cls.__abstractmethods__))}: a detector kind "
                        "implements fit(X, y[, X_val, y_val]) and predict(X)")
    if cls.traits().storage == "file":
        trust_kind_types(type_name(cls), *cls.stored_types)


REGISTRY = Registry("detector kind", admit=_admit, entry_points="aicd.detectors")
register = REGISTRY.register
# What a fitted model file holds around its kind's own types: the bundle, the novelty reference of
# a detector on a feature set and the wrapper of a calibrated one (aicd.detectors.training).
trust_kind_types("aicd.detectors.bundle.FittedModel", "aicd.detectors.novelty.Novelty",
                 "aicd.detectors.training.Calibrated")


def build(kind: str, params: dict, seed: int, threads: int = 1) -> Detector:
    cls = REGISTRY[kind]
    try:
        detector = cls(seed=seed, threads=threads, **params)
        detector.check_params()
        return detector
    except (TypeError, ValueError) as err:
        raise AicdError(f"detector kind {kind!r}: bad parameters {params}: {err}") from None
