"""The rows a fit trains on and their tokens: a seeded, class-stratified cap on train and
validation rows, the hashes that key the token cache and a run's fingerprint, and TokenCache,
which tokenises a split in chunks into Arrow (on disk, keyed by tokenizer, window and texts) so
a task's tokens are computed once and shared by every epoch, resumed job and encoder with the
same vocabulary."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path

import numpy as np

from ...common.errors import AicdError
from ...models.pretrained import TEXT_PREP_VERSION, special_token_escaper

log = logging.getLogger("aicd.detectors.encoder")


def _stable_hash(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _text_key(texts, labels) -> str:
    h = hashlib.sha256()
    for t, lab in zip(texts, labels):
        h.update(f"{lab}\0{t}\0".encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


def stratified_cap(y: np.ndarray, n: int | None, seed: int) -> np.ndarray:
    """Indices of a seeded, class-stratified sample of at most n rows (all rows when n is None)."""
    idx = np.arange(len(y))
    if n is None or n >= len(y):
        return idx
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(y, return_counts=True)
    quota = np.maximum(1, np.floor(counts / counts.sum() * n)).astype(int)
    picked = [rng.permutation(idx[y == c])[:q] for c, q in zip(classes, quota)]
    return np.sort(np.concatenate(picked))


def fit_rows(X, y, X_val, y_val, max_train_rows: int | None, max_validation_rows: int | None,
             seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, X_val, y_val) a fit trains and validates on, as object arrays, each split capped by
    a seeded, class-stratified sample; a clear error when train holds fewer than two classes or
    no validation rows are given (the checkpoint is chosen on them)."""
    X, y = np.asarray(X, dtype=object), np.asarray(y, dtype=object)
    train_idx = stratified_cap(y, max_train_rows, seed)
    X, y = X[train_idx], y[train_idx]
    if len(np.unique(y)) < 2:
        raise AicdError("the train split has fewer than two classes: nothing to learn")
    if X_val is None or len(X_val) == 0:
        raise AicdError("an encoder needs a validation split to choose its checkpoint")
    X_val, y_val = np.asarray(X_val, dtype=object), np.asarray(y_val, dtype=object)
    val_idx = stratified_cap(y_val, max_validation_rows, seed)
    return X, y, X_val[val_idx], y_val[val_idx]


class TokenCache:
    """Tokenised splits on disk, keyed by tokenizer content, window and the texts: tokenised
    once per task and tokenizer (encoders that share a vocabulary share it), reused by every
    epoch and by a resumed job."""

    chunk_rows = 8192  # texts tokenised per call; the tokens go to Arrow chunk by chunk

    def __init__(self, root: str | os.PathLike | None, chunk_rows: int | None = None):
        self.root = Path(root) if root else None
        if chunk_rows:
            self.chunk_rows = chunk_rows

    @staticmethod
    def tokenizer_key(tokenizer) -> str:
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is not None:  # the runtime truncation/padding state is not part of the vocabulary
            spec = json.loads(backend.to_str())
            spec.pop("truncation", None), spec.pop("padding", None)
            body = json.dumps(spec, sort_keys=True)
        else:
            body = json.dumps(tokenizer.get_vocab(), sort_keys=True)
        return _stable_hash(type(tokenizer).__name__, body, tokenizer.truncation_side)

    @staticmethod
    def texts_hash(texts) -> str:
        """sha256 of the texts, fed one row at a time (no joined copy of the split); each row
        length-prefixed, so no two lists of rows hash alike."""
        h = hashlib.sha256()
        for t in texts:
            b = str(t).encode("utf-8", "surrogatepass")
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
        return h.hexdigest()

    def tokenize(self, tokenizer, texts: np.ndarray, window: int):
        """-> datasets.Dataset with input_ids (int32) and length (no padding). Tokenised
        `chunk_rows` texts at a time, each chunk written to an Arrow stream (memory-mapped from
        the cache folder; in memory as compact Arrow when there is no cache folder)."""
        import datasets
        import pyarrow as pa
        texts = np.asarray(texts, dtype=object)
        key = _stable_hash(self.tokenizer_key(tokenizer), window, len(texts), self.texts_hash(texts),
                           TEXT_PREP_VERSION)
        path = self.root / key if self.root else None
        if path is not None and (path / "dataset_info.json").is_file():
            log.info("tokens from cache %s", path)
            return datasets.load_from_disk(str(path))
        started = time.perf_counter()
        escape = special_token_escaper(tokenizer)
        schema = pa.schema([("input_ids", pa.list_(pa.int32())), ("length", pa.int32())])
        total = [0]

        def chunks():
            for start in range(0, len(texts), self.chunk_rows):
                ids = tokenizer(escape(texts[start:start + self.chunk_rows]), truncation=True,
                                max_length=window)["input_ids"]
                lengths = [len(x) for x in ids]
                total[0] += sum(lengths)
                yield pa.record_batch([pa.array(ids, type=pa.list_(pa.int32())), pa.array(lengths, type=pa.int32())],
                                      schema=schema)

        if path is None:
            ds = datasets.Dataset(datasets.table.InMemoryTable(pa.Table.from_batches(list(chunks()), schema=schema)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.parent / f".{key}.{os.getpid()}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            try:
                stream = tmp / "tokens.arrow"
                with pa.OSFile(str(stream), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
                    for batch in chunks():
                        writer.write_batch(batch)
                ds = datasets.Dataset.from_file(str(stream))
                ds.save_to_disk(str(tmp / "dataset"))
                del ds
                try:
                    os.replace(tmp / "dataset", path)
                except OSError:  # another job wrote the same key first
                    pass
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            ds = datasets.load_from_disk(str(path))
        log.info("tokenised %d texts in %.1fs (mean %.0f tokens)", len(texts), time.perf_counter() - started,
                 total[0] / len(texts) if len(texts) else 0)
        return ds
