"""A fitted model: everything needed to apply a detector to raw code, in one place.

    FittedModel(detector, featurizer, labels, spec, task, code_version, validation)

saved by `python -m aicd.detectors` as its --model output: one pickle for detectors stored as a
pickle, or, for detectors stored as a folder (the encoders, save_pretrained), the folder with a
small `bundle.pkl` beside the weights (the same record without the detector). The featurizer is
the fitted, self-contained object of aicd.features (no paths into results/); None for detectors
that read code text or nothing.

    model = load_bundle("results/models/T1/svm_tfidf.pkl")
    model.predict_rows(table)   # table: code (+ language, id) -> id, pred, score_<class>...
"""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import AicdError
from ..io import read_pickle, write_pickle
from .base import REGISTRY, Detector

log = logging.getLogger("aicd.detectors")

BUNDLE_FILE = "bundle.pkl"   # inside a folder model
FORMAT = 1


def code_version() -> str:
    from .. import __version__
    from ..fingerprint import code_version as git_version

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
        # The detector's own attributes read through (report.analyses reads `.model_` of the
        # pickle it is given); never for dunder lookups made while unpickling.
        if name.startswith("__") or name == "detector":
            raise AttributeError(name)
        detector = self.__dict__.get("detector")
        if detector is None:
            raise AttributeError(name)
        return getattr(detector, name)

    def inputs_for(self, rows: pd.DataFrame):
        """What the detector reads for these rows: code text, a feature matrix, or nothing."""
        det = self.detector
        if det.needs_text:
            return rows["code"].to_numpy(dtype=object)
        if det.needs_features:
            if self.featurizer is None:
                raise AicdError("this model was saved without its featurizer, so it cannot read new code: "
                                "refit it with python -m aicd.detectors fit ... --featurizer FEATURIZER.pkl")
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


def save_bundle(bundle: FittedModel, path: str | Path) -> None:
    """One pickle; or the detector's own folder (save_pretrained) with bundle.pkl inside it."""
    detector = bundle.detector
    # the job's scratch and cache folders (results/checkpoints/..., results/cache/...) are not
    # part of the model: a bundle holds no path into results/
    detector.work_dir = detector.cache_dir = None
    if detector.storage == "folder":
        detector.save(path)
        write_pickle(replace(bundle, detector=None), Path(path) / BUNDLE_FILE)
    else:
        write_pickle(bundle, path)


def _read(path: Path):
    try:
        return read_pickle(path)
    except ModuleNotFoundError as err:
        if err.name and not err.name.startswith("aicd"):  # a plug-in's own module (kind: python)
            raise AicdError(f"{path} holds a detector from the module {err.name!r}, which does not import here: "
                            "install it, or put its folder on PYTHONPATH") from None
        raise AicdError(f"{path} is not a fitted model this version can read ({type(err).__name__}: {err})") from None
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as err:
        raise AicdError(f"{path} is not a fitted model this version can read ({type(err).__name__}: {err})") from None


def load_bundle(path: str | Path, device: str = "auto", threads: int = 1) -> FittedModel:
    """A fitted model from what `python -m aicd.detectors fit --model` wrote (a pickle or a folder).
    An older bare detector pickle loads too, without a featurizer."""
    path = Path(path)
    if not path.exists():
        raise AicdError(f"model {path} does not exist (fit one with the workflow: results/models/TASK/DETECTOR.pkl)")
    if path.is_dir():
        meta_file = path / BUNDLE_FILE
        if meta_file.exists():
            bundle = _read(meta_file)
            kind = bundle.detector_kind
        elif (path / "detector.json").exists():
            import json
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
        raise AicdError(f"{path} is the job report of a fit, not a model: pass the .pkl or the folder beside it")
    obj = _read(path)
    if isinstance(obj, FittedModel):
        if obj.format > FORMAT:
            raise AicdError(f"{path} was written by a newer version (format {obj.format}); update aicd")
        cls = REGISTRY.get(obj.detector_kind)
        if cls is not None and not cls.applies_to_new_code:
            raise AicdError(f"{path}: a {obj.detector_kind} model scores only its task's own splits (it needs files "
                            "other jobs made under results/), so it does not apply to new code")
        return obj
    if isinstance(obj, Detector):
        log.warning("%s holds a bare detector (an older version): it applies to feature matrices only", path)
        return FittedModel(obj, None, [str(c) for c in obj.classes_], {"kind": obj.kind}, detector_kind=obj.kind)
    raise AicdError(f"{path} holds a {type(obj).__name__}, not a fitted model")


def load_detector(path: str | Path) -> Detector:
    """The detector inside a fitted-model pickle (or a bare detector pickle)."""
    return load_bundle(path).detector
