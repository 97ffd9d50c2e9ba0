"""Extra evaluation sets: strict task labels, counted removals with the class balance."""

import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.splits.test_sets import build_test_set, main

SPEC = {"target": "label", "labels": ["human", "machine"]}


def rows(labels, codes=None, ids=None):
    n = len(labels)
    return pd.DataFrame({"id": ids or [f"r{i}" for i in range(n)], "code": codes or [f"x = {i}" for i in range(n)],
                         "label": labels, "language": ["Python"] * n})


def test_label_outside_the_task_is_an_error_naming_it_and_its_count():
    with pytest.raises(AicdError, match=r"'hybrid' \(2 rows\).*outside_labels: drop"):
        build_test_set(rows(["human", "machine", "hybrid", "hybrid"]), SPEC, rows([])[["id"]], "T1", "ext")


def test_outside_labels_drop_counts_and_reports_balance_before_and_after():
    samples = rows(["human", "machine", "hybrid", "human", "machine"], codes=["a", "b", "c", "  ", "e"],
                   ids=["a", "b", "c", "d", "t"])
    train = pd.DataFrame({"id": ["t"]})
    table, report = build_test_set(samples, {**SPEC, "outside_labels": "drop"}, train, "T1", "ext")
    assert list(table["id"]) == ["a", "b"]
    assert report["removed"] == {"outside_task_labels": 1, "empty_code": 1, "also_in_train": 1}
    assert report["balance_before"] == {"human": 2, "hybrid": 1, "machine": 2}
    assert report["balance_after"] == {"human": 1, "machine": 1}
    assert list(table["target"]) == ["human", "machine"] and list(table["subset"]) == ["Python", "Python"]


def test_nothing_left_is_one_clear_error(tmp_path, capsys):
    src, train = tmp_path / "s.parquet", tmp_path / "t.parquet"
    rows(["human"], ids=["a"]).to_parquet(src)
    rows(["human"], ids=["a"]).to_parquet(train)
    from aicd.cli import run
    rc = run(main, ["--task", "T1", "--name", "ext", "--spec", '{"labels": ["human", "machine"]}', "--source",
                    str(src), "--train", str(train), "--out", str(tmp_path / "o.parquet"), "--report", str(tmp_path / "r.json")])
    assert rc == 2 and "no rows left" in capsys.readouterr().err
    assert not (tmp_path / "o.parquet").exists()
