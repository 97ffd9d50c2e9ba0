"""The calibrated view beside Table 4 (tables/calibrated.{md,tex,html}): per task, each calibrated
detector held to per-language thresholds set on human reference code no detector of the task
trained on (aicd.splits.reference, aicd.scoring.calibrate_model), at the view's FPR (5% by
default):

- "TPR": the share of the test's machine rows flagged, each row held to its language's threshold;
- "FPR on test humans": the share of the test's human rows flagged (‡: over twice the target);
- "held-out FPR (bound)": what the reference's own held-out part says of the pooled threshold,
  its realised FPR and one-sided 95% Clopper-Pearson bound;
- "languages on the pooled threshold": the test's languages with too few reference programs
  for a threshold of their own (or none), held to the pooled one (°);
- in separate columns headed "adapted to the unlabelled test set": a two-component mixture
  threshold fitted on the test rows' own scores without their labels (aicd.scoring.transductive),
  never a threshold one can deploy before seeing the code.

Values x 100 with 95% bootstrap intervals at the thresholds held fixed (aicd.report.intervals).
A second table gives, per detector and test language, the realised FPR on that language's human
test rows (° where it was held to the pooled threshold)."""

from __future__ import annotations

import html

from tabulate import tabulate

from ..common.io import read_json
from ..scoring.calibrate_model import VIEW_FPR
from ..scoring.transductive import ADAPTED
from .intervals import SAYS, with_interval
from .latex import latex_text
from .marks import Marks, tag
from .table4 import Column, Row, latex_title, markdown_title

NOT_HELD = "‡"
POOLED = "°"
TRANSFER_FACTOR = 2.0


def read_views(paths) -> dict:
    """(detector, task) -> its view (RESULTS/calibration/TASK/DETECTOR.test.json)."""
    views = {}
    for path in paths:
        v = read_json(path)
        views[(v["detector"], v["task"])] = v
    return views


def view_confidence(views) -> float | None:
    """The confidence the views' thresholds hold their FPR with (None: on average; aicd.scoring.calibration)."""
    return next((v["fpr_confidence"] for v in views if v.get("available") and v.get("fpr_confidence") is not None),
                None)


def caption(fpr: float, confidence: float | None = None) -> str:
    pct = f"{fpr * 100:g}%"
    held = (f", held with probability {confidence:g} over the reference drawn (calibration.fpr_confidence)"
            if confidence is not None else ", held on average over the reference drawn (split-conformal)")
    return (f"Calibrated on human reference code: each test row is held to its language's threshold for {pct} FPR{held}, "
            "set on human programs that no detector of the task trained on (the task's validation humans, and "
            "library files that the dataset did not read; the reference's rows per origin and language are below). "
            f"TPR: machine rows flagged; FPR on test humans: human rows flagged ({NOT_HELD}: over twice {pct}). "
            "Held-out FPR: the reference's own held-out half at the pooled threshold, with its one-sided 95% "
            f"Clopper–Pearson bound. {POOLED}: languages with too few reference programs for a threshold of their "
            f"own, held to the pooled one. The library reference shares its packages, not its files, with the "
            "test split's library code, and the validation humans come from the test's trial collection: the realised "
            "FPR on the test's humans is measured on code like the reference's, not on a new collection "
            f"(docs/calibration.md). The last two columns are {ADAPTED}: a two-component mixture fitted to the "
            "test rows' own scores without their labels, which needs the test code first and assumes it holds both "
            f"classes; not a deployable threshold. All × 100; {SAYS}")


def _cell(value, ci, style: str) -> str:
    return with_interval(value, ci, style)


def _fpr_cell(point: dict, fpr: float, style: str) -> str:
    text = _cell(point.get("fpr"), point.get("fpr_ci"), style)
    if point.get("fpr") is not None and point["fpr"] > TRANSFER_FACTOR * fpr:
        text += "$^{\\ddagger}$" if style == "latex" else NOT_HELD
    return text


def _held_out(view: dict) -> str:
    """The reference's held-out part at the pooled threshold: realised FPR (its 95% bound)."""
    held = view.get("reference_held_out") or {}
    if held.get("realised_fpr") is None:
        return "–"
    return f"{held['realised_fpr'] * 100:.2f} (≤ {held['fpr_upper'] * 100:.2f})"


def main_rows(rows: list[Row], task: str, views: dict, style: str, marks: Marks,
              adapted_columns: bool = True) -> list[list[str]]:
    body = []
    for r in rows:
        v = views.get((r.name, task))
        if v is None:
            continue
        title = (latex_title(r.title) if style == "latex" else markdown_title(r.title)) + tag(marks.row(r.name, task),
                                                                                                 style)
        if not v.get("available"):
            body.append([title, _escape(f"not calibrated: {v.get('why')}", style), *["–"] * (5 if adapted_columns else 3)])
            continue
        fpr, point, adapted = v["fpr"], v["calibrated"], v.get("adapted") or {}
        pooled = ", ".join(v.get("pooled_languages") or []) or "none"
        cells = [title, _cell(point.get("tpr"), point.get("tpr_ci"), style), _fpr_cell(point, fpr, style),
                 _held_out(v), _escape(pooled, style)]
        if adapted_columns:
            cells += ([_cell(adapted.get("tpr"), adapted.get("tpr_ci"), style), _fpr_cell(adapted, fpr, style)]
                      if adapted.get("available") else [_escape(adapted.get("why", "not computed"), style), "–"])
        body.append(cells)
    return body


