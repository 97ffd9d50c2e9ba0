"""The encoder detector at the release's scale and edges: chunked tokenisation and predict
(memory bounded by the chunk, same predictions), a checkpoint whose trainer_state.json was cut
short, code that contains a special token's literal text (CodeT5+'s `</s>`), no fp16 for T5,
and integer labels through save/load."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from aicd.common.errors import AicdError
from aicd.detectors import build
from aicd.detectors.encoder import (
    TokenCache,
    checkpoint_step,
    choose_precision,
    last_complete_checkpoint,
    special_token_escaper,
)
from encoder_helpers import fit, split

pytestmark = pytest.mark.encoders

TINY = {"window": 128, "epochs": 1, "batch_size": 16, "micro_batch_size": 8, "save_steps": 5,
        "learning_rate": 3e-4, "logging_steps": 5}




def loaded(model, classes=("human", "machine"), **params):
    """An unfitted detector with the model loaded (random head): enough to compare predict paths."""
    det = build("encoder", {"model": model, "window": 128, "eval_batch_size": 8, **params}, seed=0, threads=1)
    det._setup_device()
    det.classes_ = np.array(classes, dtype=object)
    det._load(model, list(map(str, det.classes_)))
    det.model_.eval()
    return det


def test_chunked_predict_equals_one_chunk(tiny_encoder, code_rows):
    X, _ = code_rows
    X = X[:150]
    det = loaded(tiny_encoder)
    whole = det.predict_scores(X, chunk_rows=len(X))
    chunked = det.predict_scores(X, chunk_rows=7)
    default = det.predict_scores(X)  # predict_chunk_rows (8,192) > 150 rows: one chunk
    assert whole.shape == (150, 2) and np.array_equal(default, whole)
    assert np.allclose(chunked, whole, atol=1e-5)
    assert (chunked.argmax(1) == whole.argmax(1)).all()
    # the materialised batches (benchmarks) cover every row once
    order, batches = det.batches(X)
    assert sorted(order) == list(range(150)) and sum(len(b["input_ids"]) for b in batches) == 150
    # chunks are tokenised lazily: the first batch comes before the rest of X is tokenised
    calls = []
    tok = det.tokenizer_
    original = type(tok).__call__

    class Counting(type(tok)):
        def __call__(self, texts, *a, **kw):
            calls.append(len(texts))
            return original(self, texts, *a, **kw)

    tok.__class__ = Counting
    try:
        next(det.iter_batches(X, chunk_rows=10))
    finally:
        tok.__class__ = type(tok).__mro__[1]
    assert calls == [10]


def test_token_cache_chunks_match_one_call(tmp_path, tiny_encoder, code_rows):
    X, _ = code_rows
    X = X[:45]
    det = loaded(tiny_encoder)
    direct = det.tokenizer_([str(t) for t in X], truncation=True, max_length=64)["input_ids"]
    on_disk = TokenCache(tmp_path / "c", chunk_rows=4).tokenize(det.tokenizer_, X, 64)
    in_memory = TokenCache(None, chunk_rows=1000).tokenize(det.tokenizer_, X, 64)
    for ds in (on_disk, in_memory):
        assert [list(r) for r in ds["input_ids"]] == direct
        assert list(ds["length"]) == [len(r) for r in direct]
    assert [p.name.startswith(".") for p in (tmp_path / "c").iterdir()] == [False], "only the finished entry"
    again = TokenCache(tmp_path / "c", chunk_rows=9).tokenize(det.tokenizer_, X, 64)  # same key: a cache hit
    assert len(list((tmp_path / "c").iterdir())) == 1 and [list(r) for r in again["input_ids"]] == direct
    # the key is a per-row hash: rows that join to the same string still differ
    assert TokenCache.texts_hash(["a\0b"]) != TokenCache.texts_hash(["a", "b"])


def test_truncated_trainer_state_is_an_incomplete_checkpoint(tmp_path):
    for step, body in ((5, {"global_step": 5}), (10, {"global_step": 10}), (15, None)):
        ckpt = tmp_path / f"checkpoint-{step}"
        ckpt.mkdir()
        if body is not None:
            (ckpt / "trainer_state.json").write_text(json.dumps(body))
    text = (tmp_path / "checkpoint-10" / "trainer_state.json").read_text()
    (tmp_path / "checkpoint-10" / "trainer_state.json").write_text(text[: len(text) // 2])  # cut short
    assert checkpoint_step(tmp_path / "checkpoint-10") is None
    assert last_complete_checkpoint(tmp_path) == tmp_path / "checkpoint-5"
    assert not (tmp_path / "checkpoint-10").exists() and not (tmp_path / "checkpoint-15").exists()


def test_resume_skips_a_truncated_trainer_state(tmp_path, tiny_encoder, code_rows):
    train, val, test = split(code_rows)
    params = {**TINY, "keep_checkpoints": True, "save_total_limit": 3}  # 13 steps: checkpoints at 5, 10, 13
    fit(tiny_encoder, params, train, val, tmp_path / "w", tmp_path / "c")
    steps = sorted(int(p.name.split("-")[1]) for p in (tmp_path / "w").glob("checkpoint-*"))
    assert steps == [5, 10, 13], steps
    state = tmp_path / "w" / "checkpoint-13" / "trainer_state.json"
    state.write_text(state.read_text()[:100])  # a kill in the middle of writing it
    det = fit(tiny_encoder, params, train, val, tmp_path / "w", tmp_path / "c")
    assert det.fit_report_["resumed_from_step"] == 10 and det.fit_report_["steps"] == 13
    # every checkpoint cut short: starts over, no traceback
    for ckpt in (tmp_path / "w").glob("checkpoint-*"):
        (ckpt / "trainer_state.json").write_text("{")
    (tmp_path / "w" / "fingerprint.json").write_text('{"finger')  # itself cut short: another run, afresh
    det = fit(tiny_encoder, params, train, val, tmp_path / "w", tmp_path / "c")
    assert det.fit_report_["resumed_from_step"] == 0 and det.fit_report_["steps"] == 13
    assert det.predict_scores(test[0]).shape == (60, 2)


def test_special_token_text_is_tokenised_as_text(tiny_encoder, tiny_t5):
    det = loaded(tiny_encoder)
    sep = det.tokenizer_.sep_token_id
    code = 'print("[SEP] [CLS] x")'
    assert det.tokenizer_([code])["input_ids"][0].count(sep) == 2  # unescaped: a stray [SEP]
    (ids,) = det.tokenizer_(special_token_escaper(det.tokenizer_)([code]))["input_ids"]
    assert ids.count(sep) == 1 and ids.count(det.tokenizer_.cls_token_id) == 1
    t5 = loaded(tiny_t5)
    eos = t5.tokenizer_.eos_token_id
    assert t5.tokenizer_(['s = "</s>"'])["input_ids"][0].count(eos) == 2
    assert special_token_escaper(t5.tokenizer_)(['s = "</s>"']) == ['s = "< /s>"']


def test_t5_classifier_takes_code_with_a_literal_eos(tmp_path, tiny_t5, code_rows):
    """Without the escape, T5ForSequenceClassification raises "All examples must have the same
    number of <eos> tokens" on the first batch that holds a row containing `</s>`."""
    train, _val, test = split(code_rows)
    X_train = train[0].copy()
    X_train[::7] = [f'{t}\n# "</s>" in a string\n' for t in X_train[::7]]
    X_test = test[0].copy()
    X_test[::3] = [f'x = "</s></s>"\n{t}' for t in X_test[::3]]
    params = {**TINY, "max_steps": 3, "save_steps": None, "eval_batch_size": 16}
    det = fit(tiny_t5, params, (X_train, train[1]), (X_test, test[1]), tmp_path / "w", tmp_path / "c")
    assert type(det.model_).__name__ == "T5ForSequenceClassification" and det.precision_ == "fp32"
    scores = det.predict_scores(X_test)
    assert scores.shape == (60, 2) and np.isfinite(scores).all()


