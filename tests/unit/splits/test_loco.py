"""Leave one collection out (aicd.splits.loco, through aicd.splits.ood_task as the workflow runs it)
on the real collections of config/loco.yaml: what is held out, that no row of it trains or
validates, that the folds are seeded and hold every collection out once; its metrics
(aicd.scoring.loco) against scikit-learn and by hand; the config checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from aicd.common.errors import AicdError
from aicd.splits import loco
from aicd.splits.ood_task import loco_tables, main

SEED = 2026


@pytest.fixture(scope="module")
def loco_config(repo):
    return yaml.safe_load((repo / "config" / "loco.yaml").read_text())


@pytest.fixture(scope="module")
def sources(loco_config, repo):
    """Every source of config/loco.yaml, built by the sources stage's code (the trial from its
    shared file; the others small), from the repository root as the config expects."""
    import os

    from aicd.sources.build import build_source
    from components import require

    for spec in loco_config["sources"].values():
        require((repo / spec["files"]).is_file(), f"real-data test: {spec['files']}", "it ships in ../shared/data")
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        return {name: build_source(name, spec, SEED)[0] for name, spec in loco_config["sources"].items()}
    finally:
        os.chdir(cwd)


def _spec(config, hold_out):
    return next(t["ood"] for t in config["tasks"].values() if t["ood"]["hold_out"] == hold_out)


def test_every_collection_is_held_out_once(loco_config):
    folds = [t["ood"] for t in loco_config["tasks"].values()]
    collections = folds[0]["collections"]
    assert sorted(f["hold_out"] for f in folds) == sorted(collections)
    assert all(f["collections"] == collections and f["protocol"] == "leave_one_collection_out" for f in folds)
    assert {"trial", "codeaid", "course_java", "aoc"} <= set(collections)


def test_no_row_of_the_held_out_collection_trains_or_validates(loco_config, sources):
    for held in _spec(loco_config, "trial")["collections"]:
        tables, report = loco_tables(_spec(loco_config, held), sources, SEED)
        test_ids = set(tables["test"]["id"])
        assert set(tables["test"]["collection"]) == {held}
        for split in ("train", "validation"):
            assert not test_ids & set(tables[split]["id"]), (held, split)
            assert held not in set(tables[split]["collection"])
        others = set(report["collections"]) - {held}
        assert set(tables["train"]["collection"]) == others == set(tables["validation"]["collection"])
        assert not set(tables["train"]["id"]) & set(tables["validation"]["id"])
        for table in tables.values():
            assert set(table["target"]) == {"human", "machine"} and (table["target"] == table["label"]).all()


def test_folds_are_seeded_and_a_collections_rows_do_not_depend_on_the_fold(loco_config, sources):
    spec = _spec(loco_config, "codeaid")
    a, _ = loco_tables(spec, sources, SEED)
    b, _ = loco_tables(spec, sources, SEED)
    c, _ = loco_tables(spec, sources, SEED + 1)
    for split in a:
        assert a[split]["id"].tolist() == b[split]["id"].tolist()
    assert set(a["validation"]["id"]) != set(c["validation"]["id"])
    # the trial's sample (max_rows) and its validation rows are the same whichever collection is held out
    d, _ = loco_tables(_spec(loco_config, "aoc"), sources, SEED)
    trial_a = a["validation"].query("collection == 'trial'")["id"]
    trial_d = d["validation"].query("collection == 'trial'")["id"]
    assert sorted(trial_a) == sorted(trial_d)
    held_trial, _ = loco_tables(_spec(loco_config, "trial"), sources, SEED)
    trial_rows = set(a["train"].query("collection == 'trial'")["id"]) | set(trial_a)
    assert trial_rows == set(held_trial["test"]["id"]) and len(trial_rows) == spec["max_rows"]


def test_the_sample_keeps_the_class_and_language_mix(sources):
    rows, dropped = loco.collection_rows("trial", [sources["trial"]], SEED, max_rows=600)
    full = sources["trial"]
    assert len(rows) == 600 and dropped == {"sampled_out": len(full) - 600}
    share = rows.groupby(["label", "language"]).size() / 600
    expected = full.groupby(["label", "language"]).size() / len(full)
    assert np.allclose(share.sort_index(), expected.sort_index(), atol=0.01)


def test_a_program_in_two_collections_is_tested_never_trained(sources):
    planted = sources["aoc"].iloc[:3].copy()  # three AoC programs also in the course collection
    course = pd.concat([sources["course_java"], planted], ignore_index=True)
    collections = {"course": loco.collection_rows("course", [course], SEED)[0],
                   "aoc": loco.collection_rows("aoc", [sources["aoc"]], SEED)[0]}
    tables, report = loco.leave_one_collection_out(collections, "aoc", SEED)
    assert report["left_out_as_in_held_out_collection"] == {"course": 3}
    assert not set(planted["id"]) & (set(tables["train"]["id"]) | set(tables["validation"]["id"]))
    assert set(planted["id"]) <= set(tables["test"]["id"])


def test_other_classes_are_counted_and_a_one_class_collection_is_refused(sources):
    hybrid = sources["aoc"].iloc[:5].assign(label="hybrid", id=lambda t: t["id"] + "-h")
    rows, dropped = loco.collection_rows("aoc", [sources["aoc"], hybrid], SEED)
    assert dropped == {"not_human_or_machine": {"hybrid": 5}} and len(rows) == len(sources["aoc"])
    humans = loco.collection_rows("lib", [sources["course_java"].query("label == 'human'")], SEED)[0]
    collections = {"lib": humans, "aoc": rows}
    with pytest.raises(AicdError, match="collection 'lib' has no machine rows"):
        loco.leave_one_collection_out(collections, "lib", SEED)
    with pytest.raises(AicdError, match="no collection named 'nope'"):
        loco.leave_one_collection_out(collections, "nope", SEED)
    tables, _ = loco.leave_one_collection_out(collections, "aoc", SEED)  # a human-only collection may train
    assert set(tables["train"]["collection"]) == {"lib"}


def test_the_split_job_writes_the_fold(loco_config, sources, tmp_path):
    paths = {}
    for name, table in sources.items():
        paths[name] = tmp_path / f"{name}.parquet"
        table.to_parquet(paths[name])
    outs = {s: tmp_path / f"{s}.parquet" for s in ("train", "validation", "test")}
    import json

    main(["--task", "loco_aoc", "--spec", json.dumps(_spec(loco_config, "aoc")), "--seed", str(SEED),
          "--sources", *[f"{n}={p}" for n, p in paths.items()],
          *[a for s, p in outs.items() for a in (f"--out-{s}", str(p))], "--report", str(tmp_path / "r.json")])
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["hold_out"] == "aoc" and report["splits"]["test"]["rows"] == len(sources["aoc"])
    assert set(pd.read_parquet(outs["test"])["collection"]) == {"aoc"}
    with pytest.raises(AicdError, match="no table given for source"):
        loco_tables(_spec(loco_config, "aoc"), {"aoc": sources["aoc"]}, SEED)


def test_config_checks_name_a_missing_source_and_an_unknown_held_out_collection(loco_config):
    from aicd.config import ood_problems as collection_problems

    spec = {"protocol": "leave_one_collection_out", "hold_out": "x", "collections": {"a": ["trial"], "b": ["nope"]}}
    problems = collection_problems("t", spec, loco_config["sources"])
    assert any("no source named 'nope'" in p for p in problems)
    assert any("no collection named 'x'" in p for p in problems)
    assert not collection_problems("t", _spec(loco_config, "aoc"), loco_config["sources"])


def test_fold_metrics_read_as_their_names_say():
    from aicd.scoring.loco import fold_metrics, summary
    from sklearn.metrics import f1_score, roc_auc_score

    rng = np.random.default_rng(0)
    pos = rng.random(400) < 0.4
    s = np.round(rng.normal(size=400) + 0.9 * pos, 2)
    vpos = rng.random(300) < 0.5
    vs = np.round(rng.normal(size=300) + 1.2 * vpos, 2)
    m, draws = fold_metrics(s, pos, vs, vpos, 0.05, seed=1, resamples=200)
    t = m["val_threshold"]
    assert m["auroc"] == pytest.approx(roc_auc_score(pos, s))
    assert m["val_macro_f1"] == pytest.approx(f1_score(vpos, vs > t, average="macro"))
    assert m["val_macro_f1"] >= max(f1_score(vpos, vs > c, average="macro") for c in np.unique(vs))
    assert m["macro_f1"] == pytest.approx(f1_score(pos, s > t, average="macro"))
    assert m["human_fpr"] == pytest.approx((s[~pos] > t).mean())
    assert m["oracle_macro_f1"] == pytest.approx(max(f1_score(pos, s > c, average="macro") for c in np.unique(s)))
    cal = m["calibrated"]
    assert cal["reference_humans"] + cal["measuring_humans"] == (~pos).sum()
    assert 0 <= cal["fpr"] <= cal["fpr_upper"] and cal["tpr"] == pytest.approx((s[pos] > cal["threshold"]).mean())
    sure = m["calibrated_confident"]  # the same half, the target held with 95% (a higher order statistic)
    assert sure["fpr_confidence"] == 0.95 and sure["reference_humans"] == cal["reference_humans"]
    assert sure["threshold"] >= cal["threshold"] and sure["fpr"] <= cal["fpr"] and sure["tpr"] <= cal["tpr"]
    lo, hi = m["auroc_ci"]
    assert lo < m["auroc"] < hi and len(draws["auroc"]) == 200
    worse, _ = fold_metrics(-s, pos, vs, vpos, 0.05, seed=2, resamples=200)
    total = summary({"a": m, "b": worse}, {"a": draws, "b": _})
    assert total["auroc"]["worst"] == pytest.approx(1 - m["auroc"]) and total["auroc"]["mean"] == pytest.approx(0.5)
    assert total["auroc"]["worst_ci"][1] < total["auroc"]["mean_ci"][0]


def test_the_own_half_rules_are_read_again_over_seeded_halvings():
    """Each halving sets the rule's threshold on its own half and is measured on the other; the
    average rule keeps the target on average, the confident one misses 7% no more often; no
    halving is the single view's own half (numpy pads a seed with zeros)."""
    from aicd.scoring.calibration import conformal_threshold, split_reference
    from aicd.scoring.loco import HALVINGS, calibrated

    rng = np.random.default_rng(5)
    pos = np.array([False] * 200 + [True] * 100)
    s = rng.normal(size=300) + pos
    human, machine = s[~pos], s[pos]
    average, sure = calibrated(s, pos, 0.05, seed=3)["halvings"], calibrated(s, pos, 0.05, 3, 0.95)["halvings"]
    fprs = []
    for j in range(HALVINGS):  # the record, computed here by hand
        fit, held = split_reference(200, 0.5, [3, j + 1])
        fprs.append((human[held] > conformal_threshold(human[fit], 0.05)).mean())
    assert average["count"] == HALVINGS and average["fpr_mean"] == pytest.approx(np.mean(fprs))
    assert average["fpr_max"] == pytest.approx(max(fprs)) and average["missed"] == sum(f > 0.07 + 1e-12 for f in fprs)
    assert average["fpr_mean"] <= 0.065 and sure["fpr_mean"] < average["fpr_mean"]
    assert sure["missed"] <= average["missed"] and sure["tpr_mean"] <= average["tpr_mean"]
    assert calibrated(s, pos, 0.05, seed=3) == calibrated(s, pos, 0.05, seed=3)  # seeded: the same record
    single = split_reference(200, 0.5, 3)[0]
    assert all(not np.array_equal(single, split_reference(200, 0.5, [3, j + 1])[0]) for j in range(HALVINGS))
    assert 0 < average["tpr_mean"] == pytest.approx(np.mean([(machine > conformal_threshold(
        human[split_reference(200, 0.5, [3, j + 1])[0]], 0.05)).mean() for j in range(HALVINGS)]))


