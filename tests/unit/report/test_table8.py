"""Table 8 (aicd.report.llm_tables): a judge the paper did not run says so, each judged cell
says how many rows it read and how many answers named no class, and a locally served judge's
model card is printed beside its numbers."""

from __future__ import annotations

import json

from aicd.report.llm_tables import table8


def write(path, data):
    path.write_text(json.dumps(data))
    return str(path)


def test_ours_marks_sample_notes_and_the_model_card(tmp_path):
    layout = {"tasks": [["binary", "T1 Binary"]], "modes": ["zs"], "hint": "",
              "judges": [["gemma", "Gemma", "Gemma_{zs}"], ["smol", "SmolLM2 judge", None]]}
    scores = [write(tmp_path / "s1.json", {"detector": "judge_smol_zs", "task": "binary", "macro_f1": 0.25})]
    card = {"title": "SmolLM2-135M-Instruct", "licence": "Apache-2.0", "parameters": 134515008,
            "served_by": "transformers serve on 127.0.0.1"}
    reports = [write(tmp_path / "r1.json", {"task": "binary", "judge": "SmolLM2-135M-Instruct", "mode": "zs",
                                            "judged": 20, "test_rows": 2183, "abstentions": 7, "programs_cut": 3,
                                            "code_cut_to_chars": 1000, "model_card": card})]
    table8(layout, scores, str(tmp_path), reports=reports)
    md = (tmp_path / "table8.md").read_text()
    assert "SmolLM2 judge (ours)<sub>zs</sub>" in md and "| Gemma<sub>zs</sub> " in md
    assert "Gemma (ours)" not in md
    assert "never in an average with them" in md  # the caption says what "ours" means
    assert "20 of 2,183 test rows" in md and "7 of 20 answers named no class" in md and "3 programs cut to 1,000" in md
    assert "parse rate 65%" in md
    assert "Apache-2.0" in md and "134.5M parameters" in md and "transformers serve" in md
    assert "25.00" in md and "not run" in md  # the paper's judge that did not run here


def test_without_any_ours_judge_the_caption_has_no_ours_note(tmp_path):
    layout = {"tasks": [["binary", "T1"]], "modes": ["zs"], "hint": "set GEMINI_API_KEY",
              "judges": [["gemini", "Gemini", "Gemini_{zs}"]]}
    table8(layout, [], str(tmp_path))
    md = (tmp_path / "table8.md").read_text()
    assert "ours" not in md and "No judge ran: set GEMINI_API_KEY." in md


def test_each_cell_names_its_classes_from_the_score_file_its_report_file_names(tmp_path):
    """A judge's report names its model; its file name (judges/{task}/{judge}_{mode}.report.json) names
    the row, whose score file gives the classes of the rows judged (T3's sample: 1 adversarial)."""
    layout = {"tasks": [["fine", "T3"]], "modes": ["zs"], "hint": "", "judges": [["smol", "SmolLM2 judge", None]]}
    per_class = {"human": {"support": 6}, "machine": {"support": 5}, "adversarial": {"support": 1}}
    scores = [write(tmp_path / "s.json", {"detector": "judge_smol_zs", "task": "fine", "macro_f1": 0.4,
                                          "macro_f1_ci": [0.2, 0.6], "n": 12, "abstentions": 8,
                                          "labels": list(per_class), "per_class": per_class})]
    (tmp_path / "judges").mkdir()
    reports = [write(tmp_path / "judges" / "smol_zs.report.json",
                     {"task": "fine", "judge": "SmolLM2-135M-Instruct", "mode": "zs", "judged": 12,
                      "test_rows": 400, "abstentions": 8})]
    table8(layout, scores, str(tmp_path), reports=reports)
    md = (tmp_path / "table8.md").read_text()
    assert "stratified by class, language and domain: human 6, machine 5, adversarial 1); parse rate 33%: 8 of 12 answers" in md
    cell = next(line for line in md.splitlines() if line.startswith("| SmolLM2"))
    assert "**" not in cell and "<sup>unparseable</sup>" in cell and "§" in cell


def test_a_constrained_judges_cell_says_its_answers_were_held_to_a_label(tmp_path):
    layout = {"tasks": [["binary", "T1"]], "modes": ["zs"], "hint": "", "judges": [["smol", "SmolLM2 judge", None]]}
    scores = [write(tmp_path / "s.json", {"detector": "judge_smol_zs", "task": "binary", "macro_f1": 0.5})]
    reports = [write(tmp_path / "r.json", {"task": "binary", "judge": "SmolLM2-135M-Instruct", "mode": "zs",
                                           "judged": 100, "test_rows": 2500, "abstentions": 0, "constrained": True})]
    table8(layout, scores, str(tmp_path), reports=reports)
    md = (tmp_path / "table8.md").read_text()
    assert "parse rate 100%: 0 of 100 answers" in md and "constrained decoding" in md
