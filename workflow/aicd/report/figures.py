"""Confusion-matrix figure (row-normalised) for one detector on one task, as PDF and PNG."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on build machines or cluster nodes
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..io import atomic_path  # noqa: E402


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
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    for path, fmt in ((pdf_path, "pdf"), (png_path, "png")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=150)
    plt.close(fig)
