"""A generator's card (aicd.report.generator_card): detection of the model's own rows by
protocol, against the same split's human rows, recomputed here with scikit-learn."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from aicd.report.generator_card import detection, generator_card
from sklearn.metrics import roc_auc_score


def tables(seed=0, humans=300, mine=40):
    rng = np.random.default_rng(seed)
    ids = [f"h{i}" for i in range(humans)] + [f"m{i}" for i in range(mine)] + ["other"]
    gold = ["human"] * humans + ["machine"] * mine + ["machine"]
    score_machine = np.r_[rng.uniform(0, 0.6, humans), rng.uniform(0.3, 1.0, mine), [0.9]]
    preds = pd.DataFrame({"id": ids, "gold": gold, "pred": np.where(score_machine > 0.5, "machine", "human"),
                          "score_human": 1 - score_machine, "score_machine": score_machine})
    generations = pd.DataFrame({"id": [f"m{i}" for i in range(mine)],
                                "protocol": ["inverse_instruction"] * (mine // 2) + ["docstring"] * (mine - mine // 2),
                                "status": "ok"})
    return preds, pd.DataFrame({"id": ids}), generations


def test_detection_reads_only_the_models_rows_against_the_splits_humans():
    preds, test, generations = tables()
    cells = {c["protocol"]: c for c in detection(preds, test, set(generations["id"]), generations)}
    assert set(cells) == {"all", "inverse_instruction", "docstring"}
    mine = preds[preds["id"].str.startswith("m")]
    humans = preds[preds["gold"] == "human"]
    assert cells["all"]["rows"] == 40 and cells["docstring"]["rows"] == 20
    assert cells["all"]["recall"] == (mine["pred"] == "machine").mean()
    assert cells["all"]["flagged"] == (mine["pred"] != "human").mean()
    y = np.r_[np.ones(len(mine)), np.zeros(len(humans))]
    s = np.r_[mine["score_machine"], humans["score_machine"]]
    assert abs(cells["all"]["auroc"] - roc_auc_score(y, s)) < 1e-6  # "other" (another model's row) left out
    # the ROC point: the share of its rows above the score that 1% of the humans exceed
    threshold = np.sort(humans["score_machine"].to_numpy())[::-1][3]  # floor(0.01 * 300) = 3 humans above
    assert abs(cells["all"]["tpr_at_1pct"] - (mine["score_machine"] > threshold).mean()) < 1e-6


def test_too_few_humans_for_1pct_make_the_point_unreachable_not_a_number():
    preds, test, generations = tables(humans=50)
    cell = detection(preds, test, set(generations["id"]), generations)[0]
    assert cell["tpr_at_1pct"] is None and cell["why_unreachable"]


def test_the_card_says_family_other_and_marks_small_cells(tmp_path):
    preds, test, generations = tables()
    preds.to_parquet(tmp_path / "p.parquet")
    test.to_parquet(tmp_path / "t.parquet")
    report = {"rows": 40, "status": {"ok": 40}, "by_protocol": {"docstring": 20, "inverse_instruction": 20},
              "prompt_tokens": 10, "completion_tokens": 20, "requests_sent": 40,
              "no_code_block": {"count": 2, "example": "Sure!", "bare_code": 1}}
    model = {"name": "Tiny", "family": "other", "maker": "Someone", "litellm_model": "openai/tiny"}
    scored = {"T1: its rows": {"lr": {"predictions": str(tmp_path / "p.parquet"), "test": str(tmp_path / "t.parquet")}}}
    markdown, data = generator_card(model, report, generations, None,
                                    {"rows_in": 44, "kept": 40, "rejected": {"unparsable": 4}}, scored, {"lr": "LR"})
    assert "not one of the paper's 11 families" in markdown and "unparsable 4" in markdown
    assert "| LR | docstring | 20 § |" in markdown  # 20 rows: fewer than 30
    assert "2 answers held no code block" in markdown and "1 answers gave bare code" in markdown
    json.dumps(data)  # the card's JSON is plain data


def test_a_test_set_of_its_generations_reads_the_humans_of_the_tasks_test_split(tmp_path):
    """A test set made of the model's generations holds no human row: its AUROC and TPR are read
    against the human rows of the task's own test split (the same detector's predictions there)."""
    preds, _test, generations = tables()
    mine = preds[preds["id"].str.startswith("m")]
    mine.to_parquet(tmp_path / "set_preds.parquet")
    mine[["id"]].to_parquet(tmp_path / "set.parquet")
    split = preds[~preds["id"].str.startswith("m")]
    split.to_parquet(tmp_path / "split_preds.parquet")
    split[["id"]].to_parquet(tmp_path / "split.parquet")
    report = {"rows": 40, "status": {"ok": 40}, "by_protocol": {}, "prompt_tokens": 1, "completion_tokens": 1,
              "requests_sent": 40}
    files = {"predictions": str(tmp_path / "set_preds.parquet"), "test": str(tmp_path / "set.parquet")}
    alone = {"T1: test set mine": {"lr": files}}
    with_humans = {"T1: test set mine": {"lr": {**files, "human_predictions": str(tmp_path / "split_preds.parquet"),
                                                "human_test": str(tmp_path / "split.parquet")}}}
    _, without = generator_card({"name": "Tiny"}, report, generations, None, None, alone, {})
    _, data = generator_card({"name": "Tiny"}, report, generations, None, None, with_humans, {})
    assert without["detection"]["T1: test set mine"]["lr"][0]["auroc"] is None
    cell = data["detection"]["T1: test set mine"]["lr"][0]
    humans = split[split["gold"] == "human"]
    y = np.r_[np.ones(len(mine)), np.zeros(len(humans))]
    assert abs(cell["auroc"] - roc_auc_score(y, np.r_[mine["score_machine"], humans["score_machine"]])) < 1e-6
    assert cell["tpr_at_1pct"] is not None


def test_the_card_prints_what_its_rows_support(tmp_path):
    """One row of the model's code against 300 humans: AUROC in whole points and no interval (the
    resamples would hold that same row), marked §; 40 rows: the interval, still whole points."""
    from aicd.report.generator_card import detection_section

    preds, test, generations = tables(mine=40)
    cells = {c["protocol"]: c for c in detection(preds, test, set(generations["id"]), generations)}
    one = {**cells["all"], "rows": 1, "auroc": 0.9512, "auroc_ci": [0.94, 0.96]}
    lines = detection_section({"T1": {"lr": [cells["all"], one]}}, {"lr": "LR"})
    forty, single = [line for line in lines if line.startswith("| LR |")]
    auroc = forty.split("|")[6]
    assert "| 40 |" in forty and ("[" in auroc or "±" in auroc) and "." not in auroc
    assert "| 1 § |" in single and single.split("|")[6].strip() == "95"
