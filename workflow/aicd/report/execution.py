"""python -m aicd.report execution: execution status counts and pass rates per language ×
generator, from the per-table execution reports."""

from __future__ import annotations

import argparse

from ..common.io import read_json, write_text


def rate_table(rep: dict) -> list[str]:
    """Markdown rows of one table's rates (shared with the dataset card)."""
    if not rep.get("rates"):
        return ["No programs."]
    lines = ["| language / generator | programs | built | with tests | passed |", "|---|---:|---:|---:|---:|"]
    for key, r in sorted(rep["rates"].items()):
        passed = "–" if r["passed"] is None else f"{r['passed']:.1%}"
        lines.append(f"| {key} | {r['programs']} | {r['built']:.1%} | {r['tested']} | {passed} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report execution", description=__doc__)
    parser.add_argument("--reports", nargs="*", default=[])
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    lines = ["# Execution report", "", "Status counts per table, and per language / generator the rate that applies: "
             "**built** over every program (`compiled`: it compiled, or passed the syntax check of Python, PHP and "
             "JavaScript; a program with no tests or no entry point is only built, never run on an empty stdin), "
             "**passed** over the programs that ran against tests (`ok`: built, ran, and every test's output matched).",
             ""]
    for path in args.reports:
        rep = read_json(path)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(rep["status"].items()))
        lines += [f"## {rep['name']}: {rep['rows']} programs executed (of {rep['rows_in_table']}); {counts}", ""]
        lines += rate_table(rep) + [""]
    write_text("\n".join(lines), args.out)

