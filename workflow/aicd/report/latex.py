"""Plain text into LaTeX: the one escape every table's captions, headers and cells go through
(titles with subscripts have their own converter, table4.latex_title)."""

from __future__ import annotations

# LaTeX's special characters, then the symbols the tables print, as LaTeX writes them.
SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
           "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
SYMBOLS = {"×": r"$\times$", "±": r"$\pm$", "§": r"\S{}", "Δ": r"$\Delta$", "–": "--", "−": "$-$", "<": "$<$",
           ">": "$>$", "≤": r"$\le$", "≥": r"$\ge$", "‡": r"$\ddagger$", "†": r"$\dagger$"}


def latex_text(text) -> str:
    """`text` as it reads, in LaTeX."""
    return "".join(SPECIAL.get(ch) or SYMBOLS.get(ch) or ch for ch in str(text))
