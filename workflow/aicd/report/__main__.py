"""python -m aicd.report: the report stage, one subcommand per output.

  report      results/report.md with Table 4 (.tex, .md, .html), the threshold metrics, confusion figures
  reproduction  the paper's published numbers beside ours (tables/reproduction.*, figures)
  subsets     Tables 5-7 (macro-F1 per test subset, averaged over the paper's trained rows)
  table8      Table 8 (the LLM judges)
  generation  token and cost totals per generator (results/generations/report.md)
  generator-card  one generator's card: requests, sandbox, filters, detection by protocol
  ood         the out-of-distribution table (results/tables/ood.md, .tex)
  loco        the leave-one-collection-out table (results/tables/loco.md, .tex, .json)
  figures     the paper's figures (per language, per generator, filter distributions, ...)
  analyses    SVM n-gram back-projection, CatBoost SHAP, rows every detector gets wrong
  paper       results/paper_results.md (the later tables and figures, linked)
  execution   results/execution/report.md (sandbox outcomes)
  card        results/dataset/README.md (the dataset card) and counts.csv

Each takes its own options: python -m aicd.report SUBCOMMAND --help. The input fingerprint
(results/inputs.json) is aicd.records.fingerprint's own: python -m aicd.records.fingerprint."""

from __future__ import annotations

import sys

from ..common.stagecli import run

COMMANDS = {
    "report": ("report_md", "main"), "subsets": ("subset_tables", "main"), "table8": ("llm_tables", "table8_main"),
    "generation": ("llm_tables", "generation_main"), "ood": ("ood", "main"), "loco": ("loco", "main"), "figures": ("paper_figures", "main"),
    "analyses": ("analyses", "main"), "paper": ("paper_section", "main"), "execution": ("execution", "main"),
    "card": ("card", "main"), "reproduction": ("reproduction", "main"),
    "generator-card": ("generator_card", "main"),
}


def main(argv=None) -> None:
    import importlib

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        usage = f"usage: python -m aicd.report {{{','.join(COMMANDS)}}} [options]\n\n{__doc__}"
        print(usage, file=sys.stderr if argv and argv[0] not in ("-h", "--help") else sys.stdout)
        if argv and argv[0] not in ("-h", "--help"):
            raise SystemExit(f"error: unknown subcommand {argv[0]!r}; use one of {', '.join(COMMANDS)}")
        raise SystemExit(0 if argv else 2)
    module, function = COMMANDS[argv[0]]
    mod = importlib.import_module(f"aicd.report.{module}")
    getattr(mod, function)(argv[1:])


if __name__ == "__main__":
    sys.exit(run(main))
