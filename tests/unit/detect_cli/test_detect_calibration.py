"""`aicd detect --calibrate-on`: thresholds at a false-positive rate set on human code the user
trusts, on real fitted detectors (TF-IDF + logistic regression / linear SVM, fitted by the
workflow's own jobs on the shared trial rows). A language with too few reference files is
refused with how many more it needs, or held to the pooled threshold and marked where the user
asks; a saved calibration is reused, and refused for another model; without one the output says
where its thresholds came from; the option adapted to the input is off unless asked, and labelled."""

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest
from aicd.cli import main as aicd
from aicd.data.metrics import min_reference
from aicd.scoring.calibration import VERSION, Calibration, more_needed
from fitted_task_helpers import fit_detector, fit_features, task_tables, write_task

EXT = {"Python": ".py", "C++": ".cpp", "Java": ".java"}
N_TASK = 420  # the rows task_tables takes (train 300, test 120); the reference comes after them


@pytest.fixture(scope="module")
def setting(trial_raw, tmp_path_factory):
    """Two fitted models on the same features, a folder of human reference code (Python 60,
    Java 6, no C++) from trial rows no model saw, and a folder to label (Python, Java, C++)."""
    root = tmp_path_factory.mktemp("calibrate")
    tables = task_tables(trial_raw)
    paths = write_task(root / "tasks", tables)
    features = fit_features(paths, root / "features")
    lr, _ = fit_detector(paths, features, root / "models")
    svm, _ = fit_detector(paths, features, root / "models", kind="linear_svm")
    rest = trial_raw.sort_values("row_id").iloc[N_TASK:]
    human = rest[rest["generator"] == "Human"]
    reference, labelled = root / "reference", root / "labelled"
    reference.mkdir()
    labelled.mkdir()
    for language, n in (("Python", 60), ("Java", 6)):
        for row in human[human["language"] == language].head(n).itertuples():
            (reference / f"h{row.row_id}{EXT[language]}").write_text(row.code)
    for language in ("Python", "Java", "C++"):
        for row in rest[rest["language"] == language].tail(4).itertuples():
            (labelled / f"x{row.row_id}{EXT[language]}").write_text(row.code)
    return {"lr": lr, "svm": svm, "reference": reference, "labelled": labelled, "root": root}


def detect(*args: str) -> int:
    return aicd(["detect", *map(str, args)])


def test_a_language_with_too_few_reference_files_is_refused_with_advice(setting, capsys):
    assert detect(setting["labelled"], "--model", setting["lr"], "--calibrate-on", setting["reference"]) == 2
    err = capsys.readouterr().err
    # 19 fitting files are needed at 5% (min_reference), which 37 files give with half held out (18);
    # Java has 6 (3 fitting), C++ none
    assert min_reference(0.05) == 19 and "at 5% FPR in 2 languages to label" in err
    assert "Java: 6 reference files (3 in the fitting part, 19 needed: add 31 more)" in err
    assert "C++: no reference files (add 37)" in err and "--pool-small" in err
    assert err.count("error:") == 1 and "Traceback" not in err


def test_pool_small_holds_small_languages_to_the_pooled_threshold_and_marks_them(setting, tmp_path, capsys):
    out = tmp_path / "labels.csv"
    assert detect(setting["labelled"], "--model", setting["lr"], "--calibrate-on", setting["reference"],
                  "--pool-small", "--out", out) == 0
    got = pd.read_csv(out)
    assert set(got["status"]) == {"scored"} and len(got) == 12
    python, others = got[got["language"] == "Python"], got[got["language"] != "Python"]
    assert not python["pooled"].any() and set(python["threshold_group"]) == {"Python"}
    assert others["pooled"].all() and set(others["threshold_group"]) == {"pooled"}
    assert others["threshold"].nunique() == 1 and python["threshold"].nunique() == 1
    assert (got["flagged"] == (got["machine_score"] > got["threshold"])).all()
    # the log-odds that the file is not human (aicd.data.scores.threshold_score), not 1 - score_human
    assert (got["machine_score"] - np.log(got["score_machine"] / got["score_human"])).abs().max() < 1e-4
    assert set(python["reference_n"]) == {60} and set(others["reference_n"]) == {66}
    err = capsys.readouterr().err
    assert "held to the pooled threshold (too few reference files of their own): C++, Java" in err
    assert "per language, thresholds for 5% FPR" in err and "set now on your human code" in err


