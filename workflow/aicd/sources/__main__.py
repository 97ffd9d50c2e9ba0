"""python -m aicd.sources: load one source table into the sample schema.

Writes results/sources/{source}.parquet and a JSON report of every removed row."""

from __future__ import annotations

import argparse
import sys

from ..cli import json_arg, run
from ..io import write_json, write_parquet
from .ingest import to_samples
from .loader import load_table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.sources", description=__doc__)
    parser.add_argument("--name", required=True, help="source name (the config key)")
    parser.add_argument("--spec", required=True, type=json_arg, help="the source's config entry, as JSON")
    parser.add_argument("--out", required=True, help="output parquet (sample schema)")
    parser.add_argument("--report", required=True, help="output JSON report")
    args = parser.parse_args(argv)
    raw = load_table(args.spec)
    samples, report = to_samples(raw, args.spec, args.name)
    write_parquet(samples, args.out)
    write_json(report, args.report)


if __name__ == "__main__":
    sys.exit(run(main))
