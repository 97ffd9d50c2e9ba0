"""Tables 5-7: every number recomputed from the score JSONs (here: real scoring of planted
predictions, so the JSONs have the scorer's exact shape), one-class subsets reported as recall
and marked, the paper's row order, and a task without subsets or a missing kind said so."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from aicd.report.subset_tables import compute, main, paper_table, render
from aicd.scoring.scorer import score

LABELS = ["human", "machine"]


def _scores(task, detector, test, pred):
    return {"task": task, "detector": detector,
            **score(pd.DataFrame({"id": test["id"], "gold": test["target"], "pred": pred}), test, LABELS)}


@pytest.fixture
def t1_scores():
    rng = np.random.default_rng(0)
    subsets = (["seen_language_seen_domain"] * 40 + ["unseen_language_seen_domain"] * 30
               + ["seen_language_unseen_domain"] * 20 + ["unseen_language_unseen_domain"] * 10)
    gold = np.array(["human", "machine"] * 35 + ["human"] * 30, dtype=object)  # the last 30: human only
    test = pd.DataFrame({"id": [f"r{i}" for i in range(100)], "code": "x", "subset": subsets, "target": gold,
                         "language": "Python"})
    out = {}
    for det in ("cb_tfidf", "svm_tfidf", "lr_ast"):
        pred = np.where(rng.random(100) < 0.7, gold, np.where(gold == "human", "machine", "human"))
        out[det] = _scores("binary", det, test, pred)
    out["random"] = _scores("binary", "random", test, rng.choice(LABELS, 100))
    return out


def _expected(scores, subset, labels):
    """Independent recomputation: mean and sample std over detectors of the per-subset value."""
    values, one = [], None
    for s in scores.values():
        e = s["by"]["subset"][subset]
        gold = [c for c, v in e["per_class"].items() if v["support"] > 0]
        if len(gold) == 1:
            one = gold[0]
            values.append(e["per_class"][gold[0]]["recall"])
        else:
            values.append(np.mean([e["per_class"][c]["f1"] for c in labels if c in e["per_class"]]))
    return np.mean(values), (np.std(values, ddof=1) if len(values) > 1 else 0.0), one


def test_table5_numbers_recomputed_from_scores(tmp_path, t1_scores):
    paths = []
    for det, s in t1_scores.items():
        p = tmp_path / "scores" / f"{det}.json"
        p.parent.mkdir(exist_ok=True)
        p.write_text(json.dumps(s))
        paths.append(str(p))
    trained = ["cb_tfidf", "svm_tfidf", "lr_ast"]
    layout = {"tables": {"5": {"task": "binary", "labels": LABELS, "detectors": trained},
                         "6": {"task": None}, "7": {"task": None}}, "titles": {}}
    main(["--layout", json.dumps(layout), "--scores", *paths, "--tables-dir", str(tmp_path / "tables")])
    tex = (tmp_path / "tables" / "table5.tex").read_text()
    md = (tmp_path / "tables" / "table5.md").read_text()
    # the paper's row order
    order = [tex.index(title) for _, title in paper_table(5)["rows"]]
    assert order == sorted(order)
    kept = {d: t1_scores[d] for d in trained}  # the dummy baseline is excluded
    for subset, title in paper_table(5)["rows"]:
        mean, std, one = _expected(kept, subset, LABELS)
        line = next(ln for ln in tex.splitlines() if ln.strip().startswith(title))
        nums = re.findall(r"\d+\.\d+", line)
        assert nums[:2] == [f"{mean:.2f}", f"{std:.2f}"], (subset, line)
        lo, hi = map(float, nums[2:4])  # the mean of the detectors' own bounds
        assert lo <= round(mean, 2) <= hi
        assert ("human recall" in line) == (one is not None)  # the metric under its true name
        assert f"{mean:.2f}" in md
    assert "that class's recall (not comparable with the paper's macro-F1)" in md
    for n in (6, 7):
        assert "not computed" in (tmp_path / "tables" / f"table{n}.md").read_text()
        assert "Not computed" in (tmp_path / "tables" / f"table{n}.tex").read_text()
    summary = json.loads((tmp_path / "tables" / "subset_tables.json").read_text())
    assert summary["5"]["detectors"] == sorted(trained)


def test_one_class_subset_is_recall_not_macro_f1(t1_scores):
    res = compute(5, "binary", LABELS, {"svm_tfidf": t1_scores["svm_tfidf"]})
    row = next(r for r in res["rows"] if r["subset"] == "unseen_language_unseen_domain")
    entry = t1_scores["svm_tfidf"]["by"]["subset"]["unseen_language_unseen_domain"]
    assert row["one_class"] == "human" and row["metric"] == "recall of human"
    assert row["mean"] == pytest.approx(entry["per_class"]["human"]["recall"])
    assert row["std"] == 0.0


def test_task_without_subsets_says_so():
    s = {"task": "T2", "detector": "x", "by": {"language": {}}}
    res = compute(6, "T2", ["human", "Qwen"], {"x": s})
    latex, md = render(res)
    assert "names no subsets" in md and "Not computed" in latex and not res["rows"]


def test_multiclass_subset_macro_f1_is_over_the_task_label_set():
    entry = {"n": 4, "one_class": None, "per_class": {
        "Qwen": {"f1": 0.5, "recall": 0.5, "support": 2}, "Gemma": {"f1": 1.0, "recall": 1.0, "support": 2},
        "human": {"f1": 0.0, "recall": 0.0, "support": 0}}}
    s = {"task": "T2", "detector": "x", "by": {"subset": {"unseen_generator": entry}}}
    res = compute(6, "T2", ["human", "Qwen", "Gemma", "OpenAI"], {"x": s})
    row = next(r for r in res["rows"] if r["subset"] == "unseen_generator")
    # over all four task labels: human predicted but absent (F1 0), OpenAI neither present nor predicted (0)
    assert row["mean"] == pytest.approx((0.5 + 1.0 + 0.0 + 0.0) / 4)
    seen = next(r for r in res["rows"] if r["subset"] == "seen_generator")
    assert seen["rows"] is None and "no rows" in render(res)[1]
