"""Normalization of whole tables and the pool: every input row is either kept or rejected
with a reason that reaches the reports; bad input never raises."""

from __future__ import annotations

import pandas as pd
from aicd.normalize.filters import TABLE3
from aicd.normalize.pool import build_pool, dedup_markdown, filter_markdown
from aicd.normalize.rows import normalize_table

GOOD = "def f(x):\n    # add the numbers of the list one by one\n" + "    x = x + 1\n" * 6 + "    return x\n"


def rows(*items):
    cols = ["id", "code", "label", "language", "generator", "family", "source"]
    return pd.DataFrame([dict(zip(cols, r)) for r in items])


def test_bad_rows_are_counted_by_reason_and_nothing_is_lost():
    table = rows(
        ("a", GOOD, "human", "Python", "human", "human", "s"),
        ("b", b"\xff\xfe binary", "human", "Python", "human", "human", "s"),
        ("c", "x" * (10 * 1024 * 1024 + 1), "human", "Python", "human", "human", "s"),
        ("d", "   \n", "human", "Python", "human", "human", "s"),
        ("e", GOOD, "human", "Kotlin", "human", "human", "s"),
        ("f", GOOD, None, "Python", "human", "human", "s"),
        ("g", "bin\x00ary", "human", "Python", "human", "human", "s"),
        ("h", None, "human", "Python", "human", "human", "s"),
        ("i", "```python\n" + GOOD + "```\nThis adds numbers.", "machine", "Python", "m", "Qwen", "s"),
        ("j", GOOD.replace("def f(x):", "def f(x:"), "human", "Python", "human", "human", "s"),
        ("k", GOOD, "robot", "Python", "human", "human", "s"),
    )
    out, report = normalize_table(table, "s", progress=False)
    assert len(out) == len(table) and report["rows_in"] == 11
    assert report["rejected"] == {"invalid_utf8": 1, "too_large": 1, "empty_code": 1, "unsupported_language": 1,
                                  "missing_label": 1, "binary_content": 1, "missing_code": 1, "unparsable": 1,
                                  "unknown_label": 1}
    assert report["kept"] == 2 and report["notes"]["code_extracted"] == 1
    kept = out[out["reject"].isna()]
    assert set(kept["id"]) == {"a", "i"} and kept["minhash"].map(len).eq(128 * 4).all()
    assert "```" not in kept.set_index("id").loc["i", "code"]


def test_failed_generations_and_missing_languages():
    table = rows(("a", GOOD, "machine", None, "m", "Qwen", "gen"), ("b", "", "machine", "Python", "m", "Qwen", "gen"))
    table["status"] = ["ok", "error"]
    out, report = normalize_table(table, "m", progress=False)
    assert report["rejected"] == {"generation_failed": 1}
    assert out.loc[0, "language"] == "Python" and out.loc[0, "language_origin"] == "identified"


def test_pool_accounts_for_every_row_and_keeps_the_human_original():
    human = rows(("h1", GOOD, "human", "Python", "human", "human", "src"),
                 ("h2", "x = 1\n", "human", "Python", "human", "human", "src"))
    machine = rows(("a0", GOOD + "\n", "machine", "Python", "m1", "Qwen", "gen"),  # near duplicate of h1
                   ("m2", GOOD.replace("x + 1", "x * 2 - 3 + y").replace("add the", "sum the"), "machine",
                    "Python", "m1", "Qwen", "gen"))
    t1, _ = normalize_table(human, "src", progress=False)
    t2, _ = normalize_table(machine, "gen", progress=False)
    pool, filt, dedup = build_pool([t1, t2], {"threshold": 0.8})
    assert filt["rows_in"] == 4 and filt["rejected"] == {"lines_of_code": 1}
    assert "h1" in set(pool["id"]) and "a0" not in set(pool["id"])  # human wins over the lower id
    assert filt["rejected_total"] + dedup["rows_removed"] + dedup["pool_rows"] == 4
    assert dedup["removed_by"]["label"] == {"machine": 1}
    assert "lines_of_code" in filter_markdown(filt, TABLE3) and "rows removed" in dedup_markdown(dedup)


def test_pool_is_deterministic(trial_raw):
    from aicd.sources.ingest import to_samples

    spec = {"columns": {"source_row_id": "row_id"}, "label_map": {0: "human", 1: "machine"},
            "label_audit": "correct", "limit": 300}
    samples, _ = to_samples(trial_raw, spec, "trial")
    a, _ = normalize_table(samples, "trial", progress=False)
    b, _ = normalize_table(samples.sample(frac=1.0, random_state=3), "trial", threads=2, progress=False)
    pa, _, _ = build_pool([a], {})
    pb, _, _ = build_pool([b], {})
    pd.testing.assert_frame_equal(pa, pb)


def test_execution_filter_levels():
    table = rows(*[(i, GOOD + f"\n# variant {i}\n", "machine", "Python", "m", "Qwen", "gen") for i in "abcde"])
    execution = pd.DataFrame({"id": list("abcd"), "status": ["ok", "compile_error", "wrong_answer", "sandbox_error"]})
    kept = {}
    for level in ("none", "compiles", "runs", "passes"):
        out, report = normalize_table(table, "m", {"execution_filter": level}, progress=False, execution=execution)
        kept[level] = set(out.loc[out["reject"].isna(), "id"])
        if level != "none":
            assert report["notes"]["not_executed"] == 1  # "e" has no result: kept, counted
    # d's sandbox_error came twice in fresh containers: it may never have compiled, and it did not run
    assert kept == {"none": set("abcde"), "compiles": set("acde"), "runs": set("ace"), "passes": set("ae")}


def test_line_filters_reject_before_language_identification(monkeypatch):
    """A 2 MB row without a language is rejected by lines_of_code without being language-
    identified (that alone took about a minute); the counts are the line filters' as always."""
    from aicd.normalize import rows as rows_module

    seen = []

    def counting(code, *args, **kwargs):  # the real identifier, with its calls recorded
        seen.append(code)
        return identify_language(code, *args, **kwargs)

    identify_language = rows_module.identify_language
    monkeypatch.setattr(rows_module, "identify_language", counting)
    big = GOOD * (2_000_000 // len(GOOD))
    table = rows(("big", big, "human", None, "human", "human", "s"),
                 ("short", "x = 1\n", "human", None, "human", "human", "s"),
                 ("wide", "x = [" + "1, " * 200 + "]\n" * 8, "human", "Python", "human", "human", "s"),
                 ("good", GOOD, "human", None, "human", "human", "s"))
    out, report = normalize_table(table, "s", progress=False)
    assert seen == [GOOD]
    assert report["rejected"] == {"lines_of_code": 2, "max_line_length": 1}
    by_id = out.set_index("id")
    assert by_id.loc["big", "lines_of_code"] > 300 and pd.isna(by_id.loc["big", "language"])
    assert by_id.loc["good", "language"] == "Python" and pd.isna(by_id.loc["good", "reject"])

    # A row the line filters pass still needs a language: counted after them in the report.
    strict, report = normalize_table(table, "s", {"langid_min_margin": 1e9}, progress=False)
    assert report["rejected"] == {"lines_of_code": 2, "max_line_length": 1, "language_unidentified": 1}
    _, filt, _ = build_pool([strict], {})
    assert list(filt["rejected"]) == ["lines_of_code", "max_line_length", "language_unidentified"]
