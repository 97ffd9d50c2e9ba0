"""aicd.report.report_md.write_report on real score files (aicd.scoring.scorer): Table 4 in three
formats, the best trained detector's confusion figure per task, and report.md's links."""

import json

import pandas as pd
from aicd.report.report_md import ReportInputs, ReportPaths, write_report
from aicd.scoring.scorer import score


def _scores(tmp_path, task, detector, gold, pred):
    test = pd.DataFrame({"id": [f"r{i}" for i in range(len(gold))], "gold": gold, "language": "Python"})
    result = score(pd.DataFrame({"id": test["id"], "pred": pred}), test, ["human", "machine"], resamples=50)
    path = tmp_path / "scores" / task / f"{detector}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task": task, "detector": detector, **result}))
    return str(path)


def _write(layout, files, tables_dir, figures_dir, report):
    write_report(ReportInputs(layout, files), ReportPaths(tables_dir, figures_dir, report))


def test_table4_figures_and_report_links(tmp_path):
    gold = ["human", "machine"] * 30  # 30 rows per class: enough to rank
    files = [_scores(tmp_path, "T1", "good", gold, gold),
             _scores(tmp_path, "T1", "half", gold, ["human"] * 30 + ["machine"] * 30),
             _scores(tmp_path, "T1", "majority", gold, ["machine"] * 60)]
    layout = {"tasks": [["T1", "Task 1"]],
              "detectors": [["majority", "Majority", True], ["good", "Good", False], ["half", "Half", False],
                            ["absent", "Never run", False]]}
    out = tmp_path / "results"
    _write(layout, files, str(out / "tables"), str(out / "figures"), str(out / "report.md"))

    table = (out / "tables" / "table4.md").read_text()
    assert "Good" in table and "Majority" in table and "Never run" not in table  # a detector without scores has no row
    assert "100.00" in table  # the perfect detector's macro-F1
    assert (out / "tables" / "table4.tex").read_text().count("\\textbf{100.00}") == 1
    assert "<table" in (out / "tables" / "table4.html").read_text()
    assert (out / "figures" / "confusion_T1.png").stat().st_size > 0 and (out / "figures" / "confusion_T1.pdf").exists()
    report = (out / "report.md").read_text()
    assert "best trained detector Good (macro-F1 100.00, n = 60)" in report
    assert "](figures/confusion_T1.png)" in report and "](tables/table4.tex)" in report
    assert "± is the half-width" in report  # intervals shown where the scores carry them


def test_a_task_without_scores_is_said_not_drawn(tmp_path):
    gold = ["human", "machine"] * 5
    files = [_scores(tmp_path, "T1", "good", gold, gold)]
    layout = {"tasks": [["T1", "Task 1"], ["T2", "Task 2"]], "detectors": [["good", "Good", False]]}
    _write(layout, files, str(tmp_path / "t"), str(tmp_path / "f"), str(tmp_path / "report.md"))
    assert "- Task 2: no scores" in (tmp_path / "report.md").read_text()
    assert not (tmp_path / "f" / "confusion_T2.png").exists()


def test_a_dummy_that_beats_every_trained_detector_is_not_the_best_trained(tmp_path):
    gold = ["human"] * 90 + ["machine"] * 30
    files = [_scores(tmp_path, "T1", "majority", gold, ["human"] * 120),  # 0.43 macro-F1
             _scores(tmp_path, "T1", "bad", gold, ["machine"] * 120)]  # 0.20
    layout = {"tasks": [["T1", "Task 1"]], "detectors": [["majority", "Majority", True], ["bad", "Bad", False]]}
    _write(layout, files, str(tmp_path / "t"), str(tmp_path / "f"), str(tmp_path / "report.md"))
    assert "best trained detector Bad (" in (tmp_path / "report.md").read_text()


