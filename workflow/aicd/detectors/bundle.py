"""A fitted model: everything needed to apply a detector to raw code, in one place.

    FittedModel(detector, featurizer, labels, spec, task, code_version, validation)

saved by `python -m aicd.detectors` as its --model output: one skops file (aicd.models.fitted_files:
reading it runs no code from the file) for detectors stored in a file, or, for detectors stored
as a folder (the encoders, save_pretrained with safetensors), the folder with a small
`bundle.skops` beside the weights (the same record without the detector). The featurizer is
the fitted, self-contained object of aicd.features (no paths into results/); None for detectors
that read code text or nothing.

    model = load_bundle("results/models/binary/svm_tfidf.skops")
    model.predict_rows(table)   # table: code (+ language, id) -> id, pred, score_<class>...

A pickle (what earlier versions wrote) is read only with trust_pickle (--trust-pickle)."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..common.errors import AicdError
from ..models.fitted_files import load_fitted, save_fitted
from ..outputs import FITTED_SUFFIX, SHOWN
from .base import REGISTRY, Detector

log = logging.getLogger("aicd.detectors")

BUNDLE_FILE = f"bundle{FITTED_SUFFIX}"   # inside a folder model
OLD_BUNDLE_FILE = "bundle.pkl"    # what earlier versions wrote there (a pickle)
FORMAT = 2                        # 1: a pickle; 2: skops
REFIT = f"refit it (the workflow writes {SHOWN.model_folder('TASK', 'DETECTOR')}{FITTED_SUFFIX})"


def code_version() -> str:
    from .. import __version__
    from ..records.fingerprint import code_version as git_version

    return f"aicd {__version__}, {git_version(Path(__file__).resolve().parents[3])}"


@dataclass
class FittedModel:
    detector: Detector | None
    featurizer: object | None
    labels: list
    spec: dict
    task: str | None = None
    code_version: str = ""
    validation: dict = field(default_factory=dict)   # how the validation rows were had (given, carved, none)
    detector_kind: str = ""
    format: int = FORMAT
    train_languages: list = field(default_factory=list)  # what `aicd detect` flags as seen in training

    def __getattr__(self, name):
        # The detector's own attributes read through (`.model_`, `.classes_`); never for dunder
        # lookups made while the file is read.
        if name.startswith("__") or name == "detector":
            raise AttributeError(name)
        detector = self.__dict__.get("detector")
        if detector is None:
            raise AttributeError(name)
        return getattr(detector, name)

    def use_feature_cache(self, folder: str | None) -> None:
        """Read and keep per-text feature values in the run's cache (aicd.common.text_cache) while
        this model reads new rows: its featurizer's parts that keep any, and the detector where
        it computes its own (robust's stylometry; an encoder's cache folder is its token cache)."""
        if not folder:
            return
        featurizer = self.featurizer
        parts = [] if featurizer is None else list(getattr(featurizer, "parts", None) or [featurizer])
        for part in parts:
            if hasattr(part, "cache_dir"):
                part.cache_dir = folder
        if self.detector is not None and self.detector.declared.storage != "folder":
            for held in with_wrapped(self.detector):
                held.cache_dir = folder

    def inputs_for(self, rows: pd.DataFrame):
        """What the detector reads for these rows: code text, a feature matrix, or nothing."""
        det = self.detector
        if det.inputs == "text":
            return rows["code"].to_numpy(dtype=object)
        if det.inputs == "features":
            if self.featurizer is None:
                raise AicdError("this model was saved without its featurizer, so it cannot read new code: "
                                f"refit it with python -m aicd.detectors fit ... --featurizer featurizer{FITTED_SUFFIX}")
            return self.featurizer.transform(rows)
        return np.zeros((len(rows), 0), dtype=np.float32)

    def predict_rows(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Predictions for a table of code (`code`, optional `language` and `id`): id (when
        given), pred, and score_<class> per class where the detector gives scores."""
        if "code" not in rows.columns:
            raise AicdError(f"rows to predict need a 'code' column; got {list(rows.columns)}")
        out = pd.DataFrame({"id": rows["id"].to_numpy()} if "id" in rows.columns else {}, index=range(len(rows)))
        if rows.empty:
            out["pred"] = pd.Series([], dtype=object)
            return out
        X = self.inputs_for(rows)
        pred, scores = self.detector.predict_with_scores(X)
        out["pred"] = np.asarray(pred, dtype=object)
        if scores is not None:
            for j, cls in enumerate(self.detector.classes_):
                out[f"score_{cls}"] = np.asarray(scores)[:, j].astype(np.float32)
        novelty = getattr(self.detector, "novelty_", None)
        if novelty is not None:  # distance to the training rows (aicd.detectors.novelty)
            out["ood_score"] = novelty.score(X)
        return out


def make_bundle(detector: Detector, featurizer, spec: dict, task: str | None = None,
                validation: dict | None = None, train_languages=()) -> FittedModel:
    return FittedModel(detector=detector, featurizer=featurizer,
                       labels=[str(c) for c in (detector.classes_ if detector.classes_ is not None else [])],
                       spec=dict(spec), task=task, code_version=code_version(), validation=dict(validation or {}),
                       detector_kind=detector.kind, train_languages=sorted({str(x) for x in train_languages}))


def with_wrapped(detector) -> list:
    """The detector and the one it wraps, where it is a wrapper (aicd.detectors.training.Calibrated:
    its base fits and predicts, so the job's folders are set and cleared on both)."""
    base = vars(detector).get("base")
    return [detector] if base is None else [detector, base]


