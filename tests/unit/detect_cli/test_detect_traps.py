"""`aicd detect`'s calibration path where a user fell into it, on a real detector: LR on TF-IDF at
the demo's size (config/demo.yaml: 5,000 n-grams, 500 SVD components; 1,500 trial rows), fitted by
the workflow's own jobs, and trial rows it never saw. A reference given twice counts once; a file
to label given twice is labelled once; the main label column is the calibrated verdict; scores do
not saturate; without a reference of the user's own, the FPR on their code is said to be unknown,
with what the default reference did on collections it had not seen; a held-out part over the target
is warned of; refusals advise what the options given leave to do."""

from __future__ import annotations

import json
import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from aicd.cli import main as aicd
from aicd.data.metrics import min_reference
from components import require
from fitted_task_helpers import fit_detector, fit_features, task_tables, write_task

N_TRAIN, N_TEST = 1500, 100
DEMO_TFIDF = {"kind": "tfidf", "params": {"max_features": 5000, "ngram_max": 3, "svd_components": 500}}


@pytest.fixture(scope="module")
def demo(trial_raw, tmp_path_factory):
    """The fitted model and folders of trial rows it never saw: Python humans (80), Python machine
    rows (90), Java humans (30)."""
    root = tmp_path_factory.mktemp("traps")
    paths = write_task(root / "tasks", task_tables(trial_raw, n_train=N_TRAIN, n_test=N_TEST))
    features = fit_features(paths, root / "features", DEMO_TFIDF)
    model, _ = fit_detector(paths, features, root / "models")
    rest = trial_raw.sort_values("row_id").iloc[N_TRAIN + N_TEST:]
    human = rest["generator"] == "Human"
    folders = {}
    for name, rows, ext in (("humans", rest[human & (rest["language"] == "Python")].head(80), ".py"),
                            ("machines", rest[~human & (rest["language"] == "Python")].head(90), ".py"),
                            ("java", rest[human & (rest["language"] == "Java")].head(30), ".java")):
        folders[name] = root / name
        folders[name].mkdir()
        for row in rows.itertuples():
            (folders[name] / f"r{row.row_id}{ext}").write_text(row.code)
    return {"model": model, "root": root, "paths": paths, "features": features, **folders}


def detect(*args) -> int:
    return aicd(["detect", *map(str, args)])


# ------------------------------------------------------------------ each file once


def test_a_reference_folder_given_twice_counts_once(demo, tmp_path, capsys, monkeypatch):
    """`--calibrate-on ref ./ref`: 80 reference files, not 160; the second path of each is counted."""
    monkeypatch.chdir(demo["root"])
    saved = tmp_path / "cal.json"
    assert detect(demo["machines"], "--model", demo["model"], "--calibrate-on", "humans", "./humans",
                  "--save-calibration", saved, "--out", tmp_path / "o.csv") == 0
    err = capsys.readouterr().err
    assert "80 reference files (Python 80)" in err and "160 reference files" not in err
    assert "80 duplicate_file" in err
    data = json.loads(saved.read_text())
    assert data["reference"]["rows"] == 80
    python = data["groups"]["Python"]
    assert python["n"] == 80 and python["fit_n"] + python["held_out_n"] == 80


def test_a_reference_given_twice_does_not_pass_the_minimum_of_fpr_confidence(demo, capsys):
    """60 files given twice are 60 files: 30 in the fitting part, refused where 59 are needed."""
    sixty = demo["root"] / "sixty"
    if not sixty.exists():
        sixty.mkdir()
        for path in sorted(demo["humans"].glob("*.py"))[:60]:
            shutil.copy(path, sixty / path.name)
    assert detect(demo["machines"], "--model", demo["model"], "--calibrate-on", sixty, str(sixty) + "/",
                  "--fpr-confidence", "0.95") == 2
    err = capsys.readouterr().err
    assert min_reference(0.05, 0.95) == 59
    assert "Python: 60 reference files (30 in the fitting part, 59 needed" in err


