"""Normalize one input table (a source or one generator's output) row by row.

Every row ends with a `reject` reason or none. Before the Table 3 filters: unusable code
(missing, invalid UTF-8, binary, empty, over 10 MB), failed generations, missing labels,
languages outside the nine. Code from models is cut out of its answer (fences, prose,
<think> traces); rows without a language get one from language identification. Kept rows
get a MinHash signature for deduplication. Work is spread over `threads` processes."""

from __future__ import annotations

import logging
import os
from collections import Counter

import numpy as np
import pandas as pd
from tqdm import tqdm

from ..codetools.codetext import NO_CODE_BLOCK, clean_code, extract_code
from ..common.defaults import schema_default
from ..common.errors import AicdError
from ..common.parallel import map_chunks
from ..data.schema import LABELS, SAMPLE_COLUMNS, canonical_language
from . import filters
from .langid import DECISIVE, identify_language
from .minhash import MINHASH_SEED, NUM_PERM, SHINGLE_SIZE, signature

log = logging.getLogger(__name__)

# Execution statuses (aicd.sandbox) that fail each `execution_filter` level. `compiled` (built
# but not run: no tests, or no entry point) passes every level, since there was nothing to run.
# A sandbox_error came twice, in two fresh containers (the pool retries once): a program can
# provoke one, so it cannot be said to run; it still passes `compiles`, which it may never
# have reached.
EXECUTION_FAILS = {
    "none": frozenset(),
    "compiles": frozenset({"compile_error"}),
    "runs": frozenset({"compile_error", "runtime_error", "timeout", "memory_limit", "output_limit", "sandbox_error"}),
    "passes": frozenset({"compile_error", "runtime_error", "timeout", "memory_limit", "output_limit", "wrong_answer",
                         "sandbox_error"}),
}
METRICS = ("lines_of_code", "max_line_length", "avg_line_length", "alphanumeric_fraction", "ast_depth",
           "comment_letters", "english_confidence")
_CHUNK = 256


def default_spec() -> dict:
    return {
        "filters": dict(filters.TABLE3),
        "minhash": {"num_perm": NUM_PERM, "shingle_size": SHINGLE_SIZE, "seed": MINHASH_SEED},
        "langid_min_margin": 0.0,
        "execution_filter": schema_default("dataset.execution_filter"),
    }


def merged_spec(spec: dict | None) -> dict:
    out = default_spec()
    for key, value in (spec or {}).items():
        out[key] = {**out[key], **value} if isinstance(out.get(key), dict) and isinstance(value, dict) else value
    return out


