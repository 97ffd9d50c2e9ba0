"""Thresholds calibrated on human reference code: the operating point a detector is deployed at,
set on human code of the user's setting (or a default reference) and no machine code.

A detector's machine score s (higher: more machine-like) flags a program when s > t. Given n
human reference scores, the split-conformal threshold is their k-th smallest with
k = ceil((n + 1)(1 - fpr)): for a new human program exchangeable with the reference, the chance
that it is flagged is at most fpr (exactly (n + 1 - k) / (n + 1) with distinct scores), whatever
n is. A plain percentile does not keep that promise for small n. It needs n >= 1/fpr - 1 (19
programs for 5%, 99 for 1%); below that no order statistic is safe and the threshold is None.

That promise is on average over the reference drawn: on one reference the FPR of the threshold
set on it scatters around the target (measured across collections: 8.6-10% on some halves of
151 and 100 humans at a 5% target). Where the FPR must hold on the user's one reference, a
confidence c sets a higher order statistic instead: the smallest k with P(Bin(n, 1 - fpr) >= k)
<= 1 - c, so that with probability c over the draw of the reference the threshold's FPR on
programs like it is at most fpr (the training-conditional guarantee of conformal prediction,
Vovk 2012). It flags fewer programs and needs more of them: n >= log(1 - c) / log(1 - fpr) (59
for 5% at 95%, 299 for 1%).

What a held-out part of the reference says about the threshold set on the rest is a count k of
n held-out humans flagged, stated with its one-sided 95% Clopper-Pearson upper bound: the FPR
that the held-out part supports at that confidence."""

from __future__ import annotations

import numpy as np

from ..common.defaults import schema_default
from ..data.metrics import check_confidence, conformal_rank, min_reference
from .bootstrap import RESAMPLES
from .thresholds import FPRS as THRESHOLD_FPRS

CONFIDENCE = 0.95








def conformal_threshold(human_scores, fpr: float, confidence: float | None = None) -> float | None:
    """The k-th smallest reference score (flag s > t); None with fewer than min_reference(fpr)
    scores. NaN scores are not reference scores: the caller counts and reports them."""
    scores = np.sort(np.asarray(human_scores, dtype=float))
    if np.isnan(scores).any():
        raise ValueError("reference scores hold NaN: drop (and count) those rows first")
    k = conformal_rank(len(scores), fpr, confidence)
    return None if k is None else float(scores[k - 1])


def clopper_pearson_upper(flagged: int, n: int, confidence: float = CONFIDENCE) -> float | None:
    """One-sided upper confidence bound of a rate seen as `flagged` of `n` (None for n = 0)."""
    from scipy.special import betaincinv  # beta.ppf to the bit, without importing scipy.stats

    if n <= 0:
        return None
    if flagged >= n:
        return 1.0
    return float(betaincinv(flagged + 1, n - flagged, confidence))


def realised_fpr(human_scores, threshold: float, confidence: float = CONFIDENCE) -> dict:
    """The share of these human scores above the threshold, with its one-sided upper bound."""
    scores = np.asarray(human_scores, dtype=float)
    n, flagged = len(scores), int((scores > threshold).sum())
    return {"humans": n, "flagged": flagged, "fpr": flagged / n if n else None,
            "fpr_upper": clopper_pearson_upper(flagged, n, confidence), "confidence": confidence}


