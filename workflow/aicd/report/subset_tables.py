"""Tables 5, 6 and 7 of the paper: a value per evaluation subset, averaged over detectors, with
the standard deviation across detectors.

- Table 5, Task 1 (kind binary): the four language x domain settings, in the paper's row order.
- Table 6, Task 2 (kind family): seen (in-domain) and unseen (out-of-domain) generators.
- Table 7, Task 3 (kind fine_grained): in-domain and out-of-domain sources.

Numbers come from the per-subset entries of results/scores/{task}/{detector}.json, never typed.
Our choices where the paper is silent, written beside the tables too:
- the detectors averaged (aicd.plan.Plan.averaged, the same for the all-fail analysis): the
  paper's trained rows run on the task; the dummy baselines, the zero-shot Fast-DetectGPT, the
  LLM judges and our own detectors are kept out (ours are listed beside the table); where none
  of the paper's rows ran, every trained detector, and the caption says so;
- a subset's value is the macro-F1 over the task's whole label set, as the paper's tables do (a
  label neither in the subset's gold labels nor predicted there counts 0, as scikit-learn's
  `f1_score(labels=..., zero_division=0)` does); a subset whose gold labels hold one class gets
  that class's recall instead, under its true name in the Metric column: a macro-F1 over one class
  is no discrimination score, and the row is kept out of the comparison with the paper;
- the standard deviation is the sample standard deviation across detectors (ddof = 1; 0 for one);
- the interval is the mean of the detectors' own 95% bootstrap bounds (aicd.scoring.bootstrap.
  subset_metric): conservative, as wide as the interval of the mean if their errors moved together
  exactly (they are scored on the same rows), wider otherwise;
- § marks a subset with a class of fewer than MIN_CLASS_SUPPORT test rows (aicd.report.marks);
- decimals as the paper prints them: 2 in Table 5, 3 in Tables 6 and 7 (scale 0-1)."""

from __future__ import annotations

import argparse

import numpy as np
from tabulate import tabulate

from .. import published
from ..common.io import read_json, write_json, write_text
from ..common.stagecli import json_arg
from ..outputs import SHOWN, beside
from .latex import latex_text
from .marks import MIN_CLASS_SUPPORT, ONE_ROW, SMALL_CLASS, one_row_decides, one_row_legend, small_classes


def paper_table(number: int) -> dict:
    """How the paper prints subset table `number` (aicd/published.yaml): its task kind, first
    column's header, decimals, LaTeX label and caption ("Task N (title): ..."), and its rows."""
    table = published.table(number)
    task = published.paper_task(table["task_kind"])
    printed = table["printed_as"]
    return {"kind": task.kind, "header": printed["header"], "decimals": int(printed["decimals"]),
            "label": printed["label"], "caption": f"{task.name} ({task.title}): {printed['caption']}",
            "rows": [(r.row, r.printed) for r in published.rows(number)]}


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


def detector_value(entry: dict, task_labels: list[str]) -> dict:
    """{value, ci, one_class, metric} of one detector on one subset: the score file's
    table_metric where it has one, else recomputed from its per-class entries (no interval)."""
    metric = entry.get("table_metric")
    if metric and metric.get("value") is not None:
        return {"value": float(metric["value"]), "ci": metric.get("ci"), "one_class": metric.get("one_class"),
                "metric": metric["metric"]}
    value, one = subset_value(entry, task_labels)
    return {"value": value, "ci": None, "one_class": one,
            "metric": f"recall of {one}" if one else "macro-F1 over the task's labels"}


