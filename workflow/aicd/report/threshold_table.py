"""The threshold-metrics table beside Table 4: per task, each detector that gives scores with its
AUROC (human against the rest) and the TPR at each fixed FPR on human code in two views, each
headed for what it is (aicd.scoring.thresholds):

- "TPR @ 1% FPR": the ROC operating point, the TPR where the test humans' own FPR is at most 1%
  (the field's definition, RAID's): "unreachable" with the reason where no threshold gets there;
- "val. threshold for 1%: FPR on test" and "…: TPR": the deployment view, the threshold set on
  the validation split's human rows and applied to test, with the FPR it realises on the test's
  humans and the TPR there (‡: that FPR is over twice the nominal one; where, below the table);
- "ref. thresholds for 5%: FPR on test" and "…: TPR", where the run calibrated the detector: each
  test row held to its language's threshold set on human reference code (the calibrated view,
  aicd.report.calibrated_view, which has the details: pooled languages, the held-out bound, the
  threshold adapted to the unlabelled test set).

Every value x 100 with its 95% bootstrap interval (aicd.report.intervals: ± where symmetric,
[low, high] where not; deployment view: the validation humans resampled too, so the threshold's
own uncertainty is in it). A deployment threshold that cannot stand for its FPR shows why
instead of a number; an inverted detector (validation AUROC < 50) and scores that are margins
are marked on the detector's name."""

from __future__ import annotations

import html

from tabulate import tabulate

from .intervals import SAYS, with_interval
from .latex import latex_text
from .marks import Marks, tag
from .table4 import Column, Row, latex_title, markdown_title

NOT_TRANSFERRED = "‡"
CAPTION = ("AUROC (human vs. the rest) and the TPR (machine code caught) at each fixed false-positive rate on human "
           "code, in two views, all × 100. TPR @ 1% FPR: the ROC operating point, the threshold set on the test rows "
           "so that at most 1% of the test's human rows score above it (the field's definition, as RAID's evaluation "
           "computes it); \"unreachable\" where ties or too few humans leave no threshold between 0 and 1% FPR, and "
           "(at x% FPR) where ties hold the test FPR under half the target. Val. threshold for 1%: the deployment "
           "view, the threshold set for 1% FPR on the validation split's human rows and applied to test, with the FPR "
           "it realises on the test's human rows and the TPR there; its interval resamples the validation human rows "
           "as well as the test rows, so it includes the threshold's own uncertainty (the score file also keeps the "
           "interval with the threshold fixed, `tpr_ci`). " + SAYS + " ‡: the realised FPR is over twice the nominal "
           "one: the validation threshold does not transfer to the test's humans (where, below). A deployment cell "
           "with a reason instead of a value: the threshold cannot stand for that FPR (the full reason is in the "
           "score file, `unreliable`). Ref. thresholds for x%, where the run calibrated the detector: each test row "
           "held to its language's threshold set on human reference code that no detector of the task trained on "
           "(the calibrated view below: ° languages with too few reference programs held to the pooled threshold).")


def _value(value, ci, style: str) -> str:
    return with_interval(value, ci, style)


def fprs_of(scores: dict) -> list[str]:
    keys = set()
    for s in scores.values():
        m = s.get("threshold_metrics") or {}
        keys |= set(m.get("roc_at_fpr") or {}) | set(m.get("deployment_at_fpr") or {})
    return sorted(keys, key=float)


def _escape(text: str, style: str) -> str:
    return latex_text(text) if style == "latex" else html.escape(text) \
        if style == "html" else text


def _deployment_cells(at: dict | None, style: str) -> list[str]:
    """[FPR realised on test, TPR] of the validation threshold for one nominal FPR."""
    if at is None:
        return ["no threshold", "–"]
    problem = at.get("unreliable")
    if problem:
        return [_escape(problem["short"], style), "n/a"]
    fpr = _value(at.get("fpr"), at.get("fpr_ci_with_threshold"), style)
    if at.get("transfers") is False:
        fpr += "$^{\\ddagger}$" if style == "latex" else NOT_TRANSFERRED
    return [fpr, _value(at.get("tpr"), at.get("tpr_ci_with_threshold"), style)]


def roc_cell(point: dict | None, fpr: float, style: str) -> str:
    """The ROC operating point's TPR, or why it is unreachable; (at x% FPR) where ties hold the
    test FPR under half the target."""
    if point is None:
        return "–"
    if not point.get("reachable"):
        return _escape((point.get("unreachable") or {}).get("short", "unreachable"), style)
    text = _value(point["tpr"], point.get("tpr_ci"), style)
    if point["fpr"] < fpr / 2:
        pct = "\\%" if style == "latex" else "%"
        text += f" (at {point['fpr'] * 100:.2f}{pct} FPR)"
    return text


def calibrated_cells(view: dict | None, style: str) -> list[str]:
    """[FPR on test, TPR] of the per-language reference thresholds (the calibrated view)."""
    if not view or not view.get("available"):
        return ["not calibrated" if view else "–", "–"]
    point = view["calibrated"]
    fpr = _value(point.get("fpr"), point.get("fpr_ci"), style)
    if point.get("fpr") is not None and point["fpr"] > 2 * view["fpr"]:
        fpr += "$^{\\ddagger}$" if style == "latex" else NOT_TRANSFERRED
    if view.get("pooled_languages"):
        fpr += "°"
    return [fpr, _value(point.get("tpr"), point.get("tpr_ci"), style)]