def test_the_command_line_passes_inputs_data_reports_and_test_sets(tmp_path):
    """python -m aicd.report's argument wiring: the fingerprint, data summaries and an extra test
    set column all reach report.md and Table 4."""
    from aicd.report.__main__ import main

    gold = ["human", "machine"] * 5
    files = [_scores(tmp_path, "T1", "good", gold, gold)]
    extra = tmp_path / "scores" / "T1" / "test_sets" / "codeaid" / "good.json"
    extra.parent.mkdir(parents=True)
    extra.write_text((tmp_path / "scores" / "T1" / "good.json").read_text())
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({"fingerprint": "fp0123", "code": "abc", "warnings": ["source x fell short"],
                                  "inputs": {"trial.parquet": {"kind": "file", "bytes": 12, "sha256": "ab" * 32}}}))
    filters = tmp_path / "filter_report.json"
    filters.write_text(json.dumps({"rejected_total": 3, "rows_in": 10, "kept": 7, "rejected": {"too_short": 3}}))
    set_report = tmp_path / "codeaid.report.json"
    set_report.write_text(json.dumps({"task": "T1", "test_set": "codeaid", "rows": 10, "rows_in": 12,
                                      "removed": {"unknown_language": 2}, "balance_before": {"human": 6, "machine": 6},
                                      "balance_after": {"human": 5, "machine": 5}}))
    layout = {"tasks": [["T1", "Task 1"]], "detectors": [["good", "Good", False]],
              "test_sets": [["T1", "codeaid", "CodeAid"]]}
    out = tmp_path / "results"
    main(["report", "--layout", json.dumps(layout), "--scores", *files, "--data-reports", str(filters),
          "--tables-dir", str(out / "tables"), "--figures-dir", str(out / "figures"), "--report", str(out / "report.md"),
          "--inputs", str(inputs), "--test-set-scores", str(extra), "--test-set-reports", str(set_report)])
    report = (out / "report.md").read_text()
    assert "Inputs `fp0123`" in report and "- source x fell short" in report
    assert "dataset filters (Table 3): 10 rows in, 7 kept; rejected: too_short 3" in report
    assert "**codeaid**: 10 of 12 rows kept (removed: unknown_language 2)" in report
    assert "`trial.parquet`: 12 bytes, sha256 `abababababababab`" in report
    assert "Task 1 · CodeAid" in (out / "tables" / "table4.md").read_text()
    assert "Code written in this run" not in report  # no generated input: nothing can vary between machines

    # a generator's table among the inputs: the report says what can vary between machines
    listed = json.loads(inputs.read_text())
    listed["inputs"]["generation:SmolLM2-135M-Instruct"] = {"kind": "file", "bytes": 9, "sha256": "cd" * 32}
    inputs.write_text(json.dumps(listed))
    main(["report", "--layout", json.dumps(layout), "--scores", *files, "--tables-dir", str(out / "tables"),
          "--figures-dir", str(out / "figures"), "--report", str(out / "report.md"), "--inputs", str(inputs)])
    report = (out / "report.md").read_text()
    assert "Code written in this run (`SmolLM2-135M-Instruct`)" in report
    assert "another kind of machine may get other answers" in report and "`aicd verify` names it" in report


def test_the_threshold_table_beside_table4(tmp_path):
    gold = ["human", "machine"] * 100
    test = pd.DataFrame({"id": [f"r{i}" for i in range(len(gold))], "gold": gold, "language": "Python"})
    machine = [0.1 + 0.8 * (g == "machine") + 0.001 * i for i, g in enumerate(gold)]  # separable
    scored = pd.DataFrame({"id": test["id"], "pred": gold, "score_human": [1 - m for m in machine],
                           "score_machine": machine})
    validation = pd.DataFrame({"id": [f"v{i}" for i in range(200)], "domain": "general",
                               "machine_score": [0.1 + 0.001 * i for i in range(200)]})
    files = []
    for name, preds, val in (("scored", scored, validation), ("labels", scored[["id", "pred"]], None)):
        result = score(preds, test, ["human", "machine"], resamples=50, validation=val)
        path = tmp_path / "scores" / "T1" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"task": "T1", "detector": name, **result}))
        files.append(str(path))
    layout = {"tasks": [["T1", "Task 1"]], "detectors": [["scored", "Scored", False], ["labels", "Labels", False]]}
    out = tmp_path / "results"
    _write(layout, files, str(out / "tables"), str(out / "figures"), str(out / "report.md"))
    table = (out / "tables" / "thresholds.md").read_text()
    scored_line = next(line for line in table.splitlines() if line.startswith("| Scored"))
    assert "100.00" in scored_line  # AUROC of a separable detector
    assert "TPR @ 1% FPR" in table and "TPR @ 5% FPR" in table
    assert "no scores" in next(line for line in table.splitlines() if line.startswith("| Labels"))
    assert "<table>" in (out / "tables" / "thresholds.html").read_text()
    assert "TPR @ 1\\% FPR" in (out / "tables" / "thresholds.tex").read_text()
    assert "## Threshold metrics" in (out / "report.md").read_text()


