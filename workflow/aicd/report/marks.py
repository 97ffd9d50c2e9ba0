"""Marks that say when a printed number is not what its header suggests, the same in every table:

- ours: a detector the paper does not have (kept out of every average that stands for the
  paper's rows);
- inverted: worse than chance on validation (validation AUROC < 50): its scores rank human code
  as more machine-like;
- margins / scores: its score_<class> columns are not probabilities (aicd.data.scores);
- § beside a macro-F1: a class of the test rows has fewer than MIN_CLASS_SUPPORT rows, yet
  weighs as much as any other in the macro average;
- sample: the cell covers a seeded sample of the test split (an LLM judge, a zero-shot
  criterion over an LM's statistics computed on a sample), its size in the legend.

Read from the score files (threshold_metrics.inverted, score_kind, per_class support) and from
which configured detectors are the paper's rows (aicd.published)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .latex import latex_text

MIN_CLASS_SUPPORT = 30
SMALL_CLASS = "§"

MEANINGS = {
    "ours": "a detector the paper does not have (kept out of every average that stands for the paper's rows)",
    "inverted": "worse than chance on validation (validation AUROC below 50): its scores rank human code as more "
                "machine-like",
    "margins": "its scores are SVM margins, not probabilities (AUROC and TPR read only their order)",
    "scores": "its scores are the detector's own scale, not probabilities (AUROC and TPR read only their order)",
    "sample": "computed on a seeded sample of the test split, not all of it",
}


@dataclass
class Marks:
    ours: set = field(default_factory=set)                 # detector names
    inverted: set = field(default_factory=set)             # (detector, task)
    score_kinds: dict = field(default_factory=dict)        # (detector, task) -> score kind
    small_classes: dict = field(default_factory=dict)      # (detector, task) -> {class: test rows}
    sampled: dict = field(default_factory=dict)            # (detector, task) -> (rows scored, test rows)

    @classmethod
    def from_scores(cls, scores: dict, ours: set[str]) -> Marks:
        """scores: (detector, task) -> its score file; ours: the detectors that are not the paper's."""
        marks = cls(ours=set(ours))
        for key, s in scores.items():
            if (s.get("threshold_metrics") or {}).get("inverted"):
                marks.inverted.add(key)
            if s.get("score_kind"):
                marks.score_kinds[key] = s["score_kind"]
            small = small_classes(s)
            if small:
                marks.small_classes[key] = small
            covered = sample_size(s)
            if covered:
                marks.sampled[key] = covered
        return marks

    def row(self, detector: str, task: str | None = None) -> list[str]:
        """The tags of a detector's row (and of its cell in `task`, where the table has one task)."""
        tags = ["ours"] if detector in self.ours else []
        if task is not None:
            tags += self.cell(detector, task)
            kind = self.score_kinds.get((detector, task))
            if kind in ("margin", "score"):
                tags.append("margins" if kind == "margin" else "scores")
        return tags

    def cell(self, detector: str, task: str) -> list[str]:
        return (["inverted"] if (detector, task) in self.inverted else []) + \
            (["sample"] if (detector, task) in self.sampled else [])

    def small(self, detector: str, task: str) -> str:
        return SMALL_CLASS if (detector, task) in self.small_classes else ""

    def legend(self, detectors: list[str], task: str | None, style: str = "markdown",
               shown: tuple[str, ...] | None = None) -> str:
        """One sentence per tag used in a table of these detectors (one task, or all); `shown`:
        the tags the table prints (default: all)."""
        used, small = [], {}
        for det in detectors:
            for key in [k for k in self._keys(det) if task is None or k[1] == task]:
                for t in self.row(det, key[1]):
                    if t not in used and (shown is None or t in shown):
                        used.append(t)
                if key in self.small_classes:
                    small.setdefault(key[1], self.small_classes[key])
            if det in self.ours and "ours" not in used and (shown is None or "ours" in shown):
                used.append("ours")
        parts = [f"{t}: {MEANINGS[t]}." for t in used if t != "sample"]
        samples = sorted({(k, v) for k, v in self.sampled.items() if k[0] in detectors and (task is None or k[1] == task)})
        if samples and "sample" in used:
            groups: dict = {}
            for (d, t), size in samples:
                groups.setdefault((t, size), []).append(d)
            sizes = "; ".join(f"{', '.join(ds)} on {t}: {n:,} of {of:,} test rows"
                              for (t, (n, of)), ds in sorted(groups.items()))
            parts.append(f"sample: {MEANINGS['sample']} ({sizes}).")
        if small:
            named = "; ".join(f"{t}: " + ", ".join(f"{c} {n}" for c, n in sorted(v.items(), key=lambda kv: kv[1]))
                              for t, v in sorted(small.items()))
            parts.append(f"{SMALL_CLASS} the macro-F1 averages over a class with fewer than {MIN_CLASS_SUPPORT} test "
                         f"rows ({named}), which weighs as much as any other class: a few rows move it a lot.")
        text = " ".join(parts)
        return latex_text(text) if style == "latex" else text

    def _keys(self, detector: str) -> list[tuple[str, str]]:
        keys = {k for k in (*self.inverted, *self.score_kinds, *self.small_classes, *self.sampled) if k[0] == detector}
        return sorted(keys)


def sample_size(score: dict) -> tuple[int, int] | None:
    """(rows scored, test rows) of a score file that covers a sample of its test split, else None."""
    coverage = score.get("coverage")
    if coverage is None or coverage >= 1:
        return None
    scored = sum(int(v.get("support", 0)) for v in (score.get("per_class") or {}).values())
    return (scored, int(round(scored / coverage))) if coverage > 0 and scored else None


def small_classes(score: dict, minimum: int = MIN_CLASS_SUPPORT) -> dict[str, int]:
    """Gold classes of a score file with fewer than `minimum` test rows (but some)."""
    per_class = score.get("per_class") or {}
    return {c: int(v["support"]) for c, v in per_class.items() if 0 < int(v.get("support", 0)) < minimum}


def tag(tags: list[str], style: str) -> str:
    """' <sup>ours, inverted</sup>' in Markdown and HTML, '\\textsuperscript{...}' in LaTeX."""
    if not tags:
        return ""
    text = ", ".join(tags)
    return f"\\textsuperscript{{{text}}}" if style == "latex" else f" <sup>{text}</sup>"
