"""`aicd score` and `aicd compare`: any predictions file against any gold file,
with intervals, per-class and per-subset breakdowns, and counted, named disagreements."""

import json

import numpy as np
import pandas as pd
import pytest
from aicd.cli import main as aicd
from aicd.common.errors import AicdError
from aicd.scoring.external import compare_files, parse_label_map, score_file
from sklearn.metrics import f1_score


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    gold = pd.DataFrame({"id": np.arange(n), "label": rng.integers(0, 2, n),
                         "language": rng.choice(["Python", "Java"], n)})
    gold.to_parquet(tmp_path / "gold.parquet")
    flip = lambda acc: np.where(rng.random(n) < acc, gold["label"], 1 - gold["label"])  # noqa: E731
    pd.DataFrame({"id": gold["id"], "label": flip(0.9)}).to_csv(tmp_path / "a.csv", index=False)   # SemEval format
    pd.DataFrame({"id": gold["id"], "label": flip(0.7)}).to_csv(tmp_path / "b.csv", index=False)
    return tmp_path, gold


def test_a_semeval_submission_scored_with_a_label_map(files, capsys):
    tmp, gold = files
    assert aicd(["score", str(tmp / "a.csv"), str(tmp / "gold.parquet"), "--label-map", "0=human,1=machine",
                 "--json", str(tmp / "s.json")]) == 0
    result = json.loads((tmp / "s.json").read_text())
    sub = pd.read_csv(tmp / "a.csv")
    assert result["macro_f1"] == pytest.approx(f1_score(gold["label"], sub["label"], average="macro"))
    assert result["labels"] == ["human", "machine"] and result["coverage"] == 1.0
    assert result["macro_f1_ci"][0] < result["macro_f1"] < result["macro_f1_ci"][1]
    assert set(result["by"]["language"]) == {"Java", "Python"}
    out = capsys.readouterr().out
    assert "400 rows" in out and "95% CI" in out and "by language:" in out and "machine" in out


def test_the_workflows_own_predictions_parquet_against_a_task_test_split(tmp_path):
    test = pd.DataFrame({"id": ["a", "b", "c", "d"], "label": ["human", "machine", "machine", "human"],
                         "subset": ["seen", "seen", "unseen", "unseen"]})
    test.to_parquet(tmp_path / "test.parquet")
    pd.DataFrame({"id": ["d", "c", "b", "a"], "gold": ["human", "machine", "machine", "human"],
                  "pred": ["human", "machine", "human", "human"]}).to_parquet(tmp_path / "p.parquet")
    r = score_file(tmp_path / "p.parquet", tmp_path / "test.parquet", ["human", "machine"])
    assert r["accuracy"] == 0.75 and r["by"]["subset"]["unseen"]["macro_f1"] == 1.0
    # a family task's table: `target` holds the class, `label` only human/machine
    test.assign(target=["human", "Qwen", "OpenAI", "human"]).to_parquet(tmp_path / "t2.parquet")
    pd.DataFrame({"id": ["a", "b", "c", "d"], "pred": ["human", "Qwen", "Qwen", "human"]}).to_parquet(tmp_path / "p2.parquet")
    r2 = score_file(tmp_path / "p2.parquet", tmp_path / "t2.parquet")
    assert r2["labels"] == ["OpenAI", "Qwen", "human"] and r2["accuracy"] == 0.75


def test_missing_and_unknown_ids_are_counted(files):
    tmp, _gold = files
    sub = pd.read_csv(tmp / "a.csv")
    sub.iloc[:390].to_csv(tmp / "short.csv", index=False)
    with pytest.raises(AicdError, match=r"10 ids of the gold file not in the predictions \(e\.g\. '390', '391', '392'\); "
                                        r"390 of 400 ids \(97\.50%\) of the gold file match\n"
                                        r"score the covered rows only with --allow-missing"):
        score_file(tmp / "short.csv", tmp / "gold.parquet", label_map={"0": "human", "1": "machine"})
    r = score_file(tmp / "short.csv", tmp / "gold.parquet", label_map={"0": "human", "1": "machine"}, allow_missing=True)
    assert r["n"] == 390 and r["coverage"] == pytest.approx(390 / 400)
    pd.concat([sub, pd.DataFrame({"id": [1000, 1001], "label": [0, 1]})]).to_csv(tmp / "extra.csv", index=False)
    with pytest.raises(AicdError, match=r"2 ids of the predictions not in the gold file \(e\.g\. '1000', '1001'\)"):
        score_file(tmp / "extra.csv", tmp / "gold.parquet")
    pd.concat([sub, sub.iloc[:3]]).to_csv(tmp / "dup.csv", index=False)
    with pytest.raises(AicdError, match=r"3 ids more than once in the predictions \(e\.g\. '0', '1', '2'\)"):
        score_file(tmp / "dup.csv", tmp / "gold.parquet")


