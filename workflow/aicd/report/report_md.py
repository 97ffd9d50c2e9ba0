"""results/report.md and the tables and figures it shows: Table 4 (LaTeX, Markdown, HTML), the
threshold metrics beside it (AUROC, TPR at a fixed FPR on human code: thresholds.{md,tex,html}), a
confusion-matrix figure per task for its best trained detector, the extra test sets, the subsets,
the data summaries and the input fingerprint. In three parts: the table's scores are read once
(`Table4`), its files and the figures are written, then report.md is written from both.
`python -m aicd.report report` is the command line (rule `report`)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..common.io import read_json, write_text
from ..common.stagecli import json_arg
from ..outputs import SHOWN, beside, name_of, wildcards_of
from ..records.fingerprint import stamp
from . import calibrated_view, generation_losses, threshold_table
from .data_block import data_block
from .figures import confusion_figure
from .marks import MIN_CLASS_SUPPORT, SMALL_CLASS, Marks, ranked_best, table_value
from .subsets import subset_section
from .table4 import Column, Row, markdown_title, plain_title, render, render_html, with_inputs
from .test_sets import test_set_section


@dataclass(frozen=True)
class ReportInputs:
    """What the report is made from. `layout`: {"tasks": [[name, title]], "detectors": [[name,
    title, is_dummy]], "test_sets": [[task, set, title]], "provisional": {task: evidence},
    "paper_rows": {detector: the paper's row}, "task_modes": {task: mode}} (aicd.report.layouts)."""
    layout: dict
    score_files: Sequence[str]
    test_set_score_files: Sequence[str] = ()
    test_set_report_files: Sequence[str] = ()
    data_report_files: Sequence[str] = ()  # source, dataset and split reports
    inputs_file: str | None = None  # results/inputs.json, the fingerprint the tables carry
    reproduction: str | None = None  # tables/reproduction.md, the report's first section
    paper_section: str | None = None  # results/paper_results.md, appended
    generator_card_files: Sequence[str] = ()  # generators/{model}.json: skipped prompts, dropped rows
    calibrated_views: Sequence[str] = ()  # calibration/{task}/{detector}.test.json: the calibrated view
    calibration_reports: Sequence[str] = ()  # calibration/{task}/reference.report.json: its reference


@dataclass(frozen=True)
class ReportPaths:
    tables_dir: str
    figures_dir: str
    report: str  # report.md; its links are relative to its folder

    def table(self, name: str, ext: str) -> Path:
        return Path(beside(self.tables_dir, "tab", name, ext))

    def figure(self, name: str, ext: str) -> Path:
        return Path(beside(self.figures_dir, "figure", name, ext))

    def confusion_stem(self, task: str) -> Path:
        """The confusion figure's path but its extension (it is drawn as PDF and PNG)."""
        return self.figure(f"confusion_{task}", "png").with_suffix("")


@dataclass
class Table4:
    """Table 4's rows (detectors with a score) and columns (the tasks, then one per extra test set,
    keyed "task·set") with every score file they show, keyed (detector, column)."""
    rows: list[Row]
    columns: list[Column]
    task_columns: list[Column]  # confusion figures and subset sections are per task
    scores: dict
    inputs: dict | None
    paper_rows: dict | None = None
    calibrated: dict = field(default_factory=dict)   # (detector, task) -> its calibrated view
    references: dict = field(default_factory=dict)   # task -> its calibration reference's report
    f1: dict = field(init=False)

    def __post_init__(self):
        # what each cell prints: its macro-F1, or its one class's recall (aicd.report.marks.table_value)
        self.f1 = {k: table_value(v)[0] for k, v in self.scores.items() if v.get("macro_f1") is not None}
        self.f1 = {k: v for k, v in self.f1.items() if v is not None}
        self.rows = [r for r in self.rows if any((r.name, c.name) in self.f1 for c in self.columns)]

    @cached_property
    def tags(self) -> Marks:
        ours = set() if self.paper_rows is None else {r.name for r in self.rows if r.name not in self.paper_rows}
        return Marks.from_scores(self.scores, ours=ours)

    @cached_property
    def intervals(self) -> dict:
        """Each cell's 95% bootstrap interval (score JSON `macro_f1_ci`; a one-class cell's recall
        interval), shown in report.md."""
        out = {k: table_value(v)[1] for k, v in self.scores.items() if k in self.f1}
        return {k: tuple(ci) for k, ci in out.items() if ci}

    @cached_property
    def files(self) -> dict[str, str]:
        """table4.{tex,md,html} and thresholds.{md,tex,html}, by file name."""
        latex, markdown = with_inputs(*render(self.rows, self.columns, self.f1, tags=self.tags), self.inputs)
        html = render_html(self.rows, self.columns, self.f1, self.intervals,
                           stamp=stamp(self.inputs) if self.inputs else "", tags=self.tags)
        thresholds = threshold_table.render(self.rows, self.columns, self.scores, self.tags, self.calibrated)
        calibrated = calibrated_view.render(self.rows, self.task_columns, self.calibrated, self.references, self.tags)
        return {**{name_of("tab", "table4", e): t for e, t in zip(("tex", "md", "html"), (latex, markdown, html))},
                **{name_of("tab", "thresholds", e): t for e, t in zip(("md", "tex", "html"), thresholds)},
                **{name_of("tab", "calibrated", e): t for e, t in zip(("md", "tex", "html"), calibrated)}}

    @cached_property
    def markdown_with_intervals(self) -> str:
        rendered = render(self.rows, self.columns, self.f1, intervals=self.intervals, tags=self.tags)
        return with_inputs(*rendered, self.inputs)[1]

    @cached_property
    def choice(self) -> dict[str, tuple[str, str]]:
        """task -> (detector, the basis it was chosen on) for its confusion figure and its subsets:
        the best trained detector among the cells that can carry a ranking (aicd.report.marks.
        ranked_best); where none can, the first trained detector of the table, not chosen by score."""
        dummies = {r.name for r in self.rows if r.dummy}
        out = {}
        for col in self.task_columns:
            scores = {d: s for (d, t), s in self.scores.items() if t == col.name and (d, t) in self.f1}
            if not scores:
                continue
            chosen = ranked_best(scores, dummies)
            if chosen is None:
                first = next((r.name for r in self.rows if r.name in scores and not r.dummy),
                             next(r.name for r in self.rows if r.name in scores))
                chosen = (first, f"not chosen by score: fewer than two of the test classes have {MIN_CLASS_SUPPORT} "
                                 "rows; the table's first trained detector")
            out[col.name] = chosen
        return out

    @cached_property
    def best(self) -> dict[str, tuple[float, str]]:
        """task -> (macro-F1, the detector `choice` picked); `choice` says on what basis."""
        return {t: (self.scores[(d, t)]["macro_f1"], d) for t, (d, _basis) in self.choice.items()}

    def title(self, detector: str) -> str:
        return {r.name: r.title for r in self.rows}.get(detector, detector)


def read_table4(src: ReportInputs) -> Table4:
    layout = src.layout
    columns = [Column(n, t) for n, t in layout["tasks"]]
    task_columns = list(columns)
    scores = {}
    for path in src.score_files:
        s = read_json(path)
        scores[(s["detector"], s["task"])] = s
    # an extra test set is a column of its own, keyed "task·set" (its scores' folder names the set)
    set_titles = {(t, s): title for t, s, title in layout.get("test_sets") or []}
    task_titles = dict(layout["tasks"])
    for (t, s), title in set_titles.items():
        columns.append(Column(f"{t}·{s}", f"{task_titles.get(t, t)} · {title}"))
    for path in src.test_set_score_files:
        sc = read_json(path)
        scores[(sc["detector"], f"{sc['task']}·{wildcards_of(path, 'test_set_scores').test_set}")] = sc
    references = {r["task"]: r for r in map(read_json, src.calibration_reports)}
    return Table4(rows=[Row(n, t, bool(d)) for n, t, d in layout["detectors"]], columns=columns,
                  task_columns=task_columns, scores=scores, paper_rows=layout.get("paper_rows"),
                  inputs=read_json(src.inputs_file) if src.inputs_file else None,
                  calibrated=calibrated_view.read_views(src.calibrated_views), references=references)


def write_report(src: ReportInputs, paths: ReportPaths) -> None:
    """Table 4's and the threshold table's files, the confusion figures, then report.md (a detector
    without scores has no row; report.md lists what ran)."""
    table = read_table4(src)
    for name, text in table.files.items():
        write_text(text, beside(paths.tables_dir, "tab", *name.rsplit(".", 1)))
    draw_confusion_figures(table, paths)
    write_text(report_markdown(src, table, paths), paths.report)


def draw_confusion_figures(table: Table4, paths: ReportPaths) -> None:
    """Per task, the confusion matrix of its best trained detector (PDF and PNG)."""
    for col in table.task_columns:
        if col.name in table.best:
            value, name = table.best[col.name]
            stem = paths.confusion_stem(col.name)
            basis = table.choice[col.name][1]
            why = "" if basis == "macro-F1" else "\nnot chosen by score" if basis.startswith("not chosen") else \
                f"\nchosen on its classes of at least {MIN_CLASS_SUPPORT} test rows"
            small = f" {SMALL_CLASS}" if table.tags.small(name, col.name) else ""
            confusion_figure(table.scores[(name, col.name)],
                             f"{col.title}: {plain_title(table.title(name))} (macro-F1 {value * 100:.2f}{small}){why}",
                             f"{stem}.pdf", f"{stem}.png")


def report_markdown(src: ReportInputs, table: Table4, paths: ReportPaths) -> str:
    """report.md: the data, the paper beside ours, Table 4 and the threshold metrics, the
    confusion figures (drawn by draw_confusion_figures), then the extra test sets, the subsets,
    the data summaries, the inputs and the paper's later tables."""
    report_dir = Path(paths.report).parent
    rel = lambda p: os.path.relpath(p, report_dir)  # noqa: E731
    data_reports = [read_json(path) for path in src.data_report_files]
    task_reports = {r["task"]: r for r in data_reports if "task" in r and "splits" in r}
    task_titles = {c.name: c.title for c in table.task_columns}
    lines = ["# AICD Bench results", "", *data_block(task_reports, task_titles, src.layout.get("task_modes") or {})]
    if src.reproduction:
        lines += _reproduction_lines(src.reproduction, table, paths, rel)
    lines += _inputs_head(table.inputs, rel(src.inputs_file) if src.inputs_file else "")
    lines += _tables_lines(table, paths, rel)
    lines += _confusion_lines(table, paths, rel)
    lines += test_set_section([read_json(path) for path in src.test_set_report_files], dict(src.layout["tasks"]))
    lines += generation_losses.report_section([read_json(path) for path in src.generator_card_files])
    best_scores = {t: (markdown_title(table.title(d)), table.scores[(d, t)]) for t, (_, d) in table.best.items()}
    lines += subset_section(task_reports, task_titles, best_scores, src.layout.get("provisional") or {})
    lines += ["## Data", ""]
    for rep in data_reports:
        lines += _data_summary(rep)
    lines += ["", f"Per-detector scores (per-class, per-subset, per-language): `{SHOWN.scores()}`.", ""]
    if table.inputs:
        lines += ["## Inputs", "", f"Fingerprint `{table.inputs['fingerprint']}` over {len(table.inputs['inputs'])} "
                  "inputs (`aicd verify RESULTS_A RESULTS_B` compares two runs):", ""]
        lines += [f"- {_input_line(k, v)}" for k, v in table.inputs["inputs"].items()] + [""]
        lines += _generated_inputs_note(table.inputs["inputs"], src.layout.get("batch_dependent") or [])
        lines += versions_lines(table.scores.values())
    if src.paper_section:
        lines += ["", Path(src.paper_section).read_text()]
    return "\n".join(lines)


def _generated_inputs_note(inputs: dict, batch_dependent: list) -> list[str]:
    """Which outputs can vary between machines and runs: those downstream of code a model wrote in
    this run, or of a judge's answers; `batch_dependent` names the models served here whose greedy
    answers depend on their batch (aicd.llm.engines.batch_dependent)."""
    generated = [key.split(":", 1)[1] for key in inputs if key.startswith("generation:")]
    lines = []
    if generated:
        lines += [f"Code written in this run ({', '.join(f'`{g}`' for g in generated)}) is an input like a source's "
                  "files. A model served here in float32 and greedily (docs/llm.md) writes the same bytes on two "
                  "fresh runs of one machine, and a rerun takes its answers from the request cache; float32 kernels "
                  "differ between CPU families, so another kind of machine may get other answers, and a model behind "
                  "an API may answer otherwise on any fresh run. Then that table's fingerprint differs, "
                  "`aicd verify` names it, and every table, score and figure built on the data can differ with it.",
                  ""]
    if batch_dependent:
        names = ", ".join(f"`{m}`" for m in batch_dependent)
        lines += [f"**Not byte-for-byte reproducible:** {names} {'was' if len(batch_dependent) == 1 else 'were'} "
                  "served here with settings under which a greedy answer depends on what it is batched with "
                  "(bfloat16 on a CPU, or no batch-invariant kernels on a GPU: aicd.llm.engines.batch_dependent). "
                  "Two fresh runs of this configuration get other answers for some requests: where the model "
                  "writes code, other generated rows and every task split, score and table built on them; where "
                  "it judges, other Table 8 cells (what two fresh full demos measured: BENCHMARKS.md, \"The full "
                  "demo\"). A rerun is identical (the request cache answers it); `aicd verify RESULTS_A RESULTS_B` "
                  "names the input that differs. Served in float32 on a CPU the same answers come back on every "
                  "fresh run.", ""]
    return lines


def versions_lines(scores) -> list[str]:
    """What made the score files, as they say it: each task definition and detector kind (or LLM
    judge) with its version (aicd.plan.Plan.versions; CHANGELOG.md says what each version changed)."""
    tasks, kinds = {}, {}
    for s in scores:
        made = s.get("versions") or {}
        if made.get("task"):
            tasks[str(made["task"]["definition"])] = made["task"]["version"]
        if made.get("detector"):
            kinds[str(made["detector"]["kind"])] = made["detector"]["version"]
    if not tasks and not kinds:
        return []
    listed = lambda found: ", ".join(f"`{k}` v{v}" for k, v in sorted(found.items()))  # noqa: E731
    return [f"Versions that made the score files (CHANGELOG.md): task definitions {listed(tasks)}; detector kinds "
            f"{listed(kinds)}.", ""]


def _reproduction_lines(reproduction: str, table: Table4, paths: ReportPaths, rel: Callable) -> list[str]:
    """The paper beside ours (the reproduction table), its other formats and its figures."""
    repro = Path(reproduction)
    return [repro.read_text().rstrip(), "",
            f"Also as [HTML]({rel(repro.with_suffix('.html'))}), [LaTeX]({rel(repro.with_suffix('.tex'))}) and "
            f"[JSON]({rel(repro.with_suffix('.json'))}); figures: "
            + ", ".join(f"[{c.title}]({rel(paths.figure(f'reproduction_{c.name}', 'png'))})"
                        for c in table.task_columns if paths.figure(f"reproduction_{c.name}", "png").is_file())
            + ".", ""]


def _tables_lines(table: Table4, paths: ReportPaths, rel: Callable) -> list[str]:
    """Table 4 with intervals, the test rows per class, and the threshold metrics."""
    return ["## Table 4: macro-F1 × 100", "", table.markdown_with_intervals,
            f"LaTeX: [{rel(paths.table('table4', 'tex'))}]({rel(paths.table('table4', 'tex'))})", "",
            *class_support_section(table.scores, table.task_columns),
            "## Threshold metrics: AUROC and TPR at a fixed FPR on human code (× 100)", "",
            threshold_table.CAPTION, "", table.files[name_of("tab", "thresholds", "md")],
            f"LaTeX: [{rel(paths.table('thresholds', 'tex'))}]({rel(paths.table('thresholds', 'tex'))})", "",
            *_calibrated_lines(table, paths, rel)]


def _calibrated_lines(table: Table4, paths: ReportPaths, rel: Callable) -> list[str]:
    """The calibrated view (thresholds set per language on human reference code), or why none."""
    if not table.calibrated:
        return ["## Calibrated on human reference code", "",
                "Not run: calibration is off in this config (calibration.enabled), or no task has a human class.", ""]
    fpr = next((v["fpr"] for v in table.calibrated.values() if v.get("available")), calibrated_view.VIEW_FPR)
    return [f"## Calibrated on human reference code: TPR at {fpr * 100:g}% FPR with per-language thresholds (× 100)",
            "", calibrated_view.caption(fpr, calibrated_view.view_confidence(table.calibrated.values())), "",
            table.files[name_of("tab", "calibrated", "md")],
            f"Also as [HTML]({rel(paths.table('calibrated', 'html'))}) and "
            f"[LaTeX]({rel(paths.table('calibrated', 'tex'))}); "
            f"each model's calibration file: `{SHOWN.calibration()}` (`aicd detect` reads it "
            "beside the model; docs/calibration.md explains it).", ""]


def _confusion_lines(table: Table4, paths: ReportPaths, rel: Callable) -> list[str]:
    lines = ["## Confusion matrices", ""]
    for col in table.task_columns:
        if col.name not in table.best:
            lines.append(f"- {col.title}: no scores")
            continue
        value, name = table.best[col.name]
        basis = table.choice[col.name][1]
        stem = paths.confusion_stem(col.name)
        small = table.tags.small(name, col.name)
        head = "best trained detector" if basis == "macro-F1" else "trained detector"
        lines += [f"### {col.title}: {head} {markdown_title(table.title(name))} "
                  f"(macro-F1 {value * 100:.2f}{small}, n = {table.scores[(name, col.name)]['n']})", ""]
        if basis.startswith("not chosen"):
            lines += [f"{basis[0].upper()}{basis[1:]}.", ""]
        elif basis != "macro-F1":
            lines += [f"Chosen by the highest {basis}: the macro-F1 averages over classes under {MIN_CLASS_SUPPORT} "
                      f"test rows ({SMALL_CLASS}), which no choice rests on.", ""]
        lines += [f"![confusion matrix]({rel(f'{stem}.png')}) ([PDF]({rel(f'{stem}.pdf')}))", ""]
    return lines


def class_support_section(scores: dict, columns: list[Column]) -> list[str]:
    """Per task, each gold class's test rows, those under MIN_CLASS_SUPPORT marked: in macro-F1
    each class weighs the same, however few its rows."""
    lines = []
    for col in columns:
        support = {}
        for (_det, task), s in scores.items():
            if task == col.name and not s.get("coverage", 1) < 1:  # a judge's sample has other counts
                support = {c: v.get("support", 0) for c, v in (s.get("per_class") or {}).items()
                           if v.get("support", 0) > 0}
                break
        if support:
            cells = ", ".join(f"{c} {n}{' **' + SMALL_CLASS + '**' if n < MIN_CLASS_SUPPORT else ''}"
                              for c, n in sorted(support.items(), key=lambda kv: -kv[1]))
            lines.append(f"- {col.title}: {cells}")
    if not lines:
        return []
    return ["### Test rows per class", "", f"Each class weighs the same in macro-F1; {SMALL_CLASS}: fewer than "
            f"{MIN_CLASS_SUPPORT} rows, so a few rows move the score a lot (per-class figures: the score files).", "",
            *lines, ""]


def _inputs_head(inputs: dict | None, link: str) -> list[str]:
    """The fingerprint line and, where a source fell short, the warnings, before Table 4."""
    if not inputs:
        return []
    lines = [f"Inputs `{inputs['fingerprint']}`, code `{inputs.get('code')}` ([{name_of('inputs')}]({link}); list below).", ""]
    if inputs.get("warnings"):
        lines += ["## Warnings", ""] + [f"- {w}" for w in inputs["warnings"]] + [""]
    return lines


def _input_line(key: str, rec: dict) -> str:
    what = {"package": lambda: f"{rec.get('package', rec.get('name'))} {rec.get('version')} ({rec.get('registry')})",
            "hub": lambda: f"revision {rec.get('resolved') or rec.get('revision')}",
            "installed": lambda: f"{rec.get('files_read')} files read on this machine (not pinned)",
            "dir": lambda: f"{rec.get('files')} files"}.get(rec.get("kind"), lambda: f"{rec.get('bytes', '?')} bytes")()
    sha = f", sha256 `{rec['sha256'][:16]}`" if rec.get("sha256") else ""
    return f"`{key}`: {what}{sha}"


def audit_line(audit: dict) -> str:
    """The label audit's corrections, in numbers that add up: how many of the checked rows, and
    the largest of the groups (generator, label) they fall in."""
    corrected, checked = audit["corrected"], audit.get("checked") or audit["corrected"]
    which = (f"all {checked:,} checked rows: the label map contradicts the generator column on every row, so the "
             "whole label column was replaced from the generator column" if corrected == checked else
             f"{corrected:,} of {checked:,} checked rows took their label from the generator column, which the "
             "label map contradicted there")
    dropped = f"; {audit['uncorrectable']:,} rows it could not correct were dropped" if audit.get("uncorrectable") else ""
    return f"label audit (label_audit: correct): {which}{dropped} ({audit.get('example', '')})"


def _data_summary(rep: dict) -> list[str]:
    if "rejected_total" in rep:  # results/dataset/filter_report.json
        reasons = ", ".join(f"{k} {v}" for k, v in rep["rejected"].items()) or "none"
        return [f"- dataset filters (Table 3): {rep['rows_in']} rows in, {rep['kept']} kept; rejected: {reasons} "
                f"(dataset card: `{SHOWN.dataset_card()}`)"]
    if "rows_per_band" in rep:  # results/dataset/dedup_report.json
        return [f"- deduplication (MinHash LSH, Jaccard >= {rep['threshold']}): {rep['rows_removed']} near duplicates "
                f"removed, {rep['pool_rows']} rows in the pool"]
    if "source" in rep:
        skipped = rep["skipped"]["counts"]
        audit = rep.get("label_audit", {})
        parts = [f"- source **{rep['source']}**: {rep['rows_in']} rows in, {rep['rows_out']} kept"]
        if skipped:
            parts.append("  - skipped: " + ", ".join(f"{k} {v}" for k, v in skipped.items()))
        if rep.get("not_sampled"):
            parts.append(f"  - left out by the configured sample size: {rep['not_sampled']}")
        if audit.get("corrected"):
            parts.append(f"  - {audit_line(audit)}")
        return parts
    sizes = ", ".join(f"{s} {v['rows']}" for s, v in rep["splits"].items())
    parts = [f"- task **{rep['task']}** ({rep['kind']}): {sizes}"]
    if rep["kind"] == "release":
        release = rep.get("release", {})
        where = "local files" if "files" in release else f"{release.get('hub')} {release.get('name') or ''} " \
            f"at revision {release.get('revision')}"
        parts.append(f"  - from {where}")
        identified = sum(v.get("identified", 0) for v in (rep.get("language_identification") or {}).values())
        if identified:
            parts.append(f"  - language identified for {identified} rows (the release has no language column)")
    if rep.get("skipped"):
        parts.append("  - skipped: " + ", ".join(f"{k} {v}" for k, v in rep["skipped"].items()))
    return parts


REPORT_HELP = """results/report.md and the tables and figures it shows: Table 4 (.tex, .md, .html),
the threshold metrics, a confusion-matrix figure per task for its best detector, the data summaries."""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report report", description=REPORT_HELP)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='JSON {"tasks": [[name, title]], "detectors": [[name, title, is_dummy]], '
                             '"provisional": {task: evidence of an unpublished label map}}')
    parser.add_argument("--scores", nargs="+", required=True, help=f"{SHOWN.scores()} files")
    parser.add_argument("--data-reports", nargs="*", default=[], help="source and split reports (JSON)")
    parser.add_argument("--tables-dir", required=True)
    parser.add_argument("--figures-dir", required=True)
    parser.add_argument("--report", required=True, help=f"output {name_of('report')}")
    parser.add_argument("--paper-section", help=f"{SHOWN.paper_results()} (Tables 5-7, figures, analyses), appended")
    parser.add_argument("--inputs", default=None, help=f"{SHOWN.inputs()}: the input fingerprint the tables carry")
    parser.add_argument("--test-set-scores", nargs="*", default=[],
                        help=f"{SHOWN.test_set_scores(test_set='{set}')}: extra test sets, one column each")
    parser.add_argument("--test-set-reports", nargs="*", default=[],
                        help=f"{SHOWN.test_set_report(test_set='{set}')}: rows removed, class balance")
    parser.add_argument("--generator-cards", nargs="*", default=[],
                        help=f"{SHOWN.generator_card('json')}: each generator's skipped prompts and dropped rows")
    parser.add_argument("--reproduction", default=None,
                        help=f"{SHOWN.tab('reproduction', 'md')}: the paper beside ours, the report's first section")
    parser.add_argument("--calibrated", nargs="*", default=[],
                        help=f"{SHOWN.calibration_view()}: the calibrated view")
    parser.add_argument("--calibration-reports", nargs="*", default=[],
                        help=f"{SHOWN.reference_report()}: each task's reference")
    args = parser.parse_args(argv)
    src = ReportInputs(args.layout, args.scores, test_set_score_files=args.test_set_scores,
                       test_set_report_files=args.test_set_reports, data_report_files=args.data_reports,
                       inputs_file=args.inputs, reproduction=args.reproduction, paper_section=args.paper_section,
                       generator_card_files=args.generator_cards,
                       calibrated_views=args.calibrated, calibration_reports=args.calibration_reports)
    write_report(src, ReportPaths(args.tables_dir, args.figures_dir, args.report))
