"""benchmarks/loco.py reads its detectors from config/loco.yaml: its baselines are the config's
`detectors:` (built from their `features:` sets), its fused candidates are
benchmarks/loco_candidates.yaml's entries of the same shape; no catalogue of its own."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("loco_script", REPO / "benchmarks" / "loco.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def config(script):
    return script.merged_config([str(REPO / "config" / "loco.yaml")])


def test_the_baselines_are_exactly_the_config_s_detectors(script, config):
    baselines = script.detectors_of(config)[0]
    assert baselines == config["detectors"] and list(baselines) == list(config["detectors"])
    script.use_detectors(config)
    assert script.BASELINES == config["detectors"]
    for name, entry in config["detectors"].items():
        fs = entry.get("features")
        parts = [] if fs is None else [config["features"][p] for p in config["features"][fs].get("parts") or [fs]]
        assert script.definition(name) == {
            "kind": entry["kind"], "params": entry.get("params") or {},
            "features": [{"kind": p["kind"], "params": p.get("params") or {}} for p in parts]}, name


def test_the_script_restates_no_detector_or_feature_set(script):
    text = (REPO / "benchmarks" / "loco.py").read_text()
    for restated in ('"catboost"', '"logistic_regression"', '"tfidf"', '"lm_criteria"', "max_features",
                     "smollm2", '"fused"'):
        assert restated not in text, restated


def test_the_candidates_are_validated_entries_of_their_own_names(script, config):
    raw = yaml.safe_load((REPO / "benchmarks" / "loco_candidates.yaml").read_text())
    baselines, candidates, features = script.detectors_of(config)
    assert list(candidates) == list(raw["detectors"]) and not set(candidates) & set(baselines)
    for name, entry in candidates.items():
        assert set(entry) <= {"kind", "features", "params", "resources"} and entry["kind"] == "fused"
        parts = script.feature_parts(entry["features"], features)
        assert parts and all(p["kind"] != "concat" for p in parts), name
        assert entry["params"].items() >= raw["detectors"][name]["params"].items()  # defaults filled in, none changed


def test_a_candidate_that_takes_a_config_name_is_refused(script, config, tmp_path):
    path = tmp_path / "candidates.yaml"
    path.write_text(yaml.safe_dump({"detectors": {"lr_tfidf": {"kind": "fused", "features": "lm_criteria"}}}))
    with pytest.raises(SystemExit, match="lr_tfidf"):
        script.detectors_of(config, path)
    path.write_text(yaml.safe_dump({"detectors": {"mine": {"kind": "fused", "features": "nowhere"}}}))
    with pytest.raises(Exception, match="nowhere"):
        script.detectors_of(config, path)


def test_a_fold_s_feature_set_is_the_workflow_s_concatenation_of_its_parts(script):
    from aicd.features.registry import ConcatFeaturizer, build

    rng = np.random.default_rng(0)
    code = [f"def f{i}(x):\n    return x * {rng.integers(9)} + {i}\n" if i % 2 else f"int g{i}() {{ return {i}; }}\n"
            for i in range(40)]
    table = pd.DataFrame({"id": [f"r{i}" for i in range(40)], "code": code,
                          "language": ["Python" if i % 2 else "C" for i in range(40)],
                          "label": ["human", "machine"] * 20})
    tables = {"train": table.iloc[:24].reset_index(drop=True), "test": table.iloc[24:].reset_index(drop=True)}
    parts = [{"kind": "ast", "params": {}}, {"kind": "tfidf", "params": {"max_features": 50, "svd_components": 5}}]
    X, names = script.Features(3).get("fold", parts, tables)
    concat = ConcatFeaturizer([build(p["kind"], p["params"], 3) for p in parts])
    assert np.array_equal(X["train"], concat.fit_transform(tables["train"]))
    assert np.array_equal(X["test"], concat.transform(tables["test"])) and names == concat.feature_names
