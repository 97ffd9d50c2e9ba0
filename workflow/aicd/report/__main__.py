"""python -m aicd.report: Table 4 (.tex, .md), a confusion-matrix figure per task for its
best detector, and report.md linking them with the data summaries."""

from __future__ import annotations

import argparse
import sys

from ..stagecli import json_arg, run
from .build import write_report


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report", description=__doc__)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='JSON {"tasks": [[name, title]], "detectors": [[name, title, is_dummy]], '
                             '"provisional": {task: evidence of an unpublished label map}}')
    parser.add_argument("--scores", nargs="+", required=True, help="results/scores/{task}/{detector}.json files")
    parser.add_argument("--data-reports", nargs="*", default=[], help="source and split reports (JSON)")
    parser.add_argument("--tables-dir", required=True)
    parser.add_argument("--figures-dir", required=True)
    parser.add_argument("--report", required=True, help="output report.md")
    parser.add_argument("--paper-section", help="results/paper_results.md (Tables 5-7, figures, analyses), appended")
    parser.add_argument("--inputs", default=None, help="results/inputs.json: the input fingerprint the tables carry")
    parser.add_argument("--test-set-scores", nargs="*", default=[],
                        help="results/scores/{task}/test_sets/{set}/{detector}.json: extra test sets, one column each")
    parser.add_argument("--test-set-reports", nargs="*", default=[],
                        help="results/tasks/{task}/test_sets/{set}.report.json: rows removed, class balance")
    args = parser.parse_args(argv)
    write_report(args.layout, args.scores, args.tables_dir, args.figures_dir, args.report,
                 data_report_files=args.data_reports, paper_section=args.paper_section, inputs_file=args.inputs,
                 test_set_score_files=args.test_set_scores, test_set_report_files=args.test_set_reports)


if __name__ == "__main__":
    sys.exit(run(main))
