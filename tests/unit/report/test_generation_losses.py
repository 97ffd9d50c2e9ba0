"""Every skipped prompt and dropped row of a generator, counted by stage with an example each:
in its card (its own section) and in report.md (one line and the same table per generator)."""

from __future__ import annotations

import json

import pandas as pd
from aicd.report.generation_losses import losses, report_section
from aicd.report.generator_card import generator_card

REPORT = {"rows": 31, "status": {"ok": 29, "no_code_block": 2}, "by_protocol": {"docstring": 15, "hybrid_rewrite": 16},
          "prompt_tokens": 10, "completion_tokens": 20, "requests_sent": 31, "failed_requests": 0,
          "skipped_before_prompting": {"docstring:no_signature_with_doc": 1},
          "skipped_examples": {"docstring:no_signature_with_doc": "15 of the 16 rows asked for fit (trial: a documented "
                                                                  "function)"},
          "no_code_block": {"count": 2, "example": "Sure! Here is\nthe program.", "bare_code": 0},
          "cut_at_repeat": {"count": 3, "example": "..."}}
NORMALIZED = {"rows_in": 31, "kept": 25, "rejected": {"no_code_block": 2, "unparsable": 3, "lines_of_code": 1},
              "examples": {"unparsable": "a1: def f(:", "lines_of_code": "a2: x = 1", "no_code_block": "a3: "}}
TEST_SET = {"task": "binary", "test_set": "smollm2", "rows_in": 25, "rows": 10,
            "removed": {"filtered:unparsable": 3, "outside_task_labels": 15},
            "removed_examples": {"outside_task_labels": "b7 (hybrid, hybrid_rewrite)", "filtered:unparsable": "a1"}}


def test_every_skip_and_drop_is_counted_by_stage_with_an_example():
    items = losses(REPORT, NORMALIZED, [TEST_SET])
    got = {(i["stage"], i["reason"]): (i["rows"], i["example"]) for i in items}
    assert got == {
        ("prompting", "docstring:no_signature_with_doc"): (1, REPORT["skipped_examples"]["docstring:no_signature_with_doc"]),
        ("answer", "no_code_block"): (2, "Sure! Here is the program."),
        ("filters", "unparsable"): (3, "a1: def f(:"),
        ("filters", "lines_of_code"): (1, "a2: x = 1"),
        ("test set", "binary/smollm2: outside_task_labels"): (15, "b7 (hybrid, hybrid_rewrite)"),
    }  # no_code_block once (at the answer), the filters' rows once (not again at the test set)
    assert [i["stage"] for i in items] == ["prompting", "answer", "filters", "filters", "test set"]


def test_the_card_and_report_md_show_them(tmp_path):
    generations = pd.DataFrame({"id": ["g1"], "protocol": ["docstring"], "status": ["ok"]})
    markdown, data = generator_card({"name": "Tiny", "family": "Phi", "litellm_model": "openai/tiny"}, REPORT,
                                    generations, None, NORMALIZED, {}, {}, [TEST_SET])
    section = markdown.split("## Skipped and dropped")[1].split("\n## ")[0]
    assert "| test set | binary/smollm2: outside_task_labels | 15 | b7 (hybrid, hybrid_rewrite) |" in section
    assert "| prompting | docstring:no_signature_with_doc | 1 |" in section
    assert "3 answers started their program over and were cut where they did" in markdown
    lines = "\n".join(report_section([json.loads(json.dumps(data))]))
    assert "## Generated code: skipped and dropped" in lines
    assert "- Tiny: skipped or dropped by stage: prompting 1, answer 2, filters 4, test set 15" in lines
    assert "| filters | unparsable | 3 | a1: def f(: |" in lines
    assert report_section([]) == []
