"""One registry class serves every pluggable kind (aicd.common.registry): a detector kind and a feature
kind added in one file of the user's own are in the config schema, the plan, the detectors and
features stages and `aicd detect` (their fitted files trusted because they registered); a kind
that declares a bad `inputs`, the old booleans or a name already taken is refused in one line;
every kind module of the package is imported where its registry is filled, and every type the
kinds declare their fitted files hold exists."""

from __future__ import annotations

import ast
import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from aicd.cli import main as aicd
from aicd.common.errors import AicdError
from aicd.common.registry import Registry
from aicd.config import schema, validate_config
from aicd.detectors import REGISTRY, Detector
from aicd.detectors.__main__ import main as detectors_main
from aicd.features.__main__ import main as features_main
from aicd.features.base import Featurizer
from aicd.features.registry import FEATURIZERS
from aicd.models.fitted_files import kind_types
from aicd.plan import Plan
from fitted_task_helpers import write_task

PKG = Path(__file__).resolve().parents[3] / "workflow" / "aicd"

# A user's module: a feature kind and a detector kind on it, each one class, nothing else edited.
ONE_FILE = '''
import numpy as np

from aicd.detectors.base import Detector, register as detector_kind
from aicd.features.base import Featurizer, register as feature_kind
from aicd.common.params import Param, ParamSpec


@feature_kind("line_shape")
class LineShape(Featurizer):
    """Lines and mean line length of each program."""

    named_columns = True
    feature_names = ["lines", "mean_line_length"]

    def transform(self, rows):
        codes = list(rows["code"])
        lines = np.array([code.count("\\n") + 1 for code in codes], dtype=np.float32)
        return np.column_stack([lines, np.array([len(c) for c in codes], dtype=np.float32) / lines])

    fit_transform = transform


@detector_kind("longer_lines")
class LongerLines(Detector):
    """Machine where a column is above the midpoint of the two classes' means in training."""

    max_threads = 2
    PARAMS = ParamSpec("the longer-lines detector", (
        Param("column", (int,), 1, "ours", "the feature column compared", minimum=0),
    ))

    def fit(self, X, y, X_val=None, y_val=None):
        values, y = np.asarray(X)[:, self.setting("column")], np.asarray(y, dtype=object)
        self.classes_ = np.array(["human", "machine"], dtype=object)
        self.threshold_ = float((values[y == "human"].mean() + values[y == "machine"].mean()) / 2)
        return self

    def predict_scores(self, X):
        machine = 1 / (1 + np.exp(-(np.asarray(X)[:, self.setting("column")] - self.threshold_)))
        return np.column_stack([1 - machine, machine])

    def predict(self, X):
        return self.classes_[(self.predict_scores(X)[:, 1] > 0.5).astype(int)]
'''


@pytest.fixture
def one_file_kinds(tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "one_file_kinds.py").write_text(ONE_FILE)
    monkeypatch.syspath_prepend(str(folder))
    module = importlib.import_module("one_file_kinds")
    yield module
    del REGISTRY["longer_lines"], FEATURIZERS["line_shape"]
    sys.modules.pop("one_file_kinds", None)


def code_tables(n_train: int = 40, n_test: int = 12) -> dict[str, pd.DataFrame]:
    """Human rows with short lines, machine rows with long ones (Python)."""
    def code(i: int, machine: bool) -> str:
        if machine:
            return (f"def compute_the_value_number_{i}(argument_value, other_value):\n"
                    f"    intermediate_result = argument_value * {i} + other_value - argument_value\n"
                    "    return intermediate_result\n")
        return f"def f{i}(x):\n    return x + {i}\n"

    def table(start: int, n: int) -> pd.DataFrame:
        rows = range(start, start + n)
        return pd.DataFrame({"id": [f"r{i}" for i in rows], "code": [code(i, i % 2 == 1) for i in rows],
                             "language": "Python", "target": ["machine" if i % 2 else "human" for i in rows]})

    return {"train": table(0, n_train), "test": table(n_train, n_test)}


