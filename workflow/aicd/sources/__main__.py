"""python -m aicd.sources: load one source table into the sample schema.

A source is read from the Hub or local files, over every config / data_dir / split it names
(whole, or as a bounded-memory stream sampled per language when its config has `stream:`),
with per-problem tests joined on problem_id where it names them (`tests:`), or gathered from code installed on this
machine (`gather:`). Writes results/sources/{source}.parquet and a JSON report of every
row read and every row removed, and of every input read (`inputs`: file sha256, Hub id and
revision, pinned package name, version and sha256; see aicd.fingerprint)."""

from __future__ import annotations

import argparse
import os
import sys

import pandas as pd

from ..stagecli import json_arg, run
from ..fingerprint import dir_input, file_input, hub_input
from ..io import write_json, write_parquet
from .gather import gather
from .ingest import to_samples
from .loader import read_source, source_parts
from .problem_tests import join_tests


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.sources", description=__doc__)
    parser.add_argument("--name", required=True, help="source name (the config key)")
    parser.add_argument("--spec", required=True, type=json_arg, help="the source's config entry, as JSON")
    parser.add_argument("--out", required=True, help="output parquet (sample schema)")
    parser.add_argument("--report", required=True, help="output JSON report")
    parser.add_argument("--seed", type=int, default=0, help="seed for stream shuffling and gathering")
    args = parser.parse_args(argv)
    spec = dict(args.spec)
    extra = {}
    if "gather" in spec:
        raw, extra["gather"] = gather(spec["gather"], args.seed)
        spec.setdefault("columns", {})["source_row_id"] = "path"
    else:
        raw, extra, spec = read_source(spec, args.seed)
    if raw.empty and "code" not in raw.columns:
        raw = raw.assign(code=pd.Series(dtype=object))
    samples, report = to_samples(raw, spec, args.name)
    if spec.get("tests"):
        samples, extra["tests"] = join_tests(samples, spec["tests"])
    report.update(extra)
    report["inputs"] = extra["gather"].pop("inputs") if "gather" in extra else read_inputs(spec, report)
    write_parquet(samples, args.out)
    write_json(report, args.report)


def read_inputs(spec: dict, report: dict) -> dict:
    """{key: record} of what a file or Hub source read: each local file's sha256, or the Hub
    id, config and revision (with the commit it resolved to, where the Hub answered)."""
    inputs = {}
    resolved = (report.get("revision") or {}).get("resolved")
    for part in source_parts(spec):
        location = part["location"]
        if "files" in location:
            files = location["files"]
            for path in sorted([files] if isinstance(files, str) else files):
                if os.path.isfile(path):
                    key, record = file_input(path)
                    inputs[key if part["part"] is None else f"{part['part']}/{key}"] = record
        else:
            key, record = hub_input(location, resolved)
            inputs[key] = record
    tests = spec.get("tests") or {}
    if tests.get("dir") and os.path.isdir(tests["dir"]):
        key, record = dir_input(tests["dir"])
        inputs[f"tests/{key}"] = record
    test_files = tests.get("files") or []
    for path in sorted([test_files] if isinstance(test_files, str) else test_files):
        if os.path.isfile(path):
            key, record = file_input(path)
            inputs[f"tests/{key}"] = record
    return dict(sorted(inputs.items()))


if __name__ == "__main__":
    sys.exit(run(main))
