"""Values computed from one text, kept once computed: every job of a run that computes the same
values of the same text reads them from here. The tasks of one run share their rows (the demo's
two tasks all 6,016; the out-of-distribution protocol's eleven most of theirs), and the
calibration jobs of one task share the reference code: a causal LM's token statistics
(aicd.features.lm_stats), the AST features and the stylometry are each computed once per text.

SQLite under the run's results root (results/cache/features/stats.sqlite), keyed by a hash of the
settings that make the values and of the text: for the LM statistics the weights' identity, the
window and the dtype; for the AST features and the stylometry the source of the code that
computes them (an edit to it is a new key, never a stale value) and the grammars' versions. Jobs
running at once share it (WAL: one host's jobs, not a network file system's); two that compute
the same text at once both compute it and write the same value."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

FILE = "stats.sqlite"
BATCH = 500  # keys per SELECT (SQLite's default limit on bound parameters is 999)


class TextCache:
    def __init__(self, folder: str | Path, settings: dict):
        Path(folder).mkdir(parents=True, exist_ok=True)
        self.prefix = json.dumps(settings, sort_keys=True).encode() + b"\0"
        self._db = sqlite3.connect(str(Path(folder) / FILE), timeout=120, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS stats (key TEXT PRIMARY KEY, value BLOB NOT NULL)")

    def key(self, text: str) -> str:
        return hashlib.sha256(self.prefix + text.encode("utf-8", "surrogatepass")).hexdigest()

    def get_blobs(self, texts: list[str]) -> list[bytes | None]:
        """Each text's stored value, or None where it has none."""
        keys = [self.key(t) for t in texts]
        out: list[bytes | None] = []
        for start in range(0, len(keys), BATCH):
            part = keys[start:start + BATCH]
            rows = dict(self._db.execute(f"SELECT key, value FROM stats WHERE key IN ({','.join('?' * len(part))})",
                                         part).fetchall())
            out += [rows.get(k) for k in part]
        return out

    def put_blobs(self, texts: list[str], values: list[bytes]) -> None:
        """One transaction for all of them (the connection autocommits: each row alone would be a
        commit and a sync of its own, thousands of them for one chunk of AST rows)."""
        rows = [(self.key(t), v) for t, v in zip(texts, values)]
        if not rows:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany("INSERT OR REPLACE INTO stats VALUES (?, ?)", rows)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def get(self, texts: list[str], width: int) -> tuple[np.ndarray, np.ndarray]:
        """(values, found): float64 rows of `width` (NaN where absent) and which were there."""
        out, found = np.full((len(texts), width), np.nan), np.zeros(len(texts), dtype=bool)
        for i, blob in enumerate(self.get_blobs(texts)):
            if blob is not None:
                out[i], found[i] = _row(blob), True
        return out, found

    def put(self, texts: list[str], values: np.ndarray) -> None:
        self.put_blobs(texts, [_row_bytes(v) for v in values])

    def values(self, texts: list[str], compute: Callable[[list[int]], list], encode: Callable[[object], bytes],
               decode: Callable[[bytes], object]) -> list:
        """Every text's value: the stored ones decoded, the others computed (compute(indices of the
        texts not stored) -> their values, in that order) and stored encoded."""
        out = [None if blob is None else decode(blob) for blob in self.get_blobs(texts)]
        todo = [i for i, v in enumerate(out) if v is None]
        if todo:
            for i, value in zip(todo, compute(todo)):
                out[i] = value
            self.put_blobs([texts[i] for i in todo], [encode(out[i]) for i in todo])
        return out

    def rows(self, texts: list[str], width: int, compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """float64 rows of every text: the stored ones read, the others computed (compute(texts)
        -> rows) and stored."""
        def fresh(todo: list[int]) -> np.ndarray:
            return np.asarray(compute([texts[i] for i in todo]), dtype=np.float64).reshape(len(todo), width)

        found = self.values(texts, fresh, _row_bytes, _row)
        return np.vstack(found) if found else np.zeros((0, width))

    def __enter__(self) -> TextCache:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()


def _row_bytes(row) -> bytes:
    """A float64 row as stored (get, put and rows read and write the same encoding)."""
    return np.asarray(row, dtype=np.float64).tobytes()


def _row(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float64)


@functools.cache
def source_identity(*modules: str, packages: tuple[str, ...] = ()) -> str:
    """What names the code that computes a value: the sha256 of these modules' source files (by
    import name) and the versions of these installed packages (e.g. the grammars a parser reads)."""
    digest = hashlib.sha256()
    for name in modules:
        digest.update(Path(sys.modules[name].__file__).read_bytes())
    for package in packages:
        try:
            digest.update(f"{package}=={importlib.metadata.version(package)}".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{package} missing".encode())
    return digest.hexdigest()
