import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.splits.stratified import assign_splits
from aicd.splits.tasks import derive_task

FRACTIONS = {"train": 0.7, "validation": 0.1, "test": 0.2}


def samples(n=1000):
    return pd.DataFrame({
        "id": [f"{i:06x}" for i in range(n)],
        "code": ["x"] * n,
        "label": ["human" if i % 3 else "machine" for i in range(n)],
        "family": ["human" if i % 3 else ("Qwen" if i % 2 else None) for i in range(n)],
        "language": ["Python" if i % 4 else "Java" for i in range(n)],
    })


def test_same_seed_same_split_and_order_does_not_matter():
    df = samples()
    a = assign_splits(df, ["label"], FRACTIONS, seed=1)
    b = assign_splits(df.sample(frac=1, random_state=0), ["label"], FRACTIONS, seed=1).loc[df.index]
    c = assign_splits(df, ["label"], FRACTIONS, seed=2)
    assert a.equals(b)
    assert not a.equals(c)


def test_fractions_hold_within_each_stratum():
    df = samples()
    split = assign_splits(df, ["label", "language"], FRACTIONS, seed=1)
    for _, group in df.groupby(["label", "language"]):
        share = split[group.index].value_counts(normalize=True)
        assert abs(share["test"] - 0.2) < 0.02 and abs(share["validation"] - 0.1) < 0.02


def test_bad_fractions_are_errors():
    with pytest.raises(AicdError, match="add up to 1"):
        assign_splits(samples(10), [], {"train": 0.5, "test": 0.2}, 0)
    with pytest.raises(AicdError, match="unknown splits"):
        assign_splits(samples(10), [], {"train": 0.8, "dev": 0.2}, 0)


def test_family_task_counts_rows_without_a_family():
    tables, report = derive_task(samples(), {"target": "family", "fractions": FRACTIONS}, 5, "fam")
    assert report["skipped"] == {"family_unknown": 167}
    assert sum(len(t) for t in tables.values()) == 1000 - 167
    assert set(tables["train"]["target"]) == {"human", "Qwen"}
    assert not set(tables["train"]["id"]) & set(tables["test"]["id"])
