"""python -m aicd.sources: load one source table into the sample schema.

A source is read from the Hub or local files, over every config / data_dir / split it names
(whole, or as a bounded-memory stream sampled per language when its config has `stream:`),
with per-problem tests joined on problem_id where it names them (`tests:`), or gathered from code installed on this
machine (`gather:`). Writes results/sources/{source}.parquet and a JSON report of every
row read and every row removed, and of every input read (`inputs`: file sha256, Hub id and
revision, pinned package name, version and sha256; see aicd.records.fingerprint).

  python -m aicd.sources --name NAME --spec JSON --out T.parquet --report R.json
  python -m aicd.sources pinned fetch|check    the demo's pinned inputs (aicd.sources.pinned)"""

from __future__ import annotations

import argparse
import sys

from ..common.io import write_json, write_parquet
from ..common.stagecli import json_arg, run
from .build import build_source


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["pinned"]:
        from .pinned import main as pinned_main

        return pinned_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m aicd.sources", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", required=True, help="source name (the config key)")
    parser.add_argument("--spec", required=True, type=json_arg, help="the source's config entry, as JSON")
    parser.add_argument("--out", required=True, help="output parquet (sample schema)")
    parser.add_argument("--report", required=True, help="output JSON report")
    parser.add_argument("--seed", type=int, default=0, help="seed for stream shuffling and gathering")
    args = parser.parse_args(argv)
    samples, report = build_source(args.name, args.spec, args.seed)
    write_parquet(samples, args.out)
    write_json(report, args.report)


if __name__ == "__main__":
    sys.exit(run(main))
