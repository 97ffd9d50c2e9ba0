"""The adapted fusion: a fitted fused detector (aicd.detectors.fused, model average) beside a part
fitted on the user's own reference programs and their machine counterparts, each part weighted
by how well it tells those programs from their counterparts.

Parts, each a score per program, higher = more machine-like, standardised on the reference
(mean 0, sd 1 over the reference humans' scores; out-of-fold scores for the part fitted on them):

- `lm`: the fused detector's LM part (its criteria with coefficients >= 0: its direction is the
  LM's, no training collection can turn it);
- `trained`: the fused detector's trained part (stylometry, the delexicalised view, TF-IDF),
  fitted on the training collections: it may lean either way on the user's code;
- `pair`: a logistic regression on character 2-4-gram TF-IDF fitted on the reference programs
  (human) against their counterparts (machine) alone: what tells the user's human code from
  the local model's code written from it.

Weights (`weights: separation`): a part's weight is max(0, 2·AUROC - 1) of its scores on the
reference against the counterparts (the pair part's AUROC read out of fold, grouped so that a
program and its counterparts are in one fold), so a part that does not separate the user's
pairs, or separates them backwards, gets no weight; the LM part keeps at least `lm_floor` of the
total, so no fitted part can outvote it entirely. `weights: fixed` mixes the parts named at
`lm_weight` for the LM part and the rest equally. The score is the weighted mean of the
standardised parts.

What the pairs can and cannot say: the counterparts are the local model's code, not the code a
user will meet, so the pair part learns the user's human style against one small model's; the
weights read how each part separates *those* pairs (benchmarks/notes/deployable.md measures what
that buys on collections of other models' code)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common.errors import AicdError
from ..common.params import Param, ParamSpec
from ..data.metrics import auroc

PARTS = ("lm", "trained", "pair")
GATE_MIN = 20   # files to label the gate needs to read an agreement
WEIGHTS = ("separation", "fixed")
PARAMS = ParamSpec("the adapted fusion", (
    Param("parts", (list,), ["lm", "trained", "pair"], "ours", "which parts are mixed (lm is always one)"),
    Param("weights", (str,), "separation", "ours", "separation (each part by its AUROC on the reference "
          "against its counterparts) or fixed (lm_weight for the LM part, the rest equal)", choices=WEIGHTS),
    Param("lm_weight", (int, float), 0.5, "ours", "weights fixed: the LM part's share", minimum=0.0, maximum=1.0),
    Param("lm_floor", (int, float), 0.0, "ours", "weights separation: the LM part's least share", minimum=0.0,
          maximum=1.0),
    Param("C", (int, float), 1.0, "ours", "the pair part's inverse L2 strength", minimum=1e-6),
    Param("folds", (int,), 5, "ours", "the pair part's out-of-fold folds (grouped by reference program)", minimum=2),
    Param("view", (str,), "delex", "ours", "the pair part's view: chars (character 2-4-grams of the code as "
          "written) or delex (word 1-3-grams of the delexicalised tokens: no comments, names, literals)",
          choices=("chars", "delex")),
    Param("gate", (bool,), True, "ours", "the pair part's weight times the rank correlation (floored at 0) of "
          "its scores with the fused detector's over the files to label (unlabelled: transductive)"),
))


@dataclass
class Rows:
    """Programs as the adapted fusion reads them: the fused detector's two parts (aicd.detectors.
    fused.FusedDetector.parts) and the code."""

    lm: np.ndarray
    trained: np.ndarray | None
    code: list[str]
    language: list | None = None      # the pair part's delexicalised view reads it
    fused: np.ndarray | None = None   # the fused detector's own score (the gate reads it)

    def part(self, name: str) -> np.ndarray | None:
        return getattr(self, name)

    def text(self, view: str) -> list[str]:
        """The code as the pair part reads it: as written (chars), or delexicalised (no comments,
        names ID, literals STR / NUM: aicd.codetools.tokens), tokens one space apart."""
        if view == "chars":
            return list(self.code)
        from ..codetools.tokens import delexicalised_tokens

        languages = self.language if self.language is not None else [None] * len(self.code)
        return [" ".join(delexicalised_tokens(c, lang)) for c, lang in zip(self.code, languages)]


class PairPart:
    """Character 2-4-gram TF-IDF + class-balanced logistic regression: reference (0) against
    counterparts (1)."""

    def __init__(self, C: float = 1.0, seed: int = 0, view: str = "chars"):
        self.C, self.seed, self.view = C, seed, view

    def fit(self, code: list[str], machine: np.ndarray) -> PairPart:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        grams = {"analyzer": "char", "ngram_range": (2, 4)} if self.view == "chars" else \
            {"analyzer": "word", "ngram_range": (1, 3), "token_pattern": r"\S+", "lowercase": False}
        self.vectorizer = TfidfVectorizer(**grams, sublinear_tf=True, min_df=2, max_features=1 << 16,
                                          dtype=np.float32)
        X = self.vectorizer.fit_transform(code)
        self.model = LogisticRegression(C=self.C, class_weight="balanced", max_iter=2000, random_state=self.seed)
        self.model.fit(X, machine.astype(int))
        return self

    def score(self, code: list[str]) -> np.ndarray:
        return self.model.decision_function(self.vectorizer.transform(code)).astype(np.float64)


def out_of_fold(code: list[str], machine: np.ndarray, groups: np.ndarray, C: float, folds: int, seed: int,
                view: str = "chars") -> np.ndarray:
    """The pair part's score of every pair row from a fit that did not see its group."""
    from sklearn.model_selection import GroupKFold

    out = np.empty(len(code))
    splitter = GroupKFold(n_splits=min(folds, len(np.unique(groups))))
    code_arr = np.asarray(code, dtype=object)
    for fit, held in splitter.split(code_arr, machine, groups):
        if len(np.unique(machine[fit])) < 2:
            out[held] = 0.0
            continue
        out[held] = PairPart(C, seed, view).fit(list(code_arr[fit]), machine[fit]).score(list(code_arr[held]))
    return out


