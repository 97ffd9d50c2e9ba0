"""Ours against the paper's Table 4 for one task, as paired bars: a row per detector in the
paper's order, the paper's value (grey) over its +-2 point band, ours below it with its 95%
interval, coloured by whether it is within +-2 points (green), has the paper's value inside its
interval (orange) or neither (red); a row whose detector is not the paper's (its config says so)
is grey and hatched and says "not comparable" instead of a difference. Rows only one side has
keep their one bar and say so; each row is labelled with the paper's row and, where it says
more, our detector's own title."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on build machines or cluster nodes
import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from .figures import write_figure
from .table4 import plain_title

BAND = 2.0
COLOURS = {"within": "tab:green", "inside": "tab:orange", "neither": "tab:red", "ours only": "tab:blue",
           "not comparable": "0.8", "paper": "0.55"}


def _verdict(cell: dict) -> str:
    if cell["status"] in ("ours only", "not comparable"):
        return cell["status"]
    return "within" if cell["within"] else ("inside" if cell.get("inside") else "neither")


def label(cell: dict) -> str:
    """The paper's row, ours where its title says more, and the cell's marks."""
    text = plain_title(cell["row"])
    own = cell.get("title")
    if own and plain_title(own) != text:
        text += f"\nours: {plain_title(own)}"
    return text + "".join(f" [{m}]" for m in cell.get("marks", []))


def reproduction_figure(cells: list[dict], title: str, pdf_path: str | Path, png_path: str | Path,
                        note: str | None = None) -> None:
    rows = []
    for c in cells:
        if c["row"] not in [r["row"] for r in rows]:
            rows.append(c)
    height = 0.42
    fig, ax = plt.subplots(figsize=(8.0, 1.2 + 0.38 * max(len(rows), 1)))
    for i, c in enumerate(rows):
        y = len(rows) - 1 - i
        if c.get("paper") is not None:
            ax.barh(y + height / 2, c["paper"], height, color=COLOURS["paper"])
            ax.fill_betweenx([y + 0.02, y + height - 0.02], c["paper"] - BAND, c["paper"] + BAND, color="tab:green",
                             alpha=0.25, lw=0)
        ours = c["ours"] if c.get("ours") is not None else c.get("ours_value") if c["status"] == "not comparable" \
            else None
        if ours is not None:
            ci = c.get("ci") or c.get("ours_ci")
            err = [[ours - ci[0]], [ci[1] - ours]] if ci else None
            ax.barh(y - height / 2, ours, height, color=COLOURS[_verdict(c)], xerr=err, capsize=2,
                    hatch="///" if c["status"] == "not comparable" else None, edgecolor="0.5" if
                    c["status"] == "not comparable" else None, error_kw={"elinewidth": 0.8, "ecolor": "black"})
            if c.get("delta") is not None:
                ax.text(max(ours, c["paper"]) + BAND + 1, y, f"Δ {c['delta']:+.1f}", va="center", fontsize=7)
            elif c["status"] == "not comparable":
                ax.text(max(ours, c.get("paper") or 0) + BAND + 1, y, "not comparable", va="center", fontsize=7,
                        color="0.3")
        else:
            ax.text((c.get("paper") or 0) + BAND + 1, y - height / 2, "not run here", va="center", fontsize=7,
                    color="0.3")
    labels = [label(c) for c in reversed(rows)]
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("macro-F1 × 100 (upper bar: the paper's Table 4; lower bar: ours with its 95% interval)")
    ax.set_title(title, fontsize=10)
    ax.legend(handles=[Patch(color=COLOURS["paper"], label="paper"),
                       Patch(color="tab:green", alpha=0.25, label=f"paper ±{BAND:g}"),
                       Patch(color=COLOURS["within"], label=f"ours, within ±{BAND:g}"),
                       Patch(color=COLOURS["inside"], label="ours, paper inside our interval"),
                       Patch(color=COLOURS["neither"], label="ours, neither"),
                       Patch(color=COLOURS["ours only"], label="ours only (not a row of the paper)"),
                       Patch(facecolor=COLOURS["not comparable"], edgecolor="0.5", hatch="///",
                             label="ours, not the paper's detector")],
              fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if not rows:
        ax.text(0.5, 0.5, "no cell of the paper's Table 4 for this task", ha="center", va="center",
                transform=ax.transAxes)
    if note:
        fig.text(0.01, 0.005, note, fontsize=7, va="bottom", color="0.25")
    fig.tight_layout(rect=(0, 0.03 if note else 0, 1, 1))
    write_figure(fig, pdf_path, png_path)
