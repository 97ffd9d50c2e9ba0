"""The featurizer interface and the feature kinds' registry.

A featurizer takes a table (`code`, `language` columns) and is self-contained once fitted:
fit_transform(table) -> matrix; transform(table) -> matrix of the same width; feature_names;
report_fields(matrices) -> extra fields for the features report. A fitted featurizer stored by
the features stage (featurizer.skops, aicd.models.fitted_files) is all a fitted detector needs to apply
itself to new code (no paths into results/). Adding a kind: a subclass of Featurizer decorated
with @register("kind") (FEATURIZERS, an aicd.common.registry.Registry) in a module that
aicd.features.registry imports; a kind from an outside package registers through the entry point
group `aicd.features` or is named in a config as `kind: package.module:Class`. `Featurizer` is an
abstract base class: a kind without fit_transform or transform is refused when it registers.

What the workflow needs to know about a kind is declared on its class, with the defaults below:
- `max_threads`: threads its jobs can use; `environment`: "core", or "neural" where it needs
  torch (its jobs, and those that apply it, then use envs/neural.yaml);
- `back_projects`: its columns map back onto named n-grams (the SVM n-gram analysis);
- `named_columns`: each column is a named attribute (what SHAP values are read against);
- `verify_rows`: stored rows featurized again to show a --featurizer made a features file
  (fewer, or 0, where transform costs much: aicd.detectors.fitting);
- `stored_types`: the types (module.Name) beyond its own class that the fitted object holds,
  trusted when a fitted file is read (aicd.models.fitted_files);
- `PARAMS`: its parameter spec (aicd.common.params), the one home of its defaults."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod

import numpy as np

from ..common.errors import AicdError
from ..common.params import ParamSpec
from ..common.registry import Registry
from ..models.fitted_files import trust_kind_types, type_name


class Featurizer(ABC):
    kind: str = ""                      # its registered name (set by register)
    max_threads: int = 1
    environment: str = "core"
    back_projects: bool = False
    named_columns: bool = False
    verify_rows: int = 8
    stored_types: tuple[str, ...] = ()
    PARAMS = ParamSpec("a feature set")
    feature_names: list[str]            # a column's name per column, once fitted

    @abstractmethod
    def fit_transform(self, rows) -> np.ndarray:
        """Fit on the train split's rows; their matrix."""

    @abstractmethod
    def transform(self, rows) -> np.ndarray:
        """New rows' matrix, as wide as the fitted one."""

    def report_fields(self, matrices: dict) -> dict:
        """Extra fields for the features report (e.g. how many rows a sampled set scored)."""
        return {}

    def describe(self) -> dict:
        """What the feature set is, for the record of a detector fitted on it (the report names a
        zero-shot row's scoring model from it): its kind and parameters."""
        return {"kind": self.kind, "params": dict(getattr(self, "params", None) or {})}


def _admit(kind: str, cls: type) -> None:
    """A feature kind must be a Featurizer; it is trusted in fitted files with what it holds."""
    if not (isinstance(cls, type) and issubclass(cls, Featurizer)):
        raise AicdError(f"feature kind {kind!r} ({type_name(cls)}): a feature kind is a subclass of "
                        "aicd.features.base.Featurizer")
    if inspect.isabstract(cls):
        raise AicdError(f"feature kind {kind!r} ({type_name(cls)}) does not define "
                        f"{', '.join(sorted(cls.__abstractmethods__))}: a feature kind implements fit_transform(rows) "
                        "and transform(rows)")
    trust_kind_types(type_name(cls), *cls.stored_types)


FEATURIZERS = Registry("feature kind", admit=_admit, entry_points="aicd.features")
register = FEATURIZERS.register
