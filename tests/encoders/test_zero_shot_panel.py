"""The zero-shot panel end to end on a tiny random Llama (a real transformers causal LM, saved
and loaded by path): an lm_stats feature set that scores a seeded sample of validation and
test, a zero_shot_lm detector that predicts exactly that sample and is scored as one, the fitted
model file that applies itself to new code, and text too short for any criterion (counted)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from aicd.features import store
from aicd.features.compute import compute
from aicd.lm.stats import STAT_NAMES, criterion

pytestmark = pytest.mark.encoders


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory, code_rows):
    import torch
    from aicd.lm.train import train_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    texts, _ = code_rows
    tok = train_tokenizer([str(t) for t in texts], vocab_size=300)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=None)
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tables(code_rows):
    texts, labels = code_rows
    frame = pd.DataFrame({"id": [f"r{i:03d}" for i in range(len(texts))], "code": texts, "target": labels,
                          "language": "Python", "domain": "algorithmic"})
    return {"train": frame.iloc[:40].reset_index(drop=True), "validation": frame.iloc[40:100].reset_index(drop=True),
            "test": frame.iloc[100:180].reset_index(drop=True)}


def stats_set(tiny_lm, tables, out, rows):
    params = {"model": tiny_lm, "window": 48, "batch_size": 8, "dtype": "float32", "rows": rows}
    featurizer, names, _counts, _ = compute("lm_stats", params, tables, 7, out)
    return featurizer, names


def test_a_sampled_set_scores_its_seeded_sample_and_nothing_else(tiny_lm, tables, tmp_path):
    _, names = stats_set(tiny_lm, tables, tmp_path / "a.npz", {"train": 0, "validation": 20, "test": 24})
    assert names == list(STAT_NAMES)
    X = {s: store.read(store.matrix(tmp_path / "a.npz", s)) for s in ("train", "validation", "test")}
    scored = {s: int((~np.isnan(x).all(axis=1)).sum()) for s, x in X.items()}
    assert scored == {"train": 0, "validation": 20, "test": 24}
    test = tables["test"].assign(scored=~np.isnan(X["test"]).all(axis=1))
    per_class = test[test["scored"]].groupby("target").size()
    share = tables["test"].groupby("target").size() / len(tables["test"])
    assert (abs(per_class / 24 - share) <= 1 / 24 + 1e-9).all()  # stratified by class
    # the same seed and rows give the same sample and the same numbers
    stats_set(tiny_lm, tables, tmp_path / "b.npz", {"train": 0, "validation": 20, "test": 24})
    again = store.read(store.matrix(tmp_path / "b.npz", "test"))
    assert np.array_equal(np.isnan(again), np.isnan(X["test"]))
    assert np.allclose(again[test["scored"]], X["test"][test["scored"]])


def test_the_panel_predicts_its_sample_which_is_scored_as_a_sample(tiny_lm, tables, tmp_path):
    from aicd.detectors.fitting import fit_predict
    from aicd.scoring.scorer import score

    featurizer, _ = stats_set(tiny_lm, tables, tmp_path / "f.npz", {"train": 0, "validation": 20, "test": 24})
    spec = {"kind": "zero_shot_lm", "params": {"criterion": "fast_detectgpt"}}
    fitted = fit_predict(spec, tables, str(tmp_path / "f.npz"), seed=0, featurizer=featurizer)
    detector, preds, covered = fitted.detector, fitted.predictions, fitted.validation["covered_rows"]
    assert len(preds) == 24 and covered["test"] == {"scored": 24, "of": 80}
    assert covered["validation"] == {"scored": 20, "of": 60}
    X = store.read(store.matrix(tmp_path / "f.npz", "test"))
    keep = ~np.isnan(X).all(axis=1)
    expected = criterion("fast_detectgpt", X[keep].astype(np.float64))
    by_id = dict(zip(preds["id"], preds["criterion"]))
    got = np.array([by_id[i] for i in tables["test"]["id"][keep]])
    assert np.allclose(got, expected, rtol=1e-5, atol=1e-5, equal_nan=True)
    assert set(preds["pred"]) <= {"human", "machine"}
    assert ((preds["pred"] == "machine") == (preds["criterion"] > detector.threshold_)).all()
    result = score(preds, tables["test"], ["human", "machine"], sample=True, resamples=50)
    assert result["coverage"] == pytest.approx(24 / 80)
    with pytest.raises(Exception, match="missing|rerun"):
        score(preds, tables["test"], ["human", "machine"], sample=False, resamples=50)


def test_the_fitted_panel_model_file_applies_itself_to_new_code(tiny_lm, tables, tmp_path):
    from aicd.detectors.bundle import load_bundle, make_bundle, save_bundle
    from aicd.detectors.fitting import fit_predict

    featurizer, _ = stats_set(tiny_lm, tables, tmp_path / "f.npz", {"train": 0, "validation": 20, "test": 24})
    spec = {"kind": "zero_shot_lm", "params": {"criterion": "loglik"}}
    detector = fit_predict(spec, tables, str(tmp_path / "f.npz"), seed=0, featurizer=featurizer).detector
    save_bundle(make_bundle(detector, featurizer, spec, task="binary"), tmp_path / "m.skops")
    model = load_bundle(tmp_path / "m.skops")
    new = pd.DataFrame({"id": ["a", "b", "short"], "code": [tables["test"]["code"][0], "def f(x):\n    return x\n", ""]})
    out = model.predict_rows(new)
    assert list(out["id"]) == ["a", "b", "short"] and set(out["pred"]) <= {"human", "machine"}
    # the empty text has no criterion: it is predicted human (and would be counted as too short)
    assert out.loc[out["id"] == "short", "pred"].item() == "human"
    direct = criterion("loglik", featurizer.transform(new.iloc[:2]).astype(np.float64))
    assert np.isfinite(direct).all()


def test_statistics_are_computed_once_per_text_and_read_back_by_the_next_job(tiny_lm, tables, tmp_path):
    """A second feature set over the same texts (another task of the run, the same model and
    window) reads every statistic from the run's cache and gets the same numbers."""
    params = {"model": tiny_lm, "window": 48, "batch_size": 8, "dtype": "float32", "rows": {"train": 0}}
    first, *_ = compute("lm_stats", params, tables, 7, tmp_path / "a.npz", cache_dir=str(tmp_path / "cache"))
    assert first.scored_ == 140 and first.cached_ == 0  # validation 60 + test 80
    second, *_ = compute("lm_stats", params, tables, 7, tmp_path / "b.npz", cache_dir=str(tmp_path / "cache"))
    assert second.scored_ == 0 and second.cached_ == 140
    for split in ("validation", "test"):
        a = store.read(store.matrix(tmp_path / "a.npz", split))
        b = store.read(store.matrix(tmp_path / "b.npz", split))
        assert np.array_equal(a, b, equal_nan=True)
    other = {**params, "window": 32}  # another window is another statistic
    third, *_ = compute("lm_stats", other, tables, 7, tmp_path / "c.npz", cache_dir=str(tmp_path / "cache"))
    assert third.scored_ == 140 and third.cached_ == 0