def split_reference(n: int, held_out: float, seed) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (fit, held-out) index arrays of n reference rows; held_out in [0, 1); seed: an int
    or a sequence of ints (numpy's seed sequence)."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(n * held_out))
    return np.sort(order[cut:]), np.sort(order[:cut])


# ---------------------------------------------------------------- per-group calibration
#
# A reference row has a machine score, a language and (where known) a domain. Each (language,
# domain) cell is split on its own, seeded by the cell's name, into a fitting part and a
# held-out part, so a row's part does not change when another cell gains rows. A group (a
# language; a language in one domain) gets its own threshold from its cells' fitting parts
# where they hold enough programs (min_reference for the FPR, or the floor if higher), and the
# realised FPR of its held-out part at that threshold with its one-sided Clopper-Pearson bound;
# a smaller group is held to the pooled threshold (every fitting part together) and marked so,
# with how many more reference programs it would need for its own.

FPRS = THRESHOLD_FPRS  # the one home of the default FPRs: aicd.scoring.thresholds
HELD_OUT = schema_default("calibration.held_out")  # the config's default, for calls outside a run
FLOOR = schema_default("calibration.floor")
POOLED = "pooled"


def group_name(language: str, domain: str | None = None) -> str:
    """"Python", or "Python · algorithmic" for a language in one domain."""
    return language if domain is None else f"{language} · {domain}"


def held_out_mask(languages, domains, held_out: float, seed: int) -> np.ndarray:
    """True for the rows in the held-out part: each (language, domain) cell split on its own."""
    import zlib

    languages = np.asarray(languages, dtype=object)
    domains = np.full(len(languages), None, dtype=object) if domains is None else np.asarray(domains, dtype=object)
    mask = np.zeros(len(languages), dtype=bool)
    cells: dict[tuple, list[int]] = {}
    for i, cell in enumerate(zip(languages, domains)):
        cells.setdefault(cell, []).append(i)
    for (language, domain), rows in cells.items():
        cell_seed = zlib.crc32(f"{seed}:{language}:{domain}".encode())
        _, held = split_reference(len(rows), held_out, cell_seed)
        mask[np.asarray(rows)[held]] = True
    return mask


def fit_size_needed(fpr: float, floor: int = 0, confidence: float | None = None) -> int:
    """Programs a group's fitting part needs for a threshold of its own."""
    return max(min_reference(fpr, confidence), int(floor or 0))


def more_needed(n: int, need_fit: int, held_out: float) -> int:
    """Reference programs to add to a group of n for its fitting part to reach need_fit."""
    total = n
    while total - int(round(total * held_out)) < need_fit:
        total += 1
    return total - n


TIE_SHARE = 0.01  # the share of scores tied at a threshold above which aicd detect warns (ties)


def ties(scores, threshold: float | None) -> int:
    """How many of these scores equal the threshold: never flagged (flag: above it), so a threshold
    that many scores share flags fewer than its rank promises (saturated scores: none at all)."""
    if threshold is None:
        return 0
    return int((np.asarray(scores, dtype=float) == threshold).sum())


def at_fpr(fit_scores, held_scores, fpr: float, threshold: float | None = None,
           confidence: float | None = None) -> dict:
    """A threshold for one FPR (set on fit_scores unless given), how many fitting scores equal it
    (`tied`: 1 where it is one of them and the scores are distinct) and what the held-out part
    says of it."""
    if threshold is None:
        threshold = conformal_threshold(fit_scores, fpr, confidence)
    out = {"threshold": threshold, "tied": ties(fit_scores, threshold), "flagged": None, "realised_fpr": None,
           "fpr_upper": None}
    held = np.asarray(held_scores, dtype=float)
    if threshold is not None and len(held):
        realised = realised_fpr(held, threshold)
        out.update(flagged=realised["flagged"], realised_fpr=realised["fpr"], fpr_upper=realised["fpr_upper"])
    return out


def calibrate(scores, languages, domains=None, fprs=FPRS, held_out: float = HELD_OUT, seed: int = 0,
              floor: int = FLOOR, confidence: float | None = None) -> dict:
    """Per-language (and per (language, domain) where domains are given) thresholds at each FPR
    from human reference scores (machine scores: flag s > t), with the pooled threshold that
    small groups fall back to; each FPR held on average, or with `confidence` over the reference
    drawn (fpr_confidence in the result). The dict is what a calibration file holds under
    `groups`, `pooled` and the settings (see Calibration)."""
    scores = np.asarray(scores, dtype=float)
    languages = np.asarray(languages, dtype=object)
    if len(scores) != len(languages) or (domains is not None and len(domains) != len(scores)):
        raise ValueError("scores, languages and domains must have one entry per reference row")
    if np.isnan(scores).any():
        raise ValueError("reference scores hold NaN: drop (and count) those rows first")
    if not 0 <= held_out < 1:
        raise ValueError(f"held_out {held_out}: a share in [0, 1)")
    check_confidence(confidence)
    domains = None if domains is None else np.asarray(domains, dtype=object)
    held = held_out_mask(languages, domains, held_out, seed)
    keys = [f"{f:g}" for f in fprs]
    pooled = {"n": int(len(scores)), "fit_n": int((~held).sum()), "held_out_n": int(held.sum()),
              "at": {key: at_fpr(scores[~held], scores[held], f, confidence=confidence) for key, f in zip(keys, fprs)}}
    groups = {}
    for name, language, domain, rows in _groups(languages, domains):
        fit, out = rows & ~held, rows & held
        group = {"language": language, "domain": domain, "n": int(rows.sum()), "fit_n": int(fit.sum()),
                 "held_out_n": int(out.sum()), "at": {}}
        for key, fpr in zip(keys, fprs):
            need = fit_size_needed(fpr, floor, confidence)
            if fit.sum() >= need:
                group["at"][key] = {"own": True, **at_fpr(scores[fit], scores[out], fpr, confidence=confidence)}
            else:
                group["at"][key] = {"own": False, **at_fpr(scores[fit], scores[out], fpr,
                                                           pooled["at"][key]["threshold"]),
                                    "why_pooled": f"{int(fit.sum())} reference programs in its fitting part, fewer "
                                                  f"than the {need} a {fpr:.0%} threshold needs",
                                    "more_needed": more_needed(int(rows.sum()), need, held_out)}
        groups[name] = group
    return {"fprs": [float(f) for f in fprs], "held_out": float(held_out), "seed": int(seed), "floor": int(floor),
            "fpr_confidence": None if confidence is None else float(confidence), "pooled": pooled, "groups": groups}


def _groups(languages: np.ndarray, domains: np.ndarray | None):
    """(name, language, domain, row mask) of every language, then of every (language, domain)."""
    for language in sorted(set(languages.tolist())):
        yield group_name(language), language, None, languages == language
    if domains is None:
        return
    known = np.array([d is not None and d == d for d in domains], dtype=bool)
    for language, domain in sorted(set(zip(languages[known].tolist(), domains[known].tolist()))):
        yield group_name(language, domain), language, domain, (languages == language) & (domains == domain)


# ---------------------------------------------------------------- the calibration file
#
# A small JSON file: {"format": "aicd-calibration", "version": 2, "model": {"file", "sha256"},
# "score": what the thresholds are set on, "score_kind": what the model's score columns hold,
# "reference": where the human code came from (a description, its rows per origin / language /
# domain), and calibrate()'s result (fprs, held_out, seed, floor, fpr_confidence, pooled, groups)}.
# It belongs to one fitted model: its sha256 is checked before a threshold is used, so a
# calibration of one model is never applied to another. Version 2: thresholds on the float64
# threshold score (version 1's 1 - score_human saturated at 1: a threshold of 1 flagged nothing),
# and each threshold's `tied` count.

FORMAT, VERSION = "aicd-calibration", 2
SCORE = ("machine score in float64 (aicd.data.scores.threshold_score): the log-odds that the program is not "
         "human, log(sum of the other classes' probabilities) - log(score_human), for probabilities; "
         "-score_human for margins and other scores; a program is flagged when it scores above")


def model_identity(path) -> dict:
    """{"file": its name, "sha256": its bytes' digest} of a fitted model file, or of a folder
    (an encoder): the digest over its files' relative paths and digests, in order."""
    import hashlib
    from pathlib import Path

    path = Path(path)
    if path.is_dir():
        digest = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(f"{f.relative_to(path).as_posix()}\0{_file_sha256(f)}\n".encode())
        return {"file": path.name, "sha256": digest.hexdigest()}
    return {"file": path.name, "sha256": _file_sha256(path)}


def _file_sha256(path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Calibration:
    """A calibration file in memory: `model` (model_identity), `reference` (where its human code
    came from), `result` (calibrate's dict). thresholds() gives each program the threshold of its
    group; check_model() refuses a model it was not made for."""

    def __init__(self, model: dict, reference: dict, result: dict, score_kind: str | None = None):
        self.model, self.reference, self.result, self.score_kind = model, reference, result, score_kind

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "model": self.model, "score": SCORE,
                "score_kind": self.score_kind, "reference": self.reference, **self.result}

    @classmethod
    def from_json(cls, data: dict, where: str = "the calibration") -> Calibration:
        from ..common.errors import AicdError

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise AicdError(f"{where} is not an aicd calibration file (no \"format\": \"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise AicdError(f"{where} is a calibration of format version {data.get('version')}; this aicd reads "
                            f"version {VERSION}: make it again (aicd detect --calibrate-on, or rerun the workflow)")
        result = {k: data[k] for k in ("fprs", "held_out", "seed", "floor", "pooled", "groups")}
        result["fpr_confidence"] = data.get("fpr_confidence")  # absent in a file made before: held on average
        return cls(data["model"], data.get("reference") or {}, result, data.get("score_kind"))

    def save(self, path) -> None:
        from ..common.io import write_json

        write_json(self.to_json(), path)

    @classmethod
    def load(cls, path) -> Calibration:
        import json

        from ..common.errors import AicdError

        try:
            data = json.loads(open(path, encoding="utf-8").read())
        except (OSError, ValueError) as err:
            raise AicdError(f"{path}: cannot read the calibration ({err})") from None
        return cls.from_json(data, str(path))

    def check_model(self, identity: dict, where: str = "the calibration") -> None:
        """Refuse a model other than the one this calibration was made for."""
        from ..common.errors import AicdError

        if identity.get("sha256") != self.model.get("sha256"):
            raise AicdError(f"{where} was made for another fitted model ({self.model.get('file')}, sha256 "
                            f"{str(self.model.get('sha256'))[:12]}), not {identity.get('file')} (sha256 "
                            f"{str(identity.get('sha256'))[:12]}): its thresholds are on that model's scores. Calibrate "
                            "this model (aicd detect --calibrate-on HUMAN_CODE --save-calibration FILE)")

    @property
    def fpr_confidence(self) -> float | None:
        """The confidence its thresholds hold their FPR with; None: on average (calibrate)."""
        return self.result.get("fpr_confidence")

    @property
    def fprs(self) -> list[float]:
        return list(self.result["fprs"])

    def group(self, name: str) -> dict | None:
        return self.result["groups"].get(name)

    def thresholds(self, languages, fpr: float, domains=None) -> tuple[np.ndarray, list[str], np.ndarray]:
        """(threshold per program, NaN where none can be set; the group whose threshold it is;
        True where that is the pooled threshold). A program's group: its (language, domain)
        where that group has its own threshold, else its language's (own or pooled), else the
        pooled threshold (a language the reference does not hold)."""
        key = f"{fpr:g}"
        if key not in self.result["pooled"]["at"]:
            from ..common.errors import AicdError

            raise AicdError(f"the calibration has no thresholds for an FPR of {fpr:g} (it has "
                            f"{', '.join(f'{f:g}' for f in self.fprs)})")
        pooled = self.result["pooled"]["at"][key]["threshold"]
        languages = list(languages)
        domains = [None] * len(languages) if domains is None else list(domains)
        values, used, is_pooled = [], [], []
        for language, domain in zip(languages, domains):
            name = group_name(language, domain) if domain is not None else None
            group = self.group(name) if name else None
            if group is None or not group["at"][key]["own"]:
                name, group = language, self.group(language)
            at = group["at"][key] if group else None
            threshold = at["threshold"] if at else pooled
            own = bool(at and at["own"])
            values.append(np.nan if threshold is None else threshold)
            used.append(name if own else POOLED)
            is_pooled.append(not own)
        return np.asarray(values, dtype=float), used, np.asarray(is_pooled, dtype=bool)


def flag(scores, thresholds) -> np.ndarray:
    """True where a program scores above its threshold (never where it has none: NaN)."""
    scores, thresholds = np.asarray(scores, dtype=float), np.asarray(thresholds, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(thresholds), False, scores > thresholds)


def operating_point(scores, is_human, thresholds, resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """What thresholds (one per row, e.g. Calibration.thresholds) do on labelled rows: TPR (the
    share of the other rows flagged) and realised FPR (of the human rows), each with its 95%
    bootstrap interval at the thresholds held fixed (aicd.scoring.thresholds.rates), the FPR's
    one-sided Clopper-Pearson bound, and the rows left without a threshold."""
    from .thresholds import rates

    is_human = np.asarray(is_human, dtype=bool)
    flagged = flag(scores, thresholds)
    out = rates(flagged, ~is_human, resamples, seed)
    out["fpr_upper"] = clopper_pearson_upper(int(flagged[is_human].sum()), int(is_human.sum()))
    out["without_threshold"] = int(np.isnan(np.asarray(thresholds, dtype=float)).sum())
    return out
