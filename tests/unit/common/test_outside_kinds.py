"""Kinds from outside the package, without editing it: a tiny package built and pip-installed
here (no network: --no-index, no build isolation) registers a detector kind and a feature kind
through the entry point groups `aicd.detectors` and `aicd.features`; the schema, the plan, the
workflow's fit job and `aicd detect` all see them. A config may also name a class as
`kind: package.module:Class`. A kind that lacks a method is refused when it registers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from aicd.common.errors import AicdError
from fitted_task_helpers import task_tables, write_task

MODULE = '''
"""An outside package's kinds: a detector on code length and a feature set of line shapes."""
import numpy as np

from aicd.common.params import Param, ParamSpec
from aicd.detectors.base import Detector
from aicd.features.base import Featurizer


class LongerCode(Detector):
    """Machine where a program is longer than `cut` times the training rows' median length."""

    inputs = "text"
    VERSION = 3
    PARAMS = ParamSpec("the longer-code detector", (Param("cut", (float,), 1.0, "ours", "times the median"),))

    def fit(self, X, y, X_val=None, y_val=None):
        self.classes_ = np.array(["human", "machine"], dtype=object)
        self.threshold_ = float(np.median([len(x) for x in X])) * self.setting("cut")
        return self

    def predict(self, X):
        return np.array(["machine" if len(x) > self.threshold_ else "human" for x in X], dtype=object)


class LineShapeExtra(Featurizer):
    """Lines and mean line length of each program."""

    named_columns = True
    PARAMS = ParamSpec("line shapes")
    feature_names = ["lines", "mean_line_length"]

    def transform(self, rows):
        codes = list(rows["code"])
        lines = np.array([c.count(chr(10)) + 1 for c in codes], dtype=np.float32)
        return np.column_stack([lines, np.array([len(c) for c in codes], dtype=np.float32) / lines])

    fit_transform = transform
