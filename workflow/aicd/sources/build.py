"""One source table into the sample schema, with its report: every row read, every row removed
and every input read (file sha256, Hub id and revision, pinned package; see aicd.records.fingerprint).
`python -m aicd.sources` is the command line."""

from __future__ import annotations

import os

import pandas as pd

from ..records.fingerprint import dir_input, file_input, hub_input
from .gather import gather
from .ingest import to_samples
from .loader import read_source, source_parts
from .problem_tests import join_tests


def build_source(name: str, spec: dict, seed: int) -> tuple[pd.DataFrame, dict]:
    """(samples, report) of the source `name` with config entry `spec`: read from the Hub or
    local files (whole or streamed), or gathered from installed code; tests joined on problem_id
    where the spec names them."""
    spec = dict(spec)
    extra = {}
    if "gather" in spec:
        raw, extra["gather"] = gather(spec["gather"], seed)
        spec.setdefault("columns", {})["source_row_id"] = "path"
    else:
        raw, extra, spec = read_source(spec, seed)
    if raw.empty and "code" not in raw.columns:
        raw = raw.assign(code=pd.Series(dtype=object))
    samples, report = to_samples(raw, spec, name)
    if spec.get("tests"):
        samples, extra["tests"] = join_tests(samples, spec["tests"])
    report.update(extra)
    report["inputs"] = extra["gather"].pop("inputs") if "gather" in extra else read_inputs(spec, report)
    return samples, report


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
        elif "pinned_table" in location:
            from .pinned_table import table_entry

            entry = table_entry(location["pinned_table"])
            inputs[f"pinned:{location['pinned_table']}"] = {"kind": "pinned", "file": entry["file"],
                                                           "sha256": entry["sha256"],
                                                           "member": entry["table"]["member"],
                                                           "member_sha256": entry["table"]["member_sha256"]}
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
