"""Per-problem test cases joined onto a source's rows by problem_id, so the sandbox's
`passes` level has real tests (the `tests` column: a JSON list of {"stdin", "expected"},
the format `python -m aicd.sandbox execute` reads).

Two layouts, named by the source's `tests:` option:

  tests: {dir: <folder>}   Project CodeNet's derived/input_output/data/{problem_id}/input.txt
                           and output.txt (one sample case per problem)
  tests: {files: <table>, columns: {problem_id: p, stdin: in, expected: out}}
                           a parquet/jsonl/csv table with one row per test case

Rows whose problem has no tests keep `tests` null and are counted."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from ..common.errors import AicdError

log = logging.getLogger(__name__)
MAX_TEST_BYTES = 1024 * 1024  # a sample case larger than this is data, not a test


def _read_text(path: Path) -> str | None:
    if not path.is_file() or path.stat().st_size > MAX_TEST_BYTES:
        return None
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return None


def tests_from_folder(folder: str, problem_ids: set[str]) -> tuple[dict[str, list[dict]], dict]:
    root = Path(folder)
    if not root.is_dir():
        raise AicdError(f"tests.dir: folder not found: {folder} (Project CodeNet's derived/input_output/data)")
    found, unreadable = {}, 0
    for pid in sorted(problem_ids):
        case = root / pid
        if not case.is_dir():
            continue
        stdin, expected = _read_text(case / "input.txt"), _read_text(case / "output.txt")
        if stdin is None or expected is None:
            unreadable += 1
            continue
        found[pid] = [{"stdin": stdin, "expected": expected}]
    return found, {"problems_unreadable": unreadable}


def tests_from_table(spec: dict, problem_ids: set[str]) -> tuple[dict[str, list[dict]], dict]:
    from .loader import load_table

    cols = {"problem_id": "problem_id", "stdin": "stdin", "expected": "expected", **(spec.get("columns") or {})}
    table = load_table({"files": spec["files"]})
    missing = [c for c in cols.values() if c not in table.columns]
    if missing:
        raise AicdError(f"tests.files: column '{missing[0]}' is not in the table; its columns are: "
                        f"{', '.join(map(str, table.columns))}")
    found: dict[str, list[dict]] = {}
    for pid, stdin, expected in zip(table[cols["problem_id"]], table[cols["stdin"]], table[cols["expected"]]):
        pid = str(pid)
        if pid in problem_ids and isinstance(stdin, str) and isinstance(expected, str):
            found.setdefault(pid, []).append({"stdin": stdin, "expected": expected})
    return found, {}


def join_tests(samples: pd.DataFrame, spec: dict) -> tuple[pd.DataFrame, dict]:
    """samples with a `tests` column (JSON text or null), and a report of the join."""
    if ("dir" in spec) == ("files" in spec):
        raise AicdError("tests: give either dir (CodeNet's input_output folder) or files (a table of cases)")
    ids = {str(p) for p in samples["problem_id"].dropna()} if "problem_id" in samples else set()
    if "dir" in spec:
        found, extra = tests_from_folder(spec["dir"], ids)
    else:
        found, extra = tests_from_table(spec, ids)
    encoded = {pid: json.dumps(cases, ensure_ascii=False) for pid, cases in found.items()}
    tests = samples["problem_id"].map(lambda p: None if p is None else encoded.get(str(p)))
    samples = samples.assign(tests=tests)
    with_tests = int(samples["tests"].notna().sum())
    report = {"problems": len(ids), "problems_with_tests": len(found), "rows_with_tests": with_tests,
              "rows_without_tests": int(len(samples) - with_tests), **extra}
    log.info("tests: %d of %d problems have test cases (%d rows)", len(found), len(ids), with_tests)
    return samples, report
