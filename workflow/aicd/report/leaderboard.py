"""A static leaderboard site from submission results files (aicd.scoring.submission): per task,
the submissions ranked by macro-F1 with its interval, AUROC, the TPR at 1% FPR on human code in
both views (the ROC operating point, and the validation threshold applied to test with the FPR it
realises there: aicd.scoring.thresholds), the macro-F1 per subset, and a paired bootstrap test of
each against the leader on the same gold rows. Writes SITE/index.html and SITE/leaderboard.json
(the same numbers, for scripts)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from ..common.errors import AicdError
from ..common.io import write_json, write_text
from ..records.fingerprint import sha256_file
from ..scoring.bootstrap import RESAMPLES
from ..scoring.external import compare_files
from .intervals import SAYS, with_interval
from .marks import MIN_CLASS_SUPPORT, SMALL_CLASS, small_classes

STYLE = ("body{font-family:sans-serif;margin:2em} table{border-collapse:collapse;margin-bottom:2em} "
         "td,th{padding:3px 10px;border-bottom:1px solid #ccc;text-align:right} td.name,th.name{text-align:left} "
         "tr.leader{font-weight:bold}")


def read_results(folder) -> list[dict]:
    folder = Path(folder)
    if not folder.is_dir():
        raise AicdError(f"{folder}: no such folder of submission results")
    found, skipped = [], []
    for path in sorted(folder.rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            skipped.append(path.name)
            continue
        if isinstance(data, dict) and {"task", "metadata", "macro_f1"} <= set(data):
            data["_file"] = str(path)
            found.append(data)
        else:
            skipped.append(path.name)
    if not found:
        raise AicdError(f"{folder}: no submission results files (aicd submission score --out FILE.json) in it"
                        + (f"; {len(skipped)} other JSON files skipped" if skipped else ""))
    return found


def _roc_1(result: dict):
    """The ROC operating point at 1% FPR: (TPR, its interval, the reason where it is unreachable)."""
    point = ((result.get("threshold_metrics") or {}).get("roc_at_fpr") or {}).get("0.01") or {}
    if point and not point.get("reachable"):
        return None, None, (point.get("unreachable") or {}).get("short", "unreachable")
    return point.get("tpr"), point.get("tpr_ci"), ""


def _fpr_1(result: dict):
    """The validation threshold for 1% FPR applied to test: TPR, its interval with the
    threshold's own uncertainty, the FPR it realises on the test's humans, and what to say
    instead of or beside it: why the threshold cannot be trusted, or ‡ where it does not transfer."""
    at = ((result.get("threshold_metrics") or {}).get("deployment_at_fpr") or {}).get("0.01") or {}
    problem = at.get("unreliable")
    if problem:
        return None, None, None, problem["short"]
    note = "‡" if at.get("transfers") is False else ""
    return at.get("tpr"), at.get("tpr_ci_with_threshold") or at.get("tpr_ci"), at.get("fpr"), note


def paired_against(leader: dict, other: dict, resamples: int, seed: int) -> dict | None:
    """Leader minus other on the same gold (None, with a reason, when the files are gone)."""
    files = [leader["predictions"]["path"], other["predictions"]["path"], leader["gold"]["path"]]
    if leader["gold"]["sha256"] != other["gold"]["sha256"]:
        return {"why": "scored against other gold files"}
    if (leader.get("label_map") or {}) != (other.get("label_map") or {}):
        return {"why": "the two submissions were scored with different label maps"}
    if not all(Path(f).is_file() for f in files):
        return {"why": "a predictions or gold file is no longer where it was scored"}
    if sha256_file(files[2]) != leader["gold"]["sha256"]:
        return {"why": "the gold file changed since scoring"}
    test = compare_files(files[0], files[1], files[2], leader.get("labels"), leader.get("label_map"),
                         resamples, seed)
    return {k: test[k] for k in ("difference", "difference_ci", "p_value")}


def build(results: list[dict], resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """task -> ranked entries (what the page shows)."""
    boards = {}
    for task in sorted({r["task"] for r in results}):
        entries = sorted((r for r in results if r["task"] == task),
                         key=lambda r: (-r["macro_f1"], r["metadata"]["detector"]))
        subsets = sorted({s for r in entries for s in (r.get("by") or {}).get("subset", {})})
        rows = []
        for rank, r in enumerate(entries, 1):
            tm = r.get("threshold_metrics") or {}
            roc, roc_ci, roc_note = _roc_1(r)
            tpr, tpr_ci, realised, tpr_note = _fpr_1(r)
            rows.append({"rank": rank, "detector": r["metadata"]["detector"], "date": r["metadata"]["date"],
                         "links": r["metadata"].get("links") or [], "macro_f1": r["macro_f1"],
                         "macro_f1_ci": r.get("macro_f1_ci"), "auroc": tm.get("auroc"), "auroc_ci": tm.get("auroc_ci"),
                         "tpr_at_1pct_fpr": roc, "tpr_at_1pct_fpr_ci": roc_ci, "tpr_at_1pct_fpr_note": roc_note,
                         "deployment_1pct_tpr": tpr, "deployment_1pct_tpr_ci": tpr_ci,
                         "deployment_1pct_test_fpr": realised, "deployment_1pct_note": tpr_note,
                         "subsets": {s: ((r.get("by") or {}).get("subset", {}).get(s) or {}).get("macro_f1")
                                     for s in subsets},
                         "vs_leader": None if rank == 1 else paired_against(entries[0], r, resamples, seed)})
        boards[task] = {"subsets": subsets, "entries": rows,
                        "small_classes": small_classes(entries[0]) if entries else {}}
    return boards


def _pct(value, ci=None) -> str:
    return with_interval(value, ci, "html")


def _vs(test) -> str:
    if test is None:
        return "leader"
    if "why" in test:
        return f"n/a ({html.escape(test['why'])})"
    lo, hi = test["difference_ci"]
    return f"{test['difference'] * 100:.2f} [{lo * 100:.2f}, {hi * 100:.2f}], p = {test['p_value']:.3f}"


def _tpr_cell(entry: dict) -> str:
    """The ROC operating point at 1% FPR, or why it is unreachable."""
    note = entry.get("tpr_at_1pct_fpr_note") or ""
    if entry["tpr_at_1pct_fpr"] is None and note:
        return html.escape(note)
    return _pct(entry["tpr_at_1pct_fpr"], entry["tpr_at_1pct_fpr_ci"])


def _deployment_cell(entry: dict) -> str:
    """The validation threshold's TPR on test and the FPR it realises there."""
    note = entry.get("deployment_1pct_note") or ""
    if entry.get("deployment_1pct_tpr") is None:
        return html.escape(note) if note else "–"
    realised = entry.get("deployment_1pct_test_fpr")
    at = f" (test FPR {realised * 100:.2f}{note})" if realised is not None else (f" {note}" if note else "")
    return _pct(entry["deployment_1pct_tpr"], entry["deployment_1pct_tpr_ci"]) + at


