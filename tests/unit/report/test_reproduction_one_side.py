"""Cells only one side of the reproduction table has say why in words that fit: a detector run
on other tasks only, and a judge of ours named by its title."""

from __future__ import annotations

from aicd.report.reproduction import judge_cells, one_side_lines, table4_cells

LAYOUT = {"tasks": [["T1", "Task 1", "binary"], ["T3", "Task 3", "fine_grained"]],
          "detectors": [["fdg", "Fast-DetectGPT (small LM)", "Fast-DetectGPT"]],
          "judges": [["judge_small_zs", None, "Small judge (ours) (zs)"]]}


def test_a_detector_run_on_other_tasks_is_not_said_to_lack_scores():
    scores = {("fdg", "T1"): {"macro_f1": 0.5, "macro_f1_ci": [0.45, 0.55]}}
    t3 = next(c for c in table4_cells(LAYOUT, scores) if c["row"] == "Fast-DetectGPT" and c.get("task") == "T3")
    assert t3["status"] == "paper only" and t3["why"] == "configured for other tasks only"
    unscored = next(c for c in table4_cells(LAYOUT, {}) if c["row"] == "Fast-DetectGPT" and c.get("task") == "T3")
    assert unscored["why"] == "configured, no scores"


def test_a_judge_of_ours_is_listed_by_its_title_and_why():
    cells = judge_cells(LAYOUT, {("judge_small_zs", "T1"): {"macro_f1": 0.07, "macro_f1_ci": [0.0, 0.2]}})
    ours = [c for c in cells if c["status"] == "ours only"]
    assert [c["row"] for c in ours] == ["Small judge (ours) (zs)"]
    lines = "\n".join(one_side_lines(cells, {"T1": "Task 1"}))
    assert "Table 8, ours only (ours: not one of the paper's judges): Small judge (ours) (zs)" in lines
    assert "()" not in lines and "judge_small_zs" not in lines
