"""The threshold-metrics table beside Table 4: per task, each detector that gives scores with its
AUROC (human against the rest) and, at each FPR on human code, first the FPR its threshold
really had on the test's humans, then the TPR there, the threshold set on the validation
split's human rows. Every value x 100 with the half-width of its 95% bootstrap interval (TPR and
FPR: the validation humans resampled too, so the threshold's own uncertainty is in it).

A threshold that cannot stand for its FPR shows why instead of a number; a realised FPR over
twice the nominal one is marked, and where (subset, language, domain) it happens is listed
below the table; an inverted detector (validation AUROC < 50) and scores that are margins are
marked on the detector's name."""

from __future__ import annotations

import html

from tabulate import tabulate

from .latex import latex_text
from .marks import Marks, tag
from .table4 import Column, Row, latex_title, markdown_title

NOT_TRANSFERRED = "‡"
CAPTION = ("AUROC (human vs. the rest) and, at each nominal false-positive rate on human code, the FPR the threshold "
           "realised on the test's human rows and the TPR (machine code caught) there, all × 100. Thresholds are "
           "set on the validation split's human rows. ± is the half-width of the 95% bootstrap interval; for FPR "
           "and TPR it resamples the validation human rows as well as the test rows, so it includes the "
           "threshold's own uncertainty (the score file also keeps the interval with the threshold fixed, "
           "`tpr_ci`). ‡: the realised FPR is over twice the nominal one: the threshold does not transfer to the "
           "test's humans (where, below). A cell with a reason instead of a value: the threshold cannot stand for "
           "that FPR (the full reason is in the score file, `unreliable`).")


def _value(value, ci, style: str) -> str:
    if value is None:
        return "–"
    text = f"{value * 100:.2f}"
    if ci:
        text += (" $\\pm$ " if style == "latex" else " ± ") + f"{(ci[1] - ci[0]) * 50:.2f}"
    return text


def fprs_of(scores: dict) -> list[str]:
    keys = set()
    for s in scores.values():
        keys |= set((s.get("threshold_metrics") or {}).get("at_fpr") or {})
    return sorted(keys, key=float)


def _escape(text: str, style: str) -> str:
    return latex_text(text) if style == "latex" else html.escape(text) \
        if style == "html" else text


def _at_cells(at: dict | None, style: str) -> list[str]:
    """[realised FPR, TPR] of one nominal FPR."""
    if at is None:
        return ["no threshold", "–"]
    problem = at.get("unreliable")
    if problem:
        return [_escape(problem["short"], style), "n/a"]
    fpr = _value(at.get("fpr"), at.get("fpr_ci_with_threshold"), style)
    if at.get("transfers") is False:
        fpr += "$^{\\ddagger}$" if style == "latex" else NOT_TRANSFERRED
    return [fpr, _value(at.get("tpr"), at.get("tpr_ci_with_threshold"), style)]


def task_rows(rows: list[Row], task: str, scores: dict, fprs: list[str], style: str,
              marks: Marks | None = None) -> list[list[str]]:
    body = []
    for r in rows:
        s = scores.get((r.name, task))
        if s is None:
            continue
        m = s.get("threshold_metrics") or {}
        title = latex_title(r.title) if style == "latex" else markdown_title(r.title)
        title += tag((marks or Marks()).row(r.name, task), style)
        if not m.get("available"):
            body.append([title, "no scores", *["–"] * (2 * len(fprs))])
            continue
        cells = [title, _value(m.get("auroc"), m.get("auroc_ci"), style)]
        for key in fprs:
            cells += _at_cells((m.get("at_fpr") or {}).get(key), style)
        body.append(cells)
    return body


def headers(fprs: list[str], style: str) -> list[str]:
    pct = "\\%" if style == "latex" else "%"
    out = ["Model", "AUROC"]
    for k in fprs:
        nominal = f"{float(k) * 100:g}{pct}"
        out += [f"FPR realised @ {nominal}", f"TPR @ {nominal} FPR"]
    return out


SHOWN_PLACES = 6  # groups named per row of the transfer table; the score file has them all


