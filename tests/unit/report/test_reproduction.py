"""The reproduction table: the paper's value beside ours for every cell both have, the
difference, within +-2 points, the paper's value inside our interval; one-sided cells listed
with why; a one-class subset kept out of the comparison; whether the run is on the release;
the figure; report.md opening with it."""

from __future__ import annotations

import json

import pytest
from aicd import published
from aicd.report.reproduction import main, on_release

LAYOUT = {
    "tasks": [["T1", "Task 1", "binary"], ["T2", "Task 2", "family"]],
    "task_modes": [["T1", "Task 1", "binary", "release"], ["T2", "Task 2", "family", "release"]],
    "detectors": [["svm_tfidf", "SVM_{TF-IDF}", "SVM_{TF-IDF}"], ["lr_ast", "LR_{AST}", "LR_{AST}"],
                  ["robust", "Robust", None]],
    "judges": [],
}


def score(detector, task, f1, ci, **extra):
    return {"detector": detector, "task": task, "macro_f1": f1, "macro_f1_ci": ci, "per_class": {}, **extra}


@pytest.fixture
def run(tmp_path):
    files = []
    for s in (score("svm_tfidf", "T1", 0.4310, [0.4200, 0.4400]),   # paper 43.05: within 2, inside
              score("lr_ast", "T1", 0.2500, [0.2400, 0.2600]),      # paper 18.02: neither
              score("svm_tfidf", "T2", 0.0700, [0.0500, 0.0900]),   # paper 5.44: within 2 (1.56), inside
              score("robust", "T1", 0.8000, [0.7900, 0.8100])):     # not a paper row
        path = tmp_path / f"{s['detector']}_{s['task']}.json"
        path.write_text(json.dumps(s))
        files.append(str(path))
    subsets = {"5": {"task": "T1", "detectors": ["svm_tfidf", "lr_ast"], "averaged_over": "paper", "rows": [
        {"subset": "seen_language_seen_domain", "mean": 0.65, "std": 0.1, "ci": [0.60, 0.70], "one_class": None},
        {"subset": "seen_language_unseen_domain", "mean": 0.30, "std": 0.1, "ci": [0.2, 0.4], "one_class": "human"}]},
               "6": {"task": "T2", "detectors": [], "rows": [], "note": "the task's test data names no subsets"},
               "7": {"task": None, "rows": []}}
    (tmp_path / "subsets.json").write_text(json.dumps(subsets))
    reports = []
    for name, _kind, rows in (("T1", "binary", 1_108_207), ("T2", "family", 1000)):
        path = tmp_path / f"{name}.report.json"
        path.write_text(json.dumps({"task": name, "kind": "release", "release": {"hub": "AICD-bench/AICD-Bench"},
                                    "splits": {"test": {"rows": rows}}}))
        reports.append(str(path))
    (tmp_path / "inputs.json").write_text(json.dumps({"fingerprint": "abc123def456", "inputs": {}}))
    main(["--layout", json.dumps(LAYOUT), "--scores", *files, "--subset-tables", str(tmp_path / "subsets.json"),
          "--task-reports", *reports, "--inputs", str(tmp_path / "inputs.json"),
          "--tables-dir", str(tmp_path / "tables"), "--figures-dir", str(tmp_path / "figures")])
    return tmp_path


def test_cells_both_sides_have_are_compared(run):
    cells = json.loads((run / "tables" / "reproduction.json").read_text())["cells"]
    svm = next(c for c in cells if c["table"] == 4 and c["row"] == "SVM_{TF-IDF}" and c["column"] == "T1")
    assert svm["paper"] == 43.05 and svm["ours"] == pytest.approx(43.10)
    assert svm["delta"] == pytest.approx(0.05) and svm["within"] and svm["inside"]
    lr = next(c for c in cells if c["table"] == 4 and c["row"] == "LR_{AST}" and c["column"] == "T1")
    assert lr["delta"] == pytest.approx(25.0 - 18.02) and not lr["within"] and not lr["inside"]
    t5 = next(c for c in cells if c["table"] == 5 and c["row"] == "Seen domain, seen language")
    assert t5["paper"] == pytest.approx(63.0) and t5["ours"] == pytest.approx(65.0) and t5["inside"] is True
    one = next(c for c in cells if c["table"] == 5 and c["row"] == "Unseen domain, seen language")
    assert one["status"] == "not comparable" and "human recall" in one["why"]