def test_labels_outside_the_set_or_the_map_are_named(files, capsys):
    tmp, gold = files
    pd.DataFrame({"id": gold["id"], "label": ["2"] * 5 + ["0"] * 395}).to_csv(tmp / "c.csv", index=False)
    with pytest.raises(AicdError, match=r"labels not in --label-map: '2' \(5 rows; e\.g\. id '0', '1', '2'\)"):
        score_file(tmp / "c.csv", tmp / "gold.parquet", label_map={"0": "human", "1": "machine"})
    with pytest.raises(AicdError, match=r"c\.csv: predicted label '2' outside the gold labels of .*gold\.parquet "
                                        r"\['0', '1'\] \(5 rows; e\.g\. id '0', '1', '2'\)\nname each file's labels with "
                                        r"--label-map"):
        score_file(tmp / "c.csv", tmp / "gold.parquet")
    assert aicd(["score", str(tmp / "c.csv"), str(tmp / "gold.parquet")]) == 2
    said = capsys.readouterr().err
    assert "Traceback" not in said and "--label-map" in said and "label_map)" not in said  # not the workflow's advice
    assert aicd(["score", str(tmp / "nope.csv"), str(tmp / "gold.parquet")]) == 2


def test_label_maps_in_three_spellings():
    assert parse_label_map("0=human, 1=machine") == {"0": "human", "1": "machine"}
    assert parse_label_map('{"0": "human", "1": "machine"}') == {"0": "human", "1": "machine"}
    with pytest.raises(AicdError, match="write it as 0=human,1=machine"):
        parse_label_map("0:human")


def test_the_trial_files_reversed_labels_show_in_the_score(trial_raw, tmp_path):
    # gold straight from the trial file; predictions that are right by the generator column
    gold = trial_raw.rename(columns={"row_id": "id"})[["id", "label", "language"]]
    gold.to_parquet(tmp_path / "gold.parquet")
    right = pd.DataFrame({"id": gold["id"], "label": np.where(trial_raw["generator"] == "Human", "human", "machine")})
    right.to_csv(tmp_path / "sub.csv", index=False)
    as_published = score_file(tmp_path / "sub.csv", tmp_path / "gold.parquet", label_map={"0": "human", "1": "machine"})
    as_in_file = score_file(tmp_path / "sub.csv", tmp_path / "gold.parquet", label_map={"1": "human", "0": "machine"})
    assert as_published["macro_f1"] == 0.0 and as_in_file["macro_f1"] == 1.0


def test_compare_is_a_seeded_paired_test(files, capsys):
    tmp, _gold = files
    lm = "0=human,1=machine"
    assert aicd(["compare", str(tmp / "a.csv"), str(tmp / "b.csv"), str(tmp / "gold.parquet"), "--label-map", lm,
                 "--json", str(tmp / "c.json")]) == 0
    r = json.loads((tmp / "c.json").read_text())
    assert r["difference"] == pytest.approx(r["macro_f1_a"] - r["macro_f1_b"]) and r["difference"] > 0.1
    assert r["difference_ci"][0] > 0 and r["p_value"] < 0.01
    assert "A - B = +" in capsys.readouterr().out
    again = compare_files(tmp / "a.csv", tmp / "b.csv", tmp / "gold.parquet", label_map=parse_label_map(lm))
    assert {k: again[k] for k in ("difference_ci", "p_value")} == {k: r[k] for k in ("difference_ci", "p_value")}
    pd.read_csv(tmp / "b.csv").iloc[:-1].to_csv(tmp / "b_short.csv", index=False)
    with pytest.raises(AicdError, match=r"1 id of the gold file not in the predictions \(e\.g\. '399'\).*both files must predict every gold id"):
        compare_files(tmp / "a.csv", tmp / "b_short.csv", tmp / "gold.parquet")


def test_an_empty_gold_cell_is_a_missing_label_not_a_class(tmp_path):
    pd.DataFrame({"id": [1, 2, 3], "label": ["human", "", "machine"]}).to_csv(tmp_path / "gold.csv", index=False)
    pd.DataFrame({"id": [1, 2, 3], "label": ["human", "human", "machine"]}).to_csv(tmp_path / "p.csv", index=False)
    with pytest.raises(AicdError, match="1 rows have no gold label"):
        score_file(tmp_path / "p.csv", tmp_path / "gold.csv")
    nullable = pd.DataFrame({"id": [1, 2, 3], "label": pd.array([0, None, 1], dtype="Int64")})
    nullable.to_parquet(tmp_path / "gold.parquet")
    with pytest.raises(AicdError, match="1 rows have no gold label"):
        score_file(tmp_path / "p.csv", tmp_path / "gold.parquet")


