"""The threshold-metrics table beside Table 4: per task, each detector that gives scores with its
AUROC (human against the rest) and, at each FPR on human code, the TPR and the FPR it really
had on the test rows, the threshold set on the validation split's human rows. Every value x 100
with the half-width of its 95% bootstrap interval; a detector without scores says so."""

from __future__ import annotations

import html

from tabulate import tabulate

from .table4 import Column, Row, latex_title, markdown_title

CAPTION = ("AUROC (human vs. the rest) and TPR at a fixed FPR on human code, thresholds set on the validation "
           "split's human rows; realised test FPR in parentheses. ± is the half-width of the 95% bootstrap interval.")


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


def task_rows(rows: list[Row], task: str, scores: dict, fprs: list[str], style: str) -> list[list[str]]:
    body = []
    for r in rows:
        s = scores.get((r.name, task))
        if s is None:
            continue
        m = s.get("threshold_metrics") or {}
        title = latex_title(r.title) if style == "latex" else markdown_title(r.title)
        if not m.get("available"):
            body.append([title, "no scores", *["–"] * len(fprs)])
            continue
        cells = [title, _value(m.get("auroc"), m.get("auroc_ci"), style)]
        for key in fprs:
            at = (m.get("at_fpr") or {}).get(key)
            cells.append("no threshold" if at is None else
                         f"{_value(at['tpr'], at['tpr_ci'], style)} ({_value(at['fpr'], None, style)})")
        body.append(cells)
    return body


def headers(fprs: list[str], style: str) -> list[str]:
    pct = "\\%" if style == "latex" else "%"
    return ["Model", "AUROC", *[f"TPR @ {float(k) * 100:g}{pct} FPR" for k in fprs]]


def render(rows: list[Row], columns: list[Column], scores: dict) -> tuple[str, str, str]:
    """(markdown, latex, html) of every task that has scores."""
    fprs = fprs_of(scores)
    md, tex, page = [], [], []
    for col in columns:
        for style, out, fmt in (("markdown", md, "github"), ("latex", tex, "latex_raw"), ("html", page, "unsafehtml")):
            body = task_rows(rows, col.name, scores, fprs, style)
            if not body:
                continue
            table = tabulate(body, headers=headers(fprs, style), tablefmt=fmt, disable_numparse=True,
                             colalign=("left", *["right"] * (len(fprs) + 1)))
            if style == "markdown":
                out += [f"### {markdown_title(col.title)}", "", table, ""]
            elif style == "latex":
                out += [f"% {col.name}", "\\begin{table}[t]\n\\centering", table,
                        f"\\caption{{{latex_title(col.title)}: {CAPTION.replace('%', chr(92) + '%')}}}",
                        f"\\label{{tab:thresholds-{col.name}}}\n\\end{{table}}", ""]
            else:
                out += [f"<h2>{html.escape(col.title)}</h2>", table]
    document = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Threshold metrics</title>"
                "<style>body{font-family:sans-serif} table{border-collapse:collapse} td,th{padding:2px 10px;"
                "border-bottom:1px solid #ccc}</style></head><body>\n" + "\n".join(page)
                + f"\n<p>{html.escape(CAPTION)}</p>\n</body></html>\n")
    return "\n".join(md), "\n".join(tex), document