def test_the_same_code_under_another_name_is_one_reference_file(demo, tmp_path, capsys):
    copies = tmp_path / "copies"
    shutil.copytree(demo["humans"], copies)
    for path in sorted(copies.glob("*.py"))[:10]:
        shutil.copy(path, copies / f"copy_of_{path.name}")
    saved = tmp_path / "cal.json"
    assert detect(demo["machines"], "--model", demo["model"], "--calibrate-on", copies, "--save-calibration", saved,
                  "--out", tmp_path / "o.csv") == 0
    assert "10 duplicate_code" in capsys.readouterr().err
    assert json.loads(saved.read_text())["reference"]["rows"] == 80


def test_a_file_to_label_given_twice_is_labelled_once(demo, tmp_path, capsys):
    one = sorted(demo["machines"].glob("*.py"))[0]
    same = tmp_path / "same_code.py"
    shutil.copy(one, same)
    out = tmp_path / "labels.csv"
    assert detect(one, one, same, "--model", demo["model"], "--out", out) == 0
    got = pd.read_csv(out, keep_default_na=False)
    assert sorted(got["status"]) == ["duplicate_code", "duplicate_file", "scored"]
    assert list(got["path"][got["status"] == "scored"]) == [str(one)]
    assert all(str(one) in why for why in got["why"][got["status"] != "scored"])
    err = capsys.readouterr().err
    assert "1 file labelled" in err and "1 duplicate_file" in err and "1 duplicate_code" in err


def test_a_reference_file_with_the_code_of_a_file_to_label_is_left_out(demo, tmp_path, capsys):
    reference = tmp_path / "reference"
    shutil.copytree(demo["humans"], reference)
    labelled = tmp_path / "labelled"
    labelled.mkdir()
    for path in sorted(reference.glob("*.py"))[:5]:
        shutil.copy(path, labelled / f"submitted_{path.name}")
    saved = tmp_path / "cal.json"
    assert detect(labelled, "--model", demo["model"], "--calibrate-on", reference, "--save-calibration", saved) == 0
    assert "5 files are also among the files to label: left out of the reference" in capsys.readouterr().err
    assert json.loads(saved.read_text())["reference"]["rows"] == 75


# ------------------------------------------------------------------ the verdict is the main label


def test_the_main_label_column_is_the_calibrated_verdict(demo, tmp_path, capsys):
    """`label` says machine exactly where the file is flagged at its threshold; the model's own label
    is `model_label`, and no column named `pred` sits beside the verdict."""
    out = tmp_path / "labels.csv"
    assert detect(demo["machines"], demo["java"], "--model", demo["model"], "--calibrate-on", demo["humans"],
                  "--pool-small", "--out", out) == 0
    got = pd.read_csv(out)
    assert "pred" not in got.columns and list(got.columns[:3]) == ["path", "status", "label"]
    assert (got["label"] == got["flagged"].map({True: "machine", False: "human"})).all()
    assert set(got["model_label"]) <= {"human", "machine"}
    # the model's own label and the verdict part ways here (files the model calls machine below the threshold)
    assert (got["model_label"] != got["label"]).any()
    assert "model_label is the model's own label, not this verdict" in capsys.readouterr().err


def test_without_thresholds_the_label_is_the_models_and_says_so(demo, tmp_path, capsys):
    out = tmp_path / "labels.csv"
    assert detect(demo["java"], "--model", demo["model"], "--out", out) == 0
    got = pd.read_csv(out)
    assert (got["label"] == got["model_label"]).all() and "threshold" not in got.columns
    assert "`label` is the model's own label" in capsys.readouterr().err


# ------------------------------------------------------------------ scores that do not saturate


def decision_values(model_path: Path, files: pd.Series) -> np.ndarray:
    """The fitted logistic regression's own decision function (its log-odds of machine) of these files."""
    from aicd.detectors.bundle import load_bundle

    model = load_bundle(model_path)
    rows = pd.DataFrame({"code": [Path(f).read_text() for f in files], "language": "Python"})
    return model.detector.model_.decision_function(model.inputs_for(rows)).astype(np.float64)


