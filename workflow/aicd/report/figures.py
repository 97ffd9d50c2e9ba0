"""Confusion-matrix figure (row-normalised) for one detector on one task, as PDF and PNG; and
`write_figure`, the one place every figure of the report is written: same inputs, same bytes (the
PDF without its creation date, the PNG without a timestamp), so two runs' results folders can be
compared byte for byte (`aicd verify`)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on build machines or cluster nodes
import matplotlib.pyplot as plt
import numpy as np

from ..common.io import atomic_path

# matplotlib writes the PDF's creation date unless told not to; its PNGs carry no time, only the
# Software key (matplotlib's version), the same for the same installation.
PDF_METADATA = {"CreationDate": None, "ModDate": None}


def write_figure(fig, pdf_path: str | Path, png_path: str | Path, dpi: int = 150) -> None:
    """Write `fig` as PNG and PDF, each atomically, and close it. A figure laid out by its layout
    engine (constrained layout) is laid out once, for the PNG, and the PDF keeps those positions:
    each save would lay it out again, a third of the report's figure time."""
    for path, fmt in ((png_path, "png"), (pdf_path, "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi, metadata=PDF_METADATA if fmt == "pdf" else None)
        if fig.get_layout_engine() is not None:
            fig.set_layout_engine("none")
    plt.close(fig)


def confusion_figure(scores: dict, title: str, pdf_path: str | Path, png_path: str | Path) -> None:
    labels = scores["labels"]
    matrix = np.asarray(scores["confusion"]["row_normalized"], dtype=float)
    size = max(4.0, 0.55 * len(labels) + 2.5)
    fig, ax = plt.subplots(figsize=(size, size * 0.9))
    image = ax.imshow(matrix, vmin=0.0, vmax=1.0, cmap="Blues")
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    ax.set_title(title, fontsize=10)
    if len(labels) <= 14:
        for i in range(len(labels)):
            for j in range(len(labels)):
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if matrix[i, j] > 0.5 else "black")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="share of the gold class's rows")
    fig.tight_layout()
    write_figure(fig, pdf_path, png_path)
