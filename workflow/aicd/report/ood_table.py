"""python -m aicd.report.ood_table: results/tables/ood.{md,tex} from the score JSONs of the
out-of-distribution tasks (config/ood.yaml): one column per split, in distribution first.

--layout JSON: {"splits": {task: split name}, "detectors": {name: title}}."""

from __future__ import annotations

import argparse
import sys

from ..stagecli import json_arg, run
from ..io import read_json
from .ood import write_tables
from .table4 import plain_title


def split_name(spec: dict) -> str:
    """in_distribution | codeaid | lolo:<language> | lofo:<family> (aicd.report.ood's order)."""
    short = {"leave_one_language_out": "lolo", "leave_one_family_out": "lofo"}
    protocol = spec["protocol"]
    return f"{short[protocol]}:{spec['hold_out']}" if protocol in short else protocol


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report.ood_table", description=__doc__)
    parser.add_argument("--layout", required=True, type=json_arg)
    parser.add_argument("--scores", nargs="+", required=True, help="results/scores/{task}/{detector}.json")
    parser.add_argument("--out-stem", required=True, help="results/tables/ood (writes .md and .tex)")
    args = parser.parse_args(argv)
    titles, splits = args.layout["detectors"], args.layout["splits"]
    records = []
    for path in args.scores:
        score = read_json(path)
        if score["task"] in splits and score.get("macro_f1") is not None:
            records.append((plain_title(titles.get(score["detector"], score["detector"])), splits[score["task"]],
                            score["macro_f1"], tuple(score["macro_f1_ci"]) if score.get("macro_f1_ci") else None))
    write_tables(records, args.out_stem)


if __name__ == "__main__":
    sys.exit(run(main))