def fit_pair(human_code, counterpart_code, of_human, C: float = 1.0, folds: int = 5, seed: int = 0,
             view: str = "chars") -> tuple[np.ndarray, PairPart]:
    """(out-of-fold scores of the reference then the counterparts, the pair part fitted on all);
    the code as `view` gives it (Rows.text)."""
    code = list(human_code) + list(counterpart_code)
    machine = np.r_[np.zeros(len(human_code)), np.ones(len(counterpart_code))].astype(bool)
    groups = np.r_[np.arange(len(human_code)), np.asarray(of_human)]
    return out_of_fold(code, machine, groups, C, folds, seed, view), PairPart(C, seed, view).fit(code, machine)


@dataclass
class AdaptedFusion:
    """The parts fitted on one reference, their standardisation and weights."""

    settings: dict = field(default_factory=dict)
    seed: int = 0

    def setting(self, name: str):
        return self.settings.get(name, PARAMS.defaults()[name])

    def fit(self, humans: Rows, counterparts: Rows, of_human: np.ndarray, pair: tuple | None = None
            ) -> AdaptedFusion:
        """`of_human[j]`: the index in `humans` of the program counterpart j was written from.
        `pair`: (out-of-fold scores, fitted PairPart) of these very pairs, where a caller has them
        (the pair part depends on the reference and its counterparts only)."""
        self._given_pair = pair
        parts = list(dict.fromkeys(["lm", *self.setting("parts")]))
        unknown = [p for p in parts if p not in PARTS]
        if unknown:
            raise AicdError(f"adapted fusion: unknown parts {unknown} (have {', '.join(PARTS)})")
        if len(humans.code) < 2 or len(counterparts.code) < 2:
            raise AicdError(f"adapted fusion: {len(humans.code)} reference programs and {len(counterparts.code)} "
                            "counterparts: too few to adapt on")
        if "trained" in parts and humans.trained is None:
            parts.remove("trained")   # a fused detector without a trained part
        machine = np.r_[np.zeros(len(humans.code)), np.ones(len(counterparts.code))].astype(bool)
        self.parts_, self.scale_, self.separation_ = parts, {}, {}
        for part in parts:
            scores = self._pair_scores(part, humans, counterparts, of_human)
            human = scores[~machine]
            self.scale_[part] = (float(human.mean()), float(human.std()) if human.std() > 1e-9 else 1.0)
            self.separation_[part] = auroc(scores, machine)
        self.weights_ = self._weights()
        self.rows_ = {"reference": len(humans.code), "counterparts": len(counterparts.code)}
        return self

    def _pair_scores(self, part, humans: Rows, counterparts: Rows, of_human) -> np.ndarray:
        if part != "pair":
            return np.r_[humans.part(part), counterparts.part(part)].astype(np.float64)
        if self._given_pair is not None:
            scores, self.pair_ = self._given_pair
        else:
            view = self.setting("view")
            scores, self.pair_ = fit_pair(humans.text(view), counterparts.text(view), of_human,
                                          float(self.setting("C")), int(self.setting("folds")), self.seed, view)
        self.pair_oof_ = np.asarray(scores, dtype=np.float64)
        return self.pair_oof_

    def _weights(self) -> dict[str, float]:
        if self.setting("weights") == "fixed":
            others = [p for p in self.parts_ if p != "lm"]
            lm = float(self.setting("lm_weight")) if others else 1.0
            return {"lm": lm, **{p: (1.0 - lm) / len(others) for p in others}}
        raw = {p: max(0.0, 2.0 * (self.separation_[p] or 0.5) - 1.0) for p in self.parts_}
        total = sum(raw.values())
        if total <= 0:
            return {p: float(p == "lm") for p in self.parts_}
        weights = {p: v / total for p, v in raw.items()}
        floor = float(self.setting("lm_floor"))
        if weights["lm"] < floor:
            rest = 1.0 - weights["lm"]
            weights = {p: floor if p == "lm" else v * (1.0 - floor) / rest for p, v in weights.items()}
        return weights

    def gate(self, rows: Rows) -> AdaptedFusion:
        """settings gate: the pair part's weight times max(0, Spearman's rho of its scores and the
        fused detector's over `rows`, the files to label; no labels read). A pair part that ranks
        the user's files against the detector as trained loses its weight; the weights are
        renormalised. Fewer than GATE_MIN rows: the pair part gets no weight."""
        from scipy.stats import spearmanr

        if not self.setting("gate") or "pair" not in self.parts_:
            return self
        rho = 0.0
        if len(rows.code) >= GATE_MIN and rows.fused is not None:
            rho = float(spearmanr(self.part_scores(rows)["pair"], rows.fused).statistic)
        self.agreement_ = rho if rho == rho else 0.0
        weights = {**self.weights_, "pair": self.weights_["pair"] * max(0.0, self.agreement_)}
        total = sum(weights.values())
        self.weights_ = {p: w / total for p, w in weights.items()} if total > 0 else \
            {p: float(p == "lm") for p in self.parts_}
        return self

    def part_scores(self, rows: Rows) -> dict[str, np.ndarray]:
        out = {}
        for part in self.parts_:
            raw = self.pair_.score(rows.text(self.pair_.view)) if part == "pair" else \
                np.asarray(rows.part(part), np.float64)
            mean, sd = self.scale_[part]
            out[part] = (raw - mean) / sd
        return out

    def score(self, rows: Rows) -> np.ndarray:
        """Higher = more machine-like."""
        parts = self.part_scores(rows)
        return sum(self.weights_[p] * parts[p] for p in self.parts_)

    def summary(self) -> dict:
        return {"settings": {**PARAMS.defaults(), **self.settings}, "parts": self.parts_, "weights": self.weights_,
                "separation_auroc": self.separation_, "rows": self.rows_,
                "agreement": getattr(self, "agreement_", None)}
