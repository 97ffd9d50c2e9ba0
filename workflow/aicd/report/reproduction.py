"""The reproduction table: the paper's published numbers (aicd/published.yaml) beside ours.

For every cell the run has and the paper gives: the paper's value, ours with its 95% interval,
the difference, whether they are within +-2 points, and whether the paper's value lies inside
our interval; a cell only one side has is listed as such. Table 4 cells come from the score
files of the detectors matched to the paper's rows (aicd.published.match_detectors), Tables 5-7
from results/tables/subset_tables.json (averages over the paper's trained rows only; a subset
that holds one class reports a recall, kept out of the comparison), Table 8 from the LLM judges'
score files. All on the macro-F1 x 100 scale (Tables 5-7 are printed 0-1 by the paper).

Each row keeps its own title beside the paper's row name. A configured detector that is not
the paper's detector (its config's `paper: {comparable: false, note}`: a trained toy LM where
the paper's is pretrained, a CPU demo encoder in place of the paper's) gets "not comparable"
with its note instead of a difference; a comparable one's note is printed beside its cells.

A headline per table and task counts the cells within +-2 points and inside the interval, and
how many of those agreeing cells are dummy baselines (whose agreement says little); a cell whose
macro-F1 rests on a class under the minimum of test rows (§, aicd.report.marks) is printed but
never counted, and where one row decides its interval, the interval is left out. One
line says whether the run is on the paper's release (every compared task read from the
release with its full test split) or not, naming the data by the run's input fingerprint: on
other data (the demo, the OOD config, one's own) the comparison still prints, and shows how far
those data are from the release.

Writes reproduction.{md,tex,html,json} and a figure per task (ours against the paper's Table 4,
the +-2 band, our intervals): figures/reproduction_{task}.{pdf,png}."""

from __future__ import annotations

import argparse
import html
from pathlib import Path

from tabulate import tabulate

from .. import published
from ..common.io import read_json, write_json, write_text
from ..common.stagecli import json_arg
from ..outputs import SHOWN, beside
from .latex import latex_text
from .marks import MIN_CLASS_SUPPORT, ONE_ROW, SMALL_CLASS, Marks, one_row_decides, one_row_legend, tag
from .table4 import latex_title, markdown_title, plain_title

WITHIN = 2.0  # points (macro-F1 x 100) that count as reproduced
CAPTION = ("The paper's published numbers beside ours, macro-F1 × 100 (the paper prints Tables 5-7 on a 0-1 scale: "
           "× 100 here). Ours: the value with its 95% bootstrap interval over test rows (Tables 5-7: the mean of the "
           "averaged detectors' own bounds, conservative). Δ = ours − paper. ±2: |Δ| ≤ 2 points. In CI: the paper's "
           "value lies inside our interval. Cells only one side has are listed under the table, with why.")


def _cell(table: int, row: str, column: str, paper: float | None, ours: float | None = None, ci=None, **extra) -> dict:
    cell = {"table": table, "row": row, "column": column, "paper": paper, "ours": ours, "ci": ci, **extra}
    if paper is not None and ours is not None:
        cell["delta"] = ours - paper
        cell["within"] = abs(ours - paper) <= WITHIN + 1e-9
        cell["inside"] = None if ci is None else bool(ci[0] - 1e-9 <= paper <= ci[1] + 1e-9)
        cell["status"] = "both"
    elif "status" not in cell:
        cell["status"] = "paper only" if paper is not None else "ours only"
    return cell


def _pts(value):
    return None if value is None else float(value) * 100.0


def _ci_pts(ci):
    return None if not ci else [float(ci[0]) * 100.0, float(ci[1]) * 100.0]


def table4_tasks(layout: dict, number: int = 4) -> dict[str, str]:
    """The paper's task column (T1, T2, T3) -> the run's first task of that kind."""
    task_of = {}
    for name, _, kind in layout["tasks"]:
        column = published.column_for_kind(number, kind) if kind else None
        if column and column not in task_of:
            task_of[column] = name
    return task_of


