"""What names a causal LM's weights in the key of its token statistics, kept once computed per
text (aicd.common.text_cache: keyed by the weights' identity, the reference model's, the window
and the dtype, and the text)."""

from __future__ import annotations

import json
from pathlib import Path


def model_identity(path: str) -> str:
    """What names a model's weights: a pinned model's weights hash (its card), else the folder
    with the sizes and modification times of its files (a Hub snapshot folder names its commit)."""
    from ..models.local_models import card_of_folder

    card = card_of_folder(path)
    if card and card.get("weights_sha256"):
        return f"sha256:{card['weights_sha256']}"
    folder = Path(path)
    files = sorted((p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in folder.iterdir() if p.is_file()) \
        if folder.is_dir() else []
    return f"{folder.resolve()}:{json.dumps(files)}"
