"""Reporting stage: the paper's Table 4 (LaTeX and Markdown), confusion-matrix figures,
and results/report.md linking them."""
