"""Fast-DetectGPT: the analytic criterion against a direct computation, the threshold search,
binarised labels, and the planted pair: a sample drawn from the scoring model itself scores
higher than human code, with a tiny causal LM trained here (aicd.lm) on real human code."""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from components import require_extra

require_extra("encoders", "torch", "transformers", "tokenizers")

from aicd.common.errors import AicdError  # noqa: E402
from aicd.data.metrics import auroc, best_threshold  # noqa: E402
from aicd.detectors.fast_detectgpt import FastDetectGPTDetector, criterion_from_logits  # noqa: E402
from aicd.lm.train import save, train  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


def test_criterion_matches_direct_formula():
    import torch  # here, not at collection: every xdist worker collects this file, one runs it

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, 7, generator=g)
    ref = torch.randn(2, 5, 7, generator=g)
    labels = torch.randint(0, 7, (2, 5), generator=g)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    got = criterion_from_logits(logits, ref, labels, mask).numpy()
    for b in range(2):
        n = int(mask[b].sum())
        lq = torch.log_softmax(logits[b, :n], -1).numpy()
        p = torch.softmax(ref[b, :n], -1).numpy()
        ll = lq[np.arange(n), labels[b, :n].numpy()]
        mu = (p * lq).sum(-1)
        var = (p * lq ** 2).sum(-1) - mu ** 2
        assert got[b] == pytest.approx((ll - mu).sum() / np.sqrt(var.sum()), rel=1e-5)


def test_white_box_uses_one_distribution():
    import torch

    logits = torch.randn(1, 4, 9)
    labels = torch.randint(0, 9, (1, 4))
    mask = torch.ones(1, 4, dtype=torch.bool)
    assert criterion_from_logits(logits, logits, labels, mask).item() == pytest.approx(
        criterion_from_logits(logits, logits.clone(), labels, mask).item(), rel=1e-6)


def test_threshold_maximises_macro_f1():
    crit = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    machine = np.array([False, False, False, True, True, True])
    t, f1 = best_threshold(crit, machine)
    assert -1.0 <= t < 1.0 and f1 == 1.0  # flags the rows above t: the three machine rows
    assert auroc(crit, machine) == 1.0
    assert auroc(crit, np.ones(6, dtype=bool)) is None


def test_labels_binarised_human_vs_rest():
    det = FastDetectGPTDetector(model="x")
    got = det.binarize(["human", "machine", "hybrid", "adversarial"])
    assert list(got) == ["human", "machine", "machine", "machine"]


def test_bad_params_rejected():
    from aicd.common.errors import AicdError
    from aicd.detectors.base import build
    with pytest.raises(AicdError, match="Fast-DetectGPT has no parameter 'windw'"):
        build("fast_detectgpt", {"model": "x", "windw": 3}, seed=0)
    with pytest.raises(AicdError, match="threshold"):
        build("fast_detectgpt", {"model": "x", "threshold": "best"}, seed=0)


def _human_code() -> list[str]:
    files = sorted(glob.glob(str(REPO / "workflow" / "aicd" / "**" / "*.py"), recursive=True))
    texts = [Path(f).read_text() for f in files]
    chunks = []
    for text in texts:  # top-level chunks of ~30 lines: real human Python
        lines = text.splitlines()
        chunks += ["\n".join(lines[i:i + 30]) for i in range(0, len(lines), 30)]
    return [c for c in chunks if len(c) > 200]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    code = _human_code()
    rng = np.random.default_rng(0)
    rng.shuffle(code)
    held_out, training = code[:8], code[8:]
    # One torch thread here and in the detectors below: `make test` runs two workers on two
    # cores, where two torch threads each took 2-10x as long; the criterion does not change.
    model, tok, report = train(training, {"vocab_size": 512, "layers": 2, "hidden": 64, "heads": 2, "window": 96,
                                          "batch_size": 16, "learning_rate": 3e-3, "max_train_tokens": 60_000},
                               seed=0, threads=1)
    path = tmp_path_factory.mktemp("lm") / "lm"
    save(model, tok, report, path)
    assert report["loss_last"] < report["loss_first"]
    return path, held_out