def transfer_rows(rows: list[Row], task: str, scores: dict, style: str) -> list[list[str]]:
    """Model, nominal FPR, where (worst first, realised FPR x 100 and human rows): every place a
    threshold does not transfer."""
    out = []
    pct = "\\%" if style == "latex" else "%"
    for r in rows:
        m = (scores.get((r.name, task)) or {}).get("threshold_metrics") or {}
        for key, places in sorted((m.get("not_transferred") or {}).items(), key=lambda kv: float(kv[0])):
            if ((m.get("at_fpr") or {}).get(key) or {}).get("unreliable"):
                continue  # its cell already says why the threshold cannot stand
            title = latex_title(r.title) if style == "latex" else markdown_title(r.title)
            named = [f"{p['value'] if p['by'] == 'all' else p['by'] + ' ' + p['value']} {p['fpr'] * 100:.1f}% "
                     f"of {p['humans']}" for p in places[:SHOWN_PLACES]]
            if len(places) > SHOWN_PLACES:
                named.append(f"{len(places) - SHOWN_PLACES} more in the score file")
            out.append([title, f"{float(key) * 100:g}{pct}", _escape("; ".join(named), style)])
    return out


TRANSFER_HEADERS = ["Model", "nominal FPR", "where it does not transfer: realised FPR of the human rows there"]


def render(rows: list[Row], columns: list[Column], scores: dict, marks: Marks | None = None) -> tuple[str, str, str]:
    """(markdown, latex, html) of every task that has scores."""
    fprs = fprs_of(scores)
    marks = marks or Marks()
    md, tex, page = [], [], []
    for col in columns:
        for style, out, fmt in (("markdown", md, "github"), ("latex", tex, "latex_raw"), ("html", page, "unsafehtml")):
            body = task_rows(rows, col.name, scores, fprs, style, marks)
            if not body:
                continue
            table = tabulate(body, headers=headers(fprs, style), tablefmt=fmt, disable_numparse=True,
                             colalign=("left", *["right"] * (2 * len(fprs) + 1)))
            legend = marks.legend([r.name for r in rows], col.name, style)
            moved = transfer_rows(rows, col.name, scores, style)
            moved_table = tabulate(moved, headers=TRANSFER_HEADERS, tablefmt=fmt, disable_numparse=True) if moved else ""
            if style == "markdown":
                out += [f"### {markdown_title(col.title)}", "", table, "", *([legend, ""] if legend else [])]
                if moved:
                    out += [f"{NOT_TRANSFERRED} Where the threshold does not transfer (realised FPR over twice the "
                            "nominal one):", "", moved_table, ""]
            elif style == "latex":
                caption = CAPTION.replace("%", "\\%").replace("±", "$\\pm$").replace("‡", "$^{\\ddagger}$")
                out += [f"% {col.name}", "\\begin{table}[t]\n\\centering", table,
                        f"\\caption{{{latex_title(col.title)}: {caption} {legend}}}",
                        f"\\label{{tab:thresholds-{col.name}}}\n\\end{{table}}", ""]
                if moved:
                    out += ["\\begin{table}[t]\n\\centering", moved_table,
                            f"\\caption{{{latex_title(col.title)}: where the threshold does not transfer (realised "
                            "FPR over twice the nominal one).}", f"\\label{{tab:thresholds-transfer-{col.name}}}\n"
                            "\\end{table}", ""]
            else:
                out += [f"<h2>{html.escape(col.title)}</h2>", table, *([f"<p>{legend}</p>"] if legend else [])]
                if moved:
                    out += [f"<p>{NOT_TRANSFERRED} Where the threshold does not transfer (realised FPR over twice "
                            "the nominal one):</p>", moved_table]
    document = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Threshold metrics</title>"
                "<style>body{font-family:sans-serif} table{border-collapse:collapse} td,th{padding:2px 10px;"
                "border-bottom:1px solid #ccc}</style></head><body>\n" + "\n".join(page)
                + f"\n<p>{html.escape(CAPTION)}</p>\n</body></html>\n")
    return "\n".join(md), "\n".join(tex), document
