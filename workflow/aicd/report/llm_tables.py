"""python -m aicd.report table8 | generation: Table 8 (zero-shot LLM judges) and the generation
report (tokens, cost and statuses per generator model).

Table 8 lists every configured judge × mode; a cell whose judge did not run (no endpoint)
reads "not run". Each cell prints its 95% bootstrap interval (the judge's score file, as every
other table's) and the marks of aicd.report.marks; bold ranks only cells that can carry it: no
class of the judged sample under the minimum of rows, and at most half the answers unparseable
("unparseable": how many are said under the table)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import published
from ..common.io import read_json, write_json, write_text
from ..common.stagecli import json_arg
from ..outputs import SHOWN, beside
from .marks import Marks
from .table4 import Column, Row, render, with_inputs

NOT_RUN = "not run"
CAPTION = ("Zero-shot LLM experiments: macro-F1 of LLM judges with simple zero-shot prompting (zs) and "
           "chain-of-thought prompting (cot), on a stratified sample of each test split.")


def table8(layout: dict, score_files: list[str], tables_dir: str, inputs: dict | None = None,
           reports: list[str] | None = None) -> None:
    columns = [Column(n, t) for n, t in layout["tasks"]]
    ours = {j for j, _, paper in (_judge_rows(layout)) if paper is None}
    rows = [Row(f"{j}_{m}", t + (" (ours)" if j in ours and "ours" not in t else "") + f"_{{{m}}}", False)
            for j, t, _ in _judge_rows(layout) for m in layout["modes"]]
    files = {}
    for path in score_files:
        s = read_json(path)
        if s.get("macro_f1") is not None:
            files[(published.judge_row(s["detector"]), s["task"])] = s
    scores = {k: s["macro_f1"] for k, s in files.items()}
    intervals = {k: tuple(s["macro_f1_ci"]) for k, s in files.items() if s.get("macro_f1_ci")}
    ran = {j for j in ours for m in layout["modes"] for (row, _) in scores if row == f"{j}_{m}"}
    caption = CAPTION + (OURS_NOTE if ran else "")
    tags = Marks.from_scores(files, ours=set())
    tags.sampled.clear()  # every cell is on a sample: the caption says so, the lines under it give the sizes
    # the LaTeX in the paper's format (no interval, as Table 4's); the Markdown with each cell's interval
    latex, _ = render(rows, columns, scores, caption=caption + (f" {TEX_INTERVALS}" if intervals else ""),
                      label="tab:llm-judges", not_run=NOT_RUN, tags=tags)
    _, markdown = render(rows, columns, scores, caption=caption, label="tab:llm-judges", not_run=NOT_RUN,
                         intervals=intervals, tags=tags)
    if not scores:
        note = f"No judge ran: {layout.get('hint', 'no judge has an endpoint')}."
        latex += f"% {note}\n"
        markdown += f"\n{note}\n"
    # a report names the judge's model; its file (judges/{task}/{judge}_{mode}.report.json) names its row
    loaded = [{**read_json(r), "row": Path(r).name.removesuffix(".report.json")} for r in reports or []]
    notes = judge_notes(loaded, dict(layout["tasks"]), files)
    if notes:
        markdown += "\n" + "\n".join(notes) + "\n"
    latex, markdown = with_inputs(latex, markdown, inputs)
    write_text(latex, beside(tables_dir, "tab", "table8", "tex"))
    write_text(markdown, beside(tables_dir, "tab", "table8", "md"))


TEX_INTERVALS = ("Like the paper's, this table prints no interval: each cell's 95% bootstrap interval is in table8.md "
                 "and the judge's score file (macro_f1_ci).")


# A judge of our own (the packaged local model) is not one of the paper's: its rows say so and are
# compared with the paper's judges only side by side (reproduction.md), never averaged with them.
OURS_NOTE = (" Rows marked (ours) are judges the paper did not run; they sit beside the paper's judges, "
             "never in an average with them.")


def _judge_rows(layout: dict) -> list[tuple[str, str, str | None]]:
    """(judge, title, the paper's Table 8 judge it is or None) from the layout."""
    return [(j[0], j[1], j[2] if len(j) > 2 else None) for j in layout["judges"]]


def judge_notes(reports: list[dict], task_titles: dict, scores: dict | None = None) -> list[str]:
    """One line per judged cell: how many rows of how many, of which classes (its score file,
    where given: (judge_mode, task) -> score; a report's `row` is its judge_mode), and the
    unparseable answers (scored as wrong), with the judge's model card where it was served here."""
    lines, cards = [], {}
    for r in sorted(reports, key=lambda r: (r.get("judge", ""), r.get("mode", ""), r.get("task", ""))):
        task = task_titles.get(r.get("task"), r.get("task", "?"))
        cut = f"; {r['programs_cut']} programs cut to {r['code_cut_to_chars']:,} characters" \
            if r.get("programs_cut") else ""
        row = r.get("row") or f"{r['judge']}_{r['mode']}"
        per_class = ((scores or {}).get((row, r.get("task"))) or {}).get("per_class") or {}
        classes = ", ".join(f"{c} {int(v['support'])}" for c, v in per_class.items() if v.get("support"))
        parsed = r["judged"] - r["abstentions"]
        how = "; every answer held to the prompt's JSON label (constrained decoding)" if r.get("constrained") else ""
        lines.append(f"- {r['judge']} {r['mode']} on {task}: {r['judged']:,} of {r['test_rows']:,} test rows "
                     f"(a seeded sample stratified by class, language and domain{': ' + classes if classes else ''}); "
                     f"parse rate {100 * parsed / max(1, r['judged']):.0f}%: {r['abstentions']:,} of {r['judged']:,} "
                     f"answers named no class (unparseable, scored as wrong){how}{cut}.")
        if r.get("model_card"):
            cards[r["judge"]] = r["model_card"]
    for judge, card in sorted(cards.items()):
        lines.append(f"- {judge}: {card_line(card)}")
    return lines


def card_line(card: dict) -> str:
    """A local model's card in one line (aicd.models.local_models' card.json, and how it was served)."""
    parts = [card.get("title") or card.get("name", "?")]
    if card.get("origin"):
        parts.append(str(card["origin"]))
    if card.get("licence"):
        parts.append(f"licence {card['licence']}")
    if card.get("parameters"):
        parts.append(f"{card['parameters'] / 1e6:.1f}M parameters")
    if card.get("quantisation"):
        parts.append(str(card["quantisation"]))
    wheel = card.get("wheel") or {}
    if wheel.get("package"):
        parts.append(f"from the pinned wheel {wheel['package']} {wheel.get('version', '')} (sha256 "
                     f"{str(wheel.get('sha256', ''))[:12]}…)")
    if card.get("served_by"):
        parts.append(f"served by {card['served_by']}")
    return "; ".join(parts)


def generation_report(reports: list[str], disabled: list[str], hint: str, out_json: str, out_md: str) -> None:
    per_model = [read_json(p) for p in reports]
    totals = {k: sum(r[k] for r in per_model) for k in ("rows", "requests_sent", "prompt_tokens", "completion_tokens", "cost")}
    write_json({"models": per_model, "totals": totals, "without_endpoint": disabled}, out_json)
    lines = ["# Generation report", "", "| model | family | rows | ok | requests sent | prompt tokens | completion tokens | cost (USD) |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in per_model:
        lines.append(f"| {r['model']} | {r['family']} | {r['rows']} | {r['status'].get('ok', 0)} | {r['requests_sent']} | "
                     f"{r['prompt_tokens']} | {r['completion_tokens']} | {r['cost']:.4f} |")
    lines.append(f"| **total** | | {totals['rows']} | | {totals['requests_sent']} | {totals['prompt_tokens']} | "
                 f"{totals['completion_tokens']} | {totals['cost']:.4f} |")
    if disabled:
        lines += ["", f"{len(disabled)} registry models have no endpoint and were not run ({hint})."]
    write_text("\n".join(lines) + "\n", out_md)


def table8_main(argv=None) -> None:
    t8 = argparse.ArgumentParser(prog="python -m aicd.report table8", description="Table 8 from judge scores")
    t8.add_argument("--layout", required=True, type=json_arg,
                    help='{"tasks": [[name, title]], "judges": [[name, title]], "modes": [...], "hint": str}')
    t8.add_argument("--scores", nargs="*", default=[])
    t8.add_argument("--tables-dir", required=True)
    t8.add_argument("--inputs", default=None, help=f"{SHOWN.inputs()} (the input fingerprint)")
    t8.add_argument("--reports", nargs="*", default=[], help="the judges' report files (rows judged, unparseable)")
    args = t8.parse_args(argv)
    table8(args.layout, args.scores, args.tables_dir, read_json(args.inputs) if args.inputs else None, args.reports)


def generation_main(argv=None) -> None:
    gen = argparse.ArgumentParser(prog="python -m aicd.report generation",
                                  description="token and cost totals per generator")
    gen.add_argument("--reports", nargs="*", default=[])
    gen.add_argument("--disabled", type=json_arg, default={"models": [], "hint": ""})
    gen.add_argument("--out-json", required=True)
    gen.add_argument("--out-md", required=True)
    args = gen.parse_args(argv)
    generation_report(args.reports, args.disabled["models"], args.disabled["hint"], args.out_json, args.out_md)

