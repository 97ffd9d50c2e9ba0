"""Table 4 of the paper: rows = detectors, columns = tasks, macro-F1 x 100 with two decimals.

The best trained detector per column is bold; a dummy baseline (random, majority) is
underlined where it beats every trained detector of that column; "–" marks a pair not run.
Bold and underline rank only the cells that can carry a ranking (aicd.report.marks: no class
under MIN_CLASS_SUPPORT test rows, two classes or more); a column whose test rows hold one class
shows that class's recall, marked "one class"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

import tabulate as tabulate_mod
from tabulate import tabulate

from ..outputs import SHOWN, name_of
from .intervals import SAYS, with_interval
from .latex import latex_text
from .marks import ONE_ROW, RANKING_SAYS, Marks, tag

NOT_RUN = "–"


@dataclass(frozen=True)
class Row:
    name: str
    title: str
    dummy: bool


@dataclass(frozen=True)
class Column:
    name: str
    title: str


def cell_marks(rows: list[Row], columns: list[Column], scores: dict[tuple[str, str], float],
               unranked=frozenset()) -> dict:
    """(detector, task) -> (value, bold, underline) for every pair that was run. A pair in
    `unranked` (a class under the minimum, one class, most answers unparseable) is never bold or
    underlined and sets no bar for the others."""
    marks = {}
    for col in columns:
        trained = [scores[(r.name, col.name)] for r in rows if not r.dummy and (r.name, col.name) in scores
                   and (r.name, col.name) not in unranked]
        best_trained = max(trained) if trained else None
        for r in rows:
            value = scores.get((r.name, col.name))
            if value is None:
                continue
            ranks = (r.name, col.name) not in unranked and best_trained is not None
            bold = ranks and (not r.dummy) and round(value, 4) == round(best_trained, 4)
            underline = ranks and r.dummy and value > best_trained
            marks[(r.name, col.name)] = (value, bold, underline)
    return marks


def unranked_cells(tags: Marks, extra=frozenset()) -> set:
    """The (detector, column) pairs that no bold, underline or "best" may rest on."""
    keys = {*tags.small_classes, *tags.one_class, *tags.unparseable}
    return keys | set(extra)


def one_class_columns(columns: list[Column], tags: Marks) -> dict[str, str]:
    """column -> its one class, for a column whose test rows hold one class (every cell of a column
    reads the same test rows)."""
    out = {}
    for col in columns:
        classes = {one for (_d, c), one in tags.one_class.items() if c == col.name}
        if len(classes) == 1:
            out[col.name] = classes.pop()
    return out


def column_title(col: Column, one_class: dict[str, str]) -> str:
    return f"{col.title} (one class: {one_class[col.name]} recall)" if col.name in one_class else col.title


def latex_title(title: str) -> str:
    """'CB_{AST & TF-IDF}' -> 'CB${}_{\\text{AST \\& TF-IDF}}$' (the paper's row style)."""
    def sub(m: re.Match) -> str:
        return "${}_{\\text{" + m.group(1) + "}}$"
    escaped = title.replace("&", "\\&").replace("%", "\\%").replace("#", "\\#")
    return re.sub(r"_\{([^}]*)\}", sub, escaped)


def markdown_title(title: str) -> str:
    return re.sub(r"_\{([^}]*)\}", r"<sub>\1</sub>", title)


def plain_title(title: str) -> str:
    """'CB_{AST}' -> 'CB (AST)', for figure titles and logs."""
    return re.sub(r"_\{([^}]*)\}", r" (\1)", title)


CAPTION = ("Macro F1-score of baselines across all tasks, macro-F1 × 100 on each task's test split. Best trained "
           "model per task in bold; dummy baselines (random or majority) underlined where they outperform every "
           "trained model.")
INTERVAL_NOTE = "95% bootstrap intervals over test rows (1,000 resamples, seeded): " + SAYS
# The paper-format table prints no interval, like the paper's: say where each cell's is.
NO_INTERVAL_NOTE = ("Like the paper's, this table prints no interval: each cell's 95% bootstrap interval over test rows "
                    f"is in {name_of('report')} (Table 4), {name_of('tab', 'reproduction', 'md')} and the detector's score file (macro_f1_ci).")


def render(rows: list[Row], columns: list[Column], scores: dict[tuple[str, str], float],
           caption: str = CAPTION, label: str = "tab:baselines", not_run: str = NOT_RUN,
           intervals: dict[tuple[str, str], tuple[float, float]] | None = None,
           tags: Marks | None = None, unranked=frozenset(), notes: tuple[str, ...] = ()) -> tuple[str, str]:
    """Return (latex, markdown). Also renders Table 8 (other caption, "not run" cells).
    With `intervals` ((detector, task) -> 95% bootstrap interval), each cell that has one
    also shows it, `87.21 ± 1.30` or `27.20 [7.60, 32.40]` where it is not symmetric
    (aicd.report.intervals; the paper's tables print none), or [one row decides] where one row
    decides it (aicd.report.marks). `tags`: the marks that say when a number is not what its
    header suggests; the caption then ends with their legend, and the Markdown has the caption
    under the table. `unranked`: cells that no bold may rest on besides those the tags name;
    `notes`: sentences for the caption (what such a cell is)."""
    tags = tags or Marks()
    skip = unranked_cells(tags, unranked)
    marks = cell_marks(rows, columns, scores, skip)
    legend = tags.legend([r.name for r in rows], None, shown=None if intervals else _NO_INTERVAL_TAGS)
    interval_note = INTERVAL_NOTE if intervals else NO_INTERVAL_NOTE if caption == CAPTION else ""
    ranking = RANKING_SAYS if any(k[1] in {c.name for c in columns} for k in skip) else ""
    full = " ".join(part for part in (caption, interval_note, ranking, *notes, legend) if part)
    one_class = one_class_columns(columns, tags)

    def cells(style: str) -> list[list[str]]:
        return _cells(rows, columns, marks, intervals or {}, not_run, style, tags)

    headers_tex = ["Model", *[latex_title(column_title(c, one_class)) for c in columns]]
    latex = tabulate(cells("latex"), headers=headers_tex, tablefmt=_latex_booktabs_raw(),
                     colalign=("left", *["right"] * len(columns)), disable_numparse=True)
    tex_caption = latex_text(full)
    latex = f"\\begin{{table}}[t]\n\\centering\n{latex}\n\\caption{{{tex_caption}}}\n\\label{{{label}}}\n\\end{{table}}\n"
    headers_md = ["Model", *[markdown_title(column_title(c, one_class)) for c in columns]]
    markdown = tabulate(cells("markdown"), headers=headers_md, tablefmt="github",
                        colalign=("left", *["right"] * len(columns)), disable_numparse=True) + "\n"
    return latex, markdown + f"\n{full}\n"


def _cells(rows, columns, marks, intervals, not_run, style: str, tags: Marks | None = None) -> list[list[str]]:
    """Table body in one style (latex | markdown | html): bold best trained, underlined dummy;
    `tags` put "ours" on a row and "inverted" and § on a cell (aicd.report.marks)."""
    tags = tags or Marks()
    body = []
    for r in rows:
        line = [(latex_title(r.title) if style == "latex" else markdown_title(r.title)) + tag(tags.row(r.name), style)]
        for col in columns:
            mark = marks.get((r.name, col.name))
            if mark is None:
                line.append(not_run)
                continue
            value, bold, underline = mark
            decided = (r.name, col.name) in tags.one_row and intervals.get((r.name, col.name))
            text = f"{value * 100:.2f} {ONE_ROW}" if decided else with_interval(value, intervals.get((r.name, col.name)), style)
            if style == "latex":
                text = f"\\textbf{{{text}}}" if bold else (f"\\underline{{{text}}}" if underline else text)
            elif style == "html":
                text = f"<b>{text}</b>" if bold else (f"<u>{text}</u>" if underline else text)
            else:
                text = f"**{text}**" if bold else (f"<u>{text}</u>" if underline else text)
            small = tags.small(r.name, col.name)
            text += ("\\S{}" if style == "latex" else small) if small else ""
            line.append(text + tag(tags.cell(r.name, col.name), style))
        body.append(line)
    return body


def render_html(rows: list[Row], columns: list[Column], scores: dict[tuple[str, str], float],
                intervals: dict[tuple[str, str], tuple[float, float]] | None = None, caption: str = CAPTION,
                stamp: str = "", not_run: str = NOT_RUN, tags: Marks | None = None) -> str:
    """A standalone HTML page of the table (Snakemake's --report shows it as is)."""
    import html

    tags = tags or Marks()
    skip = unranked_cells(tags)
    one_class = one_class_columns(columns, tags)
    body = _cells(rows, columns, cell_marks(rows, columns, scores, skip), intervals or {}, not_run, "html", tags)
    table = tabulate(body, headers=["Model", *[markdown_title(column_title(c, one_class)) for c in columns]],
                     tablefmt="unsafehtml", colalign=("left", *["right"] * len(columns)), disable_numparse=True)
    legend = tags.legend([r.name for r in rows], None, shown=None if intervals else _NO_INTERVAL_TAGS)
    ranking = RANKING_SAYS if skip else ""
    note = "".join(f"<p>{html.escape(text)}</p>" for text in (INTERVAL_NOTE if intervals else "", ranking, legend) if text)
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Table 4</title>"
            "<style>body{font-family:sans-serif} table{border-collapse:collapse} td,th{padding:2px 10px;"
            "border-bottom:1px solid #ccc}</style></head><body>\n"
            f"{table}\n<p>{html.escape(caption)}</p>{note}<p>{html.escape(stamp)}</p>\n</body></html>\n")


