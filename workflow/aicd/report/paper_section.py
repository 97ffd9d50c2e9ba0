"""results/paper_results.md: the part of the report for the paper's later results, one sentence
per table and figure, linked; every number read from the files the other jobs wrote.

- Table 4 rows: the paper's 18 rows in its order, each matched to this configuration's detector
  (by kind and feature set, or the encoder's Hub id); a row with no scores is "not run".
- Fast-DetectGPT: scoring model, threshold (chosen on a validation sample, named with its size
  beside the one the inverted mark reads), test AUROC, and for a causal LM trained here its
  held-out loss on human and machine code (its speed stays in its record: no time is printed,
  so two runs give the same bytes).
- The zero-shot panel (kind zero_shot_lm): per task its scoring model with the pinned model's card,
  and per row its criterion, threshold sample and AUROC.
- Tables 5-7, figures, analyses (SVM n-grams, SHAP, all-fail)."""

from __future__ import annotations

import argparse
import functools
import json
import os
from pathlib import Path

from .. import published
from ..common.io import read_json, write_text
from ..common.stagecli import json_arg
from ..outputs import SHOWN, Outputs, beside, wildcards_of
from .intervals import supported_digits, with_interval
from .llm_tables import card_line
from .marks import MIN_CLASS_SUPPORT, SMALL_CLASS


def match_paper_rows(detectors: dict[str, dict]) -> list[tuple[str, str | None]]:
    """[(paper title, config detector or None)] in the paper's Table 4 order (aicd.published).
    detectors: name -> config entry."""
    matched = {row: name for name, row in published.match_detectors(detectors).items()}
    return [(r.row, matched.get(r.row)) for r in published.rows(4)]


def not_run_rows(detectors: dict[str, dict], ran: set[str]) -> list[tuple[str, str]]:
    """Paper rows with no scores here: (title, why)."""
    rows = []
    for title, name in match_paper_rows(detectors):
        if name is None:
            rows.append((title, "not in this configuration"))
        elif name not in ran:
            rows.append((title, f"configured as `{name}` but has no scores"))
    return rows


def _num(value) -> str:
    return "–" if value is None else f"{value:.4f}"


def paper_figure(key: str, kind: str | None) -> str:
    """Which of the paper's figures this one stands beside (its Figures 1-9 per task kind,
    aicd.published; Figure 3 is the data's), or that the paper has none for it."""
    if kind not in published.TASK_KINDS:
        return "not one of the paper's task kinds"
    task = published.paper_task(kind)
    number = task.figures.get(key)
    return f"the paper's Figure {number}" if number is not None else f"the paper has no such figure for {task.name}"


def fast_detectgpt_validation(rec: dict, score: dict | None) -> str:
    """Which validation rows set the threshold and which mark the detector inverted: two samples,
    each with its size and AUROC, so neither number is read for the other. rec: the detect job's
    record (results/models/{task}/{detector}.json); score: its score file."""
    fit = rec.get("fit") or {}
    rows = fit.get("threshold_rows")
    of = (rec.get("rows") or {}).get("validation")
    sample = (f"a class-stratified sample of {rows:,}" + (f" of the {of:,} validation rows" if of else " validation rows")
              if rows else f"the {fit.get('threshold_from')} split")
    text = (f"threshold {fit.get('threshold', float('nan')):.4f} chosen on {sample} (our choice: the value maximising "
            f"macro-F1 there; macro-F1 {fit.get('threshold_macro_f1', float('nan')):.4f}, AUROC "
            f"{_num(fit.get('threshold_auroc'))} on those rows)")
    m = (score or {}).get("threshold_metrics") or {}
    if m.get("validation_auroc") is not None:
        counts = m.get("validation_rows") or {}
        text += (f"; the inverted mark reads another sample, the validation scores file: every validation human row "
                 f"({counts.get('human', 0):,}, the rows the deployment thresholds are set on) and a seeded sample of "
                 f"{counts.get('other', 0):,} others, validation AUROC {m['validation_auroc']:.4f}")
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m aicd.report paper", description=__doc__)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='JSON {"detectors": {name: config entry}, "tasks": {name: title}}')
    parser.add_argument("--scores", nargs="*", default=[])
    parser.add_argument("--tables-dir", required=True)
    parser.add_argument("--figures-index", required=True)
    parser.add_argument("--analyses", nargs="*", default=[], help=SHOWN.analyses())
    parser.add_argument("--zero-shot", nargs="*", default=[],
                        help=f"{SHOWN.model_report()}: the fit reports of zero-shot detectors")
    parser.add_argument("--out", required=True)
    return parser


