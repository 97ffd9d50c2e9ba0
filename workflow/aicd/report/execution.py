"""python -m aicd.report.execution: execution status counts and pass rates per language ×
generator, from the per-table execution reports."""

from __future__ import annotations

import argparse
import sys

from ..cli import run
from ..io import read_json, write_text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report.execution", description=__doc__)
    parser.add_argument("--reports", nargs="*", default=[])
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    lines = ["# Execution report", "", "Status counts per table; `ok` means it compiled, ran and passed its tests "
             "(or exited 0 where a sample has no tests).", ""]
    for path in args.reports:
        rep = read_json(path)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(rep["status"].items()))
        lines += [f"## {rep['name']}: {rep['rows']} programs executed (of {rep['rows_in_table']}); {counts}", "",
                  "| language / generator | pass rate |", "|---|---:|"]
        lines += [f"| {k} | {v:.2%} |" for k, v in sorted(rep["pass_rate"].items())]
        lines.append("")
    write_text("\n".join(lines), args.out)


if __name__ == "__main__":
    sys.exit(run(main))
