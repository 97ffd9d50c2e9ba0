"""Extra test sets (tasks.<task>.test_sets) and Snakemake's HTML report, on the real workflow.

- Four extra test sets on one training set plan no extra feature or fit jobs (dry run).
- Adding a set to a finished demo slice reruns only that set's prediction and scoring (and
  the report); Table 4 gains its column, with 95% intervals in report.md, and the report
  lists the rows the set lost with the class balance before and after.
- `snakemake --report` makes a self-contained HTML report whose Table 4 and figures render in
  headless Chromium (a screenshot is saved in the test's temporary folder)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from aicd.detectors import REGISTRY
from components import require

from workflow.browser import Page, chromium, evaluate, screenshot
from workflow.test_demo_workflow import CODEAID, planned_jobs, run

pytestmark = pytest.mark.workflow


def add_test_sets(workdir: Path, names: list[str]) -> None:
    """Extra test sets on T1 (`binary`), each a source reading the CodeAid answers."""
    override = yaml.safe_load((workdir / "override.yaml").read_text())
    for name in names:
        if name != "codeaid":
            override["sources"][name] = {"files": str(CODEAID), "columns": {"source_row_id": "row_id"},
                                         "defaults": {"domain": "algorithmic"}}
    override["tasks"] = {"binary": {"test_sets": {n: {"source": n, "title": n} for n in names}}}
    (workdir / "override.yaml").write_text(yaml.safe_dump(override))


def test_four_test_sets_plan_one_feature_job_per_set_and_one_fit_per_detector(demo_run, tmp_path, repo):
    workdir = tmp_path / "plan"
    workdir.mkdir()
    shutil.copy(demo_run[0] / "override.yaml", workdir / "override.yaml")
    base = Counter(rule for rule, _ in planned_jobs(run(repo, workdir, "-n").stdout))
    add_test_sets(workdir, ["codeaid", "set_b", "set_c", "set_d"])
    jobs = planned_jobs(run(repo, workdir, "-n").stdout)
    counts = Counter(rule for rule, _ in jobs)
    for rule in ("features", "detect", "detect_folder", "task_split"):
        assert counts[rule] == base[rule], rule
    # a fitted model applies to new rows unless its kind says not (Fast-DetectGPT scores the
    # task's own test split through its trained LM: Detector.applies_to_new_code)
    detectors = yaml.safe_load((repo / "config" / "demo.yaml").read_text())["detectors"]
    for name, spec in yaml.safe_load((workdir / "override.yaml").read_text()).get("detectors", {}).items():
        detectors[name] = {**detectors.get(name, {}), **spec}  # the slice's own rows (its trained LM) too
    kinds = {d: spec["kind"] for d, spec in detectors.items()}
    appliable = {w for rule, w in jobs if rule in ("detect", "detect_folder") and "task=binary" in w
                 and REGISTRY[kinds[w.split("detector=")[1]]].applies_to_new_code}
    assert len(appliable) < len({w for rule, w in jobs if rule in ("detect", "detect_folder") and "task=binary" in w})
    assert counts["test_set"] == 4
    assert counts["predict_test_set"] == counts["score_test_set"] == 4 * len(appliable) > 0  # one rule, both storages


@pytest.fixture(scope="module")
def with_test_set(demo_run, tmp_path_factory, repo):
    require(CODEAID.is_file(), f"the CodeAid interview answers at {CODEAID}",
            "they ship in ../shared/data beside the repository, or set AICD_CODEAID_DATA")
    workdir = tmp_path_factory.mktemp("test_sets") / "run"
    shutil.copytree(demo_run[0], workdir, symlinks=True)  # keeps mtimes: nothing reruns by itself
    add_test_sets(workdir, ["codeaid"])
    dry = planned_jobs(run(repo, workdir, "-n").stdout)
    proc = run(repo, workdir)
    return workdir, dry, proc


def test_adding_a_test_set_reruns_only_its_prediction_and_scoring(with_test_set):
    _, dry, _ = with_test_set
    rules = Counter(rule for rule, _ in dry)
    assert set(rules) <= {"test_set", "predict_test_set", "score_test_set", "report", "all"}, rules
    assert rules["test_set"] == 1 and rules["predict_test_set"] == rules["score_test_set"] > 0
    assert ("predict_test_set", "task=binary, test_set=codeaid, detector=minilm") in dry  # a folder-stored model


def test_table4_gains_a_column_and_the_report_lists_removed_rows(with_test_set):
    workdir, _, _ = with_test_set
    results = workdir / "results"
    header = (results / "tables" / "table4.md").read_text().splitlines()[0]
    assert "T1 Binary · codeaid" in header
    score = json.loads((results / "scores" / "binary" / "test_sets" / "codeaid" / "lr_tfidf.json").read_text())
    lo, hi = score["macro_f1_ci"]
    assert lo <= score["macro_f1"] <= hi and score["n"] > 0
    report = (results / "report.md").read_text()
    assert "## Extra test sets" in report and "class balance" in report
    set_report = json.loads((results / "tasks" / "binary" / "test_sets" / "codeaid.report.json").read_text())
    assert set_report["rows"] == score["n"]
    # CodeAid rows are also in the demo's pool: those that landed in T1's train split are removed
    assert set_report["removed"].get("also_in_train", 0) > 0
    assert " ± " in report


def test_snakemake_html_report_renders_table4_and_figures(with_test_set, repo):
    binary = chromium()
    require(binary is not None, "headless Chromium", "apt-get install chromium-headless-shell (Debian)")
    workdir, _, _ = with_test_set
    html = workdir / "report.html"
    run(repo, workdir, "--report", str(html))
    assert html.stat().st_size > 10_000
    shot = workdir / "report_table4.png"

    async def steps(call):
        await call("Page.enable")
        await call("Page.navigate", url=html.as_uri())
        for _ in range(50):  # the report is a single-page app: wait for its menu
            if "Tables" in (await evaluate(call, "document.body ? document.body.innerText : ''") or ""):
                break
            await asyncio.sleep(0.2)
        menu = await evaluate(call, "document.body.innerText")
        await evaluate(call, "[...document.querySelectorAll('a')].find(e => e.innerText.trim() == 'Tables').click()")
        await asyncio.sleep(0.5)
        listing = await evaluate(call, "document.body.innerText")
        # the result's row opens it in the report's viewer (an iframe holding the file as a data: URL)
        await evaluate(call, "[...document.querySelectorAll('tr')].find(r => r.innerText.includes('table4.html'))"
                             ".querySelector('a').click()")
        src = None
        for _ in range(50):
            src = await evaluate(call, "(document.querySelector('iframe') || {}).src || null")
            if src:
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(1)
        await screenshot(call, shot)  # the report with Table 4 in its viewer
        assert src and src.startswith("data:text/html"), src
        await call("Page.navigate", url=src)  # the same document on its own, to read its cells
        await asyncio.sleep(1)
        table = await evaluate(call, "[...document.querySelectorAll('table tr')].map(r => r.innerText).join('\\n')")
        return menu, listing, table

    with Page(binary, folder=workdir / "browser") as page:
        menu, listing, table = page.run(steps)
    print(f"screenshot of Table 4 in the HTML report: {shot}")
    assert "Figures" in menu and "Tables" in menu
    assert "table4.html" in listing and "reproduction.html" in listing  # the paper beside ours, registered
    assert "LR" in table and "T1 Binary · codeaid" in table
    # each cell's interval: ± where symmetric at the printed precision, else its ends (aicd.report.intervals)
    assert re.search(r"\d\.\d\d (± \d+\.\d\d|\[\d+\.\d\d, \d+\.\d\d\])", table), table
    assert shot.stat().st_size > 5_000