def render(boards: dict) -> str:
    parts = ["<!DOCTYPE html>", '<html><head><meta charset="utf-8"><title>AICD Bench leaderboard</title>',
             f"<style>{STYLE}</style></head><body>", "<h1>AICD Bench leaderboard</h1>",
             f"<p>Ranked by macro-F1 × 100 with its 95% bootstrap interval ({html.escape(SAYS)}) TPR @ 1% FPR: "
             "the ROC operating point, the threshold set so that at most 1% of the test's human rows score above it "
             "(the field's definition, RAID's; “unreachable” where ties or too few humans leave no such "
             "threshold). Val. threshold for 1%: the deployment view, the threshold set for 1% FPR on validation "
             "human rows and applied to test, its TPR (the interval includes the threshold's own uncertainty) and "
             "the FPR it realises on the test's humans; a short reason where the threshold cannot be trusted; ‡ "
             "where that FPR is over twice 1%: the threshold does not transfer. “leader − this”: the leader's "
             "macro-F1 minus this one's on the same gold rows, with its 95% paired bootstrap interval and "
             "p-value.</p>"]
    for task, board in boards.items():
        subsets = board["subsets"]
        head = ["Rank", "Detector", "Date", "Macro-F1", "AUROC", "TPR @ 1% FPR", "val. threshold for 1%: TPR (test FPR)",
                *subsets, "leader − this"]
        small = board.get("small_classes") or {}
        parts += [f'<h2 id="task-{html.escape(task)}">{html.escape(task)}</h2>']
        if small:  # no leader is set apart on a class too small to carry a ranking (aicd.report.marks)
            parts.append(f"<p>{SMALL_CLASS} The gold rows hold classes under {MIN_CLASS_SUPPORT} rows ("
                         + html.escape(", ".join(f"{c} {n}" for c, n in sorted(small.items())))
                         + "): each weighs as much as any other in macro-F1, so the order rests on a few rows and "
                         "concludes nothing; no row is set apart as the leader.</p>")
        parts.append(f'<table class="board" data-task="{html.escape(task)}"><thead><tr>'
                     + "".join(f'<th class="{"name" if h == "Detector" else ""}">{html.escape(h)}</th>' for h in head)
                     + "</tr></thead><tbody>")
        for e in board["entries"]:
            name = html.escape(e["detector"])
            if e["links"]:
                name = f'<a href="{html.escape(e["links"][0])}">{name}</a>'
            cells = [str(e["rank"]), name, html.escape(e["date"]), _pct(e["macro_f1"], e["macro_f1_ci"]),
                     _pct(e["auroc"], e["auroc_ci"]), _tpr_cell(e), _deployment_cell(e),
                     *[_pct(e["subsets"].get(s)) for s in subsets], _vs(e["vs_leader"])]
            lead = "leader" if e["rank"] == 1 and not small else ""
            parts.append(f'<tr class="{lead}" data-detector="{html.escape(e["detector"])}">'
                         + "".join(f'<td class="{"name" if i == 1 else ""}">{c}</td>' for i, c in enumerate(cells))
                         + "</tr>")
        parts.append("</tbody></table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_site(folder, out, resamples: int = RESAMPLES, seed: int = 0) -> dict:
    boards = build(read_results(folder), resamples, seed)
    out = Path(out)
    write_text(render(boards), out / "index.html")
    write_json(boards, out / "leaderboard.json")
    return boards