def test_a_kind_added_in_one_file_is_in_the_schema(one_file_kinds):
    full = schema()
    assert "line_shape" in full["definitions"]["featureset"]["properties"]["kind"]["enum"]
    branches = {b["if"]["properties"]["kind"]["const"]: b["then"] for b in full["definitions"]["detector"]["allOf"]}
    assert set(branches["longer_lines"]["properties"]["params"]["properties"]) == {"column"}


def test_a_kind_added_in_one_file_is_planned_and_its_params_checked(one_file_kinds):
    config = {"tasks": {"T": {"title": "T", "release": {"files": {"train": "a.parquet", "test": "b.parquet"}}}},
              "features": {"shape": {"kind": "line_shape"}},
              "detectors": {"mine": {"kind": "longer_lines", "title": "Mine", "features": "shape"}}}
    validate_config(config)
    assert config["detectors"]["mine"]["params"] == {"column": 1}  # the default, from the class's spec
    plan = Plan.from_config(config)
    mine = plan.detectors["mine"]
    assert (mine.kind, mine.features, mine.threads, mine.storage) == ("longer_lines", "shape", 2, "file")
    assert plan.pairs == (("T", "mine"),) and plan.stored("file") == ["mine"]
    config["detectors"]["mine"]["params"] = {"column": "wide"}
    with pytest.raises(AicdError, match=r"detectors\.mine\.params\.column: 'wide' is not of type 'integer'"):
        validate_config(config)


def test_a_kind_added_in_one_file_is_fitted_and_applied_by_aicd_detect(one_file_kinds, tmp_path):
    tables = code_tables()
    paths = write_task(tmp_path / "task", tables)
    features, models = tmp_path / "features", tmp_path / "models"
    features.mkdir()
    features_main(["--spec", json.dumps({"kind": "line_shape"}), "--train", str(paths["train"]),
                   "--test", str(paths["test"]), "--out", str(features / "features.npz"),
                   "--model", str(features / "featurizer.skops"), "--report", str(features / "report.json")])
    models.mkdir()
    detectors_main(["fit", "--spec", json.dumps({"kind": "longer_lines"}), "--train", str(paths["train"]),
                    "--test", str(paths["test"]), "--features", str(features / "features.npz"),
                    "--featurizer", str(features / "featurizer.skops"), "--task", "T",
                    "--out", str(models / "mine.parquet"), "--model", str(models / "mine.skops")])
    workflow = pd.read_parquet(models / "mine.parquet").set_index("id")
    assert (workflow["pred"] == workflow["gold"]).all()  # the kind did fit: long lines are machine
    code = tmp_path / "code"
    code.mkdir()
    for row in tables["test"].itertuples():
        (code / f"{row.id}.py").write_text(row.code)
    # no --trust-type: both classes registered, so the model file's types are trusted
    assert aicd(["detect", str(code), "--model", str(models / "mine.skops"), "--out", str(tmp_path / "out.csv")]) == 0
    detected = pd.read_csv(tmp_path / "out.csv")
    detected.index = [Path(p).stem for p in detected["path"]]
    assert sorted(detected.index) == sorted(workflow.index)
    assert (detected["model_label"] == workflow.loc[detected.index, "pred"]).all()
    assert np.allclose(detected["score_machine"], workflow.loc[detected.index, "score_machine"], atol=1e-6)


def test_a_detector_kind_with_a_bad_inputs_value_is_refused_in_one_line():
    bad = type("Featured", (Detector,), {"inputs": "feature"})
    with pytest.raises(AicdError, match=r"detector kind 'featured_probe' \(.*Featured\): inputs = 'feature' "
                                        r"\(did you mean 'features'\?\); declare one of 'features', 'text', 'ids', "
                                        r"'nothing'$"):
        REGISTRY.register("featured_probe")(bad)
    assert "featured_probe" not in REGISTRY


def test_the_three_old_booleans_are_refused_naming_the_one_choice():
    old = type("OldStyle", (Detector,), {"needs_features": False, "needs_text": True})
    with pytest.raises(AicdError, match=r"declares needs_features, needs_text: .* inputs = one of 'features'"):
        REGISTRY.register("old_style_probe")(old)
    assert "old_style_probe" not in REGISTRY


