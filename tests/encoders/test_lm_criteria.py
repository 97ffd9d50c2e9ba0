"""The LM criteria feature set (aicd.features.lm_criteria) on the real packaged SmolLM2-135M: the
panel's criteria, oriented and standardised per language on human training rows, cached per
text; and the fused detector over it with per-language standardised stylometry, through the
features and detect jobs (which hand it the column names) and `aicd detect` on new files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from aicd.features.registry import build, load_featurizer
from aicd.lm.stats import criterion

pytestmark = pytest.mark.encoders

MODEL = "package:smollm2-135m-instruct"
LM = {"model": MODEL, "window": 64, "batch_size": 8, "dtype": "auto"}


@pytest.fixture(scope="module")
def rows(trial_raw):
    """Four rows of each language and class, short ones first (the model is real: keep it cheap)."""
    df = trial_raw.assign(label=np.where(trial_raw["generator"] == "Human", "human", "machine"),
                          id=lambda t: "r" + t["row_id"].astype(str))
    df = df[df["code"].str.len().between(80, 600)].sort_values("row_id")
    out = pd.concat([g.head(4) for _, g in df.groupby(["language", "label"])], ignore_index=True)
    return out.assign(target=out["label"])


def test_criteria_are_the_panels_oriented_and_standardised_per_language(rows, tmp_path):
    raw = build("lm_stats", LM)
    raw.cache_dir = str(tmp_path / "cache")
    stats = raw.transform(rows)
    featurizer = build("lm_criteria", {**LM, "min_humans": 2})
    featurizer.cache_dir = str(tmp_path / "cache")
    X = featurizer.fit_transform(rows)
    assert featurizer.feature_names == ["lm:loglik", "lm:logrank", "lm:entropy", "lm:lrr", "lm:fast_detectgpt"]
    assert featurizer.report_fields({})["lm"]["texts_from_cache"] == len(rows)  # scored once, by lm_stats above
    humans = (rows["label"] == "human").to_numpy()
    for language in ("Python", "Java", "C++"):
        mask = humans & (rows["language"] == language).to_numpy()
        assert np.abs(X[mask].mean(axis=0)).max() < 1e-4, language
    unstandardised = build("lm_criteria", {**LM, "standardise": "none"})
    unstandardised.cache_dir = str(tmp_path / "cache")
    expected = np.column_stack([criterion(c, stats) for c in ("loglik", "logrank", "entropy", "lrr", "fast_detectgpt")])
    assert np.allclose(unstandardised.fit_transform(rows), expected, atol=1e-4)
    # a language with no human training rows takes the pooled statistics
    assert featurizer.report_fields({})["standardised_on_humans"]["pooled"] == []
    go = pd.DataFrame({"code": ["package main\nfunc main() { println(1) }\n"], "language": ["Go"]})
    mean, std = featurizer.standardiser.pooled_
    assert np.allclose(featurizer.transform(go), (unstandardised.transform(go) - mean) / std, atol=1e-4)


def test_the_fused_detector_through_the_jobs_and_aicd_detect(rows, tmp_path):
    from aicd.cli import main as aicd
    from unit.fitted_task_helpers import fit_features, write_task

    train = rows.groupby(["language", "label"]).head(3)
    test = rows.drop(train.index)
    paths = write_task(tmp_path / "task", {"train": train.reset_index(drop=True), "test": test.reset_index(drop=True)})
    lm = fit_features(paths, tmp_path / "lm", {"kind": "lm_criteria", "params": {**LM, "min_humans": 2}})
    style = fit_features(paths, tmp_path / "style", {"kind": "stylometry",
                                                     "params": {"standardise": "language", "min_humans": 2}})
    from aicd.features.__main__ import main as features_main

    both = tmp_path / "both"
    both.mkdir()
    features_main(["--spec", json.dumps({"kind": "concat", "parts": ["lm", "style"]}), "--train", str(paths["train"]),
                   "--test", str(paths["test"]), "--parts", str(lm / "features.npz"), str(style / "features.npz"),
                   "--out", str(both / "features.npz"), "--model", str(both / "featurizer.skops"),
                   "--report", str(both / "report.json")])
    from unit.fitted_task_helpers import fit_detector

    model, predictions = fit_detector(paths, both, tmp_path / "model", kind="fused", params={"model": "average"})
    report = json.loads((tmp_path / "model" / "fused.json").read_text())
    assert set(report["lm_coefficients"]) == {f"lm:{c}" for c in ("loglik", "logrank", "entropy", "lrr",
                                                                  "fast_detectgpt")}
    assert min(report["lm_coefficients"].values()) >= 0.0 and report["columns"]["trained"] == 116
    fitted = load_featurizer(both / "featurizer.skops")
    assert [n for n in fitted.feature_names if n.startswith("lm:")] == [f"lm:{c}" for c in
                                                                       ("loglik", "logrank", "entropy", "lrr",
                                                                        "fast_detectgpt")]
    folder = tmp_path / "new"
    folder.mkdir()
    ext = {"Python": ".py", "C++": ".cpp", "Java": ".java"}
    for _, row in test.iterrows():
        (folder / f"{row['id']}{ext[row['language']]}").write_text(row["code"])
    assert aicd(["detect", str(folder), "--model", str(model), "--out", str(tmp_path / "out.csv")]) == 0
    got = pd.read_csv(tmp_path / "out.csv").sort_values("path")
    ids = [p.rsplit("/", 1)[-1].split(".")[0] for p in got["path"]]
    expected = pd.read_parquet(predictions).set_index("id").loc[ids, "pred"].to_numpy()
    assert (got["model_label"].to_numpy() == expected).all()  # new files scored as the workflow scored them


def test_the_lm_can_read_the_code_without_its_comments(tmp_path):
    from aicd.codetools.perturb import no_comments

    code = "def total(xs):\n    # add them up, one by one, as the exercise asks\n    return sum(xs)\n"
    rows = pd.DataFrame({"code": [code], "language": ["Python"]})
    stripped = pd.DataFrame({"code": [no_comments(code, "Python")], "language": ["Python"]})
    assert "#" not in stripped["code"][0]
    params = {**LM, "standardise": "none"}
    plain = build("lm_criteria", {**params, "text": "no_comments"})
    plain.cache_dir = str(tmp_path)
    raw = build("lm_criteria", params)
    raw.cache_dir = str(tmp_path)
    assert np.allclose(plain.transform(rows), raw.transform(stripped))
    assert not np.allclose(raw.transform(rows), raw.transform(stripped))
    assert plain.report_fields({})["text"] == "no_comments"
