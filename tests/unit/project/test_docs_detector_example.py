"""docs/adding_a_detector.md's examples run as written: its Ridge detector class (section 1) is
fitted by the workflow's fit job on a real task (the shared trial's rows, TF-IDF features),
read back by `aicd detect`, and calibrated on human code there (`--calibrate-on`); its feature
kind (section 6) is built and fitted like any feature set. The same class without its
`stored_types` line stops at the fit, before any model is written, naming the line to add."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from aicd.features.__main__ import main as features_main
from fitted_task_helpers import TFIDF, task_with_validation


def example(repo, heading: str) -> str:
    """The first python block of a section of docs/adding_a_detector.md."""
    text = (repo / "docs" / "adding_a_detector.md").read_text()
    section = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)


def ridge_module(repo) -> str:
    """The Ridge class as the page shows it, importable outside the package (its relative imports
    of the detectors' package written absolute)."""
    code = example(repo, "## 1. The class")
    return code.replace("from ..common.params", "from aicd.common.params").replace("from .base", "from aicd.detectors.base")


def run(code: str, cwd, folder) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def task(tmp_path_factory, trial_raw):
    root = tmp_path_factory.mktemp("ridge")
    _folder, tables = task_with_validation(trial_raw, root / "tasks", 240, 120, 60)
    features_main(["--spec", json.dumps(TFIDF), "--task", "T1", "--tasks-dir", str(root / "tasks"),
                   "--out", str(root / "features.npz"), "--model", str(root / "featurizer.skops"),
                   "--report", str(root / "features.json")])
    return root, tables


FIT = """
    import sys
    import my_ridge
    from aicd.common.stagecli import run
    from aicd.detectors.__main__ import main as detectors
    sys.exit(run(lambda argv: detectors(argv), ["fit", "--spec", '{"kind": "ridge", "params": {"alpha": 0.5}, "features": "tfidf"}', "--task", "T1",
               "--tasks-dir", "tasks", "--features", "features.npz", "--featurizer", "featurizer.skops", "--seed", "0",
               "--out", "pred.parquet", "--model", "model.skops", "--report", "fit.json",
               "--validation-scores", "validation.parquet"]))
"""


def test_the_ridge_example_fits_is_read_back_and_is_calibrated(repo, task):
    root, tables = task
    (root / "mine").mkdir(exist_ok=True)
    (root / "mine" / "my_ridge.py").write_text(ridge_module(repo))
    proc = run(FIT, root, root / "mine")
    assert proc.returncode == 0, proc.stderr[-3000:]
    code, reference = root / "code", root / "reference"
    for folder, rows in ((code, tables["test"].head(20)),
                         (reference, tables["validation"][tables["validation"]["target"] == "human"].head(40))):
        folder.mkdir(exist_ok=True)
        for _, row in rows.iterrows():
            (folder / f"{row['id']}.py").write_text(row["code"])
    proc = run("""
        import my_ridge
        from aicd.cli import main as aicd
        aicd(["detect", "code", "--language", "Python", "--model", "model.skops", "--calibrate-on", "reference",
              "--pool-small", "--out", "labels.csv"])
        """, root, root / "mine")
    assert proc.returncode == 0, proc.stderr[-3000:]
    labels = pd.read_csv(root / "labels.csv")
    fitted = pd.read_parquet(root / "pred.parquet").set_index("id")
    assert len(labels) == 20 and set(labels["label"]) <= {"human", "machine"}
    ids = [os.path.splitext(os.path.basename(p))[0] for p in labels["path"]]
    assert list(labels["model_label"]) == [fitted.loc[i, "pred"] for i in ids]  # the model read back
    assert "reference files" in proc.stderr  # calibrated on the human code given


def test_without_its_stored_types_the_fit_stops_before_a_model_is_written(repo, task):
    root, _ = task
    (root / "bare").mkdir(exist_ok=True)
    without = "\n".join(line for line in ridge_module(repo).splitlines() if "stored_types" not in line)
    (root / "bare" / "my_ridge.py").write_text(without)
    (root / "model.skops").unlink(missing_ok=True)
    proc = run(FIT, root, root / "bare")
    assert proc.returncode != 0 and not (root / "model.skops").exists()
    said = proc.stderr.strip().splitlines()[-1]
    assert "sklearn.linear_model._ridge.RidgeClassifier" in said and "stored_types = (" in said
    assert "LabelBinarizer" in said  # every type it holds that is not declared, not only the first


def test_the_feature_kind_example_fits_and_transforms(repo, task):
    _root, tables = task
    namespace: dict = {}
    exec(compile(example(repo, "## 6. A feature kind"), "docs-example", "exec"), namespace)
    from aicd.features.registry import build

    try:
        featurizer = build("line_shape", {"scale": 2.0})
        matrix = featurizer.fit_transform(tables["train"])
        assert matrix.shape == (len(tables["train"]), 2) and featurizer.transform(tables["test"]).shape[1] == 2
    finally:
        from aicd.features.base import FEATURIZERS

        del FEATURIZERS["line_shape"]
