"""report.md with Table 4 (LaTeX, Markdown, HTML), the threshold metrics beside it (AUROC, TPR at
a fixed FPR on human code: thresholds.{md,tex,html}), a confusion-matrix figure per task for its best
detector, the extra test sets, the subsets, the data summaries and the input fingerprint.
`python -m aicd.report` is the command line."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..fingerprint import stamp
from ..io import read_json, write_text
from ..stagecli import json_arg
from . import threshold_table
from .data_block import data_block
from .figures import confusion_figure
from .marks import MIN_CLASS_SUPPORT, SMALL_CLASS, Marks
from .subsets import subset_section
from .table4 import Column, Row, markdown_title, plain_title, render, render_html, with_inputs
from .test_sets import test_set_section


def write_report(layout: dict, score_files: list[str], tables_dir: str, figures_dir: str, report: str,
                 data_report_files: list[str] = (), paper_section: str | None = None,
                 inputs_file: str | None = None, test_set_score_files: list[str] = (),
                 test_set_report_files: list[str] = (), reproduction: str | None = None) -> None:
    """Write table4.{tex,md,html} to `tables_dir`, the confusion figures to `figures_dir` and
    `report` (report.md), which opens with `reproduction` (the paper beside ours). `layout`:
    {"tasks": [[name, title]], "detectors": [[name, title, is_dummy]], "test_sets": [[task, set,
    title]], "provisional": {task: evidence}, "paper_rows": {detector: the paper's row}}."""
    inputs = read_json(inputs_file) if inputs_file else None

    columns = [Column(n, t) for n, t in layout["tasks"]]
    task_columns = list(columns)  # confusion figures and subset sections are per task
    rows = [Row(n, t, bool(d)) for n, t, d in layout["detectors"]]
    all_scores = {}
    for path in score_files:
        s = read_json(path)
        all_scores[(s["detector"], s["task"])] = s
    # an extra test set is a column of its own, keyed "task·set" (its scores' folder names the set)
    set_titles = {(t, s): title for t, s, title in layout.get("test_sets") or []}
    task_titles = dict(layout["tasks"])
    for t, s in set_titles:
        columns.append(Column(f"{t}·{s}", f"{task_titles.get(t, t)} · {set_titles[(t, s)]}"))
    for path in test_set_score_files:
        sc = read_json(path)
        all_scores[(sc["detector"], f"{sc['task']}·{Path(path).parent.name}")] = sc
    f1 = {k: v["macro_f1"] for k, v in all_scores.items() if v.get("macro_f1") is not None}
    rows = [r for r in rows if any((r.name, c.name) in f1 for c in columns)]  # not run: listed in report.md
    paper_rows = layout.get("paper_rows")
    tags = Marks.from_scores(all_scores, ours=set() if paper_rows is None else
                             {r.name for r in rows if r.name not in paper_rows})
    latex, markdown = with_inputs(*render(rows, columns, f1, tags=tags), inputs)
    # report.md shows each cell's 95% bootstrap interval (score JSON `macro_f1_ci`) as ± half-width
    ci = {k: tuple(v["macro_f1_ci"]) for k, v in all_scores.items() if k in f1 and v.get("macro_f1_ci")}
    _, markdown_ci = with_inputs(*render(rows, columns, f1, intervals=ci, tags=tags), inputs)
    tables = Path(tables_dir)
    write_text(latex, tables / "table4.tex")
    write_text(markdown, tables / "table4.md")
    write_text(render_html(rows, columns, f1, ci, stamp=stamp(inputs) if inputs else "", tags=tags),
               tables / "table4.html")
    thresholds_md, thresholds_tex, thresholds_html = threshold_table.render(rows, columns, all_scores, tags)
    write_text(thresholds_md, tables / "thresholds.md")
    write_text(thresholds_tex, tables / "thresholds.tex")
    write_text(thresholds_html, tables / "thresholds.html")

    report_dir = Path(report).parent
    rel = lambda p: os.path.relpath(p, report_dir)  # noqa: E731
    data_reports = [read_json(path) for path in data_report_files]
    task_reports = {r["task"]: r for r in data_reports if "task" in r and "splits" in r}
    lines = ["# AICD Bench results", "",
             *data_block(task_reports, {c.name: c.title for c in task_columns}, layout.get("task_modes") or {})]
    if reproduction:
        repro = Path(reproduction)
        lines += [repro.read_text().rstrip(), "",
                  f"Also as [HTML]({rel(repro.with_suffix('.html'))}), [LaTeX]({rel(repro.with_suffix('.tex'))}) and "
                  f"[JSON]({rel(repro.with_suffix('.json'))}); figures: "
                  + ", ".join(f"[{c.title}]({rel(Path(figures_dir) / f'reproduction_{c.name}.png')})"
                              for c in task_columns if (Path(figures_dir) / f"reproduction_{c.name}.png").is_file())
                  + ".", ""]
    lines += _inputs_head(inputs, rel(inputs_file) if inputs_file else "")
    lines += ["## Table 4: macro-F1 × 100", "", markdown_ci,
              f"LaTeX: [{rel(tables / 'table4.tex')}]({rel(tables / 'table4.tex')})", "",
              *class_support_section(all_scores, task_columns),
              "## Threshold metrics: AUROC and TPR at a fixed FPR on human code (× 100)", "",
              threshold_table.CAPTION, "", thresholds_md,
              f"LaTeX: [{rel(tables / 'thresholds.tex')}]({rel(tables / 'thresholds.tex')})", "",
              "## Confusion matrices", ""]
    titles = {r.name: r.title for r in rows}
    dummies = {r.name for r in rows if r.dummy}
    best = {}  # task -> its best trained detector (a dummy only where nothing else has scores)
    for col in task_columns:
        candidates = [(v, d) for (d, t), v in f1.items() if t == col.name]
        trained = [c for c in candidates if c[1] not in dummies] or candidates
        if trained:
            best[col.name] = max(trained)
    for col in task_columns:
        if col.name not in best:
            lines.append(f"- {col.title}: no scores")
            continue
        value, name = best[col.name]
        stem = Path(figures_dir) / f"confusion_{col.name}"
        confusion_figure(all_scores[(name, col.name)], f"{col.title}: {plain_title(titles.get(name, name))} (macro-F1 {value * 100:.2f})",
                         f"{stem}.pdf", f"{stem}.png")
        lines += [f"### {col.title}: best trained detector {markdown_title(titles.get(name, name))} "
                  f"(macro-F1 {value * 100:.2f}, n = {all_scores[(name, col.name)]['n']})", "",
                  f"![confusion matrix]({rel(f'{stem}.png')}) ([PDF]({rel(f'{stem}.pdf')}))", ""]
    lines += test_set_section([read_json(path) for path in test_set_report_files], task_titles)
    best_scores = {t: (markdown_title(titles.get(d, d)), all_scores[(d, t)]) for t, (_, d) in best.items()}
    lines += subset_section(task_reports, {c.name: c.title for c in task_columns}, best_scores,
                            layout.get("provisional") or {})
    lines += ["## Data", ""]
    for rep in data_reports:
        lines += _data_summary(rep)
    lines += ["", "Per-detector scores (per-class, per-subset, per-language): `results/scores/{task}/{detector}.json`.", ""]
    if inputs:
        lines += ["## Inputs", "", f"Fingerprint `{inputs['fingerprint']}` over {len(inputs['inputs'])} inputs "
                  "(`aicd verify RESULTS_A RESULTS_B` compares two runs):", ""]
        lines += [f"- {_input_line(k, v)}" for k, v in inputs["inputs"].items()] + [""]
    if paper_section:
        lines += ["", Path(paper_section).read_text()]
    write_text("\n".join(lines), report)


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
    lines = [f"Inputs `{inputs['fingerprint']}`, code `{inputs.get('code')}` ([inputs.json]({link}); list below).", ""]
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
                "(dataset card: `results/dataset/README.md`)"]
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


TABLE4_HELP = """Table 4 (.tex, .md), a confusion-matrix figure per task for its best detector, and
report.md linking them with the data summaries."""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report table4", description=TABLE4_HELP)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='JSON {"tasks": [[name, title]], "detectors": [[name, title, is_dummy]], '
                             '"provisional": {task: evidence of an unpublished label map}}')
    parser.add_argument("--scores", nargs="+", required=True, help="results/scores/{task}/{detector}.json files")
    parser.add_argument("--data-reports", nargs="*", default=[], help="source and split reports (JSON)")
    parser.add_argument("--tables-dir", required=True)
    parser.add_argument("--figures-dir", required=True)
    parser.add_argument("--report", required=True, help="output report.md")
    parser.add_argument("--paper-section", help="results/paper_results.md (Tables 5-7, figures, analyses), appended")
    parser.add_argument("--inputs", default=None, help="results/inputs.json: the input fingerprint the tables carry")
    parser.add_argument("--test-set-scores", nargs="*", default=[],
                        help="results/scores/{task}/test_sets/{set}/{detector}.json: extra test sets, one column each")
    parser.add_argument("--test-set-reports", nargs="*", default=[],
                        help="results/tasks/{task}/test_sets/{set}.report.json: rows removed, class balance")
    parser.add_argument("--reproduction", default=None,
                        help="results/tables/reproduction.md: the paper beside ours, the report's first section")
    args = parser.parse_args(argv)
    write_report(args.layout, args.scores, args.tables_dir, args.figures_dir, args.report,
                 data_report_files=args.data_reports, paper_section=args.paper_section, inputs_file=args.inputs,
                 test_set_score_files=args.test_set_scores, test_set_report_files=args.test_set_reports,
                 reproduction=args.reproduction)
