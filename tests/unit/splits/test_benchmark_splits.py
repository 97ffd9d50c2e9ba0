"""The paper's three tasks cut from a pool: subsets, held-out generators, out-of-domain
sources, determinism, and the leakage guards (which must stop a leaky build).

The pool here is real trial code run through normalization; for T1's unseen languages and
domains and T3's extra classes some rows get other metadata (language/domain/source/label
columns), which is all the split logic reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.normalize.pool import build_pool
from aicd.normalize.rows import normalize_table
from aicd.sources.ingest import to_samples
from aicd.splits.tasks import build_from_pool


@pytest.fixture(scope="module")
def pool(trial_raw):
    spec = {"columns": {"source_row_id": "row_id"}, "label_map": {0: "human", 1: "machine"},
            "label_audit": "correct", "defaults": {"domain": "algorithmic"}, "limit": 1500}
    samples, _ = to_samples(trial_raw, spec, "trial")
    table, _ = normalize_table(samples, "trial", progress=False)
    pool, _, _ = build_pool([table], {})
    rng = np.random.default_rng(0)
    pick = rng.random(len(pool))
    pool.loc[pick < 0.15, "domain"] = "general"
    pool.loc[(pick >= 0.1) & (pick < 0.3), "language"] = "Go"  # only metadata: splits never parse
    pool.loc[(pick >= 0.3) & (pick < 0.4), ["label", "source"]] = ["hybrid", "swallowcode"]
    pool.loc[(pick >= 0.4) & (pick < 0.5), "label"] = "adversarial"
    pool.loc[(pick >= 0.5) & (pick < 0.55), ["label", "source"]] = ["human", "the_heap"]
    return pool


def splits(pool, spec, seed=1):
    return build_from_pool(pool, spec, seed, "T")


def test_t1_subsets(pool):
    tables, report = splits(pool, {"kind": "binary", "seen_languages": ["Python", "Java", "C++"],
                                   "seen_domains": ["algorithmic"]})
    for split in ("train", "validation"):
        t = tables[split]
        assert set(t["language"]) <= {"Python", "Java", "C++"} and set(t["domain"]) == {"algorithmic"}
        assert set(t["target"]) <= {"human", "machine"} and t["subset"].isna().all()
    test = tables["test"]
    expected = {
        "seen_language_seen_domain": lambda r: r.language != "Go" and r.domain == "algorithmic",
        "unseen_language_seen_domain": lambda r: r.language == "Go" and r.domain == "algorithmic",
        "seen_language_unseen_domain": lambda r: r.language != "Go" and r.domain == "general",
        "unseen_language_unseen_domain": lambda r: r.language == "Go" and r.domain == "general",
    }
    assert set(test["subset"]) == set(expected)
    for row in test.itertuples():
        assert expected[row.subset](row)
    binary = pool[pool["label"].isin(["human", "machine"])]
    assert sum(len(t) for t in tables.values()) == len(binary)
    assert report["skipped"]["label_not_binary"] == len(pool) - len(binary)
    assert report["leakage"]["near_duplicates_train_test"]["pairs"] == 0


def test_t2_holds_out_generators_from_training(pool):
    tables, report = splits(pool, {"kind": "family", "held_out_per_family": 1})
    held = set(report["held_out_generators"])
    assert held and held.isdisjoint(tables["train"]["generator"]) and held.isdisjoint(tables["validation"]["generator"])
    test = tables["test"]
    assert set(test.loc[test["generator"].isin(held), "subset"]) == {"unseen_generator"}
    assert set(test.loc[~test["generator"].isin(held), "subset"]) == {"seen_generator"}
    # every held-out generator's family is still seen in training
    families = pool[pool["generator"].isin(held)]["family"].unique()
    assert set(families) <= set(tables["train"]["target"])
    assert report["leakage"]["held_out_generators_in_train"]["rows"] == 0


def test_t3_out_of_domain_sources_only_in_test(pool):
    tables, _report = splits(pool, {"kind": "fine_grained", "out_of_domain_sources": ["the_heap", "swallowcode"]})
    for split in ("train", "validation"):
        assert not tables[split]["source"].isin(["the_heap", "swallowcode"]).any()
    test = tables["test"]
    assert set(test["subset"]) == {"in_domain", "out_of_domain"}
    assert (test["subset"].eq("out_of_domain") == test["source"].isin(["the_heap", "swallowcode"])).all()
    assert set(tables["train"]["target"]) == {"human", "machine", "adversarial"}


def test_splits_are_deterministic_and_seeded(pool):
    spec = {"kind": "binary"}
    a, _ = splits(pool, spec, seed=5)
    b, _ = splits(pool.sample(frac=1.0, random_state=9), spec, seed=5)
    c, _ = splits(pool, spec, seed=6)
    pd.testing.assert_frame_equal(a["train"], b["train"])
    assert set(a["train"]["id"]) != set(c["train"]["id"])


def test_max_rows_caps_each_split_proportionally(pool):
    tables, report = splits(pool, {"kind": "binary", "max_rows": {"train": 100, "test": 120}})
    assert len(tables["train"]) == 100 and len(tables["test"]) == 120
    assert report["skipped"]["capped_train"] > 0
    assert tables["test"]["subset"].nunique() == 4  # every subset keeps its share


def test_near_duplicate_leak_stops_the_build(pool):
    leaky = pool[pool["label"].isin(["human", "machine"])].copy()
    twins = leaky.copy()
    twins["id"] = twins["id"] + "-copy"  # the same code twice: what a pool without dedup would hold
    with pytest.raises(AicdError, match="near_duplicates_(train|validation)_test"):
        splits(pd.concat([leaky, twins], ignore_index=True), {"kind": "binary"})


def test_unknown_kind_and_names_are_clear_errors(pool):
    with pytest.raises(AicdError, match="build.kind"):
        splits(pool, {"kind": "ternary"})
    with pytest.raises(AicdError, match="seen_languages"):
        splits(pool, {"kind": "binary", "seen_languages": ["Klingon"]})


def test_a_table_that_is_not_a_pool_is_refused(pool):
    with pytest.raises(AicdError, match="no column"):
        splits(pool.drop(columns=["minhash"]), {"kind": "binary"})


def test_task_report_lists_each_test_subset_and_its_one_class(pool):
    tables, report = splits(pool, {"kind": "binary", "seen_languages": ["Python", "Java", "C++"],
                                   "seen_domains": ["algorithmic"]})
    test = tables["test"]
    subsets = report["test_subsets"]
    assert set(subsets) == set(test["subset"])
    for name, summary in subsets.items():
        rows = test[test["subset"] == name]
        assert summary["rows"] == len(rows)
        assert summary["target"] == rows["target"].value_counts().sort_index().to_dict()
        assert summary["one_class"] == (rows["target"].iloc[0] if rows["target"].nunique() == 1 else None)
    # each split's rows per class by domain and language, for the report's data block
    for split, table in tables.items():
        by = report["splits"][split]["classes_by"]
        for column in ("domain", "language"):
            assert sum(sum(c.values()) for c in by[column].values()) == len(table)
            for value, classes in by[column].items():
                rows = table[table[column].astype(str) == value]
                assert classes == rows["target"].astype(str).value_counts().sort_index().to_dict()
    # a subset of one class is named as such
    only_human = test[test["target"] == "human"]
    from aicd.splits.release_language import subset_summary

    assert all(v["one_class"] == "human" for v in subset_summary(only_human).values())


def test_a_few_near_duplicates_the_dedup_missed_are_dropped_from_test_and_counted(pool):
    """One twin (the pool's LSH can miss a pair in a large bucket): the build goes on without
    that test row and says so; many twins (no dedup at all) still stop it (above)."""
    tables, _ = splits(pool, {"kind": "binary"})
    victim = tables["test"].iloc[0]
    twin = pool[pool["id"] == victim["id"]].copy()
    twin["id"] = twin["id"] + "-twin"
    leaky = pd.concat([pool, twin], ignore_index=True)
    tables2, report = splits(leaky, {"kind": "binary"})
    dropped = sum(r.get("dropped_from_test", 0) for r in report["leakage"].values())
    assert dropped == 1
    both = {victim["id"], victim["id"] + "-twin"}
    assert len(both & set(tables2["test"]["id"])) <= 1  # never both sides of the pair in test...
    in_train = both & set(pd.concat([tables2["train"], tables2["validation"]])["id"])
    assert not (in_train and both & set(tables2["test"]["id"]))  # ... nor one in train and one in test
