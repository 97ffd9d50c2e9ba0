"""Tables 5, 6 and 7 of the paper: macro-F1 per evaluation subset, averaged over detectors, with
the standard deviation across detectors.

- Table 5, Task 1 (kind binary): the four language x domain settings, in the paper's row order.
- Table 6, Task 2 (kind family): seen (in-domain) and unseen (out-of-domain) generators.
- Table 7, Task 3 (kind fine_grained): in-domain and out-of-domain sources.

Numbers come from the per-subset entries of results/scores/{task}/{detector}.json, never typed.
Our choices where the paper is silent, written beside the tables too:
- detectors averaged: every trained detector run on the task; the dummy baselines (Random,
  Majority) and the LLM judges are excluded, and so is Fast-DetectGPT on a multi-class task (it
  is scored there on binarised labels, another task);
- the macro-F1 of a subset averages F1 over the task's whole label set, as the paper's tables do (not
  over whichever classes happen to be present): a label neither in the subset's gold labels nor
  predicted there counts as F1 0, as scikit-learn's `f1_score(labels=..., zero_division=0)` does;
- a subset whose gold labels hold one class gets that class's recall (= accuracy there) instead
  of a macro-F1, marked with a dagger: macro-F1 over one class is not a discrimination score;
- the standard deviation is the sample standard deviation across detectors (ddof = 1; 0 for one).
- decimals as the paper prints them: 2 in Table 5, 3 in Tables 6 and 7."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from tabulate import tabulate

from ..stagecli import json_arg
from ..io import read_json, write_json, write_text

PAPER_TABLES = {
    5: {"kind": "binary", "header": "Setting", "decimals": 2, "label": "tab:task1_subsets",
        "caption": "Task 1 (Robust Binary Classification): experiments across different domain/language settings. "
                   "We report Macro F1, averaged over detectors.",
        "rows": [("seen_language_seen_domain", "Seen domain, seen language"),
                 ("unseen_language_seen_domain", "Seen domain, unseen language"),
                 ("unseen_language_unseen_domain", "Unseen domain, unseen language"),
                 ("seen_language_unseen_domain", "Unseen domain, seen language")]},
    6: {"kind": "family", "header": "Category", "decimals": 3, "label": "tab:task2_subsets",
        "caption": "Task 2 (Model Family Attribution): average Macro-F1 across models by generator type.",
        "rows": [("seen_generator", "In-domain Generator"), ("unseen_generator", "Out-of-Domain Generator")]},
    7: {"kind": "fine_grained", "header": "Category", "decimals": 3, "label": "tab:task3_subsets",
        "caption": "Task 3 (Fine-Grained Human-Machine Classification): average Macro-F1 across classifiers by "
                   "generator type with std.",
        "rows": [("in_domain", "In-domain"), ("out_of_domain", "Out-of-Domain")]},
}
ONE_CLASS_MARK = "†"


def subset_value(entry: dict, task_labels: list[str]) -> tuple[float | None, str | None]:
    """(value, one_class) for one detector on one subset: the macro-F1 over the task's labels
    (absent ones count 0), or, where the gold labels hold one class, that class's recall."""
    per_class = entry.get("per_class") or {}
    gold = [c for c, v in per_class.items() if v.get("support", 0) > 0]
    one = entry.get("one_class") or (gold[0] if len(gold) == 1 else None)
    if one is not None:
        return (float(per_class[one]["recall"]) if one in per_class else None), one
    f1 = [float(per_class[c]["f1"]) if c in per_class else 0.0 for c in task_labels]
    return (float(np.mean(f1)) if f1 else None), None


def mean_std(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.std(ddof=1)) if len(arr) > 1 else 0.0


def compute(number: int, task: str | None, task_labels: list[str], scores: dict[str, dict]) -> dict:
    """One table's numbers. scores: detector -> its scores JSON for `task`."""
    spec = PAPER_TABLES[number]
    out = {"table": number, "task": task, "kind": spec["kind"], "detectors": sorted(scores), "rows": []}
    if task is None:
        out["note"] = f"no task of kind {spec['kind']} in this configuration"
        return out
    subsets_seen = set()
    for s in scores.values():
        subsets_seen |= set(((s.get("by") or {}).get("subset") or {}))
    if not subsets_seen:
        out["note"] = "the task's test data names no subsets"
        return out
    known = [name for name, _ in spec["rows"]]
    extra = sorted(subsets_seen - set(known))   # e.g. release subsets by identified language only
    for subset, title in [*spec["rows"], *[(e, e.replace("_", " ")) for e in extra]]:
        per_detector, one_classes, rows = {}, set(), None
        for det, s in sorted(scores.items()):
            entry = ((s.get("by") or {}).get("subset") or {}).get(subset)
            if not entry or not entry.get("n"):
                continue
            value, one = subset_value(entry, task_labels)
            rows = entry["n"]
            if value is not None:
                per_detector[det] = value
            if one:
                one_classes.add(one)
        mean, std = mean_std(list(per_detector.values()))
        out["rows"].append({"subset": subset, "title": title, "rows": rows, "mean": mean, "std": std,
                            "metric": f"recall of {sorted(one_classes)[0]}" if one_classes else "macro_f1",
                            "one_class": sorted(one_classes)[0] if one_classes else None,
                            "per_detector": per_detector})
    return out