def test_machine_scores_keep_the_order_of_the_models_log_odds(demo, tmp_path):
    """Files the model ranks apart are ranked apart in machine_score: nothing ties at a ceiling (the
    old 1 - score_human was exactly 1 for every file whose float32 probability of machine rounded to 1)."""
    out = tmp_path / "labels.csv"
    assert detect(demo["machines"], demo["humans"], "--model", demo["model"], "--out", out) == 0
    got = pd.read_csv(out)
    d = decision_values(demo["model"], got["path"])
    assert d.max() > 17   # the model is sure enough of some files that a float32 probability of 1 - p would be 0
    scores = got["machine_score"].to_numpy(dtype=float)
    assert np.isfinite(scores).all()
    apart = np.abs(d[:, None] - d[None, :]) > 1e-3
    same_order = np.sign(scores[:, None] - scores[None, :]) == np.sign(d[:, None] - d[None, :])
    assert same_order[apart].all()
    assert np.abs(scores - d).max() < 1e-3   # the log-odds of the float32 probabilities, to their precision


@pytest.fixture(scope="module")
def library_python(demo):
    """80 Python files of the standard library of the Python running the tests: human code far from
    the trial's contest code, where the model's machine scores of humans run high (the issue's case)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if p.stat().st_size > 2000)[:80]
    require(len(files) == 80, f"80 Python files of the standard library in {stdlib}", "a CPython with its stdlib")
    folder = demo["root"] / "stdlib"
    if not folder.exists():
        folder.mkdir()
        for path in files:
            shutil.copy(path, folder / path.name)
    return folder


def test_a_reference_the_model_is_sure_of_still_gives_a_threshold_files_can_pass(demo, library_python, tmp_path,
                                                                                capsys):
    """On the standard library LR (TF-IDF) is as sure of human code as of machine code: with 1 - score_human
    the Python threshold was 1, no file could pass it and 0 of 90 machine files were flagged, silently."""
    out = tmp_path / "labels.csv"
    assert detect(demo["machines"], "--model", demo["model"], "--calibrate-on", library_python, "--out", out) == 0
    err = capsys.readouterr().err
    got = pd.read_csv(out)
    threshold = got["threshold"].iloc[0]
    assert np.isfinite(threshold) and (got["machine_score"] > threshold).any()
    assert got["flagged"].any() and (got["flagged"] == (got["machine_score"] > threshold)).all()
    assert "equal its threshold" not in err and "score exactly their threshold" not in err


def test_ties_at_a_threshold_are_warned_of(demo, tmp_path, capsys):
    """A detector with a handful of distinct scores (CatBoost of three depth-1 trees: at most eight):
    its threshold is shared by many reference scores and files to label, which are not above it;
    stderr says how many, where it used to say nothing."""
    coarse, _ = fit_detector(demo["paths"], demo["features"], tmp_path / "coarse", kind="catboost",
                             params={"iterations": 3, "depth": 1})
    saved, out = tmp_path / "cal.json", tmp_path / "labels.csv"
    assert detect(demo["machines"], "--model", coarse, "--calibrate-on", demo["humans"], "--save-calibration", saved,
                  "--out", out) == 0
    err = capsys.readouterr().err
    assert "fitting reference scores equal its threshold" in err
    from aicd.scoring.calibration import TIE_SHARE

    at = json.loads(saved.read_text())["groups"]["Python"]
    tied, fit_n = at["at"]["0.05"]["tied"], at["fit_n"]
    assert tied - 1 > TIE_SHARE * fit_n   # the case: many fitting scores share the threshold
    assert f"warning: Python: {tied} of its {fit_n} fitting reference scores equal its threshold" in err
    got = pd.read_csv(out)
    at_it = int((got["machine_score"] == got["threshold"]).sum())
    assert (at_it > TIE_SHARE * len(got)) == (f"{at_it} of {len(got)} files to label score exactly" in err)


# ------------------------------------------------------------------ a reference that is not the user's


def measured_worst_default_reference(repo) -> float:
    """The highest human FPR a default reference's 5% thresholds had on an unseen collection, as
    BENCHMARKS.md's "Deployable detection" table gives it (its last column: mean / worst, TPR)."""
    text = (repo / "BENCHMARKS.md").read_text()
    table = text[text.index("## Deployable detection"):].split("\n\n")[2]
    worst = [float(line.split("|")[-2].split("/")[1].split(",")[0]) for line in table.splitlines()[2:]
             if line.split("|")[-2].strip() not in ("–", "")]
    return max(worst)


