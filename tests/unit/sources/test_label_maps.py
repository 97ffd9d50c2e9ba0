"""Strict label maps in the sources stage: any string or integer maps to a class; a
value that names no class is an error naming it and its count unless `unmapped: drop` (then
counted and reported); labels like Human/AI without a map ask for one; a partial map overrides
and never drops the values that already name a class."""

import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.sources.ingest import to_samples


def table(labels):
    return pd.DataFrame({"code": [f"def f{i}():\n    return {i}\n" for i in range(len(labels))], "label": labels,
                         "language": "Python"})


def test_keys_with_spaces_dots_and_integers_map():
    spec = {"label_map": {"ai generated": "machine", "GPT-4o": "machine", " human written ": "human", 3: "hybrid"},
            "label_audit": "off"}
    samples, report = to_samples(table(["ai generated", "GPT-4o", "human written", 3, 3.0, "3"]), spec, "s")
    assert list(samples.sort_values("code")["label"]) == ["machine", "machine", "human", "hybrid", "hybrid", "hybrid"]
    assert report["rows_out"] == 6 and report["skipped"]["counts"] == {}


def test_an_unmapped_value_is_an_error_naming_it_and_its_count():
    spec = {"label_map": {0: "human", 1: "machine"}}
    with pytest.raises(AicdError, match=r"s: 3 rows have label values not in label_map: '2' \(2 rows\), "
                                        r"'unknown' \(1 row\)\. Map each .* or set unmapped: drop"):
        to_samples(table([0, 1, 2, 2, "unknown", 0]), spec, "s")


def test_unmapped_drop_counts_and_reports_them():
    spec = {"label_map": {0: "human", 1: "machine"}, "unmapped": "drop"}
    _samples, report = to_samples(table([0, 1, 2, 2, "unknown", 0]), spec, "s")
    assert report["rows_out"] == 3 and report["skipped"]["counts"] == {"unknown_label": 3}
    assert report["unknown_label_ids"] == {"2": 2, "unknown": 1} and report["unmapped"] == "drop"
    with pytest.raises(AicdError, match="unmapped must be one of"):
        to_samples(table([0]), {**spec, "unmapped": "ignore"}, "s")


def test_string_labels_without_a_map_ask_for_one():
    with pytest.raises(AicdError, match=r"not label names: 'AI' \(2 rows\), 'Human' \(1 row\)\. Add a label_map "
                                        r"naming each \(e\.g\. label_map: \{AI: <label>, Human: <label>\}; the label names are \['human', "):
        to_samples(table(["Human", "AI", "AI"]), {}, "s")
    with pytest.raises(AicdError, match=r"'0' \(1 row\), '1' \(1 row\)\. Add a label_map"):
        to_samples(table([0, 1]), {}, "s")


def test_a_partial_map_overrides_and_keeps_the_class_names():
    # a regression: {hybrid: machine} used to drop every human and machine row
    samples, report = to_samples(table(["human", "machine", "hybrid", "hybrid"]),
                                 {"label_map": {"hybrid": "machine"}, "label_audit": "off"}, "s")
    assert sorted(samples["label"]) == ["human", "machine", "machine", "machine"] and report["rows_out"] == 4
    # schema names without a map are used as they are
    samples, _ = to_samples(table(["human", "machine"]), {}, "s")
    assert sorted(samples["label"]) == ["human", "machine"]


def test_a_null_of_a_nullable_column_is_a_missing_label_not_a_value_named_na():
    labels = pd.array([0, 1, None], dtype="Int64")   # as read from a parquet written from Int64
    _samples, report = to_samples(table(list(range(3))).assign(label=labels),
                                 {"label_map": {0: "human", 1: "machine"}, "label_audit": "off"}, "s")
    assert report["rows_out"] == 2 and report["skipped"]["counts"] == {"missing_label": 1}