def test_planted_pair_model_sample_scores_above_human_code(tiny_lm):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path, held_out = tiny_lm
    tok = AutoTokenizer.from_pretrained(path)
    lm = AutoModelForCausalLM.from_pretrained(path).eval()
    torch.manual_seed(0)
    start = torch.tensor([[tok.eos_token_id]])
    # Sampled at temperature 0.5, as LLM code is usually decoded (at temperature 1 the criterion of
    # a model's own sample is centred on 0 by construction). Scored in the model's own tokens, so
    # no re-tokenisation of the decoded text changes what was sampled.
    with torch.no_grad():
        out = lm.generate(start, do_sample=True, temperature=0.5, top_k=0, max_new_tokens=80, min_new_tokens=80,
                          pad_token_id=tok.eos_token_id, eos_token_id=None, num_return_sequences=4)
    det = FastDetectGPTDetector(seed=0, threads=1, model=str(path), window=96, batch_size=4)
    crit_machine = det.criteria_ids([o.tolist() for o in out])
    crit_human = det.criteria(held_out[:4])
    assert np.isfinite(crit_machine).all() and np.isfinite(crit_human).all()
    # the planted pair, and the two groups ranked apart: at least 14 of the 16 (sample, human) pairs
    # the right way round (AUROC >= 0.875). Not every pair: the model is trained on this package's
    # own code, which every change to it changes, and one sample in four at temperature 0.5 can
    # be as plain as a human chunk (2.09 against 2.91 once, the other samples 6.2-7.6)
    assert crit_machine[0] > crit_human[0]
    ordered = (crit_machine[:, None] > crit_human[None, :]).mean()
    assert ordered >= 14 / 16, (crit_machine, crit_human)


def test_job_writes_binarised_gold_criterion_and_record(tiny_lm, tmp_path):
    """Fast-DetectGPT goes through the detect job like every detector: its kind binarises the
    labels, adds its criterion column, and reports its threshold and test AUROC."""
    import json

    from aicd.detectors.__main__ import main
    path, _held_out = tiny_lm
    code = _human_code()[:30]
    labels = ["human", "machine", "hybrid"] * 10
    table = pd.DataFrame({"id": [f"r{i}" for i in range(30)], "code": code, "label": labels, "target": labels})
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for split in ("train", "validation", "test"):
        table.to_parquet(tasks / f"{split}.parquet")
    spec = json.dumps({"kind": "fast_detectgpt", "params": {"window": 64, "batch_size": 8, "train_lm": {"layers": 1}}})
    main(["fit", "--spec", spec, "--tasks-dir", str(tasks), "--prepared", f"lm={path}", "--out", str(tmp_path / "p.parquet"),
          "--model", str(tmp_path / "m.pkl"), "--report", str(tmp_path / "m.json"), "--threads", "2"])
    pred = pd.read_parquet(tmp_path / "p.parquet")
    assert set(pred["gold"]) == {"human", "machine"} and set(pred["pred"]) <= {"human", "machine"}
    assert pred["criterion"].notna().all() and {"score_human", "score_machine"} <= set(pred.columns)
    rec = json.loads((tmp_path / "m.json").read_text())
    assert rec["fit"]["threshold_from"] == "validation" and rec["report"]["test_auroc"] is not None
    assert rec["report"]["binarized_from"] == ["human", "hybrid", "machine"]
    assert rec["report"]["scoring_lm"]["parameters"] > 0
    with pytest.raises(AicdError, match="needs lm made by another job: pass --prepared lm=PATH"):
        main(["fit", "--spec", spec, "--tasks-dir", str(tasks), "--out", str(tmp_path / "q.parquet"),
              "--model", str(tmp_path / "q.pkl")])


def test_chunked_path_equals_full_logits(tiny_lm):
    path, held_out = tiny_lm
    chunked = FastDetectGPTDetector(seed=0, threads=1, model=str(path), window=96, batch_size=3, chunk_tokens=37)
    plain = FastDetectGPTDetector(seed=0, threads=1, model=str(path), window=96, batch_size=3, chunk_tokens=0)
    a, b = chunked.criteria(held_out), plain.criteria(held_out)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
