"""python -m aicd.report card: the dataset card, results/dataset/README.md.

Counts per task × split × label × language × family × subset (all of them in counts.csv,
the main cuts as tables), the filter and deduplication summaries, and the sources with the
revisions they were read at. No timestamps: the same inputs give the same card."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ..common.io import atomic_path, read_json, write_text
from ..common.stagecli import json_arg
from ..data.schema import SPLITS
from ..outputs import SHOWN, Outputs, name_of

DIMENSIONS = ["label", "language", "family", "subset"]
# the files the card links to beside it: the counts and the pool's reports
COUNTS = name_of("dataset_counts")
FILTER_MD, DEDUP_MD = (name_of("dataset_report", n, "md") for n in ("filter_report", "dedup_report"))


def counts_table(results: Outputs, tasks: dict) -> pd.DataFrame:
    parts = []
    for task in tasks:
        for split in SPLITS:
            t = pd.read_parquet(results.split(task, split), columns=["target", *DIMENSIONS])
            g = t.fillna(dict.fromkeys(DIMENSIONS, "-")).groupby(DIMENSIONS).size().reset_index(name="rows")
            parts.append(g.assign(task=task, split=split))
    cols = ["task", "split", *DIMENSIONS, "rows"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


def _pivot(df: pd.DataFrame, index: list[str], column: str) -> str:
    if df.empty:
        return "(no rows)"
    p = df.pivot_table(index=index, columns=column, values="rows", aggfunc="sum", fill_value=0)
    p["total"] = p.sum(axis=1)
    return p.to_markdown()


def _gathered(rep: dict) -> str:
    """The languages a gathered source actually found (rows each), not the configured ones, and
    the packages it read."""
    gather = rep.get("gather") or {}
    found = {lang: s.get("samples", 0) for lang, s in (gather.get("languages") or {}).items()}
    text = "gathered: " + (", ".join(f"{lang} {n}" for lang, n in found.items() if n) or "nothing")
    if gather.get("languages_without_samples"):
        text += f" (none: {', '.join(gather['languages_without_samples'])})"
    packages = [f"{r.get('package', r.get('name'))} {r['version']}" for r in (rep.get("inputs") or {}).values()
                if r.get("kind") == "package"]
    return text + (f"; from {', '.join(packages)}" if packages else "")


def render(results: Outputs, tasks: dict, sources: dict, counts: pd.DataFrame, inputs: dict | None = None) -> str:
    filt = read_json(results.dataset_report("filter_report", "json"))
    dedup = read_json(results.dataset_report("dedup_report", "json"))
    pool = pd.read_parquet(results.pool(), columns=["label", "language", "source"])
    lines = ["# AICD Bench dataset card (this build)", "",
             "Built by the workflow's dataset stage: sources → normalization (code extraction, language "
             "identification, Table 3 filters) → MinHash deduplication → task splits. "
             f"Full counts per task × split × label × language × family × subset: [{COUNTS}]({COUNTS}).", "",
             *([f"Inputs `{inputs['fingerprint']}`, code `{inputs.get('code')}` ({SHOWN.inputs()} lists every "
                "input with its sha256 or revision).", ""] if inputs else []),
             "## Sources", "", "| source | from | revision | rows read | rows kept |", "|---|---|---|---:|---:|"]
    for name, spec in sources.items():
        rep_path = Path(results.source_report(name))
        rep = read_json(rep_path) if rep_path.is_file() else {}
        # files win over hub in the loader, so they are what was read
        where = spec.get("files") or spec.get("hub") or _gathered(rep)
        revision = "–" if spec.get("files") else spec.get("revision", "–")
        if spec.get("data_dir") and not spec.get("files"):
            where = f"{where} ({spec['data_dir']})"
        scanned = rep.get("stream", {}).get("rows_scanned", rep.get("rows_in", "?"))
        lines.append(f"| {name} | {where} | {revision} | {scanned} | {rep.get('rows_out', '?')} |")
    lines += ["", "## Filters (paper Table 3)", "",
              f"{filt['rows_in']:,} rows entered normalization, {filt['kept']:,} passed, "
              f"{filt['rejected_total']:,} were rejected (first failing check; details in "
              f"[{FILTER_MD}]({FILTER_MD})).", "", "| reason | rows |", "|---|---:|"]
    lines += [f"| {r} | {n:,} |" for r, n in filt["rejected"].items()]
    lines += ["", "## Deduplication", "",
              f"MinHash LSH at Jaccard ≥ {dedup['threshold']} ({dedup['num_perm']} permutations, "
              f"{dedup['bands']}×{dedup['rows_per_band']} bands): {dedup.get('clusters_with_duplicates', 0):,} "
              f"clusters of near duplicates, {dedup['rows_removed']:,} rows removed, "
              f"{dedup['pool_rows']:,} rows in the pool ([{DEDUP_MD}]({DEDUP_MD})).", "",
              "## Pool", "",
              _pivot(pool.groupby(["language", "label"]).size().reset_index(name="rows"), ["language"], "label"), ""]
    for task, title in tasks.items():
        rep = read_json(results.task_report(task))
        c = counts[counts["task"] == task]
        lines += [f"## {task}: {title}", ""]
        for key in ("seen_languages", "seen_domains", "held_out_generators", "out_of_domain_sources"):
            if key in rep:
                lines.append(f"- {key.replace('_', ' ')}: {', '.join(map(str, rep[key])) or 'none'}")
        leak = rep.get("leakage", {})
        lines.append("- leakage guards: " + ", ".join(
            f"{k} = {v.get('pairs', v.get('rows', 0))}" for k, v in leak.items()) if leak else "- leakage guards: –")
        skipped = rep.get("skipped") or {}
        if skipped:
            lines.append("- not used: " + ", ".join(f"{k} {v:,}" for k, v in skipped.items()))
        lines += ["", "By split × label:", "", _pivot(c, ["split"], "label"), "",
                  "By split × language:", "", _pivot(c, ["split"], "language"), "",
                  "By split × family:", "", _pivot(c, ["split"], "family"), "",
                  "Test subsets × label:", "", _pivot(c[c["split"] == "test"], ["subset"], "label"), ""]
    return "\n".join(lines) + "\n"


def execution_section(paths: list[str]) -> str:
    """Sandbox build and pass rates per language x generator (aicd.sandbox reports), where
    execution ran."""
    from .execution import rate_table

    lines = ["## Execution (sandbox)", ""]
    if not paths:
        return "\n".join(lines + ["Not run (no Docker daemon, or no `execution:` in the config).", ""])
    for path in paths:
        rep = read_json(path)
        lines += [f"**{rep['name']}** ({rep['rows']} programs)", ""] + rate_table(rep) + [""]
    lines += ["Built = compiled (or passed the syntax check of a script language); passed = status `ok` "
              "over the programs that ran against tests. A program with no tests or no entry point is only "
              "built. The `execution_filter` setting of `dataset:` decides whether failures leave the pool.", ""]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report card", description=__doc__)
    parser.add_argument("--tasks", type=json_arg, required=True, help="JSON {task: title} of tasks built from the pool")
    parser.add_argument("--sources", type=json_arg, required=True, help="JSON {source: {hub, revision, ...}}")
    parser.add_argument("--execution-reports", nargs="*", default=[], help=SHOWN.execution_report())
    parser.add_argument("--results", default="results")
    parser.add_argument("--card", required=True)
    parser.add_argument("--counts", required=True)
    parser.add_argument("--inputs", default=None, help=f"{SHOWN.inputs()} (the input fingerprint)")
    args = parser.parse_args(argv)
    results = Outputs(args.results)
    counts = counts_table(results, args.tasks)
    with atomic_path(args.counts) as tmp:
        counts.to_csv(tmp, index=False)
    inputs = read_json(args.inputs) if args.inputs else None
    card = render(results, args.tasks, args.sources, counts, inputs) + execution_section(args.execution_reports)
    write_text(card, args.card)