def normalize_table(raw: pd.DataFrame, name: str, spec: dict | None = None, threads: int = 1,
                    progress: bool = True, execution: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    """(all rows with `reject`, metrics and `minhash`; report). rows in == rows out.
    `execution`: this table's sandbox results (id, status), used by spec["execution_filter"]."""
    spec = merged_spec(spec)
    if spec["execution_filter"] not in EXECUTION_FAILS:
        raise AicdError(f"execution_filter must be one of {list(EXECUTION_FAILS)}, got {spec['execution_filter']!r}")
    df = pd.DataFrame({c: raw[c] if c in raw.columns else None for c in SAMPLE_COLUMNS})
    df["source"] = df["source"].fillna(name)
    reject = pd.Series(None, index=df.index, dtype=object)
    notes: Counter[str] = Counter()

    if "status" in raw.columns:  # a generation table: failed requests have no code
        no_block = raw["status"].eq(NO_CODE_BLOCK)
        reject[no_block & reject.isna()] = NO_CODE_BLOCK  # an answer without the code block asked for
        # an answer cut at max_tokens is code all the same: the checks and filters below decide
        # (a program cut mid-statement seldom parses), and it is counted
        notes["truncated_generation"] += int(raw["status"].eq("truncated").sum())
        reject[~raw["status"].isin(["ok", "truncated"]) & reject.isna()] = "generation_failed"
    codes = []
    for i, value in enumerate(df["code"].tolist()):
        code, reason = clean_code(value)
        if reason and pd.isna(reject.iat[i]):
            reject.iat[i] = reason
        codes.append(code)
    df["code"] = codes
    _execution_filter(df, reject, execution, spec["execution_filter"], notes)
    reject[df["label"].isna() & reject.isna()] = "missing_label"
    reject[~df["label"].isin(LABELS) & df["label"].notna() & reject.isna()] = "unknown_label"

    machine = df["label"].ne("human") & reject.isna()
    for i in np.flatnonzero(machine.to_numpy()):
        code = df["code"].iat[i]
        if "```" in code or ("</" in code and ("think>" in code or "reasoning>" in code)):
            cut = extract_code(code)
            if cut != code:
                notes["code_extracted"] += 1
                df.iat[i, df.columns.get_loc("code")] = cut
                if not cut.strip():
                    reject.iat[i] = "empty_code"

    given = df["language"].map(lambda v: canonical_language(v) if isinstance(v, str) else None)
    unsupported = df["language"].notna() & given.isna() & reject.isna()
    reject[unsupported] = "unsupported_language"
    df["language"] = given
    df["language_origin"] = np.where(given.notna(), "given", None)

    todo = np.flatnonzero(reject.isna().to_numpy())
    jobs = [(df["code"].iat[i], df["language"].iat[i] if isinstance(df["language"].iat[i], str) else None) for i in todo]
    results = _run(jobs, spec, threads, progress, name)
    metric_cols = {m: np.full(len(df), np.nan) for m in METRICS}
    minhash = [None] * len(df)
    for i, (lang, origin, reason, metrics, sig) in zip(todo, results):
        if origin == "identified":
            df.iat[i, df.columns.get_loc("language")] = lang
            df.iat[i, df.columns.get_loc("language_origin")] = origin
            notes["language_identified"] += 1
        reject.iat[i] = reason
        for m, v in metrics.items():
            metric_cols[m][i] = v
        minhash[i] = sig
    df["reject"] = reject
    for m, values in metric_cols.items():
        df[m] = values
    df["minhash"] = minhash
    if "source_row_id" in raw.columns:
        df["source_row_id"] = raw["source_row_id"].astype(str)

    counts = df["reject"].value_counts().to_dict()
    report = {"table": name, "rows_in": int(len(raw)), "kept": int(df["reject"].isna().sum()),
              "rejected": {k: int(v) for k, v in sorted(counts.items())}, "examples": rejected_examples(df),
              "notes": dict(notes), "spec": spec}
    assert report["rows_in"] == report["kept"] + sum(report["rejected"].values()), "row accounting broken"
    log.info("%s: %d rows in, %d kept, rejected %s", name, len(raw), report["kept"], report["rejected"])
    return df, report


def rejected_examples(df: pd.DataFrame, chars: int = 160) -> dict[str, str]:
    """The first rejected row of each reason (by id): "id: the start of its code", for a report
    that counts a drop to show one."""
    out = {}
    rejected = df[df["reject"].notna()].sort_values("id")
    for reason, rows in rejected.groupby("reject", sort=True):
        row = rows.iloc[0]
        code = " ".join(row["code"].split()) if isinstance(row["code"], str) and row["code"].strip() else "(no code)"
        out[str(reason)] = f"{row['id']}: {code[:chars]}"
    return out


def _execution_filter(df, reject, execution, level, notes) -> None:
    if level == "none":
        return
    if execution is None:
        notes["execution_filter_without_results"] = len(df)
        log.warning("execution_filter=%s but no execution results for this table: nothing removed", level)
        return
    status = df["id"].map(dict(zip(execution["id"], execution["status"])))
    notes["not_executed"] = int(status.isna().sum())
    failed = status.isin(EXECUTION_FAILS[level]) & reject.isna()
    reject[failed] = "execution_failed"


def _run(jobs: list, spec: dict, threads: int, progress: bool, name: str) -> list:
    chunks = [jobs[i:i + _CHUNK] for i in range(0, len(jobs), _CHUNK)]
    bar = tqdm(total=len(jobs), desc=f"normalize {name}", unit="row", disable=not progress, mininterval=2)
    out: list = []
    for res in map_chunks(_process_chunk, chunks, threads, spec):
        out.extend(res)
        bar.update(len(res))
    bar.close()
    return out


def _process_chunk(chunk: list, spec: dict) -> list:
    bounds = spec["filters"]
    mh = spec["minhash"]
    out = []
    for code, language in chunk:
        origin = "given" if language is not None else None
        # Line filters first: they are cheap and need no language, and language
        # identification of a huge file costs a minute (benchmarks/dataset_throughput.py).
        reason, metrics = filters.check_lines(code, bounds)
        if reason:
            out.append((language, origin, reason, metrics, None))
            continue
        if language is None:
            # parsing stops once the margin is settled at the bar or above (exact below it)
            language, margin, _ = identify_language(code, decisive=max(DECISIVE, spec["langid_min_margin"]))
            origin = "identified"
            if language is None or margin < spec["langid_min_margin"]:
                out.append((None, origin, "language_unidentified", metrics, None))
                continue
        reason, metrics = filters.check(code, language, bounds, metrics)
        sig = None
        if reason is None:
            sig = signature(code, mh["num_perm"], mh["shingle_size"], mh["seed"]).tobytes()
        out.append((language, origin, reason, metrics, sig))
    return out


def default_threads() -> int:
    return max(1, len(os.sched_getaffinity(0)))