def test_one_sided_cells_say_why(run):
    cells = json.loads((run / "tables" / "reproduction.json").read_text())["cells"]
    codebert = next(c for c in cells if c["row"] == "CodeBERT" and c["column"] == "T1")
    assert codebert["status"] == "paper only" and codebert["why"] == "not in this configuration"
    t3 = [c for c in cells if c["table"] == 4 and c["column"] == "T3"]
    assert len(t3) == 18 and {c["why"] for c in t3} == {"no task of this kind in the run"}
    robust = next(c for c in cells if c["row"] == "Robust")
    assert robust["status"] == "ours only" and robust["paper"] is None
    fdg_t2 = [c for c in cells if c["row"] == "Fast-DetectGPT" and c["column"] == "T2"]
    assert fdg_t2 == []  # the paper prints "-": no cell on either side
    assert sum(1 for c in cells if c["table"] == 8) == 12  # every judge cell, the paper's only


def test_headlines_and_the_release_line(run):
    summary = json.loads((run / "tables" / "reproduction.json").read_text())
    t1 = next(h for h in summary["headlines"] if h["table"] == 4 and h["column"] == "T1")
    assert (t1["compared"], t1["within"], t1["inside"]) == (2, 1, 1)
    assert summary["on_release"] is False and "task T2: 1000 test rows, the release's 507,874" in summary["why"]
    md = (run / "tables" / "reproduction.md").read_text()
    assert "**This run is not on the paper's release**" in md and "abc123def456" in md
    assert "Table 4, T1 (Task 1): **1 of 2** cells within ±2 points" in md
    assert "| 4 " in md and "43.05" in md and "+0.05" in md
    for ext in ("tex", "html"):
        assert "43.05" in (run / "tables" / f"reproduction.{ext}").read_text()


def test_the_figure_is_written(run):
    for task in ("T1", "T2"):
        png = run / "figures" / f"reproduction_{task}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
        assert (run / "figures" / f"reproduction_{task}.pdf").stat().st_size > 1000


def test_on_release_needs_the_hub_release_with_its_full_test_split():
    layout = {"task_modes": [["T1", "Task 1", "binary", "release"]]}
    full = {"T1": {"release": {"hub": published.release()["hub"]}, "splits": {"test": {"rows": 1_108_207}}}}
    assert on_release(layout, full) == (True, "every task is read from AICD-bench/AICD-Bench with its full test split")
    local = {"T1": {"release": {"files": {}}, "splits": {"test": {"rows": 1_108_207}}}}
    assert on_release(layout, local)[0] is False and "local files" in on_release(layout, local)[1]
    built = {"task_modes": [["binary", "T1", "binary", "build"]]}
    assert on_release(built, {}) == (False, "task binary: built from the sources, not the release")