def test_without_a_reference_of_yours_the_fpr_on_your_code_is_not_known(demo, repo, tmp_path, capsys):
    """The workflow's calibration beside the model: its thresholds are for 5% FPR on the reference's
    human code, and stderr says the FPR on yours is not known, with the range such a reference gave on
    collections it had not seen, where it used to state "thresholds for 5% FPR on human code"."""
    model = tmp_path / "results" / "models" / "T1" / "lr.skops"
    model.parent.mkdir(parents=True)
    shutil.copy(demo["model"], model)
    beside = tmp_path / "results" / "calibration" / "T1" / "lr.json"
    beside.parent.mkdir(parents=True)
    assert detect(demo["java"], "--model", model, "--calibrate-on", demo["humans"], "--pool-small",
                  "--save-calibration", beside, "--out", tmp_path / "own.csv") == 0
    assert "thresholds for 5% FPR on human code: set now on your human code" in capsys.readouterr().err
    assert detect(demo["java"], "--model", model, "--out", tmp_path / "default.csv") == 0
    err = capsys.readouterr().err
    assert "thresholds for 5% FPR on human code:" not in err
    assert "thresholds for 5% FPR on the reference's human code (FPR not known for your code): the workflow's" in err
    assert "the FPR of these thresholds is not known for your code" in err
    assert f"0-{measured_worst_default_reference(repo):g}% of a collection's human code" in err
    assert "per language, thresholds for 5% FPR on the reference's human code" in err
    # a calibration of the earlier format (thresholds on 1 - score_human) beside the model is passed over, saying why
    beside.write_text(json.dumps({**json.loads(beside.read_text()), "version": 1}))
    assert detect(demo["java"], "--model", model, "--out", tmp_path / "old.csv") == 0
    err = capsys.readouterr().err
    assert f"{beside} is a calibration of format version 1" in err and "snakemake --forcerun calibrate" in err
    assert "threshold" not in pd.read_csv(tmp_path / "old.csv").columns


# ------------------------------------------------------------------ the help's examples


def test_the_help_examples_parse_and_name_models_the_demo_writes(repo):
    """Every `aicd detect` example of --help parses with aicd's parser, passes the checks that need no
    model, and names a model the run it comes from writes where that run writes it (a file, or a folder
    by its kind): the demo's under results/, the leave-one-collection-out run's (config/loco.yaml, its
    own root) under results/loco/."""
    import re
    import shlex

    import yaml
    from aicd.cli import build_parser
    from aicd.detect_cli import EXAMPLES, check_args
    from aicd.detectors import REGISTRY
    from aicd.outputs import Outputs

    runs = {"results": yaml.safe_load((repo / "config" / "demo.yaml").read_text())}
    loco = yaml.safe_load((repo / "config" / "loco.yaml").read_text())
    runs[loco["results"]] = loco
    lines = [re.sub(r"\s+#\s.*$", "", line).strip() for line in re.sub(r"\s*\\\n\s*", " ", EXAMPLES).splitlines()]
    examples = [line for line in lines if line.startswith("aicd detect ")]
    assert len(examples) >= 6
    for example in examples:
        args = build_parser().parse_args(shlex.split(example)[1:])
        check_args(args)
        root = "results/loco" if args.model.startswith("results/loco/") else "results"
        config = runs[root]
        task, name = Path(args.model).parent.name, Path(args.model).name.removesuffix(".skops")
        assert task in config["tasks"] and name in config["detectors"], example
        kind = REGISTRY[config["detectors"][name]["kind"]]
        out = Outputs(root)
        assert args.model == (out.model(task, name) if kind.traits().storage == "file" else out.model_folder(task, name))


# ------------------------------------------------------------------ warnings and refusals that fit