def table4_cells(layout: dict, scores: dict) -> list[dict]:
    """Every (paper row or our detector) x (T1, T2, T3) cell. layout: tasks [[name, title, kind]],
    detectors [[name, title, paper row or null]], dummies [names], comparability {name:
    {comparable, note}}; scores: (detector, task) -> score file."""
    spec = published.table(4)
    task_of = table4_tasks(layout)
    by_row = {row: name for name, _, row in layout["detectors"] if row}
    titles = {name: title for name, title, _ in layout["detectors"]}
    dummies = set(layout.get("dummies") or ())
    standing = layout.get("comparability") or {}
    out = []
    for paper_row in published.rows(4):
        det = by_row.get(paper_row.row)
        comp = standing.get(det) or {"comparable": True, "note": None}
        who = {"task": None, "detector": det, "title": titles.get(det), "dummy": det in dummies}
        for column in spec["columns"]:
            paper = paper_row.values.get(column)
            task = task_of.get(column)
            who["task"] = task
            s = scores.get((det, task)) if det and task else None
            if s is not None and s.get("macro_f1") is not None and not comp["comparable"]:
                out.append(_cell(4, paper_row.row, column, paper, status="not comparable", ours_value=_pts(s["macro_f1"]),
                                 ours_ci=_ci_pts(s.get("macro_f1_ci")), why=comp["note"], **who))
            elif s is not None and s.get("macro_f1") is not None:
                out.append(_cell(4, paper_row.row, column, paper, _pts(s["macro_f1"]), _ci_pts(s.get("macro_f1_ci")),
                                 note=comp["note"], **who))
            elif paper is not None:
                elsewhere = det is not None and any(d == det for d, _ in scores)
                why = ("no task of this kind in the run" if task is None else
                       "not in this configuration" if det is None else
                       "configured for other tasks only" if elsewhere else "configured, no scores")
                out.append(_cell(4, paper_row.row, column, paper, why=why, **who))
    for name, title, row in layout["detectors"]:
        if row:
            continue
        for column, task in task_of.items():
            s = scores.get((name, task))
            if s is not None and s.get("macro_f1") is not None:
                out.append(_cell(4, title, column, None, _pts(s["macro_f1"]), _ci_pts(s.get("macro_f1_ci")),
                                 task=task, detector=name, title=title, why="ours: not a row of the paper"))
    return out


def subset_cells(layout: dict, summary: dict) -> list[dict]:
    """Tables 5-7: each subset's average beside the paper's (subset_tables.json)."""
    out = []
    for number in published.SUBSET_TABLES:
        spec = published.table(number)
        result = summary.get(str(number)) or {}
        ours = {r["subset"]: r for r in result.get("rows", [])}
        for paper_row in published.rows(number):
            paper = published.points(paper_row.values["mean"], spec["scale"])
            paper_std = published.points(paper_row.values["std"], spec["scale"])
            mine = ours.get(paper_row.row)
            if not result.get("task"):
                out.append(_cell(number, paper_row.printed, "mean", paper, paper_std=paper_std,
                                 why=f"no task of kind {spec['task_kind']} in the run"))
            elif mine is None or mine.get("mean") is None:
                out.append(_cell(number, paper_row.printed, "mean", paper, paper_std=paper_std, task=result["task"],
                                 why=result.get("note") or "the run's test split has no such subset"))
            elif mine.get("one_class"):
                out.append(_cell(number, paper_row.printed, "mean", paper, paper_std=paper_std, task=result["task"],
                                 status="not comparable", ours_metric=f"{mine['one_class']} recall",
                                 ours_value=_pts(mine["mean"]),
                                 why=f"the run's subset holds {mine['one_class']} rows only: ours is "
                                     f"{mine['one_class']} recall, not a macro-F1"))
            elif result.get("averaged_over") == "ours":
                out.append(_cell(number, paper_row.printed, "mean", paper, paper_std=paper_std, task=result["task"],
                                 status="not comparable", ours_value=_pts(mine["mean"]),
                                 why="none of the paper's detectors ran: ours averages other detectors"))
            else:
                out.append(_cell(number, paper_row.printed, "mean", paper, _pts(mine["mean"]), _ci_pts(mine.get("ci")),
                                 paper_std=paper_std, ours_std=_pts(mine.get("std")), task=result["task"],
                                 detectors=len(result.get("detectors") or []), small=bool(mine.get("small_classes")),
                                 small_classes=mine.get("small_classes") or {}, classes=result.get("classes"),
                                 note=f"ours: the mean of {len(result.get('detectors') or [])} rows (named below); "
                                      "the paper's: averaged over detectors it does not list"))
    return out


