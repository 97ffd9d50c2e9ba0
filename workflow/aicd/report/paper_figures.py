"""The paper's figures, one matplotlib style, each as PDF (for LaTeX) and PNG (for the report):

- confusion_{task}_best_percent: row-normalised confusion matrix in percent of the best trained
  detector per task (the paper's Figures 1-2, for T2 and T3), chosen only on what can carry a
  ranking (aicd.report.marks.ranked_best: never on a class under the minimum of test rows; the
  title says the basis where it is not macro-F1); confusion_{task}_all: every detector of
  the task (Figures 7, 9, for T2 and T3; the paper has neither for T1);
- language_{task}: macro-F1 per language for every detector (Figure 4); a language whose test rows
  hold one class is hatched and named, never drawn as a score;
- subsets_{task}: per-subset macro-F1 for every detector (Figures 5, 6, 8); a one-class subset's
  bar is that class's recall, hatched, as in Tables 5-7;
- data_distribution, data_distribution_language: lines of code, average and maximum line length,
  alphanumeric fraction and AST depth per label and per language (Figure 3), from the
  measurements the normalisation stage stores (rows it kept)."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ..common.io import read_json, write_json
from ..common.stagecli import json_arg
from ..outputs import SHOWN
from .figures import write_figure
from .marks import MIN_CLASS_SUPPORT, ranked_best
from .subset_tables import subset_value
from .table4 import plain_title

STYLE = {"font.size": 9, "axes.titlesize": 10, "axes.spines.top": False, "axes.spines.right": False,
         "figure.dpi": 110}
plt.rcParams.update(STYLE)
MEASUREMENTS = [("lines_of_code", "lines of code", True), ("avg_line_length", "average line length", False),
                ("max_line_length", "maximum line length", True), ("alphanumeric_fraction", "alphanumeric fraction", False),
                ("ast_depth", "AST depth", False)]


def save_figure(fig, stem: str | Path) -> list[str]:
    """stem.pdf and stem.png (aicd.report.figures.write_figure); a figure made with a layout
    engine (constrained: room for a suptitle) keeps it, the others are tightened."""
    stem = Path(stem)
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    paths = [str(stem.with_name(stem.name + f".{fmt}")) for fmt in ("pdf", "png")]
    write_figure(fig, *paths)
    return paths


def _confusion_axes(ax, scores: dict, title: str, annotate: bool = True):
    labels = scores["labels"]
    matrix = 100 * np.asarray(scores["confusion"]["row_normalized"], dtype=float)
    ax.imshow(matrix, vmin=0, vmax=100, cmap="Blues")
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    ax.set_title(title, fontsize=8)
    if annotate and len(labels) <= 14:
        for i in range(len(labels)):
            for j in range(len(labels)):
                ax.text(j, i, f"{matrix[i, j]:.0f}", ha="center", va="center", fontsize=6,
                        color="white" if matrix[i, j] > 50 else "black")


def confusion_percent(scores: dict, title: str, stem) -> list[str]:
    n = len(scores["labels"])
    size = max(4.0, 0.55 * n + 2.5)
    fig, ax = plt.subplots(figsize=(size, size * 0.9))
    _confusion_axes(ax, scores, title)
    fig.colorbar(ax.images[0], ax=ax, fraction=0.046, pad=0.04, label="% of gold class")
    return save_figure(fig, stem)


def confusion_grid(all_scores: dict[str, dict], titles: dict[str, str], task_title: str, stem) -> list[str]:
    dets = list(all_scores)
    cols = min(4, len(dets))
    rows = math.ceil(len(dets) / cols)
    n = max(len(s["labels"]) for s in all_scores.values())
    cell = max(2.8, 0.35 * n + 1.5)
    fig, axes = plt.subplots(rows, cols, figsize=(cell * cols, cell * rows + 0.5), squeeze=False, layout="constrained")
    for ax, det in zip(axes.flat, dets):
        s = all_scores[det]
        _confusion_axes(ax, s, f"{plain_title(titles.get(det, det))} ({100 * s['macro_f1']:.1f})", annotate=n <= 6)
    for ax in list(axes.flat)[len(dets):]:
        ax.axis("off")
    fig.colorbar(axes.flat[0].images[0], ax=axes, shrink=0.5, label="% of the gold class's rows")
    fig.suptitle(f"{task_title}: row-normalised confusion matrices (%), macro-F1 × 100 in brackets")
    return save_figure(fig, stem)


def language_figure(all_scores: dict[str, dict], titles: dict[str, str], task_title: str, stem) -> list[str] | None:
    """macro-F1 x 100 per detector and language; a language whose test rows hold one class is
    hatched and says so instead of a number (its macro-F1 measures that class alone)."""
    from matplotlib.patches import Rectangle

    langs = sorted({lang for s in all_scores.values() for lang in (s.get("by") or {}).get("language", {})})
    if not langs:
        return None
    dets = list(all_scores)
    matrix = np.full((len(dets), len(langs)), np.nan)
    one = np.full((len(dets), len(langs)), "", dtype=object)
    for i, d in enumerate(dets):
        for j, lang in enumerate(langs):
            e = all_scores[d].get("by", {}).get("language", {}).get(lang)
            if e and e.get("one_class"):
                one[i, j] = e["one_class"]
            elif e and e.get("macro_f1") is not None:
                matrix[i, j] = 100 * e["macro_f1"]
    fig, ax = plt.subplots(figsize=(1.6 + 0.75 * len(langs), 1.6 + 0.35 * len(dets)))
    im = ax.imshow(matrix, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(langs)), langs, rotation=45, ha="right")
    ax.set_yticks(range(len(dets)), [plain_title(titles.get(d, d)) for d in dets], fontsize=7)
    for i in range(len(dets)):
        for j in range(len(langs)):
            if one[i, j]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.92", edgecolor="0.6", hatch="///", lw=0))
                ax.text(j, i, f"{one[i, j]}\nonly", ha="center", va="center", fontsize=6, color="0.2")
            elif not np.isnan(matrix[i, j]):
                ax.text(j, i, f"{matrix[i, j]:.0f}", ha="center", va="center", fontsize=6,
                        color="white" if matrix[i, j] < 50 else "black")
    fig.colorbar(im, ax=ax, label="macro-F1 × 100")
    ax.set_title(f"{task_title}: macro-F1 × 100 per language\n(hatched: the language's test rows hold one class)",
                 fontsize=9)
    return save_figure(fig, stem)


def subset_figure(all_scores: dict[str, dict], titles: dict[str, str], labels: list[str], task_title: str,
                  stem) -> list[str] | None:
    subsets = sorted({k for s in all_scores.values() for k in (s.get("by") or {}).get("subset", {})})
    if not subsets:
        return None
    dets = list(all_scores)
    width = 0.8 / len(subsets)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.6 * len(dets) + 2), 3.6))
    colors = plt.get_cmap("tab10")
    for k, sub in enumerate(subsets):
        vals, hatch = [], []
        for d in dets:
            e = all_scores[d].get("by", {}).get("subset", {}).get(sub)
            v, one = subset_value(e, labels) if e else (None, None)
            vals.append(np.nan if v is None else v)
            hatch.append(bool(one))
        bars = ax.bar(np.arange(len(dets)) + k * width - 0.4 + width / 2, vals, width, label=sub, color=colors(k))
        for bar, h in zip(bars, hatch):
            if h:
                bar.set_hatch("///")
    ax.set_xticks(range(len(dets)), [plain_title(titles.get(d, d)) for d in dets], rotation=45, ha="right", fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("macro-F1")
    ax.set_title(f"{task_title}: performance per test subset (hatched: recall of a one-class subset)")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=colors(k), label=sub) for k, sub in enumerate(subsets)], fontsize=7, ncol=2)
    return save_figure(fig, stem)


def distribution_figures(tables: list[pd.DataFrame], stem_label, stem_language) -> list[str]:
    rows = pd.concat([t for t in tables if len(t)], ignore_index=True) if tables else pd.DataFrame()
    if rows.empty:
        return []
    if "reject" in rows.columns:
        rows = rows[rows["reject"].isna()]
    have = [(c, t, lg) for c, t, lg in MEASUREMENTS if c in rows.columns]
    paths = []
    for by, stem in (("label", stem_label), ("language", stem_language)):
        groups = sorted(rows[by].dropna().unique())
        fig, axes = plt.subplots(1, len(have), figsize=(3.2 * len(have), 3.2 if by == "label" else 3.8), squeeze=False,
                                 layout="constrained")
        for ax, (col, title, log) in zip(axes[0], have):
            data = [rows.loc[rows[by] == g, col].dropna().to_numpy() for g in groups]
            if by == "label":
                for g, d in zip(groups, data):
                    d = d[d > 0] if log else d
                    if len(d):
                        bins = np.logspace(np.log10(d.min()), np.log10(d.max() + 1), 30) if log else 30
                        ax.hist(d, bins=bins, histtype="step", density=True, label=f"{g} (n={len(d)})")
                if log:
                    ax.set_xscale("log")
                    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
                ax.set_ylabel("density")
            else:
                ax.boxplot([d if len(d) else [np.nan] for d in data], showfliers=False)
                ax.set_xticks(range(1, len(groups) + 1), groups, rotation=45, ha="right", fontsize=7)
                if log:
                    ax.set_yscale("log")
            ax.set_title(title)
        if by == "label":
            axes[0][0].legend(fontsize=7)
        fig.suptitle(f"Distribution of code properties per {by} ({len(rows)} rows kept by the filters)")
        paths += save_figure(fig, stem)
    return paths


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report figures", description=__doc__)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='JSON {"tasks": [[name, title, [labels]]], "detectors": [[name, title, is_dummy]]}')
    parser.add_argument("--scores", nargs="*", default=[])
    parser.add_argument("--measurements", nargs="*", default=[], help=SHOWN.normalized("*", "*"))
    parser.add_argument("--figures-dir", required=True)
    parser.add_argument("--out", required=True, help="JSON index of the figures written")
    args = parser.parse_args(argv)
    figs = Path(args.figures_dir)
    titles = {d: t for d, t, _ in args.layout["detectors"]}
    dummies = {d for d, _, dummy in args.layout["detectors"] if dummy}
    order = [d for d, _, _ in args.layout["detectors"]]
    loaded = [read_json(p) for p in args.scores]
    index = {"tasks": {}, "data": []}
    for task, task_title, labels in args.layout["tasks"]:
        scores = {s["detector"]: s for s in sorted(loaded, key=lambda s: order.index(s["detector"])
                                                   if s["detector"] in order else len(order))
                  if s["task"] == task and s.get("macro_f1") is not None}
        if not scores:
            continue
        entry = {}
        chosen = ranked_best(scores, dummies)
        if chosen is not None:  # nothing is chosen where fewer than two classes have enough test rows
            best, basis = chosen
            entry["best"], entry["best_basis"] = best, basis
            why = "" if basis == "macro-F1" else f"\nchosen on its classes of at least {MIN_CLASS_SUPPORT} test rows"
            entry["confusion_best"] = confusion_percent(
                scores[best], f"{task_title}: {plain_title(titles.get(best, best))} (macro-F1 "
                f"{100 * scores[best]['macro_f1']:.2f}){why}", figs / f"confusion_{task}_best_percent")
        entry["confusion_all"] = confusion_grid(scores, titles, task_title, figs / f"confusion_{task}_all")
        entry["language"] = language_figure(scores, titles, task_title, figs / f"language_{task}")
        entry["subsets"] = subset_figure(scores, titles, labels, task_title, figs / f"subsets_{task}")
        index["tasks"][task] = entry
    if args.measurements:
        wanted = {"label", "language", "reject", *[m for m, _, _ in MEASUREMENTS]}
        # only the measurement columns: the normalized tables' code would not fit a login node
        tables = [pd.read_parquet(p, columns=[c for c in pq.read_schema(p).names if c in wanted])
                  for p in args.measurements]
        index["data"] = distribution_figures(tables, figs / "data_distribution", figs / "data_distribution_language")
    write_json(relative_to(index, Path(args.out).parent), args.out)


def relative_to(index: dict, folder: Path) -> dict:
    """The index with each figure's path relative to the index's own folder: two runs under two
    results roots then write the same index (aicd verify compares it byte for byte)."""
    def rel(paths: list[str]) -> list[str]:
        return [os.path.relpath(p, folder) for p in paths]

    tasks = {task: {k: rel(v) if isinstance(v, list) else v for k, v in entry.items()}
             for task, entry in index["tasks"].items()}
    return {"tasks": tasks, "data": rel(index["data"])}

