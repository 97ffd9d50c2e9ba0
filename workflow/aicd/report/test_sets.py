"""The report's lines on extra evaluation sets: rows each set lost and its class balance
before and after (a set that was balanced may not be after duplicates are removed)."""

from __future__ import annotations

from ..outputs import SHOWN


def _balance(counts: dict[str, int]) -> str:
    return " : ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def test_set_section(reports: list[dict], task_titles: dict[str, str]) -> list[str]:
    """Markdown lines, one bullet per (task, test set), from aicd.splits.test_sets reports."""
    if not reports:
        return []
    lines = ["## Extra test sets", "",
             "Each set is scored by the detectors fitted once on the task's train split "
             f"(columns `task · set` in Table 4; a perturbed set's flip rates are in {SHOWN.tab('ood', 'md')}).", ""]
    for rep in sorted(reports, key=lambda r: (r["task"], r["test_set"])):
        if "perturbation" in rep:  # the task's own test rows rewritten
            lines.append(f"- {task_titles.get(rep['task'], rep['task'])} · **{rep['test_set']}**: the test rows "
                         f"rewritten by {rep['perturbation']} ({rep['rows'] - rep['unchanged_rows']} of {rep['rows']} "
                         "changed)")
            continue
        removed = ", ".join(f"{k} {v}" for k, v in rep["removed"].items()) or "none"
        lines.append(f"- {task_titles.get(rep['task'], rep['task'])} · **{rep['test_set']}**: {rep['rows']} of "
                     f"{rep['rows_in']} rows kept (removed: {removed}); class balance {_balance(rep['balance_before'])}"
                     f" → {_balance(rep['balance_after'])}")
    return lines + [""]