def test_a_saved_calibration_is_reused_and_refused_for_another_model(setting, tmp_path, capsys):
    saved, first, again = tmp_path / "cal.json", tmp_path / "a.csv", tmp_path / "b.csv"
    common = [setting["labelled"], "--pool-small", "--out"]
    assert detect(*common, first, "--model", setting["lr"], "--calibrate-on", setting["reference"],
                  "--save-calibration", saved) == 0
    data = json.loads(saved.read_text())
    assert data["format"] == "aicd-calibration" and data["version"] == VERSION and data["score_kind"] == "probability"
    assert data["model"]["file"] == "logistic_regression.skops" and data["reference"]["rows"] == 66
    assert data["groups"]["Python"]["at"]["0.05"]["own"] and not data["groups"]["Java"]["at"]["0.05"]["own"]
    assert detect(*common, again, "--model", setting["lr"], "--calibration", saved) == 0
    a, b = pd.read_csv(first), pd.read_csv(again)
    assert (a["threshold"] == b["threshold"]).all() and (a["flagged"] == b["flagged"]).all()
    capsys.readouterr()
    assert detect(setting["labelled"], "--model", setting["svm"], "--calibration", saved) == 2
    err = capsys.readouterr().err
    assert "was made for another fitted model (logistic_regression.skops" in err and "linear_svm.skops" in err


def test_without_calibration_the_output_says_where_thresholds_came_from(setting, tmp_path, capsys):
    """A model outside a run's folders has none; one at RESULTS/models/TASK/DETECTOR.skops is held
    to the calibration at RESULTS/calibration/TASK/DETECTOR.json, and only if it is this model's."""
    assert detect(setting["labelled"], "--model", setting["lr"]) == 0
    assert "thresholds: none (no calibration beside the model" in capsys.readouterr().err
    results = tmp_path / "results"
    model = results / "models" / "T1" / "lr.skops"
    model.parent.mkdir(parents=True)
    shutil.copy(setting["lr"], model)
    beside = results / "calibration" / "T1" / "lr.json"
    beside.parent.mkdir(parents=True)
    assert detect(setting["labelled"], "--model", model, "--calibrate-on", setting["reference"], "--pool-small",
                  "--save-calibration", beside) == 0
    capsys.readouterr()
    assert detect(setting["labelled"], "--model", model, "--out", tmp_path / "o.csv") == 0
    err = capsys.readouterr().err
    assert f"the workflow's calibration of this model ({beside})" in err and "C++, Java" in err
    assert pd.read_csv(tmp_path / "o.csv")["threshold"].notna().all()
    shutil.copy(setting["svm"], model)  # refitted since: its calibration is another model's
    assert detect(setting["labelled"], "--model", model) == 0
    assert "is the calibration of another fit of lr" in capsys.readouterr().err


def test_the_threshold_adapted_to_the_input_is_off_by_default_and_labelled_where_on(setting, tmp_path, capsys):
    plain, adapted = tmp_path / "plain.jsonl", tmp_path / "adapted.jsonl"
    assert detect(setting["labelled"], setting["reference"], "--model", setting["lr"], "--out", plain) == 0
    said = capsys.readouterr().err
    rows = [json.loads(line) for line in plain.read_text().splitlines()]
    assert "adapted" not in said and not any(k.endswith("adapted") or "adapted_" in k for k in rows[0])
    assert detect(setting["labelled"], setting["reference"], "--model", setting["lr"], "--out", adapted,
                  "--adapt-to-input") == 0
    said = capsys.readouterr().err
    rows = [json.loads(line) for line in adapted.read_text().splitlines()]
    assert "adapted_threshold and flagged_adapted are adapted to the unlabelled test set" in said
    assert all("adapted_threshold" in r and isinstance(r["flagged_adapted"], bool) for r in rows)
    flagged = np.array([r["flagged_adapted"] for r in rows])
    assert 0 < flagged.sum() < len(rows)  # a two-component split of these files' scores