def test_t5_family_never_runs_in_fp16():
    assert choose_precision("auto", "cuda", "t5", bf16_supported=True) == "bf16"
    assert choose_precision("auto", "cuda", "t5", bf16_supported=False) == "fp32"
    assert choose_precision("auto", "cuda", "mt5", bf16_supported=False) == "fp32"
    assert choose_precision("auto", "cuda", "roberta", bf16_supported=False) == "fp16"
    assert choose_precision("auto", "cpu", "t5") == "fp32"
    assert choose_precision("bf16", "cuda", "t5") == "bf16"
    with pytest.raises(AicdError, match="fp16 is not supported for t5"):
        choose_precision("fp16", "cuda", "t5", bf16_supported=False)


def test_integer_labels_survive_save_and_load(tmp_path, tiny_encoder, code_rows):
    train, val, test = split(code_rows)
    as_int = {"human": 0, "machine": 1}
    y_train = np.array([as_int[v] for v in train[1]])
    y_val = np.array([as_int[v] for v in val[1]])
    params = {**TINY, "max_steps": 2, "save_steps": None}
    det = fit(tiny_encoder, params, (train[0], y_train), (val[0], y_val), tmp_path / "w", tmp_path / "c")
    pred = det.predict(test[0])
    det.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "detector.json").read_text())["classes"] == [0, 1]
    again = type(det).load(tmp_path / "m", device="cpu")
    assert list(again.classes_) == [0, 1] and all(type(c) is int for c in again.classes_)
    after = again.predict(test[0])
    assert all(type(v) is int for v in after) and (after == pred).all()
    shutil.rmtree(tmp_path / "m")