def task_rows(rows: list[Row], task: str, scores: dict, fprs: list[str], style: str,
              marks: Marks | None = None, calibrated: dict | None = None) -> list[list[str]]:
    body = []
    for r in rows:
        s = scores.get((r.name, task))
        if s is None:
            continue
        m = s.get("threshold_metrics") or {}
        title = latex_title(r.title) if style == "latex" else markdown_title(r.title)
        title += tag((marks or Marks()).row(r.name, task), style)
        extra = calibrated_cells((calibrated or {}).get((r.name, task)), style) if calibrated else []
        if not m.get("available"):
            body.append([title, "no scores", *["–"] * (3 * len(fprs) + len(extra))])
            continue
        cells = [title, _value(m.get("auroc"), m.get("auroc_ci"), style)]
        cells += [roc_cell((m.get("roc_at_fpr") or {}).get(key), float(key), style) for key in fprs]
        for key in fprs:
            cells += _deployment_cells((m.get("deployment_at_fpr") or {}).get(key), style)
        body.append(cells + extra)
    return body


def headers(fprs: list[str], style: str, calibrated_fpr: float | None = None) -> list[str]:
    """"TPR @ 1% FPR" heads the ROC operating point only; the deployment view says it is the
    validation threshold's, the calibrated one the reference thresholds'."""
    pct = "\\%" if style == "latex" else "%"
    nominal = [f"{float(k) * 100:g}{pct}" for k in fprs]
    out = ["Model", "AUROC", *[f"TPR @ {n} FPR" for n in nominal]]
    for n in nominal:
        out += [f"val. threshold for {n}: FPR on test", f"val. threshold for {n}: TPR"]
    if calibrated_fpr is not None:
        n = f"{calibrated_fpr * 100:g}{pct}"
        out += [f"ref. thresholds for {n}: FPR on test", f"ref. thresholds for {n}: TPR"]
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
            if ((m.get("deployment_at_fpr") or {}).get(key) or {}).get("unreliable"):
                continue  # its cell already says why the threshold cannot stand
            title = latex_title(r.title) if style == "latex" else markdown_title(r.title)
            named = [f"{p['value'] if p['by'] == 'all' else p['by'] + ' ' + p['value']} {p['fpr'] * 100:.1f}% "
                     f"of {p['humans']}" for p in places[:SHOWN_PLACES]]
            if len(places) > SHOWN_PLACES:
                named.append(f"{len(places) - SHOWN_PLACES} more in the score file")
            out.append([title, f"{float(key) * 100:g}{pct}", _escape("; ".join(named), style)])
    return out


TRANSFER_HEADERS = ["Model", "nominal FPR", "where the validation threshold does not transfer: realised FPR of the "
                    "human rows there"]


def render(rows: list[Row], columns: list[Column], scores: dict, marks: Marks | None = None,
           calibrated: dict | None = None) -> tuple[str, str, str]:
    """(markdown, latex, html) of every task that has scores; calibrated: (detector, task) -> its
    calibrated view (aicd.report.calibrated_view.read_views), two more columns where given."""
    fprs = fprs_of(scores)
    marks = marks or Marks()
    calibrated_fpr = next((v["fpr"] for v in (calibrated or {}).values() if v.get("available")), None)
    md, tex, page = [], [], []
    for col in columns:
        for style, out, fmt in (("markdown", md, "github"), ("latex", tex, "latex_raw"), ("html", page, "unsafehtml")):
            here = {k: v for k, v in (calibrated or {}).items() if k[1] == col.name}
            body = task_rows(rows, col.name, scores, fprs, style, marks, here)
            if not body:
                continue
            shown = calibrated_fpr if here else None
            table = tabulate(body, headers=headers(fprs, style, shown), tablefmt=fmt, disable_numparse=True,
                             colalign=("left", *["right"] * (3 * len(fprs) + 1 + (2 if here else 0))))
            legend = marks.legend([r.name for r in rows], col.name, style)
            moved = transfer_rows(rows, col.name, scores, style)
            moved_table = tabulate(moved, headers=TRANSFER_HEADERS, tablefmt=fmt, disable_numparse=True) if moved else ""
            if style == "markdown":
                out += [f"### {markdown_title(col.title)}", "", table, "", *([legend, ""] if legend else [])]
                if moved:
                    out += [f"{NOT_TRANSFERRED} Where the validation threshold does not transfer (realised FPR "
                            "over twice the nominal one):", "", moved_table, ""]
            elif style == "latex":
                caption = latex_text(CAPTION.replace("`", ""))
                out += [f"% {col.name}", "\\begin{table}[t]\n\\centering", table,
                        f"\\caption{{{latex_title(col.title)}: {caption} {legend}}}",
                        f"\\label{{tab:thresholds-{col.name}}}\n\\end{{table}}", ""]
                if moved:
                    out += ["\\begin{table}[t]\n\\centering", moved_table,
                            f"\\caption{{{latex_title(col.title)}: where the validation threshold does not transfer (realised "
                            "FPR over twice the nominal one).}", f"\\label{{tab:thresholds-transfer-{col.name}}}\n"
                            "\\end{table}", ""]
            else:
                out += [f"<h2>{html.escape(col.title)}</h2>", table, *([f"<p>{legend}</p>"] if legend else [])]
                if moved:
                    out += [f"<p>{NOT_TRANSFERRED} Where the validation threshold does not transfer (realised FPR "
                            "over twice the nominal one):</p>", moved_table]
    document = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Threshold metrics</title>"
                "<style>body{font-family:sans-serif} table{border-collapse:collapse} td,th{padding:2px 10px;"
                "border-bottom:1px solid #ccc}</style></head><body>\n" + "\n".join(page)
                + f"\n<p>{html.escape(CAPTION)}</p>\n</body></html>\n")
    return "\n".join(md), "\n".join(tex), document