def averaged_lines(summary: dict, titles: dict) -> list[str]:
    """Per subset table: the rows our side averages, named, and that the paper does not list its own."""
    lines = []
    for number in published.SUBSET_TABLES:
        result = summary.get(str(number)) or {}
        if not result.get("task") or not result.get("rows"):
            continue
        names = ", ".join(plain_title(titles.get(d, d)) for d in result.get("detectors") or [])
        side = "the paper's trained rows run here" if result.get("averaged_over", "paper") == "paper" else \
            "our trained detectors (none of the paper's ran)"
        lines.append(f"- Table {number}: ours is the mean over {len(result.get('detectors') or [])} rows, {side}: "
                     f"{names}. The paper's is \"averaged over detectors\" (its caption) and does not say which.")
    return lines


def judge_cells(layout: dict, judge_scores: dict) -> list[dict]:
    """Table 8: judges (score file name -> paper row) x task columns."""
    out = []
    rows = {r.row: r for r in published.rows(8)}
    task_of = table4_tasks(layout, 8)
    judges = [(j[0], j[1], j[2] if len(j) > 2 else j[0]) for j in layout.get("judges", [])]
    ran = {row for _, row, _ in judges if row}
    for name, row, title in judges:
        for column, task in task_of.items():
            s = judge_scores.get((name, task))
            paper = rows[row].values.get(column) if row else None
            if s is not None and s.get("macro_f1") is not None:
                mine = {} if row else {"why": "ours: not one of the paper's judges"}
                out.append(_cell(8, row or title, column, paper, _pts(s["macro_f1"]), _ci_pts(s.get("macro_f1_ci")),
                                 task=task, detector=name, **mine))
            elif paper is not None:
                out.append(_cell(8, row, column, paper, task=task, detector=name, why="the judge did not run"))
    for row, paper_row in rows.items():
        if row not in ran:
            for column, value in paper_row.values.items():
                out.append(_cell(8, row, column, value, why="no such judge in this configuration"))
    return out


def mark_cells(cells: list[dict], tags: Marks) -> None:
    """Each cell's marks from its score file (Tables 4 and 8) or its subset (Tables 5-7): `small`,
    a class under the minimum; `one_row`, one row decides its interval (aicd.report.marks)."""
    for c in cells:
        key = (c.get("detector"), c.get("task"))
        c["marks"] = tags.cell(*key) if all(key) else []
        if c["table"] in (4, 8) and all(key):
            c["small"] = key in tags.small_classes
            c["one_row"] = tags.one_row.get(key)
        elif c.get("small_classes") and c.get("ci"):
            c["one_row"] = one_row_decides({"per_class": {k: {"support": n} for k, n in c["small_classes"].items()}},
                                           [x / 100 for x in c["ci"]], c.get("classes"))