def compute(number: int, task: str | None, task_labels: list[str], scores: dict[str, dict],
            ours: dict[str, dict] | None = None, averaged_over: str = "paper") -> dict:
    """One table's numbers. scores: detector -> its scores JSON for `task` (the detectors
    averaged); ours: the trained detectors kept out of the average, shown beside it."""
    spec = paper_table(number)
    out = {"table": number, "task": task, "kind": spec["kind"], "detectors": sorted(scores), "classes": len(task_labels),
           "averaged_over": averaged_over, "ours": sorted(ours or {}), "rows": []}
    if task is None:
        out["note"] = f"no task of kind {spec['kind']} in this configuration"
        return out
    if not scores:
        out["note"] = "no trained detector ran on the task"
        return out
    subsets_seen = set()
    for s in scores.values():
        subsets_seen |= set((s.get("by") or {}).get("subset") or {})
    if not subsets_seen:
        out["note"] = "the task's test data names no subsets"
        return out
    known = [name for name, _ in spec["rows"]]
    extra = sorted(subsets_seen - set(known))   # e.g. release subsets by identified language only
    for subset, title in [*spec["rows"], *[(e, e.replace("_", " ")) for e in extra]]:
        per_detector, intervals, one_classes, rows, small = {}, [], set(), None, {}
        for det, s in sorted(scores.items()):
            entry = ((s.get("by") or {}).get("subset") or {}).get(subset)
            if not entry or not entry.get("n"):
                continue
            got = detector_value(entry, task_labels)
            rows = entry["n"]
            small = small_classes(entry) or small
            if got["value"] is not None:
                per_detector[det] = got["value"]
                if got["ci"]:
                    intervals.append(got["ci"])
            if got["one_class"]:
                one_classes.add(got["one_class"])
        mean, std = mean_std(list(per_detector.values()))
        ci = [float(np.mean([c[0] for c in intervals])), float(np.mean([c[1] for c in intervals]))] \
            if intervals and len(intervals) == len(per_detector) else None
        ours_values = {}
        for det, s in sorted((ours or {}).items()):
            entry = ((s.get("by") or {}).get("subset") or {}).get(subset)
            if entry and entry.get("n"):
                ours_values[det] = detector_value(entry, task_labels)["value"]
        one = sorted(one_classes)[0] if one_classes else None
        out["rows"].append({"subset": subset, "title": title, "rows": rows, "mean": mean, "std": std, "ci": ci,
                            "metric": f"recall of {one}" if one else "macro_f1",
                            "one_class": one, "small_classes": small,
                            "per_detector": per_detector, "ours": ours_values})
    return out


def _fmt(value: float | None, decimals: int) -> str:
    return "–" if value is None else f"{value:.{decimals}f}"


def _metric_name(row: dict) -> str:
    return f"{row['one_class']} recall" if row["one_class"] else "macro-F1"


def decided_by_one_row(row: dict, result: dict) -> dict | None:
    """aicd.report.marks.one_row_decides for a subset row: its small classes and averaged interval,
    the macro-F1 over the task's labels (a one-class row's recall has no such class)."""
    if row.get("one_class") or not row.get("small_classes"):
        return None
    per_class = {c: {"support": n} for c, n in row["small_classes"].items()}
    return one_row_decides({"per_class": per_class}, row.get("ci"), result.get("classes"))


def caption_of(result: dict, titles: dict[str, str] | None = None) -> str:
    """What every cell is: the detectors averaged (named), the metric, the scale, STD, the interval."""
    from .table4 import plain_title

    names = ", ".join(plain_title((titles or {}).get(det, det)) for det in result["detectors"])
    who = (f"the paper's {len(result['detectors'])} trained detector rows run here ({names}); dummy baselines, "
           "the zero-shot Fast-DetectGPT, LLM judges and detectors the paper does not have are kept out"
           if result.get("averaged_over", "paper") == "paper" else
           f"no detector of the paper's ran, so our {len(result['detectors'])} trained detectors ({names})")
    text = (f"Mean over {who}. Metric: macro-F1 over the task's labels, or, for a subset whose test rows hold one "
            "class, that class's recall (not comparable with the paper's macro-F1). Scale 0-1, as the paper prints "
            "it. STD: sample standard deviation across the detectors. 95% CI: the mean of the detectors' own "
            "bootstrap bounds (test rows resampled; conservative). The paper's own table says \"averaged over "
            "detectors\" and does not list which, so its rows and ours may differ.")
    if any(r.get("small_classes") for r in result["rows"]):
        named = "; ".join(f"{r['title']}: " + ", ".join(f"{c} {n}" for c, n in sorted(r["small_classes"].items()))
                          for r in result["rows"] if r.get("small_classes"))
        text += (f" {SMALL_CLASS}: a class of the subset has fewer than {MIN_CLASS_SUPPORT} test rows ({named}): its "
                 "value concludes nothing.")
    decided = {r["title"]: got for r in result["rows"] if (got := decided_by_one_row(r, result))}
    if decided:
        text += " " + one_row_legend(decided).replace("(macro_f1_ci)", "(by.subset)")
    if result.get("ours"):
        text += " Ours, not averaged: " + ", ".join(plain_title((titles or {}).get(d, d)) for d in result["ours"]) + "."
    return text


