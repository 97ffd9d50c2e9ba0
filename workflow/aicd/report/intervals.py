"""An interval printed as it is: `87.21 ± 1.30` where it is symmetric about the value at the
printed precision, `27.20 [7.60, 32.40]` where it is not (a bootstrap interval of a rate near 0
or 1, or of a threshold's TPR, is often lopsided, and a ± would hide that). Every table that
prints an interval beside a value goes through `with_interval`; its caption says both forms
(SAYS)."""

from __future__ import annotations

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