def headlines(cells: list[dict]) -> list[dict]:
    """Per table and column (task): cells compared, within +-2 points (and which of those are dummy
    baselines' rows), paper inside our interval; a cell whose macro-F1 rests on a class under the
    minimum (`small`) is counted apart, in neither."""
    groups = {}
    for c in cells:
        key = (c["table"], c["column"])
        g = groups.setdefault(key, {"table": c["table"], "column": c["column"], "task": c.get("task"), "compared": 0,
                                    "within": 0, "inside": 0, "with_interval": 0, "paper_only": 0, "ours_only": 0,
                                    "not_comparable": 0, "dummy_within": [], "small": 0})
        g["task"] = g["task"] or c.get("task")
        if c["status"] == "both" and c.get("small"):
            g["small"] += 1  # printed, never counted: a class under the minimum decides it
        elif c["status"] == "both":
            g["compared"] += 1
            g["within"] += bool(c["within"])
            if c["within"] and c.get("dummy"):
                g["dummy_within"].append(c["row"])
            if c["inside"] is not None:
                g["with_interval"] += 1
                g["inside"] += bool(c["inside"])
        else:
            g[{"paper only": "paper_only", "ours only": "ours_only"}.get(c["status"], "not_comparable")] += 1
    return list(groups.values())


def not_release(layout: dict, task_reports: dict) -> dict[str, str]:
    """task -> why it is not the paper's release (every task of a paper kind that is not read
    from the release's Hub dataset with its full test split)."""
    release = published.release()
    out = {}
    for name, _, kind, mode in layout["task_modes"]:
        if not kind:
            continue
        rep = task_reports.get(name) or {}
        hub = (rep.get("release") or {}).get("hub")
        rows = ((rep.get("splits") or {}).get("test") or {}).get("rows")
        if mode != "release":
            out[name] = f"{'built from the sources' if mode == 'build' else mode}, not the release"
        elif hub != release["hub"]:
            out[name] = f"read from {'local files' if not hub else hub}, not {release['hub']}"
        elif rows != release["test_rows"][kind]:
            out[name] = f"{rows} test rows, the release's {release['test_rows'][kind]:,}"
    return out


def on_release(layout: dict, task_reports: dict) -> tuple[bool, str]:
    """(is this run on the paper's release, the reason): every task of a paper kind read from the
    release's Hub dataset with its full test split; otherwise every task that is not, and why."""
    release = published.release()
    if not any(kind for _, _, kind, _ in layout["task_modes"]):
        return False, "no task of the paper's three kinds"
    reasons = not_release(layout, task_reports)
    if not reasons:
        return True, f"every task is read from {release['hub']} with its full test split"
    grouped: dict[str, list[str]] = {}
    for name, why in reasons.items():
        grouped.setdefault(why, []).append(name)
    parts = [f"task{'s' if len(names) > 1 else ''} {', '.join(names)}: {why}" for why, names in grouped.items()]
    return False, "; ".join(parts)


def _num(value) -> str:
    return "–" if value is None else f"{value:.2f}"


def _interval(ci, style: str) -> str:
    dash = "--" if style == "latex" else "–"
    return f" [{ci[0]:.2f}{dash}{ci[1]:.2f}]" if ci else ""


def _ours_text(c: dict, style: str) -> str:
    if c.get("ours") is None:
        if c.get("ours_value") is not None:
            metric = c.get("ours_metric", "ours" if c["table"] == 4 else "other detectors")
            return f"({metric} {_num(c['ours_value'])}{_interval(c.get('ours_ci'), style)})"
        return "–"
    return _num(c["ours"]) + (f" {ONE_ROW}" if c.get("one_row") else _interval(c.get("ci"), style))


def _row_title(c: dict, style: str, tags: Marks | None = None) -> str:
    """The paper's row, and ours where its own title says more (Fast-DetectGPT — ours: Fast-DetectGPT
    (SmolLM2-135M, zero-shot))."""
    def styled(text: str) -> str:
        if c["table"] in (4, 8):
            return latex_title(text) if style == "latex" else markdown_title(text)
        return latex_text(text) if style == "latex" else text

    title = styled(c["row"])
    own = c.get("title")
    if c["table"] == 4 and own and plain_title(own) != plain_title(c["row"]):
        title += (" -- ours: " if style == "latex" else " — ours: ") + styled(own)
    if tags is not None and c.get("detector") and c.get("task"):
        title += tag(tags.cell(c["detector"], c["task"]), style)
    return title