def main(argv=None) -> None:
    args = _parser().parse_args(argv)
    rel = functools.partial(os.path.relpath, start=Path(args.out).parent)  # links relative to the section
    dets, task_titles = args.layout["detectors"], args.layout["tasks"]
    scores = {(s["detector"], s["task"]): s for s in map(read_json, args.scores)}
    lines = ["## The paper's Tables 4-7, figures and analyses", ""]
    lines += _table4_rows(dets, ran={detector for detector, _ in scores})
    lines += _fast_detectgpt(args.zero_shot, scores, task_titles, rel)
    lines += zero_shot_panel(args.zero_shot, dets, task_titles, rel, scores)
    lines += _subset_tables(Path(args.tables_dir), rel)
    figures_at = Path(args.figures_index).parent  # the index names its figures relative to its folder
    lines += _figures(read_json(args.figures_index), task_titles, args.layout.get("kinds") or {},
                      lambda p: rel(figures_at / p))
    lines += _analyses(args.analyses, task_titles, rel)
    write_text("\n".join(lines), args.out)


def _table4_rows(dets: dict[str, dict], ran: set[str]) -> list[str]:
    """The paper's Table 4 rows not run here, and the rows here that are not the paper's."""
    lines = []
    missing = not_run_rows(dets, ran)
    if missing:
        lines += ["Table 4 rows of the paper not run in this configuration (absent from `table4.tex`):", ""]
        lines += [f"- {title}: not run ({why})" for title, why in missing] + [""]
    extra = [n for n in dets if n not in {name for _, name in match_paper_rows(dets)}]
    if extra:
        named = ", ".join(f"`{n}` ({dets[n].get('title', n)})" for n in extra)
        lines += [f"Rows here that are not the paper's: {named}.", ""]
    return lines


def _fast_detectgpt(records: list[str], scores: dict, task_titles: dict, rel) -> list[str]:
    """A paragraph per Fast-DetectGPT record among the zero-shot detectors' fit reports."""
    lines = []
    for path in records:
        rec = read_json(path)
        if rec.get("kind") != "fast_detectgpt":
            continue
        task, detector = (named := wildcards_of(path, "model_report")).task, named.detector
        fit, rep = rec.get("fit", {}), rec.get("report", {})
        lm = rep.get("scoring_lm")
        model = (f"a {lm['parameters']:,}-parameter GPT-2-style causal LM trained here on {lm['trained_on']['rows']} "
                 f"human rows of the train split (aicd.lm; held-out token loss: " +
                 ", ".join(f"{k} {v:.3f}" for k, v in (lm.get("held_out_loss") or {}).items() if v is not None) + ")"
                 ) if lm else f"`{fit.get('model')}`"
        auc = rep.get("test_auroc")
        lines += [f"**Fast-DetectGPT on {task_titles.get(task, task)}** (binarised labels where the task has more than two; "
                  f"gold classes {', '.join(rep.get('binarized_from', []))}): scoring model = sampling model = {model}; "
                  f"window {fit.get('window')} tokens; {fast_detectgpt_validation(rec, scores.get((detector, task)))}; "
                  f"test AUROC {'–' if auc is None else f'{auc:.4f}'} ([record]({rel(path)}), with its speed: a time, "
                  "kept out of the report so that two runs of the same inputs give the same bytes).", ""]
    return lines


def panel_auroc(value, ci, smaller: int | None) -> str:
    """An AUROC on the 0-1 scale to the decimal `smaller` (its smaller class's rows) supports, with
    its interval; § where that class has fewer than MIN_CLASS_SUPPORT rows."""
    if value is None:
        return "–"
    text = with_interval(value, ci, scale=1.0, digits=supported_digits(smaller, scale=1.0, most=4))
    return text + (f" {SMALL_CLASS}" if smaller is not None and smaller < MIN_CLASS_SUPPORT else "")


