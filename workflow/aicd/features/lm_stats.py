"""A causal LM's per-text token statistics as a feature set (kind `lm_stats`).

One forward pass per text of the scoring model (and of a reference model where one is named)
gives every statistic of aicd.lm.stats (mean log-likelihood, mean log-rank, mean entropy, and
the reference model's terms of Fast-DetectGPT and Binoculars), computed once per (model,
window, text) and shared by every criterion of the zero-shot panel
(aicd.detectors.zero_shot_lm) and by any trained kind that names the set (alone or in a concat).

Nothing is fitted: the same model scores every split. `rows` limits which rows are scored: a
seeded sample per split, stratified by class and language, so a CPU run can afford it (the full
demo's sizes are in config/demo_llm.yaml); the other rows hold NaN, and a zero-shot detector
predicts only the scored rows (its score file says it covers a sample). A text shorter than two
tokens has a token count and NaN elsewhere (counted in the report)."""

from __future__ import annotations

import logging

import numpy as np

from ..common.errors import AicdError
from ..common.params import Param, ParamSpec
from .base import Featurizer, register

log = logging.getLogger("aicd.features.lm_stats")
CACHE_CHUNK = 512  # texts scored, then cached, at a time

PARAMS = ParamSpec("the lm_stats feature set", (
    Param("model", (str,), None, "ours", "the scoring causal LM: package:NAME (a pinned model), a local folder "
          "or a Hub id"),
    Param("reference_model", (str,), None, "ours", "the reference model (Fast-DetectGPT's sampling model, "
          "Binoculars' observer; same tokenizer); null: the scoring model itself"),
    Param("window", (int,), 256, "ours", "tokens per text (longer code is truncated)", minimum=2),
    Param("batch_size", (int,), 8, "ours", "texts per forward pass", minimum=1),
    Param("device", (str,), "auto", "ours", "auto (CUDA when present), cpu or cuda"),
    Param("dtype", (str,), "auto", "ours", "auto (bfloat16 where the CPU or GPU has it, else float32), float32 "
          "or bfloat16: the backbone's precision; the LM head's reductions are float32"),
    Param("rows", (dict,), None, "ours", "rows scored per split, a seeded sample stratified by class and "
          "language, e.g. {train: 0, validation: 200, test: 400}; a split not named: every row"),
))


@register("lm_stats")
class LMStatsFeaturizer(Featurizer):
    """Token statistics of a causal LM per text; self-contained once built (the model is loaded
    on first use and never stored in the fitted file)."""

    max_threads = 8
    environment = "neural"
    named_columns = True
    # the detect job's check that --featurizer made --features re-featurizes no rows: it would
    # load the LM in every panel job; the names, and the parameters in the fitted file, say it
    verify_rows = 0
    PARAMS = PARAMS

    def __init__(self, seed: int = 0, **params) -> None:
        self.seed = seed
        self.params = {**PARAMS.defaults(), **params}
        if not self.params["model"]:
            raise AicdError("feature kind lm_stats needs params.model: package:NAME, a local folder or a Hub id")
        rows = self.params["rows"] or {}
        bad = {k: v for k, v in rows.items() if k not in ("train", "validation", "test")
               or not isinstance(v, int) or isinstance(v, bool) or v < 0}
        if bad:
            raise AicdError(f"lm_stats params.rows: {bad} is not a row count (>= 0) per split "
                            "(train, validation, test)")
        self.threads = 1
        self._scorer = self._cache = self.cache_dir = None

    @property
    def feature_names(self) -> list[str]:
        from ..lm.stats import STAT_NAMES

        return list(STAT_NAMES)

    def sample_sizes(self) -> dict[str, int]:
        """{split: rows to score} for the splits scored in part (aicd.features.compute)."""
        return dict(self.params["rows"] or {})

    def scorer(self):
        if self._scorer is None:
            from ..lm.stats import TokenStats

            p = self.params
            self._scorer = TokenStats(p["model"], p["reference_model"], window=p["window"],
                                      batch_size=p["batch_size"], device=p["device"], dtype=p["dtype"],
                                      threads=max(1, int(self.threads)))
        return self._scorer

    def fit_transform(self, rows) -> np.ndarray:
        return self.transform(rows)  # zero-shot: nothing is fitted

    def transform(self, rows) -> np.ndarray:
        texts = rows["code"].astype(str).tolist()
        if not texts:
            return np.zeros((0, len(self.feature_names)), dtype=np.float32)
        cache = self.cache()
        stats, found = cache.get(texts, len(self.feature_names)) if cache else (None, np.zeros(len(texts), bool))
        if stats is None:
            stats = np.full((len(texts), len(self.feature_names)), np.nan)
        todo = np.flatnonzero(~found)
        for start in range(0, len(todo), CACHE_CHUNK):  # kept a chunk at a time: a killed job keeps its work
            part = todo[start:start + CACHE_CHUNK]
            fresh = self.scorer().compute([texts[i] for i in part])
            stats[part] = fresh
            if cache:
                cache.put([texts[i] for i in part], fresh)
            if len(todo) > CACHE_CHUNK:
                log.info("lm_stats: %d of %d texts scored", min(start + CACHE_CHUNK, len(todo)), len(todo))
        self.scored_ = getattr(self, "scored_", 0) + len(todo)
        self.cached_ = getattr(self, "cached_", 0) + int(found.sum())
        self.too_short_ = getattr(self, "too_short_", 0) + int((stats[:, 0] < 1).sum())
        return stats.astype(np.float32)

    def cache(self):
        """The run's cache of these statistics (cache_dir, set by the features job), or None."""
        if not getattr(self, "cache_dir", None):
            return None
        if getattr(self, "_cache", None) is None:
            from ..common.text_cache import TextCache
            from ..lm.stats_cache import model_identity
            from ..models.pretrained import resolve_model

            p = self.params
            self._cache = TextCache(self.cache_dir, {
                "model": model_identity(resolve_model(p["model"])), "window": p["window"], "dtype": p["dtype"],
                "reference": model_identity(resolve_model(p["reference_model"])) if p["reference_model"] else None})
        return self._cache

    def report_fields(self, sums: dict) -> dict:
        from ..models.local_models import card_of_folder
        from ..models.pretrained import resolve_model

        out = {"model": self.params["model"], "reference_model": self.params["reference_model"],
               "window": self.params["window"], "dtype": str(self.scorer().dtype), "rows": self.params["rows"],
               "texts_scored": getattr(self, "scored_", 0), "texts_from_cache": getattr(self, "cached_", 0),
               "too_short": getattr(self, "too_short_", 0)}  # under two tokens: NaN, predicted human
        card = card_of_folder(resolve_model(self.params["model"]))
        if card:
            out["model_card"] = card
        return out

    def describe(self) -> dict:
        """Kind and parameters, and the pinned model's card (origin, licence, size, quantisation)
        where the scoring model is one: nothing is loaded for it."""
        out = super().describe()
        model = self.params["model"]
        if model.startswith("package:"):
            from ..models.local_models import card_of_folder, is_pinned_model, model_folder

            name = model.split(":", 1)[1]
            card = card_of_folder(model_folder(name)) if is_pinned_model(name) else None
            if card:
                out["model_card"] = card
        return out

    def __getstate__(self):  # the model is loaded again where the fitted file is used
        state = dict(self.__dict__)
        state["_scorer"] = state["_cache"] = state["cache_dir"] = None
        return state
