"""Hidden-label submissions: the check names every problem with its count, metadata is
validated, scoring writes a results file, and the leaderboard ranks results with a paired test."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from aicd.cli import main as aicd
from aicd.common.errors import AicdError
from aicd.report.leaderboard import build, read_results
from aicd.scoring.external import score_file
from aicd.scoring.submission import check, read_metadata

META = {"detector": "Mine", "date": "2026-11-30", "contact": "me@example.org", "links": ["https://example.org/mine"]}


@pytest.fixture
def gold(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    table = pd.DataFrame({"id": [f"t{i}" for i in range(n)], "label": rng.choice(["human", "machine"], n),
                          "subset": rng.choice(["seen", "unseen"], n)})
    table.to_parquet(tmp_path / "gold.parquet")
    table[["id"]].to_csv(tmp_path / "ids.csv", index=False)  # what participants see: ids, no labels
    return table


def submission(tmp_path, gold, name: str, accuracy: float, seed: int, meta: dict | None = None):
    rng = np.random.default_rng(seed)
    right = rng.random(len(gold)) < accuracy
    pred = np.where(right, gold["label"], np.where(gold["label"] == "human", "machine", "human"))
    machine = np.clip(np.where(pred == "machine", 0.7, 0.3) + rng.normal(0, 0.2, len(gold)), 0, 1)
    pd.DataFrame({"id": gold["id"], "label": pred, "score_human": 1 - machine, "score_machine": machine}).to_csv(
        tmp_path / f"{name}.csv", index=False)
    (tmp_path / f"{name}.yaml").write_text(json.dumps({**META, "detector": name, **(meta or {})}))
    return tmp_path / f"{name}.csv", tmp_path / f"{name}.yaml"


def test_a_valid_submission_passes(tmp_path, gold, capsys):
    pred, _ = submission(tmp_path, gold, "ok", 0.8, 1)
    report = check(pred, list(gold["id"]), ["human", "machine"])
    assert report["ok"] and report["coverage"] == 1.0 and report["problems"] == []
    assert aicd(["submission", "check", str(pred), "--task", "T1", "--test", str(tmp_path / "ids.csv"),
                 "--labels", "human", "machine"]) == 0
    assert "ok: a valid submission" in capsys.readouterr().out


def test_every_problem_is_named_with_its_count(tmp_path, gold, capsys):
    rows = pd.DataFrame({"id": list(gold["id"][5:]) + ["x1", "x2", "t7"],
                         "label": ["human"] * (len(gold) - 5) + ["robot", "machine", ""]})
    rows.loc[10, "label"] = "Robot"
    rows.to_csv(tmp_path / "bad.csv", index=False)
    report = check(tmp_path / "bad.csv", list(gold["id"]), ["human", "machine"])
    counts = {p["problem"]: p["count"] for p in report["problems"]}
    assert counts["ids given more than once"] == 1          # t7
    assert counts["ids not in the task's test split"] == 2  # x1, x2
    assert counts["test ids without a prediction"] == 5
    assert counts["rows without a label"] == 1
    assert counts["label 'robot' is not one of the task's labels ['human', 'machine']"] == 1
    assert counts["label 'Robot' is not one of the task's labels ['human', 'machine']"] == 1
    assert not report["ok"] and report["coverage"] == pytest.approx(295 / 300)
    assert aicd(["submission", "check", str(tmp_path / "bad.csv"), "--task", "T1", "--test",
                 str(tmp_path / "ids.csv"), "--labels", "human", "machine"]) == 1
    out = capsys.readouterr().out
    assert "problem: test ids without a prediction: 5 (e.g. t0, t1, t2, t3, t4)" in out
    with pytest.raises(AicdError, match="needs an 'id' column"):
        pd.DataFrame({"name": ["a"], "label": ["human"]}).to_csv(tmp_path / "noid.csv", index=False)
        check(tmp_path / "noid.csv", ["a"], ["human"])


def test_hidden_labels_need_the_label_set(tmp_path, gold, capsys):
    pred, _ = submission(tmp_path, gold, "ok", 0.8, 1)
    assert aicd(["submission", "check", str(pred), "--task", "T1", "--test", str(tmp_path / "ids.csv")]) == 2
    assert "holds no labels (hidden): give the task's label set with --labels" in capsys.readouterr().err


def test_metadata_is_validated(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("detector: Mine\ndate: 2026-11-30\ncontact: me@example.org\nlinks: []\n")
    assert read_metadata(good)["date"] == "2026-11-30"
    bad = tmp_path / "bad.yaml"
    bad.write_text("detector: ''\ndate: 30/11/2026\ncontact: nobody\nlinks: [ftp://x]\nteam: us\n")
    with pytest.raises(AicdError) as err:
        read_metadata(bad)
    for part in ("detector must be a non-empty name", "date '30/11/2026' is not YYYY-MM-DD",
                 "contact 'nobody' is not an e-mail address", "link 'ftp://x' is not an http(s) URL",
                 "team is not a metadata key"):
        assert part in str(err.value)
    missing = tmp_path / "missing.yaml"
    missing.write_text("detector: Mine\n")
    with pytest.raises(AicdError, match="date is missing .*contact is missing .*links is missing"):
        read_metadata(missing)


def test_scoring_writes_a_results_file(tmp_path, gold):
    pred, meta = submission(tmp_path, gold, "Mine", 0.8, 2)
    assert aicd(["submission", "score", str(pred), str(meta), "--gold", str(tmp_path / "gold.parquet"),
                 "--task", "T1", "--out", str(tmp_path / "board" / "mine.json"), "--resamples", "100"]) == 0
    result = json.loads((tmp_path / "board" / "mine.json").read_text())
    expected = score_file(pred, tmp_path / "gold.parquet", ["human", "machine"], resamples=100)
    assert result["macro_f1"] == pytest.approx(expected["macro_f1"])
    assert result["metadata"]["detector"] == "Mine" and len(result["predictions"]["sha256"]) == 64
    assert result["threshold_metrics"]["auroc"] is not None and set(result["by"]["subset"]) == {"seen", "unseen"}


def test_scoring_refuses_an_invalid_submission_and_writes_nothing(tmp_path, gold, capsys):
    pred, meta = submission(tmp_path, gold, "Mine", 0.8, 2)
    short = tmp_path / "short.csv"
    pd.read_csv(pred).iloc[:-3].to_csv(short, index=False)
    assert aicd(["submission", "score", str(short), str(meta), "--gold", str(tmp_path / "gold.parquet"),
                 "--task", "T1", "--out", str(tmp_path / "board" / "short.json")]) == 2
    assert "does not pass the check: test ids without a prediction: 3" in capsys.readouterr().err
    assert not (tmp_path / "board" / "short.json").exists()


def test_the_leaderboard_ranks_and_tests_against_the_leader(tmp_path, gold):
    board = tmp_path / "board"
    for name, acc, seed in (("Strong", 0.9, 3), ("Middle", 0.75, 4), ("Weak", 0.6, 5)):
        pred, meta = submission(tmp_path, gold, name, acc, seed)
        assert aicd(["submission", "score", str(pred), str(meta), "--gold", str(tmp_path / "gold.parquet"),
                     "--task", "T1", "--out", str(board / f"{name}.json"), "--resamples", "200"]) == 0
    (board / "notes.json").write_text("{\"something\": \"else\"}")  # not a results file: skipped
    boards = build(read_results(board), resamples=200)
    entries = boards["T1"]["entries"]
    assert [e["detector"] for e in entries] == ["Strong", "Middle", "Weak"]
    assert entries[0]["vs_leader"] is None
    weak = entries[2]["vs_leader"]
    assert weak["difference"] > 0.15 and weak["p_value"] < 0.05 and weak["difference_ci"][0] > 0
    assert boards["T1"]["subsets"] == ["seen", "unseen"] and entries[1]["tpr_at_1pct_fpr"] is None  # labels only, no scores
    assert build(read_results(board), resamples=200) == boards  # seeded
    middle = json.loads((board / "Middle.json").read_text())
    (board / "Middle.json").write_text(json.dumps({**middle, "label_map": {"0": "human", "1": "machine"}}))
    assert "different label maps" in build(read_results(board), resamples=50)["T1"]["entries"][1]["vs_leader"]["why"]
    (tmp_path / "Weak.csv").unlink()
    assert "no longer where it was scored" in build(read_results(board), resamples=50)["T1"]["entries"][2]["vs_leader"]["why"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(AicdError, match="no submission results files"):
        read_results(tmp_path / "empty")


def test_no_leader_is_set_apart_on_gold_with_a_class_under_the_minimum(tmp_path):
    """Gold of 280 humans and 20 machine rows: the ranking is printed, but no row is marked leader,
    and the page says which class is under the minimum."""
    from aicd.report.leaderboard import render

    table = pd.DataFrame({"id": [f"t{i}" for i in range(300)], "label": ["human"] * 280 + ["machine"] * 20})
    table.to_parquet(tmp_path / "gold.parquet")
    board = tmp_path / "board"
    for name, acc, seed in (("Strong", 0.9, 3), ("Weak", 0.6, 5)):
        pred, meta = submission(tmp_path, table, name, acc, seed)
        assert aicd(["submission", "score", str(pred), str(meta), "--gold", str(tmp_path / "gold.parquet"),
                     "--task", "T1", "--out", str(board / f"{name}.json"), "--resamples", "50"]) == 0
    boards = build(read_results(board), resamples=50)
    assert boards["T1"]["small_classes"] == {"machine": 20}
    page = render(boards)
    assert 'class="leader"' not in page and "machine 20" in page and "no row is set apart as the leader" in page