def test_rows_keep_their_titles_not_comparable_cells_and_dummy_agreement(tmp_path):
    """A detector whose config says it is not the paper's gets "not comparable" with its note and
    no Δ; a comparable one with a note prints it; each row keeps its own title; agreeing dummy
    baselines are named in the headline; Tables 5-7 name the rows averaged; § is carried."""
    layout = {**LAYOUT, "detectors": [["random", "Random", "Random"], ["fdg", "Fast-DetectGPT (toy LM)", "Fast-DetectGPT"],
                                      ["svm_tfidf", "SVM_{TF-IDF}", "SVM_{TF-IDF}"]],
              "dummies": ["random"],
              "comparability": {"fdg": {"comparable": False, "note": "a toy LM trained here, the paper's is pretrained"},
                                "svm_tfidf": {"comparable": True, "note": "500 SVD components"}}}
    files = []
    for s in (score("random", "T1", 0.4600, [0.4400, 0.4800]),     # paper 45.73: within 2
              score("fdg", "T1", 0.4500, [0.4300, 0.4700]),        # paper 44.99: would be "within", is not comparable
              score("svm_tfidf", "T1", 0.4310, [0.4200, 0.4400])):  # paper 43.05: within 2
        path = tmp_path / f"{s['detector']}.json"
        path.write_text(json.dumps(s))
        files.append(str(path))
    subsets = {"5": {"task": "T1", "detectors": ["svm_tfidf"], "averaged_over": "paper", "rows": [
        {"subset": "seen_language_seen_domain", "mean": 0.65, "std": 0.0, "ci": [0.6, 0.7], "one_class": None,
         "small_classes": {"machine": 12}}]}, "6": {"task": None, "rows": []}, "7": {"task": None, "rows": []}}
    (tmp_path / "subsets.json").write_text(json.dumps(subsets))
    main(["--layout", json.dumps(layout), "--scores", *files, "--subset-tables", str(tmp_path / "subsets.json"),
          "--tables-dir", str(tmp_path / "tables"), "--figures-dir", str(tmp_path / "figures")])
    summary = json.loads((tmp_path / "tables" / "reproduction.json").read_text())
    fdg = next(c for c in summary["cells"] if c["row"] == "Fast-DetectGPT" and c["column"] == "T1")
    assert fdg["status"] == "not comparable" and "delta" not in fdg and fdg["ours_value"] == pytest.approx(45.0)
    t1 = next(h for h in summary["headlines"] if h["table"] == 4 and h["column"] == "T1")
    assert (t1["compared"], t1["within"], t1["not_comparable"], t1["dummy_within"]) == (2, 2, 1, ["Random"])
    md = (tmp_path / "tables" / "reproduction.md").read_text()
    assert "**2 of 2** cells within ±2 points (1 of them dummy baseline: Random)" in md
    line = next(x for x in md.splitlines() if x.startswith("| 4 ") and "Fast-DetectGPT" in x)
    assert "Fast-DetectGPT — ours: Fast-DetectGPT (toy LM)" in line and "(ours 45.00 [43.00–47.00])" in line
    assert "not comparable: a toy LM trained here, the paper's is pretrained" in line and "+0.01" not in line
    svm = next(x for x in md.splitlines() if x.startswith("| 4 ") and "SVM" in x)
    assert "500 SVD components" in svm and "+0.05" in svm and "ours:" not in svm  # same title: not repeated
    t5 = next(x for x in md.splitlines() if x.startswith("| 5 "))
    assert "65.00 [60.00–70.00]§" in t5 and "does not list" in t5
    assert ("- Table 5: ours is the mean over 1 rows, the paper's trained rows run here: SVM (TF-IDF). The paper's is "
            "\"averaged over detectors\" (its caption) and does not say which.") in md
    assert "§ after ours" in md


def test_every_task_off_the_release_is_named():
    built = {"task_modes": [["binary", "T1", "binary", "build"], ["family", "T2", "family", "build"]]}
    assert on_release(built, {}) == (False, "tasks binary, family: built from the sources, not the release")


def test_a_paper_row_named_in_the_config_and_a_wrong_one():
    from aicd.common.errors import AicdError

    dets = {"minilm": {"kind": "encoder", "params": {"model": "package:x"}, "paper": {"row": "CodeBERT"}},
            "codebert": {"kind": "encoder", "params": {"model": "microsoft/codebert-base"}}}
    assert published.match_detectors(dets) == {"minilm": "CodeBERT"}  # the named row is taken, not matched twice
    with pytest.raises(AicdError, match="paper.row 'CodeBert' is not a row of the paper's Table 4"):
        published.match_detectors({"x": {"kind": "encoder", "paper": {"row": "CodeBert"}}})
