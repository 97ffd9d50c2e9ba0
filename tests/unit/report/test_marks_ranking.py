"""No bold, underline, "best", figure choice or agreeing count rests on a class under the minimum
of test rows (aicd.report.marks.MIN_CLASS_SUPPORT), a one-class column shows its class's recall,
and an interval that one row decides is not printed as if it meant something: real score files
(aicd.scoring.scorer) of a Task 3 shaped like the full demo's (human and machine 100 rows each,
hybrid 3, adversarial 1), rendered by the report's own code."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from aicd.report.llm_tables import table8
from aicd.report.marks import MIN_CLASS_SUPPORT, ONE_ROW, Marks, one_row_decides, ranked_best, table_value
from aicd.report.report_md import ReportInputs, ReportPaths, write_report
from aicd.report.reproduction import headline_lines, headlines, mark_cells
from aicd.report.subset_tables import compute, render
from aicd.report.table4 import Column, Row, cell_marks
from aicd.report.table4 import render as render_table4
from aicd.scoring.scorer import score

T3 = ["human", "machine", "hybrid", "adversarial"]
GOLD = ["human"] * 100 + ["machine"] * 100 + ["hybrid"] * 3 + ["adversarial"]


def predictions(human_right: int, machine_right: int, adversarial_right: bool) -> list[str]:
    """Per gold row: the first `human_right` humans right, the rest called machine; likewise the
    machine rows; the 3 hybrid rows called machine; the adversarial row right or called human."""
    return (["human"] * human_right + ["machine"] * (100 - human_right)
            + ["machine"] * machine_right + ["human"] * (100 - machine_right)
            + ["machine"] * 3 + ["adversarial" if adversarial_right else "human"])


def score_file(tmp_path, task, detector, gold, pred, labels=T3, **extra) -> str:
    test = pd.DataFrame({"id": [f"r{i}" for i in range(len(gold))], "gold": gold, "language": "Python"})
    result = score(pd.DataFrame({"id": test["id"], "pred": pred}), test, labels, resamples=200)
    path = tmp_path / "scores" / task / f"{detector}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task": task, "detector": detector, **result, **extra}))
    return str(path)


@pytest.fixture
def t3(tmp_path):
    """SVM gets the one adversarial row right and is worse on human and machine; CatBoost the reverse."""
    svm = score_file(tmp_path, "T3", "svm", GOLD, predictions(60, 60, True))
    cb = score_file(tmp_path, "T3", "cb", GOLD, predictions(90, 90, False))
    majority = score_file(tmp_path, "T3", "majority", GOLD, ["machine"] * len(GOLD))
    loaded = {json.loads(open(p).read())["detector"]: json.loads(open(p).read()) for p in (svm, cb, majority)}
    assert loaded["svm"]["macro_f1"] > loaded["cb"]["macro_f1"]  # the row the single adversarial row decides
    return [svm, cb, majority], loaded


LAYOUT = {"tasks": [["T3", "T3 Fine-grained"]],
          "detectors": [["majority", "Majority", True], ["svm", "SVM_{TF-IDF}", False], ["cb", "CB_{AST}", False]]}


def test_no_bold_and_no_underline_in_a_column_with_a_class_under_the_minimum(t3):
    _, loaded = t3
    rows = [Row(n, t, d) for n, t, d in LAYOUT["detectors"]]
    cols = [Column("T3", "T3")]
    tags = Marks.from_scores({(d, "T3"): s for d, s in loaded.items()}, ours=set())
    assert tags.small_classes[("svm", "T3")] == {"hybrid": 3, "adversarial": 1}
    values = {(d, "T3"): s["macro_f1"] for d, s in loaded.items()}
    latex, markdown = render_table4(rows, cols, values, tags=tags)
    assert "**" not in markdown and "<u>" not in markdown and "\\textbf" not in latex and "\\underline" not in latex
    assert f"each with at least {MIN_CLASS_SUPPORT} rows" in markdown  # the caption says why nothing is bold
    # the same values without the small class would be ranked: the rule, not the renderer, holds bold back
    plain = cell_marks(rows, cols, values)
    assert plain[("svm", "T3")][1] is True
    assert not any(bold or under for _, bold, under in cell_marks(rows, cols, values, set(values)).values())


def test_the_figure_and_best_choice_rest_on_the_classes_with_enough_rows(t3, tmp_path):
    files, loaded = t3
    chosen, basis = ranked_best(loaded, dummies={"majority"})
    assert chosen == "cb" and basis.startswith(f"mean F1 over the classes of at least {MIN_CLASS_SUPPORT} test rows")
    assert "hybrid 3, adversarial 1 left out of the choice" in basis
    out = tmp_path / "results"
    write_report(ReportInputs(LAYOUT, files), ReportPaths(str(out / "tables"), str(out / "figures"), str(out / "report.md")))
    report = (out / "report.md").read_text()
    assert "### T3 Fine-grained: trained detector CB<sub>AST</sub> (macro-F1" in report
    assert "best trained detector" not in report and "Chosen by the highest mean F1 over the classes" in report
    assert (out / "figures" / "confusion_T3.png").stat().st_size > 0
    table = (out / "tables" / "table4.md").read_text()
    assert "**" not in table.split("\n\n")[0]  # the table body: nothing bold


def test_paper_figures_choose_the_same_way(t3, tmp_path):
    from aicd.report.paper_figures import main

    files, _ = t3
    layout = {"tasks": [["T3", "T3 Fine-grained", T3]], "detectors": LAYOUT["detectors"]}
    main(["--layout", json.dumps(layout), "--scores", *files, "--figures-dir", str(tmp_path / "figs"),
          "--out", str(tmp_path / "index.json")])
    entry = json.loads((tmp_path / "index.json").read_text())["tasks"]["T3"]
    assert entry["best"] == "cb" and entry["best_basis"].startswith("mean F1 over the classes")


def test_a_task_whose_classes_all_have_enough_rows_is_ranked_by_macro_f1(tmp_path):
    gold = ["human"] * 40 + ["machine"] * 40
    a = json.loads(open(score_file(tmp_path, "T1", "a", gold, gold, ["human", "machine"])).read())
    b = json.loads(open(score_file(tmp_path, "T1", "b", gold, ["human"] * 80, ["human", "machine"])).read())
    assert ranked_best({"a": a, "b": b}) == ("a", "macro-F1")
    # fewer than two classes with enough rows: nothing is chosen by score
    few = json.loads(open(score_file(tmp_path, "T1", "c", gold[:45], gold[:45], ["human", "machine"])).read())
    assert ranked_best({"c": few}) is None


def test_an_interval_one_row_decides_is_left_out_with_its_reason(t3):
    _, loaded = t3
    svm = loaded["svm"]
    decided = one_row_decides(svm, svm["macro_f1_ci"])
    # one adversarial row of one, four classes: up to 2 / (2 x 4) = 25 points
    assert decided == {"class": "adversarial", "rows": 1, "swing": pytest.approx(0.25)}
    # the shape in the full demo: 31.32 [30.45, 61.03], the value at one edge
    shaped = {**svm, "macro_f1": 0.3132}
    assert one_row_decides(shaped, [0.3045, 0.6103])["class"] == "adversarial"
    # no class under the minimum: never, however narrow the interval
    big = {"labels": ["human", "machine"], "per_class": {"human": {"support": 40}, "machine": {"support": 1000}}}
    assert one_row_decides(big, [0.999, 1.0]) is None
    # a class under the minimum whose one row moves far less than the interval's half-width
    wide = {"labels": ["human", "machine"], "per_class": {"human": {"support": 25}, "machine": {"support": 500}}}
    assert one_row_decides(wide, [0.50, 0.80]) is None  # 2 / (26 x 2) = 3.8 points < 15
    tags = Marks.from_scores({("svm", "T3"): svm}, ours=set())
    _, markdown = render_table4([Row("svm", "SVM", False)], [Column("T3", "T3")], {("svm", "T3"): svm["macro_f1"]},
                                intervals={("svm", "T3"): tuple(svm["macro_f1_ci"])}, tags=tags)
    cell = next(line for line in markdown.splitlines() if line.startswith("| SVM"))
    assert f"{100 * svm['macro_f1']:.2f} {ONE_ROW}§" in cell and "[" + f"{100 * svm['macro_f1_ci'][0]:.2f}" not in cell
    assert "T3: adversarial 1 row, up to 25.00 points" in markdown


def test_a_one_class_column_shows_recall_marked_one_class_and_ranks_nothing(tmp_path):
    """A test set of one model's generations (machine only): its cells are machine recall (6 of 7
    caught: 85.71, as the card says), never a macro-F1 (46.15), and the majority baseline's 100.00
    is not underlined."""
    gold = ["machine"] * 7
    lr = json.loads(open(score_file(tmp_path, "T1", "lr", gold, ["machine"] * 6 + ["human"],
                                    ["human", "machine"])).read())
    majority = json.loads(open(score_file(tmp_path, "T1", "majority", gold, gold, ["human", "machine"])).read())
    assert round(100 * lr["macro_f1"], 2) == 46.15
    value, ci = table_value(lr)
    assert value == pytest.approx(6 / 7) and ci[0] < value <= ci[1]
    tags = Marks.from_scores({("lr", "T1·mine"): lr, ("majority", "T1·mine"): majority}, ours=set())
    values = {("lr", "T1·mine"): value, ("majority", "T1·mine"): table_value(majority)[0]}
    _, markdown = render_table4([Row("majority", "Majority", True), Row("lr", "LR", False)],
                                [Column("T1·mine", "T1 Binary · mine")], values, tags=tags)
    assert "T1 Binary · mine (one class: machine recall)" in markdown
    assert "85.71§ <sup>one class</sup>" in markdown and "46.15" not in markdown  # 7 rows: § too
    assert "<u>" not in markdown and "**" not in markdown
    assert "one class: the cell's test rows hold one class" in markdown


def test_reproduction_counts_leave_out_cells_on_a_class_under_the_minimum(t3):
    _, loaded = t3
    cells = [{"table": 4, "row": "Majority", "column": "T3", "task": "T3", "detector": "majority", "status": "both",
              "paper": 30.0, "ours": 30.5, "ci": [29.0, 61.0], "within": True, "inside": True, "dummy": True},
             {"table": 4, "row": "SVM", "column": "T3", "task": "T3", "detector": "svm", "status": "both",
              "paper": 57.0, "ours": 57.9, "ci": [40.0, 61.0], "within": True, "inside": True}]
    mark_cells(cells, Marks.from_scores({(d, "T3"): s for d, s in loaded.items()}, ours=set()))
    groups = headlines(cells)
    assert (groups[0]["compared"], groups[0]["inside"], groups[0]["small"]) == (0, 0, 2)
    line = "\n".join(headline_lines(groups, {"T3": "T3 Fine-grained"}))
    assert "nothing counted: all 2 cells rest on a class under 30 test rows" in line


def test_table8_prints_intervals_and_bolds_nothing_on_unparseable_answers_or_small_classes(tmp_path):
    two = ["human", "machine"]
    gold = ["human"] * 40 + ["machine"] * 40
    scored = []
    # judge a: most answers unparseable (abstentions), but a higher macro-F1 than b
    pred_a = ["human"] * 5 + ["unparseable"] * 35 + ["machine"] * 34 + ["unparseable"] * 6  # 41 of 80
    from aicd.data.schema import ABSTAIN
    pred_a = [ABSTAIN if p == "unparseable" else p for p in pred_a]
    scored.append(score_file(tmp_path, "T1", "judge_a_zs", gold, pred_a, two))
    scored.append(score_file(tmp_path, "T1", "judge_b_zs", gold, ["human"] * 4 + ["machine"] * 76, two))
    # judge c on T3's sample: classes under the minimum
    scored.append(score_file(tmp_path, "T3", "judge_b_zs", GOLD, predictions(90, 90, True)))
    layout = {"tasks": [["T1", "T1 Binary"], ["T3", "T3"]], "modes": ["zs"], "hint": "",
              "judges": [["a", "A", None], ["b", "B", None]]}
    a, b = (json.loads(open(p).read()) for p in scored[:2])
    assert a["macro_f1"] > b["macro_f1"] and 2 * a["abstentions"] > a["n"]
    table8(layout, scored, str(tmp_path))
    md = (tmp_path / "table8.md").read_text()
    body = md.split("\n\n")[0]
    a_line = next(line for line in body.splitlines() if line.startswith("| A"))
    b_line = next(line for line in body.splitlines() if line.startswith("| B"))
    # a's higher score rests on 39 of 80 answers parsed: not bold; b, the best of what ranks, is
    assert "**" not in a_line and "<sup>unparseable</sup>" in a_line and f"**{100 * b['macro_f1']:.2f}" in b_line
    assert "most of the judge's answers named no class" in md
    assert " ± " in a_line or " [" in a_line  # the intervals, as every other table prints them
    t3_cell = b_line.split("|")[-2]
    assert "§" in t3_cell and "**" not in t3_cell  # T3's sample: a class of 1 row


def test_table5_marks_a_subset_whose_interval_one_row_decides():
    def entry(n_small, ci):
        return {"n": 150, "per_class": {"human": {"support": n_small, "f1": 0.5}, "machine": {"support": 139, "f1": 0.9}},
                "table_metric": {"value": 0.7, "ci": ci, "one_class": None, "metric": "macro-F1 over the task's labels"}}

    scores = {"lr": {"by": {"subset": {"unseen_language_seen_domain": entry(1, [0.45, 0.95]),
                                       "seen_language_seen_domain": entry(14, [0.60, 0.80])}}}}
    result = compute(5, "binary", ["human", "machine"], scores)
    _, md = render(result)
    decided = next(line for line in md.splitlines() if line.startswith("| Seen domain, unseen language"))
    assert ONE_ROW in decided and "§" in decided  # 1 human row: 2 / (2 x 2) = 50 points of a 25-point half-width
    kept = next(line for line in md.splitlines() if line.startswith("| Seen domain, seen language"))
    assert "0.60–0.80" in kept and "§" in kept  # 14 humans: marked §, its interval still says something
    assert "human 14" in md and "concludes nothing" in md