def test_a_name_registered_twice_is_refused_naming_both_classes():
    other = type("AnotherMajority", (Detector,), {"inputs": "nothing"})
    with pytest.raises(AicdError, match=r"detector kind 'majority' is registered twice: by "
                                        r"aicd\.detectors\.dummy\.MajorityDetector and by .*AnotherMajority"):
        REGISTRY.register("majority")(other)
    assert REGISTRY["majority"].__name__ == "MajorityDetector"
    with pytest.raises(AicdError, match=r"feature kind 'tfidf' is registered twice"):
        FEATURIZERS.register("tfidf")(type("OtherTfidf", (Featurizer,), {}))


def test_a_kind_of_the_wrong_family_is_refused():
    with pytest.raises(AicdError, match=r"feature kind 'not_a_featurizer_probe' .* a subclass of "
                                        r"aicd\.features\.base\.Featurizer"):
        FEATURIZERS.register("not_a_featurizer_probe")(type("Plain", (), {}))
    with pytest.raises(AicdError, match=r"a subclass of aicd\.detectors\.base\.Detector"):
        REGISTRY.register("not_a_detector_probe")(Featurizer)
    assert "not_a_featurizer_probe" not in FEATURIZERS and "not_a_detector_probe" not in REGISTRY


def test_an_unknown_name_lists_the_registered_ones_and_the_closest():
    with pytest.raises(AicdError, match=r"^unknown detector kind 'logistic_regresion' \(did you mean "
                                        r"'logistic_regression'\?\); registered: catboost, .*zero_shot_lm"):
        REGISTRY["logistic_regresion"]
    assert FEATURIZERS.get("tfidf_svd") is None and "tfidf_svd" not in FEATURIZERS and ["x"] not in FEATURIZERS
    widgets, knob = Registry("widget"), type("Knob", (), {})
    assert widgets.register("knob")(knob) is knob and widgets["knob"] is knob and knob.kind == "knob"
    with pytest.raises(KeyError, match="unknown widget 'nob' .*registered: knob"):
        widgets["nob"]


def registering_modules(package: Path) -> set[str]:
    """The modules of a package (a module file, or a subpackage's __init__) that register a kind."""
    def registers(path: Path) -> bool:  # a class decorated with register(...)
        return any(isinstance(node, ast.ClassDef) and any(
            isinstance(d, ast.Call) and getattr(d.func, "id", getattr(d.func, "attr", None)) == "register"
            for d in node.decorator_list) for node in ast.walk(ast.parse(path.read_text())))

    return ({p.stem for p in package.glob("*.py") if registers(p)}
            | {p.parent.name for p in package.glob("*/__init__.py") if registers(p)})


def imported_siblings(path: Path) -> set[str]:
    """Names a module imports with `from . import a, b`."""
    return {alias.name for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None for alias in node.names}


@pytest.mark.parametrize("package, loader", [("detectors", "__init__.py"), ("features", "registry.py")])
def test_every_kind_module_of_the_package_is_imported_where_its_registry_is_filled(package, loader):
    modules = registering_modules(PKG / package) - {Path(loader).stem}
    assert modules, f"no kind module found in {package}/"
    missing = modules - imported_siblings(PKG / package / loader)
    assert not missing, f"{package}/{loader} does not import {sorted(missing)}, so their kinds never register"


def test_every_type_the_kinds_declare_their_fitted_files_hold_exists_and_is_trusted():
    declared = {name for cls in [*REGISTRY.values(), *FEATURIZERS.values()] for name in cls.stored_types}
    assert declared >= {"aicd.features.tfidf.whitespace_tokens", "aicd.detectors.linear.SquaredHingeSVC"}
    around = {"aicd.detectors.bundle.FittedModel", "aicd.detectors.novelty.Novelty", "aicd.detectors.training.Calibrated"}
    for name in sorted(declared | around):
        module, _, attribute = name.rpartition(".")
        assert hasattr(importlib.import_module(module), attribute), f"{name} is trusted but does not exist"
    assert declared | around <= kind_types()