'''

def pyproject(name: str, module: str, version: str, entry_points: dict) -> str:
    """An installable package's pyproject.toml: one module, its aicd entry points."""
    groups = "\n".join(f'[project.entry-points."{group}"]\n' + "".join(f'{k} = "{module}:{v}"\n' for k, v in eps.items())
                       for group, eps in entry_points.items())
    return (f'[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\n'
            f'name = "{name}"\nversion = "{version}"\n\n{groups}\n[tool.setuptools]\npy-modules = ["{module}"]\n')


PYPROJECT = pyproject("aicd-extra-kinds", "aicd_extra_kinds", "0.1.0", {
    "aicd.detectors": {"longer_code": "LongerCode"}, "aicd.features": {"line_shape_extra": "LineShapeExtra"}})

CONFIG = {
    "tasks": {"T1": {"title": "T1", "release": {"files": {"train": "train.parquet", "test": "test.parquet"}},
                     "labels": ["human", "machine"]}},
    "features": {"shape": {"kind": "line_shape_extra"}},
    "detectors": {"mine": {"kind": "longer_code", "title": "Mine", "params": {"cut": 1.5}},
                  "lr_shape": {"kind": "logistic_regression", "title": "LR", "features": "shape"}},
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The package, pip-installed into a folder of its own (what PYTHONPATH then puts on sys.path)."""
    root = tmp_path_factory.mktemp("outside")
    source, target = root / "aicd-extra-kinds", root / "site"
    source.mkdir()
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "aicd_extra_kinds.py").write_text(MODULE)
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-index", "--no-deps", "--no-build-isolation", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any(p.name.startswith("aicd_extra_kinds-0.1.0") for p in target.iterdir())  # with its entry points
    return target


def python(code: str, target, cwd) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_an_installed_packages_kinds_are_in_the_schema_and_the_plan(installed, tmp_path):
    out = python(f"""
        import json
        from aicd.config import schema, validate_config
        from aicd.plan import Plan

        full = schema()["definitions"]
        detector_kinds = [c["if"]["properties"]["kind"]["const"] for c in full["detector"]["allOf"]]
        mine = next(c["then"] for c in full["detector"]["allOf"] if c["if"]["properties"]["kind"]["const"] == "longer_code")
        config = {CONFIG!r}
        validate_config(config)
        plan = Plan.from_config(config)
        print(json.dumps({{"detector_kinds": detector_kinds, "feature_kinds": full["featureset"]["properties"]["kind"]["enum"],
                          "cut": mine["properties"]["params"]["properties"]["cut"],
                          "params": config["detectors"]["mine"]["params"],
                          "versions": plan.versions("T1", "mine"), "pairs": list(map(list, plan.pairs)),
                          "shape": [plan.features["shape"].kind, plan.features["shape"].named_columns]}}))
        """, installed, tmp_path)
    got = json.loads(out)
    assert "longer_code" in got["detector_kinds"] and "line_shape_extra" in got["feature_kinds"]
    assert "number" in got["cut"]["type"] and got["params"] == {"cut": 1.5}
    assert got["versions"]["detector"] == {"kind": "longer_code", "version": 3}  # its own VERSION
    assert got["pairs"] == [["T1", "mine"], ["T1", "lr_shape"]] and got["shape"] == ["line_shape_extra", True]


def test_an_installed_kind_is_fitted_by_the_job_and_applied_by_aicd_detect(installed, tmp_path, trial_raw):
    tables = task_tables(trial_raw, n_train=120, n_test=40)
    write_task(tmp_path / "tasks", tables)
    code = tmp_path / "code"
    code.mkdir()
    for _, row in tables["test"].head(6).iterrows():
        (code / f"{row['id']}.py").write_text(row["code"])
    spec = json.dumps({"kind": "longer_code", "params": {"cut": 1.2}})
    python(f"""
        from aicd.cli import main as aicd
        from aicd.detectors.__main__ import main as detectors

        detectors(["fit", "--spec", {spec!r}, "--task", "T1", "--tasks-dir", "tasks", "--seed", "0",
                   "--out", "pred.parquet", "--model", "model.skops", "--report", "fit.json",
                   "--validation-scores", "validation.parquet"])
        aicd(["detect", "code", "--language", "Python", "--model", "model.skops", "--out", "labels.csv"])
        """, installed, tmp_path)
    fitted = pd.read_parquet(tmp_path / "pred.parquet").set_index("id")
    detected = pd.read_csv(tmp_path / "labels.csv")
    detected["id"] = [os.path.splitext(os.path.basename(p))[0] for p in detected["path"]]
    assert len(detected) == 6
    assert list(detected["model_label"]) == [fitted.loc[i, "pred"] for i in detected["id"]]
    assert set(fitted["pred"]) == {"human", "machine"}  # its own rule, not a constant


def test_a_config_names_a_class_as_module_colon_class(installed, monkeypatch):
    from aicd.config import schema, validate_config
    from aicd.detectors import REGISTRY
    from aicd.plan import Plan

    before = set(REGISTRY)  # the installed packages' entry points are read now, before the folder is on the path
    monkeypatch.syspath_prepend(str(installed))
    name = "aicd_extra_kinds:LongerCode"
    try:
        config = json.loads(json.dumps(CONFIG))
        config["features"] = {}
        config["detectors"] = {"mine": {"kind": name, "title": "Mine", "params": {"cut": 2.0}}}
        validate_config(config)
        kinds = [c["if"]["properties"]["kind"]["const"] for c in schema()["definitions"]["detector"]["allOf"]]
        assert name in kinds
        plan = Plan.from_config(config)
        assert plan.detectors["mine"].version == 3 and plan.detectors["mine"].kind == name
        bad = json.loads(json.dumps(config))
        bad["detectors"]["mine"]["kind"] = "aicd_extra_kinds:NoSuchClass"
        with pytest.raises(AicdError, match=r"config\.detectors\.mine\.kind: .*has no 'NoSuchClass'"):
            validate_config(bad)
    finally:
        for added in set(REGISTRY) - before:
            del REGISTRY[added]
        sys.modules.pop("aicd_extra_kinds", None)


BROKEN_PYPROJECT = pyproject("aicd-broken-kind", "aicd_broken_kind", "0.2.0",
                             {"aicd.detectors": {"broken_kind": "Broken"}})


@pytest.fixture(scope="module")
def broken(installed):
    """A second package beside the first whose module fails on import (a missing dependency)."""
    source = installed.parent / "aicd-broken-kind"
    source.mkdir()
    (source / "pyproject.toml").write_text(BROKEN_PYPROJECT)
    (source / "aicd_broken_kind.py").write_text("import a_library_that_is_not_installed\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-index", "--no-deps", "--no-build-isolation", "--target", str(installed),
                           str(source)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return installed


def test_a_plug_in_that_does_not_load_fails_only_the_run_that_uses_it(broken, tmp_path, repo):
    """Installed beside the others, a package whose module does not import: the schema, a
    config that does not name its kind, the plan and the demo's dry run work as before; a config
    that names its kind stops with one line naming the package and what failed."""
    out = python(f"""
        import json
        from aicd.common.errors import AicdError
        from aicd.config import schema, validate_config
        from aicd.plan import Plan

        kinds = [c["if"]["properties"]["kind"]["const"] for c in schema()["definitions"]["detector"]["allOf"]]
        config = {CONFIG!r}
        validate_config(config)
        Plan.from_config(config)
        bad = json.loads(json.dumps(config))
        bad["detectors"]["mine"] = {{"kind": "broken_kind", "title": "B"}}
        try:
            validate_config(bad)
            said = None
        except AicdError as err:
            said = str(err)
        print(json.dumps({{"kinds": kinds, "said": said}}))
        """, broken, tmp_path)
    got = json.loads(out)
    assert "longer_code" in got["kinds"] and "broken_kind" not in got["kinds"]
    assert "aicd-broken-kind 0.2.0" in got["said"] and "ModuleNotFoundError" in got["said"]
    assert "fix or uninstall that package" in got["said"] and "\n" not in got["said"].strip()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--snakefile", str(repo / "Snakefile"),
                           "--directory", str(tmp_path / "demo"), "--cores", "2", "--configfile",
                           str(repo / "config" / "demo.yaml")], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "rule detect:" in proc.stdout
