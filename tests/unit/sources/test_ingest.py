import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.sources.ingest import Skip, to_samples

SPEC = {"label_map": {0: "human", 1: "machine"}, "columns": {"source_row_id": "rid"}}


def frame(rows):
    return pd.DataFrame(rows, columns=["rid", "code", "label", "language", "generator"])


def good(i, label=0, lang="Python", gen="Human", code=None):
    return [i, code or f"def f{i}(x):\n    return x + {i}\n", label, lang, gen if label == 0 else "GPT-4o"]


def test_clean_rows_map_to_the_sample_schema():
    samples, report = to_samples(frame([good(1), good(2, label=1)]), SPEC, "s")
    assert list(samples.columns)[:11] == ["id", "code", "label", "language", "domain", "source", "generator",
                                          "family", "protocol", "problem_id", "subset"]
    assert sorted(samples["label"]) == ["human", "machine"]
    assert set(samples["family"]) == {"human", "OpenAI"}
    assert report["rows_in"] == 2 and report["rows_out"] == 2


def test_bad_rows_are_counted_never_dropped_silently():
    rows = [
        good(1),
        good(2, code="   \n\t"),                       # empty code
        [3, b"\xff\xfe not utf-8", 0, "Python", "Human"],  # invalid UTF-8 bytes
        [4, "int main() {\x00}", 0, "C", "Human"],     # binary content
        good(5, label=7),                               # unknown label id
        good(6, lang="COBOL"),                          # unknown language
        good(1, code="def other():\n    pass\n"),       # duplicate id
        good(8, code=good(1)[1]),                       # duplicate code
        [9, None, 0, "Python", "Human"],                # missing code
        good(10, label=1),
    ]
    samples, report = to_samples(frame(rows), {**SPEC, "unmapped": "drop"}, "s")   # label 7: dropped, counted
    counts = report["skipped"]["counts"]
    assert counts == {"empty_code": 1, "invalid_utf8": 1, "binary_content": 1, "unknown_label": 1,
                      "unknown_language": 1, "duplicate_id": 1, "duplicate_code": 1, "missing_code": 1}
    assert report["rows_in"] == len(rows) == report["rows_out"] + sum(counts.values())
    assert set(samples["source_row_id"]) == {"1", "10"}
    assert report["unknown_label_ids"] == {"7": 1}
    assert report["unknown_languages"] == {"COBOL": 1}
    assert report["skipped"]["examples"]["invalid_utf8"] == ["3"]


def test_table_without_code_column_is_a_clear_error():
    with pytest.raises(AicdError, match=r"no 'code' column .*columns: \{code: <name>\}"):
        to_samples(pd.DataFrame({"text": ["x"], "label": [0]}), SPEC, "s")


def test_mapped_column_missing_names_it():
    with pytest.raises(AicdError, match="column 'row' .*not in the table"):
        to_samples(frame([good(1)]), {**SPEC, "columns": {"source_row_id": "row"}}, "s")


def test_reversed_label_map_stops_the_run():
    reversed_rows = frame([[i, f"x = {i}\nprint(x)\n", 1, "Python", "Human"] for i in range(5)]
                          + [[10 + i, f"y = {i}\nprint(y)\n", 0, "Python", "GPT-4o"] for i in range(5)])
    with pytest.raises(AicdError, match="contradicts the generator column in 10 of 10 rows.*looks reversed"):
        to_samples(reversed_rows, SPEC, "s")
    samples, report = to_samples(reversed_rows, {**SPEC, "label_audit": "correct"}, "s")
    assert report["label_audit"]["corrected"] == 10
    assert (samples["label"] == samples["generator"].map(lambda g: "human" if g == "human" else "machine")).all()


def test_limit_is_a_deterministic_counted_sample():
    rows = frame([good(i) for i in range(20)])
    a, rep = to_samples(rows, {**SPEC, "limit": 5}, "s")
    b, _ = to_samples(rows.sample(frac=1, random_state=3), {**SPEC, "limit": 5}, "s")
    assert list(a["id"]) == list(b["id"]) and len(a) == 5 and rep["not_sampled"] == 15


def test_real_trial_labels_contradict_the_published_map(trial_raw):
    spec = {**SPEC, "columns": {"source_row_id": "row_id"}}
    with pytest.raises(AicdError, match="looks reversed"):
        to_samples(trial_raw, spec, "trial")
    samples, report = to_samples(trial_raw, {**spec, "label_audit": "correct"}, "trial")
    assert report["rows_in"] == len(trial_raw) == report["rows_out"] + sum(report["skipped"]["counts"].values())
    humans = samples["generator"] == "human"
    assert (samples.loc[humans, "label"] == "human").all() and (samples.loc[~humans, "label"] == "machine").all()
    assert samples["family"].notna().all()


def test_value_map_derives_a_field_from_a_column_and_counts_unmapped():
    raw = pd.DataFrame({"Code": [f"x = {i}\nprint(x)\n" for i in range(4)], "Src": ["TACO", "ARXIV", "OTHER", None]})
    spec = {"columns": {"code": "Code"}, "defaults": {"label": "human"},
            "value_maps": {"domain": {"column": "Src", "map": {"TACO": "algorithmic", "ARXIV": "research"}}}}
    samples, report = to_samples(raw, spec, "s")
    by_code = dict(zip(samples["code"], samples["domain"]))
    assert by_code["x = 0\nprint(x)\n"] == "algorithmic" and by_code["x = 1\nprint(x)\n"] == "research"
    assert pd.isna(by_code["x = 2\nprint(x)\n"]) and report["notes"]["value_unmapped:domain"] == 2
    spec["value_maps"]["domain"]["default"] = "general"
    samples, _ = to_samples(raw, spec, "s")
    assert sorted(samples["domain"]) == ["algorithmic", "general", "general", "research"]


def test_value_map_on_a_missing_column_names_the_real_ones():
    spec = {"columns": {"code": "Code"}, "value_maps": {"domain": {"column": "Source", "map": {}}}}
    with pytest.raises(AicdError, match="value_maps.domain: column 'Source' is not in the table; its columns are: Code"):
        to_samples(pd.DataFrame({"Code": ["x = 1"]}), spec, "s")


def test_carried_columns_stay_in_the_source_table():
    raw = pd.DataFrame({"code": ["def f():\n    return 1\n"], "doc": ["Return one."]})
    samples, _ = to_samples(raw, {"defaults": {"label": "human"}, "carry": {"docstring": "doc"}}, "s")
    assert samples["docstring"].tolist() == ["Return one."]
    with pytest.raises(AicdError, match="column 'docs' .*not in the table"):
        to_samples(raw, {"defaults": {"label": "human"}, "carry": {"docstring": "docs"}}, "s")


def test_rows_without_a_class_are_counted_under_their_reason():
    raw = pd.DataFrame({"code": [f"x = {i}\n" for i in range(4)],
                        "generator": ["GPT-4o", "a model nobody names", None, "Human"]})
    samples, report = to_samples(raw, {"target": "family"}, "s")
    assert report["skipped"]["counts"] == {Skip.UNKNOWN_FAMILY: 1, Skip.MISSING_LABEL: 1}
    assert report["skipped"]["examples"] == {Skip.UNKNOWN_FAMILY: ["1"], Skip.MISSING_LABEL: ["2"]}
    assert sorted(samples["family"]) == ["OpenAI", "human"]
