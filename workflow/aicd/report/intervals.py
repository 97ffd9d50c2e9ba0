"""An interval printed as it is: `87.21 ± 1.30` where it is symmetric about the value at the
printed precision, `27.20 [7.60, 32.40]` where it is not (a bootstrap interval of a rate near 0
or 1, or of a threshold's TPR, is often lopsided, and a ± would hide that). Every table that
prints an interval beside a value goes through `with_interval`; its caption says both forms
(SAYS)."""

from __future__ import annotations

import math

SAYS = ("± is the half-width of the 95% bootstrap interval where the interval is symmetric about the value at the "
        "printed precision; [low, high] gives the interval's ends where it is not.")


def with_interval(value: float | None, ci, style: str = "markdown", scale: float = 100.0, digits: int = 2) -> str:
    """The value x `scale` with its interval (also x `scale`); '–' for no value."""
    if value is None:
        return "–"
    v = value * scale
    text = f"{v:.{digits}f}"
    if not ci:
        return text
    lo, hi = ci[0] * scale, ci[1] * scale
    below, above = f"{v - lo:.{digits}f}", f"{hi - v:.{digits}f}"
    if below == above:
        return text + (" $\\pm$ " if style == "latex" else " ± ") + below
    return f"{text} [{lo:.{digits}f}, {hi:.{digits}f}]"


def symmetric(value: float, ci, scale: float = 100.0, digits: int = 2) -> bool:
    """Is the interval symmetric about the value at this precision (printed as ±)?"""
    return " ± " in with_interval(value, ci, "markdown", scale, digits)


# What a number over few rows can carry: printed to the decimal that ~1/sqrt(rows) leaves in doubt.
DIGITS_SAYS = ("printed to the decimal its rows support: the last digit is the first that 100/√n points (n: the fewest "
               "rows the number rests on; about the widest a 95% interval on n rows can be) leaves in doubt, so whole "
               "points under 10,000 rows")


def supported_digits(rows: int | None, scale: float = 100.0, most: int = 2) -> int:
    """Decimals a share (a recall, a TPR) or an AUROC over `rows` rows can carry on `scale`: the
    last printed digit is the first one that scale / sqrt(rows) leaves in doubt. That is about
    the widest a 95% interval of a mean of `rows` values in [0, 1] can be (1.96 x 0.5 / sqrt(n));
    an AUROC is such a mean over each class's rows (the share of the other class each outranks),
    so n is its smaller class. One row on the x100 scale: whole points, never 77.3."""
    if not rows or rows < 1:
        return 0
    return max(0, min(most, math.floor(-math.log10(scale / math.sqrt(rows))) + 1))