def test_a_held_out_part_over_the_target_is_warned_of_with_the_fpr_confidence_pointer(demo, tmp_path, capsys):
    """Seeded splits of the same reference: where the held-out part's realised FPR is over the 5%
    target, stderr warns and points to --fpr-confidence; where it is not, nothing is said."""
    warned = quiet = 0
    for seed in range(20):
        saved = tmp_path / f"cal{seed}.json"
        assert detect(demo["machines"], "--model", demo["model"], "--calibrate-on", demo["humans"], "--seed", seed,
                      "--save-calibration", saved, "--out", tmp_path / "o.csv") == 0
        err = capsys.readouterr().err
        python = json.loads(saved.read_text())["groups"]["Python"]
        at = python["at"]["0.05"]
        said = f"warning: Python: the held-out part of the reference has {at['flagged']} of {python['held_out_n']} " \
               f"flagged, {at['realised_fpr']:.1%}"
        assert (said in err) == (at["realised_fpr"] > 0.05), (seed, at)
        if at["realised_fpr"] > 0.05:
            assert "--fpr-confidence 0.95 sets a threshold that holds it with probability 0.95" in err
            assert f"({min_reference(0.05, 0.95)} fitting files a language; {python['fit_n']} here)" in err
        warned, quiet = warned + (said in err), quiet + (said not in err)
        if warned and quiet:
            break
    assert warned and quiet


def small_reference(demo, n: int) -> Path:
    folder = demo["root"] / f"small{n}"
    if not folder.exists():
        folder.mkdir()
        for path in sorted(demo["humans"].glob("*.py"))[:n]:
            shutil.copy(path, folder / path.name)
    return folder


def test_a_refusal_does_not_advise_pool_small_where_it_was_given(demo, capsys):
    """10 reference files: too few for any threshold, the pooled one too; --pool-small was given, so the
    refusal does not offer it."""
    assert detect(demo["machines"], "--model", demo["model"], "--calibrate-on", small_reference(demo, 10),
                  "--pool-small") == 2
    err = capsys.readouterr().err
    assert "the reference holds 10 files in all: too few for any threshold at 5% FPR" in err
    assert "--pool-small" not in err and "add human files of those languages to --calibrate-on" in err.lower()
    assert err.count("error:") == 1 and "Traceback" not in err


def test_a_refusal_of_a_saved_calibration_says_to_calibrate_again(demo, tmp_path, capsys):
    """A saved calibration's reference cannot grow: the advice is to calibrate again, never to add files
    to --calibrate-on (not given) nor to raise --fpr (the file holds its FPRs only)."""
    saved = tmp_path / "small.json"
    assert detect(demo["machines"], "--model", demo["model"], "--calibrate-on", small_reference(demo, 10),
                  "--save-calibration", saved) == 2   # refused, but saved as asked
    capsys.readouterr()
    for extra in ((), ("--pool-small",)):
        assert detect(demo["machines"], "--model", demo["model"], "--calibration", saved, *extra) == 2
        err = capsys.readouterr().err
        assert "Calibrate again with human files of those languages (--calibrate-on HUMAN_CODE" in err
        assert "to --calibrate-on" not in err and "raise --fpr" not in err and "--pool-small" not in err
    assert detect(demo["java"], "--model", demo["model"], "--calibrate-on", demo["humans"], "--save-calibration",
                  tmp_path / "python.json", "--pool-small", "--out", tmp_path / "o.csv") == 0
    capsys.readouterr()
    assert detect(demo["java"], "--model", demo["model"], "--calibration", tmp_path / "python.json") == 2
    err = capsys.readouterr().err   # Java has no threshold of its own; the pooled one exists
    assert "Java: no reference files" in err and "Calibrate again" in err and "--pool-small to hold them" in err


def test_a_refusal_says_that_fpr_confidence_raised_the_need(demo, capsys):
    assert detect(demo["machines"], "--model", demo["model"], "--calibrate-on", demo["humans"],
                  "--fpr-confidence", "0.95") == 2
    err = capsys.readouterr().err
    need, plain = min_reference(0.05, 0.95), min_reference(0.05)
    assert f"Python: 80 reference files (40 in the fitting part, {need} needed" in err
    assert f"({need} fitting files a language because its thresholds hold 5% with probability 0.95 " \
           f"(--fpr-confidence); held on average, {plain} would do)" in err
    assert "leave out --fpr-confidence" in err