def headers(fpr: float, style: str, adapted_columns: bool = True) -> list[str]:
    sign = "\\%" if style == "latex" else "%"
    pct = f"{fpr * 100:g}{sign}"
    return ["Model", f"ref. thresholds for {pct}: TPR", f"ref. thresholds for {pct}: FPR on test humans",
            "held-out FPR (95% bound)", "languages on the pooled threshold",
            *([f"{ADAPTED}: TPR", f"{ADAPTED}: FPR on test humans"] if adapted_columns else [])]


def language_rows(rows: list[Row], task: str, views: dict, style: str) -> tuple[list[str], list[list[str]]]:
    """Per detector and test language: the realised FPR on that language's human test rows (its
    human rows in brackets), ° where the language was held to the pooled threshold."""
    languages = sorted({lang for (d, t), v in views.items() if t == task for lang in (v.get("by_language") or {})})
    body = []
    for r in rows:
        v = views.get((r.name, task))
        if not v or not v.get("available"):
            continue
        cells = [latex_title(r.title) if style == "latex" else markdown_title(r.title)]
        for lang in languages:
            entry = (v["by_language"] or {}).get(lang)
            test = (entry or {}).get("test") or {}
            if not entry or test.get("fpr") is None:
                cells.append("–")
                continue
            cells.append(f"{test['fpr'] * 100:.1f} ({test['humans']})" + (POOLED if entry["pooled"] else ""))
        body.append(cells)
    return ["Model", *languages], body


def _escape(text: str, style: str) -> str:
    return latex_text(text) if style == "latex" else html.escape(text) if style == "html" else text


def reference_line(report: dict | None) -> str:
    if not report:
        return ""
    parts = ", ".join(f"{k} {v}" for k, v in (report.get("by_origin_language") or {}).items())
    dropped = report.get("dropped") or {}
    near = sum(sum(v.values()) for k, v in dropped.items() if k.startswith("in_or_near"))
    return (f"Reference: {report.get('rows', 0)} human programs ({parts}); {near} candidates dropped as in, or near "
            "duplicates of, the task's splits.")


def render(rows: list[Row], columns: list[Column], views: dict, references: dict,
           marks: Marks | None = None) -> tuple[str, str, str]:
    """(markdown, latex, html) of every task that has a calibrated view (views: read_views);
    references: task -> its reference report (reference.report.json)."""
    marks = marks or Marks()
    md, tex, page = [], [], []
    fpr = next((v["fpr"] for v in views.values() if v.get("available")), VIEW_FPR)
    confidence = view_confidence(views.values())
    adapted = any("adapted" in v for v in views.values())
    for col in columns:
        for style, out, fmt in (("markdown", md, "github"), ("latex", tex, "latex_raw"), ("html", page, "unsafehtml")):
            body = main_rows(rows, col.name, views, style, marks, adapted)
            if not body:
                continue
            table = tabulate(body, headers=headers(fpr, style, adapted), tablefmt=fmt, disable_numparse=True)
            head, per_language = language_rows(rows, col.name, views, style)
            languages = tabulate(per_language, headers=head, tablefmt=fmt, disable_numparse=True) if per_language else ""
            ref = _escape(reference_line(references.get(col.name)), style)
            if style == "markdown":
                out += [f"### {markdown_title(col.title)}", "", table, "", ref, ""]
                if languages:
                    out += [f"Realised FPR × 100 on each language's human test rows (their number; {POOLED}: held to "
                            "the pooled threshold):", "", languages, ""]
            elif style == "latex":
                out += [f"% {col.name}", "\\begin{table}[t]\n\\centering", table,
                        f"\\caption{{{latex_title(col.title)}: {latex_text(caption(fpr, confidence))} {ref}}}",
                        f"\\label{{tab:calibrated-{col.name}}}\n\\end{{table}}", ""]
            else:
                out += [f"<h2>{html.escape(col.title)}</h2>", table, f"<p>{ref}</p>", languages]
    document = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Calibrated view</title>"
                "<style>body{font-family:sans-serif} table{border-collapse:collapse} td,th{padding:2px 10px;"
                "border-bottom:1px solid #ccc}</style></head><body>\n" + "\n".join(page)
                + f"\n<p>{html.escape(caption(fpr, confidence))}</p>\n</body></html>\n")
    return "\n".join(md), "\n".join(tex), document