def test_the_inputs_block_says_which_task_and_kind_versions_made_the_scores(tmp_path):
    """Each score file carries the versions of the task definition and detector kind that made it
    (aicd.plan.Plan.versions, passed by the score rule); report.md's inputs block lists them."""
    from aicd.report.__main__ import main

    gold = ["human", "machine"] * 5
    files = []
    for detector, kind, version in (("good", "linear_svm", 2), ("base", "majority", 1)):
        path = _scores(tmp_path, "T1", detector, gold, gold)
        made = json.loads(open(path).read())
        made["versions"] = {"task": {"definition": "binary", "version": 3}, "detector": {"kind": kind, "version": version}}
        open(path, "w").write(json.dumps(made))
        files.append(path)
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({"fingerprint": "fp0123", "code": "abc", "inputs": {}}))
    layout = {"tasks": [["T1", "Task 1"]], "detectors": [["good", "Good", False], ["base", "Base", True]]}
    out = tmp_path / "results"
    main(["report", "--layout", json.dumps(layout), "--scores", *files, "--tables-dir", str(out / "tables"),
          "--figures-dir", str(out / "figures"), "--report", str(out / "report.md"), "--inputs", str(inputs)])
    report = (out / "report.md").read_text()
    assert ("Versions that made the score files (CHANGELOG.md): task definitions `binary` v3; detector kinds "
            "`linear_svm` v2, `majority` v1.") in report
    assert report.index("## Inputs") < report.index("Versions that made")


def test_a_run_whose_model_answers_by_batch_says_it_is_not_reproducible(tmp_path):
    """report.md's inputs block: code a model wrote in the run is named as an input; where the
    layout names models whose greedy answers depend on their batch (bfloat16 on a CPU) the report
    says two fresh runs differ and what to compare them with; otherwise it does not."""
    from types import SimpleNamespace

    from aicd.report.__main__ import main
    from aicd.report.layouts import batch_dependent_models

    gold = ["human", "machine"] * 5
    path = _scores(tmp_path, "T1", "good", gold, gold)
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({"fingerprint": "fp0123", "code": "abc", "inputs": {
        "generation:M": {"kind": "file", "path": "g.parquet", "bytes": 1, "sha256": "0" * 64}}}))
    reports = {}
    for name, dependent in (("float32", []), ("bfloat16", ["M"])):
        layout = {"tasks": [["T1", "Task 1"]], "detectors": [["good", "Good", False]], "batch_dependent": dependent}
        out = tmp_path / name
        main(["report", "--layout", json.dumps(layout), "--scores", path, "--tables-dir", str(out / "tables"),
              "--figures-dir", str(out / "figures"), "--report", str(out / "report.md"), "--inputs", str(inputs)])
        reports[name] = (out / "report.md").read_text()
    assert "Code written in this run (`M`)" in reports["float32"] and "Not byte-for-byte" not in reports["float32"]
    assert "**Not byte-for-byte reproducible:** `M` was served here with settings under which" in reports["bfloat16"]
    assert "aicd verify RESULTS_A RESULTS_B` names the input that differs" in reports["bfloat16"]
    plan = SimpleNamespace(generators=("M", "N"), instructor="I", judges={"j": {"model": "J"}})
    served = {"model": "package:smollm2-135m-instruct", "server": "vllm"}
    models = {"M": {"serve": {**served, "dtype": "bfloat16"}}, "N": {"serve": {**served, "dtype": "float32"}},
              "J": {"serve": {**served, "dtype": "bfloat16"}}, "X": {"serve": {**served, "dtype": "bfloat16"}},
              "I": {"serve": {**served, "dtype": "bfloat16"}}}
    assert batch_dependent_models(plan, models) == ["I", "J", "M"]  # X is not the run's