# a table printed without intervals has no [one row decides] to explain
_NO_INTERVAL_TAGS = ("ours", "inverted", "margins", "scores", "sample", "one class", "unparseable")


def with_inputs(latex: str, markdown: str, info: dict | None) -> tuple[str, str]:
    """A rendered table stamped with its input fingerprint and code version (results/inputs.json):
    a `% inputs: ... code: ...` first line and a caption sentence in LaTeX, a last line in Markdown."""
    if not info:
        return latex, markdown
    fp, code = info["fingerprint"], str(info.get("code", "unknown"))
    tex_code = "".join("\\" + c if c in "_#%&$" else c for c in code)
    latex = f"% inputs: {fp} code: {code}\n" + latex.replace(
        "}\n\\label{", f" Inputs \\texttt{{{fp}}}, code \\texttt{{{tex_code}}}.}}\n\\label{{", 1)
    return latex, markdown + f"\nInputs `{fp}`, code `{code}` ({SHOWN.inputs()}).\n"


def _latex_booktabs_raw():
    """tabulate's booktabs format without escaping, so bold/underline/math survive."""
    base = tabulate_mod._table_formats["latex_booktabs"]
    raw_row = partial(tabulate_mod._latex_row, escrules={})
    return base._replace(headerrow=raw_row, datarow=raw_row)