def _fmt(value: float | None, decimals: int) -> str:
    return "–" if value is None else f"{value:.{decimals}f}"


def render(result: dict, titles: dict[str, str] | None = None) -> tuple[str, str]:
    """(latex, markdown) in the paper's layout: setting, Macro F1, STD (±)."""
    spec = PAPER_TABLES[result["table"]]
    d = spec["decimals"]
    body = []
    for row in result["rows"]:
        mark = ONE_CLASS_MARK if row["one_class"] else ""
        if row["rows"] is None:
            body.append([row["title"], "no rows", ""])
        else:
            body.append([row["title"] + mark, _fmt(row["mean"], d), _fmt(row["std"], d)])
    notes = []
    if any(r["one_class"] for r in result["rows"]):
        one = sorted({r["one_class"] for r in result["rows"] if r["one_class"]})
        notes.append(f"{ONE_CLASS_MARK} the subset's gold labels hold one class ({', '.join(one)}): the recall of that "
                     "class (= accuracy) is reported instead of a macro-F1.")
    from .table4 import plain_title
    names = ", ".join(plain_title((titles or {}).get(det, det)) for det in result["detectors"])
    caption = spec["caption"]
    if "note" in result:
        latex = (f"\\begin{{table}}[t]\n\\centering\n\\textit{{Not computed: {result['note']}.}}\n"
                 f"\\caption{{{caption}}}\n\\label{{{spec['label']}}}\n\\end{{table}}\n")
        md = f"**Table {result['table']}** ({spec['kind']}): not computed: {result['note']}.\n"
        return latex, md
    headers = [spec["header"], "Macro F1", "STD (±)"]
    tex_rows = [[c.replace("&", "\\&") for c in r] for r in body]
    latex = tabulate(tex_rows, headers=headers, tablefmt="latex_booktabs", colalign=("left", "right", "right"),
                     disable_numparse=True).replace("\\textdagger{}", ONE_CLASS_MARK)
    latex = latex.replace(ONE_CLASS_MARK, "$^\\dagger$").replace("(\\$\\pm\\$)", "($\\pm$)")
    note_tex = " ".join(notes).replace(ONE_CLASS_MARK, "$^\\dagger$")
    latex = (f"\\begin{{table}}[t]\n\\centering\n{latex}\n\\caption{{{caption} Averaged over "
             f"{len(result['detectors'])} trained detectors (dummy baselines excluded). {note_tex}}}\n"
             f"\\label{{{spec['label']}}}\n\\end{{table}}\n")
    md = tabulate(body, headers=headers, tablefmt="github", colalign=("left", "right", "right"),
                  disable_numparse=True)
    md = (f"{md}\n\nTask `{result['task']}`; averaged over {len(result['detectors'])} trained detectors "
          f"({names}); dummy baselines excluded; sample std across detectors. {' '.join(notes)}\n")
    return latex, md


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report subsets", description=__doc__)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='JSON {"tables": {"5": {"task": name or null, "labels": [...], "detectors": [...]}}, '
                             '"titles": {detector: title}}')
    parser.add_argument("--scores", nargs="*", default=[], help="results/scores/{task}/{detector}.json files")
    parser.add_argument("--tables-dir", required=True)
    parser.add_argument("--inputs", default=None, help="results/inputs.json (the input fingerprint)")
    args = parser.parse_args(argv)
    from .table4 import with_inputs

    inputs = read_json(args.inputs) if args.inputs else None
    loaded = [read_json(p) for p in args.scores]
    tables = Path(args.tables_dir)
    summary = {}
    for number in (5, 6, 7):
        spec = args.layout["tables"].get(str(number)) or {}
        task = spec.get("task")
        wanted = set(spec.get("detectors") or [])
        scores = {s["detector"]: s for s in loaded if s["task"] == task and s["detector"] in wanted}
        result = compute(number, task, list(spec.get("labels") or []), scores)
        latex, md = with_inputs(*render(result, args.layout.get("titles")), inputs)
        write_text(latex, tables / f"table{number}.tex")
        write_text(md, tables / f"table{number}.md")
        summary[str(number)] = result
    write_json(summary, tables / "subset_tables.json")

