"""Every table's LaTeX goes through one escape: LaTeX's special characters and the symbols the
tables print come out as LaTeX writes them, and nothing is escaped twice."""

from aicd.report.latex import latex_text


def test_special_characters_and_symbols():
    assert latex_text("95% CI ± 2 § a_b & c #1 $5") == r"95\% CI $\pm$ 2 \S{} a\_b \& c \#1 \$5"
    assert latex_text("macro-F1 × 100, 0.25–0.34, Δ < 2, ‡") == r"macro-F1 $\times$ 100, 0.25--0.34, $\Delta$ $<$ 2, $\ddagger$"
    assert latex_text(r"a\b {x}") == r"a\textbackslash{}b \{x\}"  # a backslash is text, not a command


def test_it_is_one_pass():
    once = latex_text("10% of rows")
    assert once == r"10\% of rows" and once.count("\\") == 1