def test_a_file_longer_than_any_benchmark_row_is_not_in_distribution(setting, tmp_path):
    """A 3 MB generated file: its size is flagged and it does not read as in distribution,
    whatever its distance to the training rows says."""
    big = tmp_path / "generated.py"
    one = "def f{i}(x):\n    return x * {i} + 1\n\n"
    big.write_text("".join(one.format(i=i) for i in range(110_000)))
    assert big.stat().st_size > 3_000_000
    out = tmp_path / "o.csv"
    assert detect(big, "--model", setting["lr"], "--out", out) == 0
    row = pd.read_csv(out, keep_default_na=False).iloc[0]
    assert row["status"] == "scored" and "over the 120,000 a benchmark row can hold" in row["size_out_of_range"]
    assert row["in_distribution"] in (False, "False")


def test_calibration_refusals_need_no_model(tmp_path, capsys):
    f = tmp_path / "a.py"
    f.write_text("print(1)\n")
    for args, says in ((["--calibrate-on", str(tmp_path), "--calibration", "x.json"], "not both"),
                       (["--save-calibration", "x.json"], "give --calibrate-on HUMAN_CODE too"),
                       (["--fpr", "5"], "between 0 and 1"),
                       (["--fpr-confidence", "0.95"], "give --calibrate-on HUMAN_CODE too"),
                       (["--calibrate-on", str(tmp_path), "--fpr-confidence", "0.3"], "a probability in [0.5, 1)")):
        assert detect(f, "--model", tmp_path / "missing.skops", *args) == 2
        assert says in capsys.readouterr().err


def test_a_file_that_is_not_a_calibration_is_refused(setting, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": 1}))
    assert detect(setting["labelled"], "--model", setting["lr"], "--calibration", bad) == 2
    assert "is not an aicd calibration file" in capsys.readouterr().err
    old = Calibration({"file": "m", "sha256": "0"}, {}, {"fprs": [0.05], "held_out": 0.5, "seed": 0, "floor": 0,
                                                         "pooled": {}, "groups": {}}).to_json()
    bad.write_text(json.dumps({**old, "version": 0}))
    assert detect(setting["labelled"], "--model", setting["lr"], "--calibration", bad) == 2
    assert "format version 0" in capsys.readouterr().err
    assert os.path.exists(bad)


def test_a_file_to_label_is_never_part_of_its_own_reference(setting, tmp_path, capsys):
    """The same files given to label and to calibrate on (by another path): left out of the
    reference, which is then empty here and refused."""
    link = tmp_path / "again"
    link.symlink_to(setting["reference"], target_is_directory=True)
    assert detect(setting["reference"], "--model", setting["lr"], "--calibrate-on", str(link) + "/") == 2
    err = capsys.readouterr().err
    assert "66 files are also among the files to label: left out of the reference" in err
    assert "no human code file to calibrate on" in err


def test_a_threshold_held_with_a_confidence_needs_more_reference_files_and_flags_no_more(setting, trial_raw, tmp_path,
                                                                                         capsys):
    """--fpr-confidence 0.95: 59 fitting files a language instead of 19; the same files then meet a
    threshold at least as high as the one held on average, and the output says which rule it is."""
    refused = detect(setting["labelled"], "--model", setting["lr"], "--calibrate-on", setting["reference"],
                     "--fpr-confidence", "0.95")
    err = capsys.readouterr().err
    assert refused == 2 and min_reference(0.05, 0.95) == 59
    assert f"Python: 60 reference files (30 in the fitting part, 59 needed: add {more_needed(60, 59, 0.5)} more)" in err
    rest = trial_raw.sort_values("row_id").iloc[N_TASK:]
    python = rest[(rest["generator"] == "Human") & (rest["language"] == "Python")]
    big, labelled = tmp_path / "reference", tmp_path / "labelled"
    big.mkdir()
    labelled.mkdir()
    for row in python.head(130).itertuples():
        (big / f"h{row.row_id}.py").write_text(row.code)
    for path in setting["labelled"].glob("*.py"):
        shutil.copy(path, labelled / path.name)
    thresholds = {}
    for extra in ((), ("--fpr-confidence", "0.95")):
        out = tmp_path / f"labels{len(extra)}.csv"
        assert detect(labelled, "--model", setting["lr"], "--calibrate-on", big, "--out", out, *extra) == 0
        thresholds[bool(extra)] = pd.read_csv(out)["threshold"].iloc[0]
        err = capsys.readouterr().err
        assert ("held with probability 0.95 over draws of the reference" in err) == bool(extra)
        assert ("held on average over draws of the reference" in err) != bool(extra)
    assert thresholds[True] >= thresholds[False]