def test_too_few_reference_humans_give_no_calibrated_threshold():
    from aicd.scoring.loco import fold_metrics

    pos = np.array([False] * 18 + [True] * 90)  # Advent of Code's 18 humans: halves of 9 < 19
    s = np.linspace(0, 1, 108)
    m, _ = fold_metrics(s, pos, s, pos, 0.05, resamples=10)
    assert m["calibrated"]["threshold"] is None and "fewer than the 19" in m["calibrated"]["why"]
    assert "fewer than the 59" in m["calibrated_confident"]["why"]


def test_the_table_job_reads_every_fold_in_the_configs_order(tmp_path):
    import json

    from aicd.report.loco import main as table

    rng = np.random.default_rng(3)
    preds, vals = [], []
    for task in ("loco_b", "loco_a"):
        for detector in ("good", "labels_only"):
            gold = np.array(["human"] * 40 + ["machine"] * 40, dtype=object)
            score = rng.normal(size=80) + (gold == "machine")
            pred = pd.DataFrame({"id": [f"r{i}" for i in range(80)], "gold": gold,
                                 "pred": np.where(score > 0.5, "machine", "human")})
            if detector == "good":
                pred["score_human"] = 1 - score
            (tmp_path / "predictions" / task).mkdir(parents=True, exist_ok=True)
            (tmp_path / "validation" / task).mkdir(parents=True, exist_ok=True)
            preds.append(tmp_path / "predictions" / task / f"{detector}.parquet")
            vals.append(tmp_path / "validation" / task / f"{detector}.parquet")
            pred.to_parquet(preds[-1])
            pd.DataFrame({"id": pred["id"], "gold": gold, "machine_score": score}).to_parquet(vals[-1])
    layout = {"folds": {"loco_a": "alpha", "loco_b": "beta"}, "order": ["beta", "alpha"],
              "detectors": {"good": "Good_{LR}", "labels_only": "Labels"}}
    # the calibrate job's test view of `good` on loco_b: the default reference's record
    view = {"task": "loco_b", "detector": "good", "available": True, "fpr": 0.05, "rows": 80,
            "reference": {"rows": 55, "by_origin": {"validation": 55}},
            "calibrated": {"tpr": 0.4, "fpr": 0.125, "humans": 40, "positives": 40, "fpr_upper": 0.245,
                           "without_threshold": 0},
            "reference_held_out": {"realised_fpr": 0.04}, "pooled_languages": ["Go"]}
    (tmp_path / "calibration" / "loco_b").mkdir(parents=True)
    (tmp_path / "calibration" / "loco_b" / "good.test.json").write_text(json.dumps(view))
    table(["--layout", json.dumps(layout), "--predictions", *map(str, preds), "--validation-scores", *map(str, vals),
           "--calibration-views", str(tmp_path / "calibration" / "loco_b" / "good.test.json"),
           "--fpr", "0.05", *[arg for fmt in ("md", "tex", "json") for arg in (f"--out-{fmt}", str(tmp_path / f"loco.{fmt}"))]])
    text = (tmp_path / "loco.md").read_text()
    default = text[text.index("### Calibrated on the default reference"):]
    assert "config/loco.yaml names none" in default
    halvings = text[text.index("### The same two rules over 50 seeded halvings"):text.index("### Calibrated on the default")]
    beta = json.loads((tmp_path / "loco.json").read_text())["detectors"]["good"]["folds"]["beta"]
    h = beta["calibrated"]["halvings"]
    # 20 humans measure each half: marked
    assert f"| Good (LR) | {100 * h['fpr_mean']:.1f} ({h['missed']}) § / {100 * h['tpr_mean']:.1f} → n/a |" in halvings
    assert "| Good (LR) | 12.5 (≤ 24.5) / 40.0 ¶ | — | 12.5 / 40.0 | 12.5 / 40.0 |" in default
    assert text.index("beta (40 h / 40 m)") < text.index("alpha (40 h / 40 m)")
    assert "Left out (no human-class score on every held-out collection): Labels." in text and "Good (LR)" in text
    record = json.loads((tmp_path / "loco.json").read_text())
    assert list(record["detectors"]) == ["good"] and record["left_out"] == ["Labels"]
    assert list(record["detectors"]["good"]["folds"]) == ["beta", "alpha"]
    folds = record["detectors"]["good"]["folds"]
    assert folds["beta"]["default_reference"]["reference_humans"] == 55 and "default_reference" not in folds["alpha"]


