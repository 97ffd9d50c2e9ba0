"""The out-of-distribution splits as workflow tasks (aicd.splits.ood_task), on the real trial data."""

import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.report.layouts import ood_split_name as split_name
from aicd.splits import ood
from aicd.splits.ood_task import main, ood_tables


@pytest.fixture(scope="module")
def trial(trial_raw):
    return ood.trial_samples(trial_raw)


def test_language_held_out_is_absent_from_train_and_validation(trial):
    tables = ood_tables({"protocol": "leave_one_language_out", "hold_out": "Python"}, trial, None, seed=3)
    assert set(tables["test"]["language"]) == {"Python"}
    assert "Python" not in set(tables["train"]["language"]) | set(tables["validation"]["language"])
    for table in tables.values():
        assert (table["target"] == table["label"]).all() and set(table["target"]) <= {"human", "machine"}


def test_family_held_out_only_in_test_and_seeded(trial):
    spec = {"protocol": "leave_one_family_out", "hold_out": "Qwen"}
    a, b = ood_tables(spec, trial, None, seed=1), ood_tables(spec, trial, None, seed=1)
    assert "Qwen" not in set(a["train"]["family"]) and "Qwen" in set(a["test"]["family"])
    assert a["test"]["id"].tolist() == b["test"]["id"].tolist()


def test_unknown_protocol_and_missing_test_source_are_clear_errors(trial):
    with pytest.raises(AicdError, match="unknown out-of-distribution protocol"):
        ood_tables({"protocol": "nope"}, trial, None, 0)
    with pytest.raises(AicdError, match="needs a test source"):
        ood_tables({"protocol": "codeaid"}, trial, None, 0)


def test_split_names_follow_the_table_order():
    assert split_name({"protocol": "leave_one_family_out", "hold_out": "Qwen"}) == "lofo:Qwen"
    assert split_name({"protocol": "leave_one_language_out", "hold_out": "C++"}) == "lolo:C++"
    assert split_name({"protocol": "codeaid"}) == "codeaid"


def test_cli_writes_three_tables_and_a_report(trial, tmp_path):
    src = tmp_path / "trial.parquet"
    trial.to_parquet(src)
    outs = {s: tmp_path / f"{s}.parquet" for s in ("train", "validation", "test")}
    main(["--task", "lolo_java", "--spec", '{"protocol": "leave_one_language_out", "hold_out": "Java"}',
          "--train-source", str(src), "--seed", "2026", *[a for s, p in outs.items() for a in (f"--out-{s}", str(p))],
          "--report", str(tmp_path / "report.json")])
    test = pd.read_parquet(outs["test"])
    assert set(test["language"]) == {"Java"} and len(pd.read_parquet(outs["train"])) > 1000