def auroc_on_test(rec: dict, score: dict | None) -> str:
    """The panel's test AUROC: the score file's (with its 95% bootstrap interval, human against the
    rest) where there is one, else the detector's record (no interval: printed to what half its
    rows would support)."""
    metrics = (score or {}).get("threshold_metrics") or {}
    if metrics.get("auroc") is not None:
        humans = int(((score.get("per_class") or {}).get("human") or {}).get("support", 0))
        return panel_auroc(metrics["auroc"], metrics.get("auroc_ci"), min(humans, int(score.get("n", 0)) - humans))
    rep = rec.get("report") or {}
    return panel_auroc(rep.get("test_auroc"), None, (rep.get("test_rows") or 0) // 2 or None)


def zero_shot_panel(records: list[str], dets: dict[str, dict], task_titles: dict, rel,
                    scores: dict | None = None) -> list[str]:
    """Per task and scoring model (the lm_stats feature set the rows read), the zero-shot
    panel's rows (kind zero_shot_lm) in one table: which model (its card where it is a pinned
    model), on how many validation rows each threshold was set and how many test rows its cells
    cover, and each criterion's AUROC on both, printed to the decimal its rows support
    (aicd.report.intervals.supported_digits), the test AUROC with its interval (the score file,
    `scores`: (detector, task) -> score file)."""
    panels: dict[tuple[str, str], list[tuple[str, dict]]] = {}
    for path in records:
        rec = read_json(path)
        if rec.get("kind") == "zero_shot_lm":
            features = rec.get("features") or {}
            key = json.dumps([features.get("name"), features.get("params")], sort_keys=True, default=str)
            panels.setdefault((wildcards_of(path, "model_report").task, key), []).append((path, rec))
    lines = []
    for (task, _), rows in panels.items():
        lines += _panel_heading(task_titles.get(task, task), rows[0][1].get("features") or {})
        for path, rec in rows:
            fit, rep = rec.get("fit") or {}, rec.get("report") or {}
            name = wildcards_of(path, "model_report").detector
            half = (fit.get("threshold_rows") or 0) // 2 or None  # the record keeps no class counts: at best half each
            lines.append(f"| {dets.get(name, {}).get('title', name)} | {fit.get('criterion', '–')} | "
                         f"{fit.get('threshold_rows', '–')} | {panel_auroc(fit.get('threshold_auroc'), None, half)} | "
                         f"{rep.get('test_rows', '–')} | {auroc_on_test(rec, (scores or {}).get((name, task)))} |")
        aurocs = [(rec.get("fit") or {}).get("threshold_auroc") for _, rec in rows]
        if any(a is not None and a < 0.5 for a in aurocs):
            lines += ["", "A validation AUROC below 0.5: the criterion ranks human code as the more machine-like "
                      "here, and the row is marked inverted in Table 4 (docs/paper_results.md, \"The zero-shot "
                      "panel\", says what was measured of why)."]
        lines.append("")
    return lines


def _panel_heading(task_title: str, features: dict) -> list[str]:
    params = features.get("params") or {}
    model = card_line(features["model_card"]) if features.get("model_card") else f"`{params.get('model')}`"
    reference = f"; reference model `{params['reference_model']}`" if params.get("reference_model") else ""
    return [f"**The zero-shot panel on {task_title}** (nothing learned but a threshold; labels "
            f"binarised): scoring model {model}{reference}; window {params.get('window')} tokens. Each "
            "threshold is the value maximising macro-F1 on the validation rows the feature set scored; where "
            "it scored a sample of the test split, the row's cells cover that sample (the size is printed with "
            "the cell). AUROC on a 0–1 scale, printed to the decimal its rows support (the last digit is the first "
            "that 1/√n leaves in doubt, n: the smaller class's rows; for the validation sample, whose record keeps no "
            "class counts, half its rows, the most it could support); the test AUROC with its 95% bootstrap interval "
            f"(human against the rest, the score file's); {SMALL_CLASS}: a class under {MIN_CLASS_SUPPORT} rows.", "",
            "| row | criterion | validation rows (threshold) | validation AUROC (0–1) | test rows | "
            "test AUROC (0–1) [95% CI] |",
            "|---|---|---:|---:|---:|---:|"]


def _subset_tables(tables: Path, rel) -> list[str]:
    """Tables 5-7 embedded, each linked to its LaTeX."""
    lines = []
    for task in published.PAPER_TASKS:
        n = task.subset_table
        what = f"{task.name} macro-F1 {published.table(n)['measures']}, averaged over the paper's trained rows ± std"
        md = Path(beside(tables, "tab", f"table{n}", "md"))
        if md.is_file():
            lines += [f"### Table {n}", "", f"{what} ([LaTeX]({rel(beside(tables, 'tab', f'table{n}', 'tex'))})).", "",
                      md.read_text(), ""]
    return lines


FIGURE_SENTENCES = {
    "confusion_best": "row-normalised confusion matrix (%) of the best trained detector",
    "confusion_all": "row-normalised confusion matrices (%) of every detector",
    "language": "macro-F1 per language for every detector (hatched: the language's test rows hold one class)",
    "subsets": "macro-F1 per test subset for every detector; hatched bars are one-class subsets' recall"}
DATA_FIGURES = (("data_distribution.", "distribution of code properties per label (Figure 3)"),
                ("data_distribution_language.", "the same per language"))


def _figures(index: dict, task_titles: dict, kinds: dict, rel) -> list[str]:
    """A line per task and figure of the figures index (PNG and PDF linked), then the data's figures."""
    lines = ["### Figures", ""]
    for task, entry in index.get("tasks", {}).items():
        for key, sentence in FIGURE_SENTENCES.items():
            paths = entry.get(key)
            if key == "confusion_best" and entry.get("best_basis", "macro-F1") != "macro-F1":
                sentence = f"row-normalised confusion matrix (%) of the trained detector with the highest {entry['best_basis']}"
            if paths:
                png = next(p for p in paths if p.endswith(".png"))
                pdf = next(p for p in paths if p.endswith(".pdf"))
                lines.append(f"- {task_titles.get(task, task)}: {sentence} ({paper_figure(key, kinds.get(task))}): "
                             f"[PNG]({rel(png)}), [PDF]({rel(pdf)})")
    data = index.get("data") or []
    for stem, sentence in DATA_FIGURES:
        got = [p for p in data if Path(p).name.startswith(stem)]
        if got:
            lines.append(f"- Data: {sentence}: " + ", ".join(f"[{Path(p).suffix[1:].upper()}]({rel(p)})" for p in got))
    return [*lines, ""]


def _analyses(summaries: list[str], task_titles: dict, rel) -> list[str]:
    """A line per analysis of each task's summary (SVM n-grams, SHAP, all-fail rows)."""
    lines = ["### Analyses", ""] if summaries else []
    for path in summaries:
        s = read_json(path)
        folder = Path(path).parent
        title = task_titles.get(s["task"], s["task"])
        if s.get("svm"):
            lines.append(f"- {title}: top n-grams per class of the TF-IDF SVM, back-projected through the SVD "
                         f"(Appendix D.1): [{rel(folder / s['svm'])}]({rel(folder / s['svm'])})")
        for det, md in (s.get("shap") or {}).items():
            fig = Outputs(wildcards_of(path, "analyses").root).shap_figure("png", s["task"], det)
            lines.append(f"- {title}: mean |SHAP| per feature of `{det}` (CatBoost's SHAP values): "
                         f"[table]({rel(folder / md)}), [figure]({rel(fig)})")
        af = s.get("all_fail")
        if af:
            lines.append(f"- {title}: {af['all_wrong']} of {af['of']} test rows are wrong for every averaged detector "
                         "(the paper's trained rows, as in Tables 5-7), "
                         f"counted by language, generator, label and subset with the shortest examples: "
                         f"[{rel(folder / af['file'])}]({rel(folder / af['file'])})")
    return [*lines, ""]