def test_a_view_with_no_threshold_for_any_row_is_not_measured():
    from aicd.report.loco import calibrated_rows, from_view

    view = {"available": True, "fpr": 0.05, "rows": 60, "reference": {"rows": 12, "by_origin": {"validation": 12}},
            "calibrated": {"tpr": 0.0, "fpr": 0.0, "humans": 31, "fpr_upper": 0.09, "without_threshold": 60},
            "reference_held_out": {"threshold": None, "realised_fpr": None}, "pooled_languages": ["C++"]}
    record = from_view(view)
    assert record["fpr"] is None and record["reference_humans"] == 12 and "fewer reference humans" in record["why"]
    rows = calibrated_rows({"d": {"folds": {"c": {"default_reference": record}}, "summary": {}}}, {},
                           "default_reference")
    assert rows == [["d", "n/a (12 ref.)", "", ""]]


def test_the_local_layer_adds_a_fifth_collection_to_every_fold(repo, loco_config):
    """config/loco_local.yaml merged as snakemake merges config files (mappings recursively): every
    fold names the local model's collection and one more fold holds it out; the plan reads its
    sources and lays the table out in the config's order."""
    import copy

    from aicd.config import check_references, validate_config
    from aicd.generate.registry import load_registry
    from aicd.plan import Plan
    from aicd.report.layouts import loco_layout
    from snakemake.utils import update_config

    config = copy.deepcopy(loco_config)
    update_config(config, yaml.safe_load((repo / "config" / "loco_local.yaml").read_text()))
    validate_config(config)
    check_references(config)
    folds = [t["ood"] for t in config["tasks"].values()]
    assert len(folds) == 5 and all(f["collections"]["local"] == ["local_code", "local_generations"] for f in folds)
    assert all(f["collections"] == folds[0]["collections"] and f["max_rows"] == folds[0]["max_rows"] for f in folds)
    plan = Plan.from_config(config, load_registry(repo / "config" / "models.yaml"), {})
    assert plan.loco_tasks() == list(config["tasks"])
    assert "local_generations" in plan.loco_sources("loco_aoc") and "local_code" in plan.loco_sources("loco_local")
    assert loco_layout(plan)["order"] == ["trial", "codeaid", "course_java", "aoc", "local"]


def test_the_default_reference_holds_no_program_of_the_held_out_collection(loco_config, sources):
    """Every real fold: the reference is the validation humans (of the training collections)
    and the library rows; a library row that is a held-out or training program is left out,
    counted."""
    for held in _spec(loco_config, "trial")["collections"]:
        tables, _ = loco_tables(_spec(loco_config, held), sources, SEED)
        test_row, train_row = tables["test"].iloc[[0]], tables["train"].iloc[[0]]
        library = pd.concat([test_row, train_row, pd.DataFrame(
            {"id": ["lib-1", "lib-2"], "language": ["Go", "PHP"], "label": ["human", "machine"]})], ignore_index=True)
        library["label"] = ["human", "human", "human", "machine"]
        rows, report = loco.default_reference_rows(tables, library)
        val = tables["validation"]
        assert report == {"in_test": 1, "in_train": 1}
        assert not set(rows["id"]) & (set(tables["test"]["id"]) | set(tables["train"]["id"]))
        assert set(rows.loc[rows["origin"] == "validation", "id"]) == set(val.loc[val["label"] == "human", "id"])
        assert set(rows.loc[rows["origin"] == "library", "id"]) == {"lib-1"}
        assert held not in set(val["collection"])
