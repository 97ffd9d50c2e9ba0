"""Marks that say when a printed number is not what its header suggests, the same in every table:

- ours: a detector the paper does not have (kept out of every average that stands for the
  paper's rows);
- inverted: worse than chance on validation (validation AUROC < 50): its scores rank human code
  as more machine-like;
- margins / scores: its score_<class> columns are not probabilities (aicd.data.scores);
- § beside a macro-F1: a class of the test rows has fewer than MIN_CLASS_SUPPORT rows, yet
  weighs as much as any other in the macro average; such a cell is never bold, underlined,
  "best", a figure's choice, or counted as agreeing with the paper (aicd.report.table4.unranked_cells,
  ranked_best, the reproduction table's headlines);
- one class: the cell's test rows hold one class (a test set of one model's generations): it
  shows that class's recall, as every one-class slice does, never a macro-F1, and is never ranked;
- [one row decides] in place of an interval: a class under MIN_CLASS_SUPPORT rows is so small
  that one row of it moves the macro-F1 by at least half the interval's width (`one_row_decides`):
  resamples that lose or repeat that row decide the interval, which is then left out (it stays
  in the score file);
- sample: the cell covers a seeded sample of the test split (an LLM judge, a zero-shot
  criterion over an LM's statistics computed on a sample), its size in the legend.

Read from the score files (threshold_metrics.inverted, score_kind, per_class support) and from
which configured detectors are the paper's rows (aicd.published)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .latex import latex_text

# The one minimum of rows under which a class (or a cell's rows) concludes nothing: marked §, never
# ranked. Every table, figure choice, count and card reads it from here.
MIN_CLASS_SUPPORT = 30
SMALL_CLASS = "§"
ONE_ROW = "[one row decides]"

MEANINGS = {
    "ours": "a detector the paper does not have (kept out of every average that stands for the paper's rows)",
    "inverted": "worse than chance on validation (validation AUROC below 50): its scores rank human code as more "
                "machine-like",
    "margins": "its scores are SVM margins, not probabilities (AUROC and TPR read only their order)",
    "scores": "its scores are the detector's own scale, not probabilities (AUROC and TPR read only their order)",
    "sample": "computed on a seeded sample of the test split, not all of it",
    "unparseable": "most of the judge's answers named no class (scored as wrong; the counts are under the table): "
                   "the cell measures the answers' format more than the judge, and is never ranked",
    "one class": "the cell's test rows hold one class: it is that class's recall (share of its rows labelled as it), "
                 "not a macro-F1, which over one class rewards labelling every row as that class; never ranked",
}
RANKING_SAYS = (f"Bold, underline and a figure's choice rank only cells whose test rows hold two classes or more, each "
                f"with at least {MIN_CLASS_SUPPORT} rows: a cell marked {SMALL_CLASS} or one class is never ranked.")


@dataclass
class Marks:
    ours: set = field(default_factory=set)                 # detector names
    inverted: set = field(default_factory=set)             # (detector, task)
    score_kinds: dict = field(default_factory=dict)        # (detector, task) -> score kind
    small_classes: dict = field(default_factory=dict)      # (detector, task) -> {class: test rows}
    sampled: dict = field(default_factory=dict)            # (detector, task) -> (rows scored, test rows)
    one_class: dict = field(default_factory=dict)          # (detector, task) -> the one gold class of its rows
    one_row: dict = field(default_factory=dict)            # (detector, task) -> one_row_decides(...)
    unparseable: dict = field(default_factory=dict)        # (detector, task) -> (unparseable answers, rows)

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
            one = one_class_of(s)
            if one:
                marks.one_class[key] = one
            decided = one_row_decides(s, s.get("macro_f1_ci"))
            if decided and not one:
                marks.one_row[key] = decided
            if s.get("n") and 2 * int(s.get("abstentions") or 0) > int(s["n"]):
                marks.unparseable[key] = (int(s["abstentions"]), int(s["n"]))
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
            (["sample"] if (detector, task) in self.sampled else []) + \
            (["one class"] if (detector, task) in self.one_class else []) + \
            (["unparseable"] if (detector, task) in self.unparseable else [])

    def small(self, detector: str, task: str) -> str:
        return SMALL_CLASS if (detector, task) in self.small_classes else ""

    def legend(self, detectors: list[str], task: str | None, style: str = "markdown",
               shown: tuple[str, ...] | None = None) -> str:
        """One sentence per tag used in a table of these detectors (one task, or all); `shown`:
        the tags the table prints (default: all)."""
        used, small, decided = [], {}, {}
        for det in detectors:
            for key in [k for k in self._keys(det) if task is None or k[1] == task]:
                for t in self.row(det, key[1]):
                    if t not in used and (shown is None or t in shown):
                        used.append(t)
                if key in self.small_classes:
                    small.setdefault(key[1], self.small_classes[key])
                if key in self.one_row:
                    decided.setdefault(key[1], self.one_row[key])
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
            parts.append(f"{SMALL_CLASS} a class of the cell's test rows has fewer than {MIN_CLASS_SUPPORT} rows "
                         f"({named}): in a macro-F1 it weighs as much as any other class, so a few rows move it a lot, "
                         "and a value resting on it concludes nothing.")
        if decided and (shown is None or "one row" in shown):
            parts.append(one_row_legend(decided))
        text = " ".join(parts)
        return latex_text(text) if style == "latex" else text

    def _keys(self, detector: str) -> list[tuple[str, str]]:
        keys = {k for k in (*self.inverted, *self.score_kinds, *self.small_classes, *self.sampled, *self.one_class,
                            *self.one_row, *self.unparseable) if k[0] == detector}
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


def one_class_of(score: dict) -> str | None:
    """The gold class of a score file (or a breakdown entry) whose test rows hold only one, else None."""
    if score.get("one_class"):
        return score["one_class"]
    gold = [c for c, v in (score.get("per_class") or {}).items() if int(v.get("support", 0)) > 0]
    return gold[0] if len(gold) == 1 else None


def one_row_decides(score: dict, ci, classes: int | None = None) -> dict | None:
    """{class, rows, swing} where one row of a class under MIN_CLASS_SUPPORT rows moves the macro-F1
    by at least half the interval's width, else None. The swing is an upper bound: one row of
    class c (n_c rows) turned from wrong to right changes F1_c = 2 tp / (n_c + predicted_c) by at
    most 2 / (n_c + 1), and the macro-F1 by that over the `classes` averaged (default: the score's
    labels). Such a row is in or out of a resample by chance, and the interval's ends are then
    that chance, not the detector's (e.g. 31.32 [30.45, 61.03]: one adversarial row of one)."""
    if not ci or ci[1] is None or ci[0] is None:
        return None
    small = small_classes(score)
    k = classes or len(score.get("labels") or ())
    if not small or k < 1:  # without the classes averaged, no bound
        return None
    name, rows = min(small.items(), key=lambda kv: (kv[1], kv[0]))
    swing = 2.0 / ((rows + 1) * k)
    if swing + 1e-12 < (ci[1] - ci[0]) / 2:
        return None
    return {"class": name, "rows": rows, "swing": swing}


