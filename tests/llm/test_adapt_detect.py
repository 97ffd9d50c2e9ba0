"""`aicd detect --calibrate-on REF --adapt` end to end, with real components: a fused detector fitted
by the workflow's own jobs on trial rows (the packaged SmolLM2's criteria + standardised
stylometry), the local model served by vLLM on loopback writing counterparts of half the
reference, the adapted model calibrated on the other half and labelling new files. A rerun
answers every request from the cache and starts no server; a model that is not a fused
detector is refused in one line."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
from aicd.cli import main as aicd
from components import require
from test_local_model import servers
from unit.fitted_task_helpers import fit_detector, fit_features, task_with_validation

LM = {"model": "package:smollm2-135m-instruct", "window": 64, "batch_size": 8, "dtype": "auto"}
N_REFERENCE = 40   # Python reference files: 20 adapting, 20 calibrating (--held-out 0: all 20 set the threshold)


@pytest.fixture(scope="module")
def fitted(trial_raw, tmp_path_factory):
    from aicd.common.repo import REPO
    from aicd.generate.registry import load_registry, servable

    entry = load_registry([REPO / "config" / "models.yaml", REPO / "config" / "models_local.yaml"])[
        "SmolLM2-135M-Instruct"]
    missing = servable(entry)
    require(missing is None, f"the local model ({missing})", "make setup pinned-inputs")
    root = tmp_path_factory.mktemp("adapt")
    python = trial_raw[trial_raw["language"] == "Python"]
    folder, _ = task_with_validation(python, root / "task", 60, 30, 10)
    paths = {s: folder / f"{s}.parquet" for s in ("train", "validation", "test")}
    lm = fit_features(paths, root / "lm", {"kind": "lm_criteria", "params": LM})
    style = fit_features(paths, root / "style", {"kind": "stylometry", "params": {"standardise": "language"}})
    from aicd.features.__main__ import main as features_main

    (root / "views").mkdir()
    features_main(["--spec", json.dumps({"kind": "concat", "parts": ["lm", "style"]}), "--train", str(paths["train"]),
                   "--test", str(paths["test"]), "--parts", str(lm / "features.npz"), str(style / "features.npz"),
                   "--out", str(root / "views" / "features.npz"), "--model", str(root / "views" / "featurizer.skops"),
                   "--report", str(root / "views" / "report.json")])
    model, _ = fit_detector(paths, root / "views", root / "models", kind="fused")
    used = set(pd.concat([pd.read_parquet(p) for p in paths.values()])["code"])
    rest = python[~python["code"].isin(used) & (python["code"].str.len() < 900)].sort_values("row_id")
    reference, labelled = root / "reference", root / "labelled"
    reference.mkdir()
    labelled.mkdir()
    for row in rest[rest["generator"] == "Human"].head(N_REFERENCE).itertuples():
        (reference / f"h{row.row_id}.py").write_text(row.code)
    for row in rest.tail(6).itertuples():
        (labelled / f"x{row.row_id}.py").write_text(row.code)
    return {"model": model, "reference": reference, "labelled": labelled, "root": root,
            "lr": fit_detector(paths, lm, root / "lr")[0]}


def test_detect_adapts_a_fused_detector_to_the_reference_and_a_rerun_sends_nothing(fitted, capsys):
    out, cache = fitted["root"] / "labels.csv", fitted["root"] / "requests.sqlite"
    args = ["detect", str(fitted["labelled"]), "--model", str(fitted["model"]), "--calibrate-on",
            str(fitted["reference"]), "--adapt", "--adapt-cache", str(cache), "--held-out", "0", "--out", str(out)]
    assert aicd(args) == 0
    err = capsys.readouterr().err
    assert "counterparts of 20 reference files (the adapting part; the other 20 set the thresholds)" in err
    assert "parts weighted by how they tell the reference from its counterparts: lm" in err
    assert "--adapt" in err and not servers()   # the calibration names the adaptation; no server left
    table = pd.read_csv(out)
    assert len(table) == 6 and (table["status"] == "scored").all()
    assert table["threshold"].notna().all() and set(table["label"]) <= {"human", "machine"}
    assert (table["machine_score"] == table["score_machine"].astype(float)).all() or \
        (table["machine_score"] - table["score_machine"]).abs().max() < 1e-3
    started = time.perf_counter()
    assert aicd(args) == 0
    again = capsys.readouterr().err
    assert "0 requests sent" in again and "served by" not in again
    assert pd.read_csv(out)["machine_score"].tolist() == pytest.approx(table["machine_score"].tolist(), abs=1e-6)
    assert time.perf_counter() - started < 120


def test_a_reference_too_small_once_halved_is_refused_saying_so(fitted, capsys):
    args = ["detect", str(fitted["labelled"]), "--model", str(fitted["model"]), "--calibrate-on",
            str(fitted["reference"]), "--adapt", "--adapt-cache", str(fitted["root"] / "requests.sqlite")]
    assert aicd(args) != 0   # 20 calibrating files, half of them held out: 10 fitting, 19 needed
    assert "the other half adapted the detector, so add twice as many files" in capsys.readouterr().err


def test_adapt_refuses_a_model_that_is_not_a_fused_detector(fitted, capsys):
    args = ["detect", str(fitted["labelled"]), "--model", str(fitted["lr"]), "--calibrate-on",
            str(fitted["reference"]), "--adapt"]
    assert aicd(args) != 0
    err = capsys.readouterr().err
    assert "--adapt adapts a fused detector" in err and len(err.strip().splitlines()) == 1
