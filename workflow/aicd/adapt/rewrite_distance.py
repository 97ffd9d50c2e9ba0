"""The rewrite distance as a zero-shot criterion (Raidar, Mao et al., ICLR 2024): asked to
rewrite a program, an LLM changes machine-written code less than human code. The criterion is
the similarity of a program to the local model's rewrite of it (aicd.adapt.counterparts,
protocol hybrid_rewrite): higher = more machine-like. Nothing is fitted.

Similarity: difflib's ratio over the two programs' token sequences (words and single punctuation
marks; whitespace and layout do not count), 2·matches / (len(a) + len(b)). A rewrite cut at its
token cap is compared with as much of the program as it covers (the program's first tokens, as
many as the rewrite has), so a long program is not called human for the cap alone."""

from __future__ import annotations

import difflib
import re

import numpy as np

TOKEN = re.compile(r"\w+|[^\w\s]")


def tokens(code: str) -> list[str]:
    return TOKEN.findall(code or "")


def similarity(program: str, rewrite: str, cut: bool = False) -> float:
    """Token-sequence similarity in [0, 1] of a program and its rewrite; `cut`: the rewrite ended
    at its token cap (compare it with the program's beginning)."""
    a, b = tokens(program), tokens(rewrite)
    if cut and len(b) < len(a):
        a = a[:len(b)]
    if not a or not b:
        return float("nan")
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def criterion(programs, rewrites, cut=None) -> np.ndarray:
    """The criterion of each program (NaN where its rewrite is missing or empty)."""
    cut = [False] * len(programs) if cut is None else cut
    return np.array([similarity(p, r, c) if isinstance(r, str) and r.strip() else np.nan
                     for p, r, c in zip(programs, rewrites, cut)], dtype=float)