def _small(c: dict, style: str, tags: Marks | None) -> str:
    """§ after ours where its macro-F1 averages over a class with few test rows (Table 4: the
    detector's score file; Tables 5-7: the subset's)."""
    small = c.get("small") or (tags is not None and c.get("detector") and tags.small(c["detector"], c.get("task")))
    if not small:
        return ""
    return "\\S{}" if style == "latex" else SMALL_CLASS


def _where(c: dict, titles: dict) -> str:
    """The paper's task column and the run's task it is compared on."""
    task = titles.get(c.get("task"), c.get("task"))
    if c["table"] in (4, 8):
        return f"{c['column']} ({task})" if task else c["column"]
    return task or "–"


def body(cells: list[dict], style: str, titles: dict, tags: Marks | None = None) -> list[list[str]]:
    """Rows of the cells both sides have (and those not comparable), the paper's table order."""
    yes = {"latex": ("yes", "no"), "markdown": ("yes", "**no**"), "html": ("yes", "<b>no</b>")}[style]
    out = []
    for c in cells:
        if c["status"] == "both":
            within = yes[0] if c["within"] else yes[1]
            inside = "–" if c["inside"] is None or c.get("one_row") else (yes[0] if c["inside"] else yes[1])
            delta = f"{c['delta']:+.2f}"
            note = c.get("note") or ""
        elif c["status"] == "not comparable":
            within = inside = delta = ""
            note = "not comparable: " + c.get("why", "")
        else:
            continue
        if style == "html":
            note = html.escape(note)
        elif style == "latex":
            note = latex_text(note)
        out.append([f"{c['table']}", _row_title(c, style, tags), _where(c, titles), _num(c.get("paper")),
                    _ours_text(c, style) + _small(c, style, tags), delta, within, inside, note])
    return out


HEADERS = ["Table", "row", "task", "paper", "ours [95% CI]", "Δ", "±2", "in CI", "note"]
SMALL_NOTE = (f"{SMALL_CLASS} after ours: its macro-F1 averages over a class with fewer than {MIN_CLASS_SUPPORT} test "
              "rows (Tables 5-7: a class of the subset), which weighs as much as any other; such a cell is printed but "
              "counted in no headline.")


def one_side_lines(cells: list[dict], titles: dict) -> list[str]:
    """The cells only one side has, grouped by why: one line per table and reason."""
    groups: dict[tuple, dict] = {}
    for c in cells:
        if c["status"] not in ("paper only", "ours only"):
            continue
        g = groups.setdefault((c["table"], c["status"], c.get("why", "")), {"rows": [], "columns": []})
        label = plain_title(c["row"])
        if c["status"] == "ours only":
            label += f" {_where(c, titles)} {_num(c['ours'])}"
        if label not in g["rows"]:
            g["rows"].append(label)
        where = _where(c, titles)
        if where not in g["columns"]:
            g["columns"].append(where)
    lines = []
    for (table_number, status, why), g in groups.items():
        side = "the paper's only" if status == "paper only" else "ours only"
        columns = "" if status == "ours only" or table_number not in (4, 8) else f" [{', '.join(g['columns'])}]"
        lines.append(f"- Table {table_number}, {side} ({why}){columns}: {', '.join(g['rows'])}")
    return lines


