"""A causal LM's token statistics per text, kept once computed: every feature set and task of a
run that scores the same text with the same model, window and precision reads them from here
(the out-of-distribution protocol's eleven tasks share most of their rows). SQLite under the
run's results root (results/cache/features/stats.sqlite), keyed by a hash of what makes the numbers: the
weights' identity, the reference model's, the window and the dtype, and the text."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import numpy as np


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


class StatsCache:
    def __init__(self, folder: str | Path, settings: dict):
        Path(folder).mkdir(parents=True, exist_ok=True)
        self.prefix = json.dumps(settings, sort_keys=True).encode() + b"\0"
        self._db = sqlite3.connect(str(Path(folder) / "stats.sqlite"), timeout=120, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS stats (key TEXT PRIMARY KEY, value BLOB NOT NULL)")

    def key(self, text: str) -> str:
        return hashlib.sha256(self.prefix + text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, texts: list[str], width: int) -> tuple[np.ndarray, np.ndarray]:
        """(values, found): the cached rows (NaN where absent) and which were there."""
        out, found = np.full((len(texts), width), np.nan), np.zeros(len(texts), dtype=bool)
        keys = [self.key(t) for t in texts]
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            rows = dict(self._db.execute(f"SELECT key, value FROM stats WHERE key IN ({','.join('?' * len(part))})",
                                         part).fetchall())
            for i, k in enumerate(part, start):
                if k in rows:
                    out[i], found[i] = np.frombuffer(rows[k], dtype=np.float64), True
        return out, found

    def put(self, texts: list[str], values: np.ndarray) -> None:
        rows = [(self.key(t), np.asarray(v, dtype=np.float64).tobytes()) for t, v in zip(texts, values)]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO stats VALUES (?, ?)", rows)

    def close(self) -> None:
        self._db.close()
