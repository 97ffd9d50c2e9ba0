"""A test set of a task's own test rows, each rewritten by one semantics-preserving rewrite
(aicd.codetools.perturb): same ids, so a prediction that changes is a flip.

    python -m aicd.splits perturb --task T --name p_rename --kind rename --test TEST --out OUT --report REPORT"""

from __future__ import annotations

import argparse

from ..codetools import perturb as rewrites
from ..codetools.perturb import PERTURBATIONS, perturb
from ..outputs import SHOWN


def perturbed_test_set(test, kind: str, seed: int, task: str, name: str):
    """The task's test rows rewritten by one perturbation (same ids: a prediction that changes
    is a flip), and a test-set report (rows, how many the rewrite left unchanged)."""
    from .test_sets import balance

    codes = [perturb(c, lang, kind, seed) for c, lang in zip(test["code"], test["language"])]
    changed = [a != b for a, b in zip(codes, test["code"])]
    table = test.assign(code=codes, perturbed=changed).reset_index(drop=True)  # flips count on changed rows too
    unchanged = int(len(changed) - sum(changed))
    report = {"task": task, "test_set": name, "perturbation": kind, "rows_in": int(len(test)), "rows": int(len(table)),
              "removed": {}, "unchanged_rows": unchanged, "balance_before": balance(test, "target"),
              "balance_after": balance(table, "target")}
    return table, report


def main(argv=None) -> None:
    import pandas as pd

    from ..common.io import write_json, write_parquet

    parser = argparse.ArgumentParser(prog="python -m aicd.splits perturb", description=rewrites.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True)
    parser.add_argument("--name", required=True, help="the test set's name (its key under test_sets)")
    parser.add_argument("--kind", required=True, choices=PERTURBATIONS)
    parser.add_argument("--test", required=True, help=f"the task's test split ({SHOWN.split('T', 'test')})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    table, report = perturbed_test_set(pd.read_parquet(args.test), args.kind, args.seed, args.task, args.name)
    write_parquet(table, args.out)
    write_json(report, args.report)
