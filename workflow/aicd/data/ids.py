"""Matching a file's ids against the ids it must cover, told the same way everywhere (the
workflow's scoring, `aicd score`, `aicd compare`, `aicd submission check`, a predictions-file
detector): each disagreement counted, with an example id, and how many match."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class IdMatch:
    given: int          # rows in the file
    wanted: int         # ids it must cover
    matched: int        # wanted ids the file has
    extra: tuple        # file ids not among the wanted ones (sorted)
    missing: tuple      # wanted ids the file lacks (sorted)
    repeated: tuple     # ids the file gives more than once (sorted)

    @property
    def ok(self) -> bool:
        return not (self.extra or self.missing or self.repeated)

    def coverage(self) -> str:
        """'2,182 of 2,183 ids (99.95%)': rounded down, so never 100% while one is missing."""
        share = math.floor(self.matched / self.wanted * 10_000) / 100 if self.wanted else 0.0
        return f"{self.matched:,} of {_ids(self.wanted)} ({share:.2f}%)".replace("(100.00%)", "(100%)")


def match(given, wanted) -> IdMatch:
    counts = Counter(str(i) for i in given)
    want = {str(i) for i in wanted}
    return IdMatch(given=sum(counts.values()), wanted=len(want), matched=len(want & set(counts)),
                   extra=tuple(sorted(set(counts) - want)), missing=tuple(sorted(want - set(counts))),
                   repeated=tuple(sorted(i for i, n in counts.items() if n > 1)))


def _ids(n: int) -> str:
    return f"{n:,} id" if n == 1 else f"{n:,} ids"


def disagreements(m: IdMatch, given: str = "predictions", wanted: str = "the test split",
                  ignore_missing: bool = False, examples: int = 1) -> list[str]:
    """Each disagreement with its count and up to `examples` example ids."""
    def eg(ids: tuple) -> str:
        return "e.g. " + ", ".join(repr(i) for i in ids[:examples])

    parts = []
    if m.missing and not ignore_missing:
        parts.append(f"{_ids(len(m.missing))} of {wanted} not in the {given} ({eg(m.missing)})")
    if m.extra:
        parts.append(f"{_ids(len(m.extra))} of the {given} not in {wanted} ({eg(m.extra)})")
    if m.repeated:
        parts.append(f"{_ids(len(m.repeated))} more than once in the {given} ({eg(m.repeated)})")
    return parts


def disagreement(m: IdMatch, given: str = "predictions", wanted: str = "the test split", ignore_missing: bool = False) -> str:
    """One sentence: every disagreement with its count and an example id, then the matches."""
    parts = disagreements(m, given, wanted, ignore_missing)
    return f"the {given} and {wanted} disagree: " + "; ".join(parts) + f"; {m.coverage()} of {wanted} match"