def render(result: dict, titles: dict[str, str] | None = None) -> tuple[str, str]:
    """(latex, markdown) in the paper's layout (setting, value, STD (±)), with the metric's true
    name and the interval beside it."""
    spec = paper_table(result["table"])
    d = spec["decimals"]
    caption = spec["caption"]
    if "note" in result:
        latex = (f"\\begin{{table}}[t]\n\\centering\n\\textit{{Not computed: {result['note']}.}}\n"
                 f"\\caption{{{caption}}}\n\\label{{{spec['label']}}}\n\\end{{table}}\n")
        md = f"**Table {result['table']}** ({spec['kind']}): not computed: {result['note']}.\n"
        return latex, md
    body = []
    for row in result["rows"]:
        if row["rows"] is None:
            body.append([row["title"], "", "no rows", "", ""])
            continue
        mark = SMALL_CLASS if row.get("small_classes") else ""
        ci = row.get("ci")
        interval = f"{ci[0]:.{d}f}–{ci[1]:.{d}f}" if ci else "–"
        body.append([row["title"], _metric_name(row), _fmt(row["mean"], d) + mark, _fmt(row["std"], d),
                     ONE_ROW if decided_by_one_row(row, result) else interval])
    ours = sorted({det for r in result["rows"] for det in r.get("ours", {})})
    headers = [spec["header"], "Metric", "Mean", "STD (±)", "95% CI"]
    for det in ours:
        headers.append(f"{(titles or {}).get(det, det)} (ours)")
        for line, row in zip(body, result["rows"]):
            line.append(_fmt(row.get("ours", {}).get(det), d) if row["rows"] is not None else "")
    colalign = ("left", "left", "right", "right", "right", *["right"] * len(ours))
    text = caption_of(result, titles)
    tex_rows = [[latex_text(c) for c in r] for r in body]
    latex = tabulate(tex_rows, headers=[latex_text(h) for h in headers],
                     tablefmt="latex_raw", colalign=colalign, disable_numparse=True)
    tex_caption = latex_text(text)
    latex = (f"\\begin{{table}}[t]\n\\centering\n{latex}\n\\caption{{{caption} {tex_caption}}}\n"
             f"\\label{{{spec['label']}}}\n\\end{{table}}\n")
    md = tabulate(body, headers=headers, tablefmt="github", colalign=colalign, disable_numparse=True)
    md = f"{md}\n\nTask `{result['task']}`. {caption} {text}\n"
    return latex, md


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report subsets", description=__doc__)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='JSON {"tables": {"5": {"task": name or null, "labels": [...], "detectors": [...], '
                             '"averaged_over": "paper" | "ours", "ours": [...]}}, "titles": {detector: title}}')
    parser.add_argument("--scores", nargs="*", default=[], help=f"{SHOWN.scores()} files")
    parser.add_argument("--tables-dir", required=True)
    parser.add_argument("--inputs", default=None, help=f"{SHOWN.inputs()} (the input fingerprint)")
    args = parser.parse_args(argv)
    from .table4 import with_inputs

    inputs = read_json(args.inputs) if args.inputs else None
    loaded = [read_json(p) for p in args.scores]
    tables = args.tables_dir
    summary = {}
    for number in published.SUBSET_TABLES:
        spec = args.layout["tables"].get(str(number)) or {}
        task = spec.get("task")
        wanted, ours = set(spec.get("detectors") or []), set(spec.get("ours") or [])
        scores = {s["detector"]: s for s in loaded if s["task"] == task and s["detector"] in wanted}
        mine = {s["detector"]: s for s in loaded if s["task"] == task and s["detector"] in ours}
        result = compute(number, task, list(spec.get("labels") or []), scores, mine,
                         spec.get("averaged_over", "paper"))
        latex, md = with_inputs(*render(result, args.layout.get("titles")), inputs)
        write_text(latex, beside(tables, "tab", f"table{number}", "tex"))
        write_text(md, beside(tables, "tab", f"table{number}", "md"))
        summary[str(number)] = result
    write_json(summary, beside(tables, "tab", "subset_tables", "json"))