def one_row_legend(decided: dict) -> str:
    """task -> one_row_decides(...): the sentence that says why those intervals are left out."""
    named = "; ".join(f"{t}: {d['class']} {d['rows']} row{'s' if d['rows'] > 1 else ''}, up to {100 * d['swing']:.2f} "
                      "points" for t, d in sorted(decided.items()))
    return (f"{ONE_ROW} in place of the 95% interval: one row of a class under {MIN_CLASS_SUPPORT} test rows moves the "
            f"macro-F1 by at least half the interval's width ({named}), so whether resamples lose or repeat that row "
            "decides the interval's ends; they stay in the score file (macro_f1_ci).")


def ranked_best(scores: dict[str, dict], dummies=frozenset()) -> tuple[str, str] | None:
    """(detector, the score it was chosen by: "macro-F1" or the mean F1 of the large classes) of the
    best trained detector of one task, or None. A
    cell is chosen only among cells that rank (two classes or more, each of MIN_CLASS_SUPPORT rows);
    where no cell ranks because the task's test split has classes under the minimum, the choice is
    made on the mean F1 over its classes of at least MIN_CLASS_SUPPORT rows (two or more), and the
    basis says so; where fewer than two classes have that many rows, nothing is chosen. A dummy
    baseline is chosen only where nothing else has scores."""
    present = {d: s for d, s in scores.items() if s.get("macro_f1") is not None}
    trained = {d: s for d, s in present.items() if d not in dummies} or present
    ranked = {d: s for d, s in trained.items() if not small_classes(s) and not one_class_of(s)}
    if ranked:
        best = max(ranked, key=lambda d: (ranked[d]["macro_f1"], d))
        return best, "macro-F1"
    big = {d: [c for c, v in (s.get("per_class") or {}).items() if int(v.get("support", 0)) >= MIN_CLASS_SUPPORT]
           for d, s in trained.items() if not one_class_of(s)}
    big = {d: cs for d, cs in big.items() if len(cs) >= 2}
    if not big:
        return None

    def f1_over(d: str) -> float:
        per_class = trained[d]["per_class"]
        return sum(float(per_class[c]["f1"]) for c in big[d]) / len(big[d])

    best = max(big, key=lambda d: (f1_over(d), d))
    left = small_classes(trained[best])
    out = ", ".join(f"{c} {n}" for c, n in sorted(left.items(), key=lambda kv: -kv[1]))
    return best, (f"mean F1 over the classes of at least {MIN_CLASS_SUPPORT} test rows ({', '.join(big[best])}: "
                  f"{100 * f1_over(best):.2f}; {out} left out of the choice)")


def table_value(score: dict) -> tuple[float | None, list | None]:
    """(value, 95% interval) a table prints for a score file: its macro-F1, or, where its test rows
    hold one class, that class's recall with the same seeded bootstrap the one-class subsets get
    (aicd.scoring.bootstrap.subset_metric on the counts the score file keeps)."""
    one = one_class_of(score)
    if not one:
        return score.get("macro_f1"), score.get("macro_f1_ci")
    from ..scoring.bootstrap import RESAMPLES, subset_metric

    entry = (score.get("per_class") or {}).get(one) or {}
    rows = int(entry.get("support", 0))
    if not rows:
        return None, None
    hits = int(round(float(entry.get("recall", 0.0)) * rows))
    boot = score.get("bootstrap") or {}
    got = subset_metric([one] * rows, [one] * hits + ["(other)"] * (rows - hits), [one],
                        int(boot.get("resamples", RESAMPLES)), int(boot.get("seed", 0)))
    return got["value"], got["ci"]
