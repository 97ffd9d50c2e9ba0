"""kind hf_classifier: an already fine-tuned sequence classifier (here the real MiniLM with a
two-label head, saved with save_pretrained and read from its folder) applied without training,
its labels mapped to the task's, through the detectors stage and `aicd detect`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.detectors.__main__ import main as detectors_main


@pytest.fixture(scope="module")
def classifier(minilm_path, tmp_path_factory):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("classifier")
    model = AutoModelForSequenceClassification.from_pretrained(
        minilm_path, num_labels=3, id2label={0: "HUMAN_WRITTEN", 1: "GPT", 2: "OTHER_LLM"},
        label2id={"HUMAN_WRITTEN": 0, "GPT": 1, "OTHER_LLM": 2})
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(minilm_path).save_pretrained(folder)
    return str(folder)


def task(code_rows, tmp_path):
    codes, labels = code_rows
    rows = pd.DataFrame({"id": [f"r{i}" for i in range(60)], "code": codes[:60], "language": "Python",
                         "target": labels[:60]})
    rows.iloc[:20].to_parquet(tmp_path / "train.parquet")
    rows.iloc[20:].to_parquet(tmp_path / "test.parquet")
    return rows.iloc[20:]


def fit(tmp_path, params):
    detectors_main(["fit", "--spec", json.dumps({"kind": "hf_classifier", "params": params}),
                    "--train", str(tmp_path / "train.parquet"), "--test", str(tmp_path / "test.parquet"),
                    "--out", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "m.skops")])
    return pd.read_parquet(tmp_path / "p.parquet")


def test_a_fine_tuned_classifier_is_applied_with_its_labels_mapped(classifier, code_rows, tmp_path):
    test = task(code_rows, tmp_path)
    params = {"model": classifier, "label_map": {"HUMAN_WRITTEN": "human", "GPT": "machine", "OTHER_LLM": "machine"},
              "max_length": 128}
    p = fit(tmp_path, params)
    assert list(p["id"]) == list(test["id"]) and set(p["pred"]) <= {"human", "machine"}
    scores = p[["score_human", "score_machine"]].to_numpy()
    assert np.allclose(scores.sum(axis=1), 1, atol=1e-5)  # the two machine labels' probabilities summed
    assert ((scores[:, 1] > scores[:, 0]) == (p["pred"] == "machine")).all()
    # the same model through `aicd detect` on a file, from its model file (the weights read again)
    from aicd.cli import main as aicd

    (tmp_path / "snippet.py").write_text(test["code"].iloc[0])
    assert aicd(["detect", str(tmp_path / "snippet.py"), "--model", str(tmp_path / "m.skops"),
                 "--out", str(tmp_path / "d.csv")]) == 0
    detected = pd.read_csv(tmp_path / "d.csv")
    assert detected["model_label"].iloc[0] == p["pred"].iloc[0]
    assert detected["score_machine"].iloc[0] == pytest.approx(p["score_machine"].iloc[0], abs=1e-4)


def test_a_label_map_that_does_not_fit_says_so(classifier, code_rows, tmp_path):
    task(code_rows, tmp_path)
    with pytest.raises(AicdError, match=r"label_map has no entry for the model's labels \['OTHER_LLM'\]"):
        fit(tmp_path, {"model": classifier, "label_map": {"HUMAN_WRITTEN": "human", "GPT": "machine"}})
    with pytest.raises(AicdError, match=r"label_map names \['robot'\], not among the task's labels"):
        fit(tmp_path, {"model": classifier, "label_map": {"HUMAN_WRITTEN": "human", "GPT": "machine",
                                                          "OTHER_LLM": "robot"}})
    with pytest.raises(AicdError, match="has no config.json"):
        fit(tmp_path, {"model": str(tmp_path), "label_map": {"A": "human"}})
