"""The out-of-distribution table (results/tables/ood.md and .tex): macro-F1 with bootstrap 95%
intervals for every detector on every split of aicd.splits.ood, in distribution beside out of
distribution, plus the group means and minima over each kind of shift.

Input: records (detector, split, macro_f1, (lo, hi) or None) with scores in [0, 1], e.g. from
benchmarks/robust_ood.py --json (see `records_from_results`). A cell without an interval shows
the score alone; a group mean/minimum is left blank unless the detector has every split of the
group (a mean over fewer splits would read as comparable)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..common.io import read_json, write_text
from ..common.stagecli import json_arg
from ..outputs import SHOWN, wildcards_of
from .latex import latex_text
from .table4 import plain_title

SPLIT_ORDER_PREFIX = ("in_distribution", "codeaid", "lolo:", "lofo:")


def records_from_results(results: dict) -> list[tuple[str, str, float, tuple[float, float]]]:
    """{detector: {split: {"macro_f1", "ci"}}} -> records."""
    return [(det, split, r["macro_f1"], tuple(r["ci"]) if r.get("ci") else None)
            for det, by_split in results.items() for split, r in by_split.items()]


def _split_key(split: str) -> tuple[int, str]:
    for i, prefix in enumerate(SPLIT_ORDER_PREFIX):
        if split.startswith(prefix):
            return i, split
    return len(SPLIT_ORDER_PREFIX), split


def _grid(records):
    detectors = list(dict.fromkeys(r[0] for r in records))
    splits = sorted({r[1] for r in records}, key=_split_key)
    cells = {(d, s): (f, ci) for d, s, f, ci in records}
    return detectors, splits, cells


def _group_stats(cells, detector, splits, prefix):
    group = [s for s in splits if s.startswith(prefix)]
    if not group or any((detector, s) not in cells for s in group):
        return None
    vals = [cells[(detector, s)][0] for s in group]
    return float(np.mean(vals)), float(np.min(vals))


def _columns(splits):
    extra = [("LOLO mean", "lolo:", 0), ("LOLO min", "lolo:", 1), ("LOFO mean", "lofo:", 0), ("LOFO min", "lofo:", 1)]
    return [e for e in extra if any(s.startswith(e[1]) for s in splits)]


def _table(records, cell, missing: str):
    """(splits, group columns, rows): each row the detector, one cell per split formatted by
    `cell(f, lo, hi)` and the group means/minima; `missing` where there is no score."""
    detectors, splits, cells = _grid(list(records))
    extra = _columns(splits)
    rows = []
    for d in detectors:
        row = [d]
        for s in splits:
            f, ci = cells.get((d, s), (None, None))
            row.append(missing if f is None else f"{100 * f:.1f}" if ci is None else cell(100 * f, 100 * ci[0], 100 * ci[1]))
        for _, prefix, which in extra:
            stats = _group_stats(cells, d, splits, prefix)
            row.append(missing if stats is None else f"{100 * stats[which]:.1f}")
        rows.append(row)
    return splits, extra, rows


def markdown_table(records: Iterable) -> str:
    splits, extra, rows = _table(records, lambda f, lo, hi: f"{f:.1f} [{lo:.1f}, {hi:.1f}]", "")
    head = ["detector", *splits, *[e[0] for e in extra]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    note = ("\nMacro-F1 x 100 [bootstrap 95% interval over test rows]; trained on the SemEval trial data only; "
            "LOLO = leave one language out, LOFO = leave one family out (six largest families).\n")
    return "\n".join(lines) + "\n" + note




def latex_table(records: Iterable) -> str:
    splits, extra, rows = _table(records, lambda f, lo, hi: f"{f:.1f}\\,{{\\scriptsize[{lo:.1f}, {hi:.1f}]}}", "--")
    head = ["Detector", *[latex_text(s) for s in splits], *[e[0] for e in extra]]
    lines = [r"\begin{table*}[t]", r"\centering", r"\small", r"\resizebox{\textwidth}{!}{%",
             r"\begin{tabular}{l" + "c" * (len(head) - 1) + "}", r"\toprule", " & ".join(head) + r" \\", r"\midrule"]
    lines += [" & ".join([latex_text(row[0]), *row[1:]]) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}}",
              r"\caption{Out-of-distribution evaluation: macro-F1 ($\times 100$, bootstrap 95\% interval) trained on "
              r"the trial data only; LOLO/LOFO: leave one language/family out.}",
              r"\label{tab:ood}", r"\end{table*}"]
    return "\n".join(lines) + "\n"


def perturbation_table(records: Iterable, perturbed: Iterable) -> str:
    """Per detector and perturbation: the worst flip rate over the OOD splits and the largest
    macro-F1 drop (unperturbed minus perturbed). perturbed: (detector, split, kind, macro_f1,
    flip rate) records of the perturbed test sets."""
    base = {(d, s): f for d, s, f, _ in records}
    perturbed = list(perturbed)
    if not perturbed:
        return ""
    kinds = sorted({k for _, _, k, _, _ in perturbed})
    detectors = list(dict.fromkeys(d for d, *_ in perturbed))
    # the heading names the rewrites' module as every table made so far prints it (now
    # aicd.codetools.perturb): an output, kept byte for byte
    lines = ["", "### Under semantics-preserving perturbations (aicd.splits.perturb)", "",
             "Worst flip rate % over the splits (labels that change) / largest macro-F1 drop x 100.", "",
             "| detector | " + " | ".join(kinds) + " | worst flip rate |", "|" + "---|" * (len(kinds) + 2)]
    for d in detectors:
        cells, worst = [], 0.0
        for k in kinds:
            rows = [(s, f, flip) for dd, s, kk, f, flip in perturbed if dd == d and kk == k]
            if not rows:
                cells.append("")
                continue
            flips = max(flip for _, _, flip in rows)
            drops = [base[(d, s)] - f for s, f, _ in rows if (d, s) in base]
            worst = max(worst, flips)
            cells.append(f"{100 * flips:.1f} / {100 * max(drops):+.1f}" if drops else f"{100 * flips:.1f}")
        lines.append(f"| {d} | " + " | ".join(cells) + f" | {100 * worst:.1f} |")
    return "\n".join(lines) + "\n"


def write_tables(records: Iterable, md: str | Path, tex: str | Path, perturbed: Iterable = ()) -> tuple[Path, Path]:
    """Write the Markdown and LaTeX tables; returns both paths."""
    records = list(records)
    md, tex = Path(md), Path(tex)
    write_text(markdown_table(records) + perturbation_table(records, perturbed), md)  # atomic: never half-written
    write_text(latex_table(records), tex)
    return md, tex


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report ood", description=__doc__)
    parser.add_argument("--layout", required=True, type=json_arg)
    parser.add_argument("--scores", nargs="+", required=True, help=SHOWN.scores())
    parser.add_argument("--perturbed", nargs="*", default=[],
                        help=f"{SHOWN.test_set_scores(test_set='{set}')} of perturbed test sets")
    parser.add_argument("--out-md", required=True, help=SHOWN.tab("ood", "md"))
    parser.add_argument("--out-tex", required=True, help=SHOWN.tab("ood", "tex"))
    args = parser.parse_args(argv)
    titles, splits = args.layout["detectors"], args.layout["splits"]
    kinds = args.layout.get("perturbations") or {}
    records = []
    for path in args.scores:
        score = read_json(path)
        if score["task"] in splits and score.get("macro_f1") is not None:
            records.append((plain_title(titles.get(score["detector"], score["detector"])), splits[score["task"]],
                            score["macro_f1"], tuple(score["macro_f1_ci"]) if score.get("macro_f1_ci") else None))
    perturbed = []
    for path in args.perturbed:
        score, name = read_json(path), wildcards_of(path, "test_set_scores").test_set
        kind = kinds.get(score["task"], {}).get(name)
        if kind and score.get("flip_rate") and score.get("macro_f1") is not None:
            perturbed.append((plain_title(titles.get(score["detector"], score["detector"])), splits[score["task"]],
                              kind, score["macro_f1"], score["flip_rate"]["rate"]))
    write_tables(records, args.out_md, args.out_tex, perturbed)
