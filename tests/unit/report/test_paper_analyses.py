"""The paper's analyses and figures on planted data: the SVM back-projection finds the planted
n-grams, CatBoost SHAP ranks the planted feature first, the all-fail analysis finds exactly the
rows every detector gets wrong, the paper's Table 4 rows are matched in order with "not run"
rows listed, and every figure is written as PDF and PNG."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from aicd import published
from aicd.detectors.classical import CatBoostDetector, LinearSvmDetector
from aicd.features.tfidf import TfidfSvdFeaturizer
from aicd.report.analyses import all_fail, catboost_shap, svm_ngram_weights, top_ngrams
from aicd.report.paper_section import match_paper_rows, not_run_rows


def _corpus(n=60, seed=0):
    rng = np.random.default_rng(seed)
    filler = ["x = 1", "for i in range(n):", "print(x)", "return y", "if a > b:", "def f(a):"]
    codes, labels = [], []
    for i in range(n):
        machine = i % 2 == 1
        body = list(rng.choice(filler, 4))
        body.append("result = compute_answer(output)" if machine else "li = cur + a1")
        codes.append("\n".join(body))
        labels.append("machine" if machine else "human")
    return codes, np.array(labels, dtype=object)


def test_svm_back_projection_finds_planted_ngrams():
    codes, y = _corpus()
    feat = TfidfSvdFeaturizer(max_features=200, ngram_max=2, svd_components=20, seed=0)
    X = feat.fit_transform(codes)
    det = LinearSvmDetector(seed=0, C=1.0).fit(X, y)
    classes, weights, vocab = svm_ngram_weights(det, feat)
    assert classes == ["human", "machine"] and weights.shape == (2, len(vocab))
    top = top_ngrams(classes, weights, vocab, top=5)
    assert any("compute_answer(output)" in g or g == "result" for g, _ in top["machine"])
    assert any(g in ("li", "cur", "a1", "li =") or "a1" in g for g, _ in top["human"])
    # the back-projected weights reproduce the SVM's decision function up to its intercept
    tfidf = feat.transformer.transform(feat.vectorizer.transform(codes)).toarray()
    svm = det.model_.steps[-1][1]
    scaler = det.model_.steps[0][1]
    direct = det.model_.decision_function(X)
    via_ngrams = tfidf @ weights[1] - (scaler.mean_ / scaler.scale_) @ svm.coef_[0] + svm.intercept_[0]
    np.testing.assert_allclose(via_ngrams, direct, rtol=1e-3, atol=1e-3)


def test_catboost_shap_ranks_planted_feature_first():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)).astype(np.float32)
    y = np.where(X[:, 2] > 0, "machine", "human").astype(object)
    det = CatBoostDetector(seed=0, threads=1, iterations=50, depth=3).fit(X, y)
    imp = catboost_shap(det, X[:50], [f"f{i}" for i in range(5)])
    assert set(imp) == {"human", "machine"} and int(np.argmax(imp["machine"])) == 2
    y3 = np.select([X[:, 0] > 0.5, X[:, 0] < -0.5], ["a", "b"], "c").astype(object)
    det3 = CatBoostDetector(seed=0, threads=1, iterations=50, depth=3).fit(X, y3)
    imp3 = catboost_shap(det3, X[:50], [f"f{i}" for i in range(5)])
    assert set(imp3) == {"a", "b", "c"} and all(int(np.argmax(v)) == 0 for v in imp3.values())


def test_all_fail_counts_rows_every_detector_gets_wrong():
    test = pd.DataFrame({"id": ["a", "b", "c", "d"], "code": ["x" * 5, "y" * 2, "z", "w" * 9],
                         "label": ["human", "machine", "human", "machine"], "language": ["Go", "Go", "C", "C"],
                         "generator": ["human", "g1", "human", "g2"], "subset": ["s", "s", "t", "t"]})
    gold = test["label"]
    p1 = pd.DataFrame({"id": test["id"], "gold": gold, "pred": ["machine", "human", "machine", "machine"]})
    p2 = pd.DataFrame({"id": test["id"], "gold": gold, "pred": ["machine", "human", "human", "human"]})
    res = all_fail({"d1": p1, "d2": p2}, test)
    assert res["all_wrong"] == 2 and {e["id"] for e in res["examples"]} == {"a", "b"}
    assert res["examples"][0]["id"] == "b"  # shortest first
    assert res["by"]["language"] == {"Go": {"all_wrong": 2, "of": 2}}


def test_paper_rows_in_order_and_not_run():
    dets = {"random": {"kind": "random"}, "majority": {"kind": "majority"},
            "svm_tfidf": {"kind": "linear_svm", "features": "tfidf"},
            "fdg": {"kind": "fast_detectgpt", "params": {}},
            "codebert": {"kind": "encoder", "params": {"model": "microsoft/codebert-base"}},
            "minilm": {"kind": "encoder", "params": {"model": "package:x"}}}
    matched = match_paper_rows(dets)
    assert [t for t, _ in matched] == [r.row for r in published.rows(4)]
    assert dict(matched)["Fast-DetectGPT"] == "fdg" and dict(matched)["CodeBERT"] == "codebert"
    missing = dict(not_run_rows(dets, ran={"random", "majority", "svm_tfidf", "fdg"}))
    assert "not in this configuration" in missing["ModernBERT"] and "no scores" in missing["CodeBERT"]
    assert "Random" not in missing and len(missing) == 18 - 4


def test_figures_written(tmp_path):
    from aicd.report.paper_figures import main
    from aicd.scoring.scorer import score
    rng = np.random.default_rng(0)
    n = 120  # both classes over the minimum of test rows, so a best is chosen
    test = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "code": "x",
                         "target": rng.choice(["human", "machine"], n).astype(object),
                         "language": rng.choice(["Go", "C", "Python"], n),
                         "subset": rng.choice(["seen_language_seen_domain", "seen_language_unseen_domain"], n)})
    paths = []
    for det in ("random", "svm"):
        pred = rng.choice(["human", "machine"], n)
        s = {"task": "binary", "detector": det,
             **score(pd.DataFrame({"id": test["id"], "gold": test["target"], "pred": pred}), test, ["human", "machine"])}
        p = tmp_path / f"{det}.json"
        p.write_text(json.dumps(s))
        paths.append(str(p))
    meas = pd.DataFrame({"label": ["human", "machine"] * 10, "language": ["Go"] * 20, "reject": None,
                         "lines_of_code": rng.integers(1, 100, 20).astype(float),
                         "avg_line_length": rng.random(20) * 40, "max_line_length": rng.random(20) * 120 + 1,
                         "alphanumeric_fraction": rng.random(20), "ast_depth": rng.integers(2, 20, 20).astype(float)})
    meas.to_parquet(tmp_path / "m.parquet")
    layout = {"tasks": [["binary", "T1 Binary", ["human", "machine"]]],
              "detectors": [["random", "Random", True], ["svm", "SVM_{TF-IDF}", False]]}
    main(["--layout", json.dumps(layout), "--scores", *paths, "--measurements", str(tmp_path / "m.parquet"),
          "--figures-dir", str(tmp_path / "fig"), "--out", str(tmp_path / "fig" / "index.json")])
    index = json.loads((tmp_path / "fig" / "index.json").read_text())
    entry = index["tasks"]["binary"]
    assert entry["best"] == "svm" and entry["best_basis"] == "macro-F1"
    for key in ("confusion_best", "confusion_all", "language", "subsets"):
        assert sorted(p[-3:] for p in entry[key]) == ["pdf", "png"]
    assert len(index["data"]) == 4
    for p in [*sum((v for k, v in entry.items() if k not in ("best", "best_basis")), []), *index["data"]]:
        assert not Path(p).is_absolute() and str(tmp_path) not in p  # relative to the index: no root in it
        assert (tmp_path / "fig" / p).stat().st_size > 1000