def headline_lines(groups: list[dict], titles: dict) -> list[str]:
    lines, silent = [], {}
    for g in groups:
        where = f"Table {g['table']}" + (f", {g['column']}" if g["table"] in (4, 8) else "")
        if g["task"]:
            where += f" ({titles.get(g['task'], g['task'])})"
        if not g["compared"] and not g.get("small"):
            silent.setdefault(g["table"], []).append(g)
            continue
        dummies = g.get("dummy_within") or []
        of_them = ""
        if dummies:
            names = ", ".join(plain_title(r) for r in dummies)
            if len(dummies) == g["within"] == 1:
                of_them = f" (a dummy baseline: {names})"
            else:
                of_them = (f" ({'all' if len(dummies) == g['within'] else len(dummies)} of them dummy "
                           f"baseline{'s' if len(dummies) > 1 else ''}: {names})")
        small = (f"; {g['small']} more rest on a class under {MIN_CLASS_SUPPORT} test rows ({SMALL_CLASS}): printed, "
                 "not counted" if g.get("small") else "")
        if not g["compared"] and g.get("small"):
            lines.append(f"- {where}: nothing counted: all {g['small']} cells rest on a class under {MIN_CLASS_SUPPORT} "
                         f"test rows ({SMALL_CLASS}), which concludes nothing"
                         + (f"; {g['not_comparable']} not comparable" if g["not_comparable"] else ""))
            continue
        lines.append(f"- {where}: **{g['within']} of {g['compared']}** cells within ±{WITHIN:g} points{of_them}; the "
                     f"paper's value inside our 95% interval in **{g['inside']} of {g['with_interval']}**{small}"
                     + (f"; {g['not_comparable']} not comparable" if g["not_comparable"] else ""))
    for table_number, gs in silent.items():
        cols = ", ".join(g["column"] for g in gs) if table_number in (4, 8) else ""
        lines.append(f"- Table {table_number}{' ' + cols if cols else ''}: nothing to compare in this run "
                     f"({sum(g['paper_only'] + g['not_comparable'] for g in gs)} of the paper's cells, listed below)")
    return lines


def data_line(release: tuple[bool, str], inputs: dict | None) -> str:
    fp = f"inputs `{inputs['fingerprint']}`" if inputs else "inputs not fingerprinted"
    if release[0]:
        return f"This run is on the paper's release ({release[1]}; {fp})."
    return (f"**This run is not on the paper's release** ({release[1]}; {fp}): the comparison shows how far these "
            "data are from the release, not whether the paper reproduces.")


