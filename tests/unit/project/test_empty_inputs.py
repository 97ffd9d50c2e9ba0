"""Zero rows at every stage: a clear user error that says what is empty and what to do, or
a valid empty result where empty is legitimate (an empty validation split, an empty test
matrix at predict time)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.detectors import build
from aicd.features.compute import compute
from aicd.scoring.scorer import score
from aicd.sources.loader import load_table, stream_sample
from aicd.splits.__main__ import main as splits_main
from aicd.splits.stratified import assign_splits

CODE = [f"def f(x):\n    return x + {i}\n" for i in range(8)]


def table(n: int = 8, **extra) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"i{i}" for i in range(n)], "code": CODE[:n], "language": "Python",
                         "target": (["human", "machine"] * n)[:n], **extra})


@pytest.mark.parametrize("name, content", [("e.parquet", None), ("e.jsonl", ""), ("e.csv", "code\n")])
def test_an_empty_input_file_is_named(tmp_path, name, content):
    path = tmp_path / name
    if content is None:
        pd.DataFrame({"code": pd.Series([], dtype=str)}).to_parquet(path)
    else:
        path.write_text(content)
    for load in (lambda: load_table({"files": str(path)}), lambda: stream_sample({"files": str(path)}, 0)):
        with pytest.raises(AicdError, match=rf"{name}: no data rows; point the config at a file with data"):
            load()


def test_an_empty_file_among_others_is_left_out(tmp_path):
    pd.DataFrame({"code": pd.Series([], dtype=str)}).to_parquet(tmp_path / "a.parquet")
    table(3).to_parquet(tmp_path / "b.parquet")
    assert len(load_table({"files": [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]})) == 3


def test_splitting_nothing_gives_nothing():
    assert assign_splits(table(0), ["target", "language"], {"train": 0.8, "test": 0.2}, 0).empty


def _split(tmp_path, mode, table_path, spec):
    import json

    flag = "--pool" if mode == "build" else "--source"
    splits_main([mode, "--task", "T", "--spec", json.dumps(spec), flag, str(table_path),
                 "--outdir", str(tmp_path / "T"), "--report", str(tmp_path / "T" / "report.json")])


def test_an_empty_pool_or_source_stops_the_split_naming_the_file(tmp_path):
    path = tmp_path / "pool.parquet"
    table(0).to_parquet(path)
    with pytest.raises(AicdError, match=r"task T: .*pool.parquet has no rows, so there is nothing to split; "
                                        r"every input row was rejected or removed: see filter_report.md"):
        _split(tmp_path, "build", path, {"kind": "binary"})
    with pytest.raises(AicdError, match=r"task T: .*pool.parquet has no rows.*every row of the source was skipped"):
        _split(tmp_path, "derive", path, {"target": "label"})
    assert not (tmp_path / "T").exists()


def test_an_empty_train_or_test_split_is_named_with_the_counts(tmp_path):
    path = tmp_path / "source.parquet"
    table(8, label=["human"] * 8).to_parquet(path)
    with pytest.raises(AicdError, match=r"task T: the train split is empty \(8 rows in; skipped: none; "
                                        r"rows per split: train 0, validation 0, test 8\)"):
        _split(tmp_path, "derive", path, {"target": "label", "fractions": {"train": 0.0, "validation": 0.0, "test": 1.0}})


@pytest.mark.parametrize("kind, params", [("tfidf", {"svd_components": 3}), ("ast", {})])
def test_features_of_an_empty_split_are_an_empty_matrix(kind, params, tmp_path):
    from aicd.features import store

    out = tmp_path / "features.npz"
    _, names, rows, _ = compute(kind, params, {"train": table(), "validation": table(0), "test": table(2)}, 0, out)
    assert rows == {"train": len(table()), "validation": 0, "test": 2}
    assert store.matrix(out, "validation").shape == (0, len(names)) and store.matrix(out, "test").shape == (2, len(names))


@pytest.mark.parametrize("kind", ["catboost", "linear_svm", "logistic_regression"])
def test_classical_detectors_name_what_is_empty(kind):
    y = np.array(["human", "machine"] * 4, dtype=object)
    params = {"iterations": 5} if kind == "catboost" else {}
    with pytest.raises(AicdError, match=rf"detector {kind}: the train split has no rows"):
        build(kind, params, seed=0).fit(np.zeros((0, 3)), y[:0])
    with pytest.raises(AicdError, match=rf"detector {kind}: the feature set has no columns for the 8 train rows"):
        build(kind, params, seed=0).fit(np.zeros((8, 0)), y)
    with pytest.raises(AicdError, match=rf"detector {kind}: the train split has one class only"):
        build(kind, params, seed=0).fit(np.random.default_rng(0).random((8, 3)), np.array(["human"] * 8, dtype=object))
    fitted = build(kind, params, seed=0).fit(np.random.default_rng(0).random((8, 3)), y)
    assert len(fitted.predict(np.zeros((0, 3)))) == 0 and fitted.predict_scores(np.zeros((0, 3))).shape == (0, 2)


@pytest.mark.parametrize("kind", ["random", "majority"])
def test_dummy_detectors_name_an_empty_train_split(kind):
    with pytest.raises(AicdError, match=rf"detector {kind}: the train split has no rows"):
        build(kind, {}, seed=0).fit(np.zeros((0, 0)), np.array([], dtype=object))


def test_nothing_to_score_is_a_user_error():
    with pytest.raises(AicdError, match=r"nothing to score: 0 predictions for 2 test rows"):
        score(pd.DataFrame({"id": [], "gold": [], "pred": []}), table(2), sample=True)


def test_a_judge_sample_with_no_rows_is_a_user_error(tmp_path, repo):
    import json

    from aicd.judge.__main__ import main as judge_main

    table(3, domain="algorithmic").to_parquet(tmp_path / "test.parquet")
    model = {"name": "J", "litellm_model": "openai/none", "api_base": "http://127.0.0.1:9/v1", "params": {}}
    with pytest.raises(AicdError, match=r"judge J: the 0.05 sample of 3 test rows .* is empty; raise judging.fraction"):
        run = {"task": "T1", "mode": "zs", "test": str(tmp_path / "test.parquet"), "labels": ["human", "machine"],
               "out": str(tmp_path / "p.parquet"), "report": str(tmp_path / "r.json")}
        judge_main(["--model", json.dumps(model), "--runs", json.dumps([run]),
                    "--prompts", str(repo / "config" / "prompts" / "judge.v1.yaml"),
                    "--llm", json.dumps({"cache": str(tmp_path / "c.sqlite")})])