def test_resamples_are_checked_and_zero_leaves_the_intervals_out(files, capsys):
    tmp, _gold = files
    lm = "0=human,1=machine"
    assert aicd(["score", str(tmp / "a.csv"), str(tmp / "gold.parquet"), "--label-map", lm, "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert "400 rows" in out and "95% CI" not in out and "by language:" in out
    for command in (["score", str(tmp / "a.csv")], ["compare", str(tmp / "a.csv"), str(tmp / "b.csv")]):
        resamples = "-1" if command[0] == "score" else "0"
        assert aicd([*command, str(tmp / "gold.parquet"), "--label-map", lm, "--resamples", resamples]) == 2
        err = capsys.readouterr().err
        assert f"--resamples {resamples}: give" in err and "Traceback" not in err


def _scored(n: int, seed: int, ids: str = "r"):
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, n)  # 1 = machine
    p_machine = 1 / (1 + np.exp(-(rng.normal(0, 1, n) + 2.0 * label)))
    return pd.DataFrame({"id": [f"{ids}{i}" for i in range(n)], "label": label,
                         "score_0": 1 - p_machine, "score_1": p_machine})


def test_fpr_with_a_users_validation_file_and_a_label_map(tmp_path, capsys):
    test, validation = _scored(2000, 1), _scored(2000, 2, ids="v")
    test[["id", "label"]].to_csv(tmp_path / "gold.csv", index=False)
    test.assign(label=(test["score_1"] > 0.5).astype(int)).to_csv(tmp_path / "pred.csv", index=False)
    validation.to_csv(tmp_path / "val.csv", index=False)  # predictions on validation rows, gold in `label`
    assert aicd(["score", str(tmp_path / "pred.csv"), str(tmp_path / "gold.csv"), "--label-map", "0=human,1=machine",
                 "--validation", str(tmp_path / "val.csv"), "--fpr", "0.05", "--resamples", "200",
                 "--json", str(tmp_path / "s.json")]) == 0
    m = json.loads((tmp_path / "s.json").read_text())["threshold_metrics"]
    assert m["validation_human_rows"] == int((validation["label"] == 0).sum())
    at = m["deployment_at_fpr"]["0.05"]
    assert abs(at["fpr"] - 0.05) < 0.025 and at["tpr"] > 0.3  # threshold from validation holds on test
    out = capsys.readouterr().out
    assert "AUROC (human vs the rest)" in out and "validation threshold for 5.0% FPR" in out \
        and "humans wrongly flagged" in out and "TPR @ 5.0% FPR (ROC operating point" in out


def test_the_workflows_validation_scores_are_found_beside_its_predictions(tmp_path, capsys):
    results = tmp_path / "results"
    (results / "predictions" / "T1").mkdir(parents=True)
    (results / "validation_scores" / "T1").mkdir(parents=True)
    test = _scored(500, 3)
    gold = np.where(test["label"] == 1, "machine", "human")
    pd.DataFrame({"id": test["id"], "label": gold}).to_parquet(tmp_path / "test.parquet")
    pd.DataFrame({"id": test["id"], "gold": gold, "pred": np.where(test["score_1"] > 0.5, "machine", "human"),
                  "score_human": test["score_0"], "score_machine": test["score_1"]}).to_parquet(
        results / "predictions" / "T1" / "lr.parquet")
    val = _scored(400, 4, ids="v")
    human = val[val["label"] == 0]
    # the workflow's shape: every human row and a sample of the others, each with its gold label;
    # the threshold is set on the human rows only
    pd.DataFrame({"id": val["id"], "domain": "general", "machine_score": val["score_1"],
                  "gold": np.where(val["label"] == 1, "machine", "human")}).to_parquet(
        results / "validation_scores" / "T1" / "lr.parquet")
    assert aicd(["score", str(results / "predictions" / "T1" / "lr.parquet"), str(tmp_path / "test.parquet"),
                 "--fpr", "0.01"]) == 0
    out = capsys.readouterr().out
    assert f"thresholds set on {len(human)} validation human rows" in out and "for 1.0% FPR" in out


def test_fpr_says_why_without_scores_or_validation(files, tmp_path, capsys):
    tmp, _ = files
    assert aicd(["score", str(tmp / "a.csv"), str(tmp / "gold.parquet"), "--label-map", "0=human,1=machine",
                 "--fpr", "0.01"]) == 0
    assert "no threshold metrics: the detector gives no score for the 'human' class" in capsys.readouterr().out
    test = _scored(100, 5)
    test[["id", "label"]].to_csv(tmp_path / "g.csv", index=False)
    test.to_csv(tmp_path / "p.csv", index=False)
    assert aicd(["score", str(tmp_path / "p.csv"), str(tmp_path / "g.csv"), "--label-map", "0=human,1=machine",
                 "--fpr", "0.01"]) == 0
    assert "not given: no validation scores of human rows" in capsys.readouterr().out
    assert aicd(["score", str(tmp_path / "p.csv"), str(tmp_path / "g.csv"), "--fpr", "1.5"]) == 2
    assert "between 0 and 1" in capsys.readouterr().err


def test_a_semeval_file_against_named_gold_is_told_the_label_map_and_the_file(files):
    """SemEval 0/1 predictions against gold named human/machine: the advice is aicd score's own
    option (--label-map) and the file it is about, not the workflow's task config."""
    tmp, gold = files
    pd.DataFrame({"id": gold["id"], "label": np.where(gold["label"] == 0, "human", "machine")}).to_parquet(
        tmp / "named.parquet")
    with pytest.raises(AicdError) as err:
        score_file(tmp / "a.csv", tmp / "named.parquet")
    said = str(err.value)
    assert str(tmp / "a.csv") in said and "--label-map" in said and "building the task" not in said


def test_an_extra_class_in_labels_is_an_error(files):
    tmp, _ = files
    lm = {"0": "human", "1": "machine"}
    assert score_file(tmp / "a.csv", tmp / "gold.parquet", labels=["human", "machine"], label_map=lm)["macro_f1"] > 0.8
    with pytest.raises(AicdError, match=r"--labels: 'hybrid' is in neither .*gold\.parquet nor .*a\.csv"):
        score_file(tmp / "a.csv", tmp / "gold.parquet", labels=["human", "machine", "hybrid"], label_map=lm)


def test_scores_outside_0_1_where_probabilities_are_declared_are_an_error(files):
    """A workflow predictions file declares probabilities (aicd.data.scores): the same file with its
    scores times 100 is refused, naming the column and the range; undeclared scores are not."""
    from aicd.data.scores import declare

    tmp, gold = files
    p = rng_scores = np.random.default_rng(1).random(len(gold))
    table = pd.DataFrame({"id": gold["id"].astype(str), "pred": np.where(p > 0.5, "machine", "human"),
                          "score_human": 1 - rng_scores, "score_machine": rng_scores})
    named = pd.DataFrame({"id": gold["id"].astype(str), "gold": np.where(gold["label"] == 0, "human", "machine")})
    named.to_parquet(tmp / "named.parquet")
    declare(table, "probability").to_parquet(tmp / "p.parquet")
    assert score_file(tmp / "p.parquet", tmp / "named.parquet")["n"] == len(gold)
    scaled = table.assign(score_human=table["score_human"] * 100, score_machine=table["score_machine"] * 100)
    declare(scaled, "probability").to_parquet(tmp / "p100.parquet")
    with pytest.raises(AicdError, match=r"p100\.parquet: score_human holds values from [\d.e-]+ to 9\d[\d.]*, but "
                                        r"the file declares its scores probabilities in \[0, 1\]"):
        score_file(tmp / "p100.parquet", tmp / "named.parquet")
    declare(scaled, "score").to_parquet(tmp / "s100.parquet")
    assert score_file(tmp / "s100.parquet", tmp / "named.parquet")["n"] == len(gold)


def test_every_problem_of_a_file_is_named_in_one_run(files, capsys):
    """Ids missing, unknown and repeated, a row without a label and labels outside the map, all at
    once, each counted with examples; the advice names --allow-missing, --label-map and `aicd
    submission check`, and --help names it too."""
    tmp, _gold = files
    sub = pd.read_csv(tmp / "a.csv").astype({"label": object})
    broken = pd.concat([sub.iloc[5:], sub.iloc[5:7], pd.DataFrame({"id": [900, 901], "label": [0, 1]})])
    broken.loc[broken["id"] == 10, "label"] = ""
    broken.loc[broken["id"].isin([20, 21, 22, 23]), "label"] = "7"
    broken.to_csv(tmp / "broken.csv", index=False)
    assert aicd(["score", str(tmp / "broken.csv"), str(tmp / "gold.parquet"), "--label-map", "0=human,1=machine"]) == 2
    said = capsys.readouterr().err
    assert "5 problems" in said and "nothing scored" in said and "Traceback" not in said
    assert "5 ids of the gold file not in the predictions (e.g. '0', '1', '2')" in said
    assert "2 ids of the predictions not in the gold file (e.g. '900', '901')" in said
    assert "2 ids more than once in the predictions (e.g. '5', '6')" in said
    assert "1 rows have no predicted label (e.g. id '10')" in said
    assert "predicted labels not in --label-map: '7' (4 rows; e.g. id '20', '21', '22')" in said
    assert "--allow-missing" in said and "--label-map" in said and "aicd submission check" in said
    with pytest.raises(SystemExit):
        aicd(["score", "--help"])
    assert "aicd submission check" in capsys.readouterr().out