def write_tables(cells: list[dict], groups: list[dict], release: tuple[bool, str], inputs: dict | None, titles: dict,
                 tables_dir: Path, tags: Marks | None = None, averaged: list[str] = ()) -> None:
    """reproduction.{md,tex,html}; `averaged`: averaged_lines, the rows each side of Tables 5-7 averages."""
    head = data_line(release, inputs)
    legend = (tags or Marks()).legend(sorted({c["detector"] for c in cells if c.get("detector")}), None,
                                      shown=("inverted",))
    if any(c.get("small") for c in cells) and SMALL_CLASS not in legend:
        legend = f"{legend} {SMALL_NOTE}".strip()
    decided = {titles.get(c.get("task"), c.get("task")): c["one_row"] for c in cells if c.get("one_row")}
    if decided:
        legend = f"{legend} {one_row_legend(decided)}".strip()
    caption = CAPTION + (f" {legend}" if legend else "")
    one_side = one_side_lines(cells, titles)
    md = ["## Reproduction: the paper beside ours", "", head, "", *headline_lines(groups, titles), "",
          tabulate(body(cells, "markdown", titles, tags), headers=HEADERS, tablefmt="github", disable_numparse=True), "",
          caption, "",
          *(["The rows averaged in Tables 5-7:", "", *averaged, ""] if averaged else []),
          *(["Cells only one side has:", "", *one_side, ""] if one_side else [])]
    write_text("\n".join(md), beside(tables_dir, "tab", "reproduction", "md"))
    tex_head = latex_text(head.replace("**", "").replace("`", ""))
    tex_averaged = latex_text(" ".join(line[2:] for line in averaged))
    tex = ["\\begin{table}[t]", "\\centering", "\\small",
           tabulate(body(cells, "latex", titles, tags), tablefmt="latex_raw", disable_numparse=True,
                    headers=[latex_text(h) for h in HEADERS]),
           f"\\caption{{{latex_text(caption)} {tex_averaged} {tex_head}}}", "\\label{tab:reproduction}",
           "\\end{table}", ""]
    write_text("\n".join(tex), beside(tables_dir, "tab", "reproduction", "tex"))

    def items(lines: list[str]) -> str:
        return "<ul>" + "".join(f"<li>{html.escape(line[2:].replace('**', ''))}</li>" for line in lines) + "</ul>\n"

    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Reproduction</title><style>body{font-family:"
            "sans-serif} table{border-collapse:collapse} td,th{padding:2px 8px;border-bottom:1px solid #ccc}</style>"
            f"</head><body>\n<h1>Reproduction: the paper beside ours</h1>\n<p>{html.escape(head.replace('**', ''))}</p>\n"
            + items(headline_lines(groups, titles))
            + tabulate(body(cells, "html", titles, tags), headers=HEADERS, tablefmt="unsafehtml", disable_numparse=True)
            + f"\n<p>{html.escape(caption)}</p>\n"
            + (f"<p>The rows averaged in Tables 5-7:</p>{items(averaged)}" if averaged else "")
            + (f"<p>Cells only one side has:</p>{items(one_side)}" if one_side else "") + "</body></html>\n")
    write_text(page, beside(tables_dir, "tab", "reproduction", "html"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report reproduction", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='JSON {"tasks": [[name, title, kind]], "task_modes": [[name, title, kind, mode]], '
                             '"detectors": [[name, title, paper row or null]], "judges": [[score name, paper row, title]]}')
    parser.add_argument("--scores", nargs="*", default=[], help=SHOWN.scores())
    parser.add_argument("--judge-scores", nargs="*", default=[], help=SHOWN.scores(detector=f"{published.JUDGE_PREFIX}*"))
    parser.add_argument("--subset-tables", required=True, help=SHOWN.tab("subset_tables", "json"))
    parser.add_argument("--task-reports", nargs="*", default=[], help=SHOWN.task_report())
    parser.add_argument("--inputs", default=None, help=f"{SHOWN.inputs()} (the input fingerprint)")
    parser.add_argument("--tables-dir", required=True)
    parser.add_argument("--figures-dir", required=True)
    args = parser.parse_args(argv)
    from .reproduction_figure import reproduction_figure

    scores = {(s["detector"], s["task"]): s for s in map(read_json, args.scores)}
    judges = {(s["detector"], s["task"]): s for s in map(read_json, args.judge_scores)}
    reports = {r["task"]: r for r in map(read_json, args.task_reports) if "task" in r}
    inputs = read_json(args.inputs) if args.inputs else None
    release = on_release(args.layout, reports)
    summary = read_json(args.subset_tables)
    cells = table4_cells(args.layout, scores) + subset_cells(args.layout, summary) + judge_cells(args.layout, judges)
    titles = {name: title for name, title, _ in args.layout["tasks"]}
    tables = Path(args.tables_dir)
    tags = Marks.from_scores({**scores, **judges}, ours=set())
    mark_cells(cells, tags)
    groups = headlines(cells)
    averaged = averaged_lines(summary, {name: title for name, title, _ in args.layout["detectors"]})
    write_tables(cells, groups, release, inputs, titles, tables, tags, averaged)
    write_json({"on_release": release[0], "why": release[1], "fingerprint": (inputs or {}).get("fingerprint"),
                "within_points": WITHIN, "headlines": groups, "cells": cells}, beside(tables, "tab", "reproduction", "json"))
    figures = Path(args.figures_dir)
    reasons = not_release(args.layout, reports)
    for column, name in table4_tasks(args.layout).items():
        title = titles[name]
        chosen = [c for c in cells if c["table"] == 4 and c.get("task") == name]
        reproduction_figure(chosen, f"{title}: ours against the paper's Table 4 ({column})",
                            *(beside(figures, "figure", f"reproduction_{name}", ext) for ext in ("pdf", "png")),
                            note=f"not the paper's release: task {name}: {reasons[name]}" if name in reasons else None)