def save_bundle(bundle: FittedModel, path: str | Path) -> None:
    """One skops file; or the detector's own folder (save_pretrained) with bundle.skops inside it."""
    detector = bundle.detector
    # the job's scratch and cache folders (results/checkpoints/..., results/cache/...) are not
    # part of the model: a bundle holds no path into results/
    for held in with_wrapped(detector):
        held.work_dir = held.cache_dir = None
    if detector.declared.storage == "folder":
        detector.save(path)
        save_fitted(replace(bundle, detector=None), Path(path) / BUNDLE_FILE)
    else:
        # a kind: python object may hold library types its entry's trust_types vouches for only
        # when read (and aicd detect's --trust-type): its file is not checked here
        mixed = any(getattr(held, "holds_users_objects", False) for held in with_wrapped(detector))
        save_fitted(bundle, path, vouched=None if mixed else users_code(detector))


def users_code(detector) -> list[str]:
    """The types of the user's own code a bundle may hold, which its readers trust because the
    config names them (configured_code): the class of a kind given as package.module:Class, and
    what its params name."""
    held = with_wrapped(detector)
    names = [t for d in held for t in configured_code({"params": d.params})]
    return names + [f"{type(d).__module__}.{type(d).__qualname__}" for d in held
                    if not type(d).__module__.startswith("aicd.")]


def configured_code(spec: dict | None) -> list[str]:
    """The user's own code that a detector's config entry names: its kind where written `package.module:Class`, its `package.module:Name`
    params (a `kind: python` detector's object or score_function), as type names. Its model
    file may hold objects of these types, trusted because the config naming them is the user's."""
    names = []
    kind = (spec or {}).get("kind")
    if isinstance(kind, str) and ":" in kind:  # a kind the config names as package.module:Class
        names.append(kind.replace(":", "."))
    params = (spec or {}).get("params") or {}
    for value in params.values():
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", value):
            names.append(value.replace(":", "."))
    # the library types its objects hold, which the entry names (kind: python's trust_types)
    names += [str(t) for t in params.get("trust_types") or []]
    return names


def _read(path: Path, trust_pickle: bool, trust_types):
    # every registered kind is trusted, the package's, those installed packages register (entry
    # points) and those of the user's own code already running here (aicd.models.fitted_files); the
    # feature kinds too, as a model holds its featurizer
    from ..features import registry

    REGISTRY.load_entry_points()
    registry.FEATURIZERS.load_entry_points()

    return load_fitted(path, "a fitted model", REFIT, trust_pickle=trust_pickle, trust_types=trust_types)


def load_bundle(path: str | Path, device: str = "auto", threads: int = 1, trust_pickle: bool = False,
                trust_types=()) -> FittedModel:
    """A fitted model from what `python -m aicd.detectors fit --model` wrote (a skops file or a
    folder). Reading it runs no code from the file; its types must all be trusted
    (aicd.models.fitted_files; `trust_types` adds the user's own). A pickle of an earlier version (a
    bundle, or a bare detector, which loads without a featurizer) is read only with trust_pickle."""
    path = Path(path)
    if not path.exists():
        raise AicdError(f"model {path} does not exist (fit one with the workflow: {SHOWN.model_folder('TASK', 'DETECTOR')}{FITTED_SUFFIX})")
    if path.is_dir():
        meta_file, old_file = path / BUNDLE_FILE, path / OLD_BUNDLE_FILE
        if meta_file.exists() or old_file.exists():
            bundle = _read(meta_file if meta_file.exists() else old_file, trust_pickle, trust_types)
            if not isinstance(bundle, FittedModel):
                raise AicdError(f"{path}: its {BUNDLE_FILE} holds a {type(bundle).__name__}, not a fitted model's record")
            kind = bundle.detector_kind
        elif (path / "detector.json").exists():
            kind = json.loads((path / "detector.json").read_text())["kind"]
            bundle = FittedModel(None, None, [], {"kind": kind}, detector_kind=kind)
        else:
            raise AicdError(f"{path} is a folder without {BUNDLE_FILE} or detector.json: not a fitted model")
        if kind not in REGISTRY or not hasattr(REGISTRY[kind], "load"):
            raise AicdError(f"{path}: detector kind {kind!r} cannot be loaded from a folder")
        bundle.detector = REGISTRY[kind].load(path, device=device, threads=threads)
        bundle.labels = bundle.labels or [str(c) for c in bundle.detector.classes_]
        return bundle
    if path.suffix == ".json":
        raise AicdError(f"{path} is the job report of a fit, not a model: pass the {FITTED_SUFFIX} file or the folder beside it")
    obj = _read(path, trust_pickle, trust_types)
    if isinstance(obj, FittedModel):
        if obj.format > FORMAT:
            raise AicdError(f"{path} was written by a newer version (format {obj.format}); update aicd")
        cls = REGISTRY.get(obj.detector_kind)
        if cls is not None and not cls.traits(obj.spec.get("params")).applies_to_new_code:
            raise AicdError(f"{path}: a {obj.detector_kind} model scores only its task's own splits (it needs files "
                            "other jobs made under results/), so it does not apply to new code")
        return obj
    if isinstance(obj, Detector):
        log.warning("%s holds a bare detector (an older version): it applies to feature matrices only", path)
        return FittedModel(obj, None, [str(c) for c in obj.classes_], {"kind": obj.kind}, detector_kind=obj.kind)
    raise AicdError(f"{path} holds a {type(obj).__name__}, not a fitted model")


def load_detector(path: str | Path, trust_types=()) -> Detector:
    """The detector inside a fitted model."""
    return load_bundle(path, trust_types=trust_types).detector
