"""python -m aicd.report generator-card: one generator model's card (results/generators/{model}.md,
.json): how its requests went, how much of its code ran in the sandbox, how many of its rows
each Table 3 filter and dedup kept, and how detectable its code is to every fitted detector.

Detection, per task and detector, on the model's rows of that task's test split (where its code
entered the pool) or of a test set made of its generations (tasks.X.test_sets: {generation: M}),
by protocol:
  rows         the model's rows scored
  recall       share labelled as their own class (machine, hybrid or adversarial)
  flagged      share labelled anything but human
  AUROC        its rows against the split's human rows, on the detector's machine score
               (1 - score_human), where the detector gives scores; for a test set of its
               generations (no humans), against the human rows of the task's own test split
  TPR@1%FPR    the ROC operating point: share of its rows above the score that 1% of the
               split's human rows exceed (aicd.scoring.roc_point; "unreachable", with why, where
               the humans cannot give a 1% FPR: fewer than 100 of them, or ties at the top)
The card opens with the rows each figure rests on; cells over fewer than MIN_CLASS_SUPPORT rows
are marked § and conclude nothing. Shares and AUROC are printed to the decimal their rows
support (aicd.report.intervals.supported_digits), AUROC with its 95% bootstrap interval where
the model's rows reach the minimum."""

from __future__ import annotations

import argparse
import functools
import math

import numpy as np
import pandas as pd

from .. import published
from ..common.io import read_json, write_json, write_text
from ..common.stagecli import json_arg
from ..data.metrics import auroc, machine_score
from ..outputs import SHOWN
from ..scoring.bootstrap import RESAMPLES
from ..scoring.roc_point import roc_point
from ..scoring.thresholds import auroc_interval
from .generation_losses import losses, losses_lines
from .intervals import DIGITS_SAYS, supported_digits, with_interval
from .llm_tables import card_line
from .marks import MIN_CLASS_SUPPORT, SMALL_CLASS

FPR = 0.01


def on_split(split: pd.DataFrame, preds: pd.DataFrame) -> pd.DataFrame:
    """A detector's predictions on the rows of one split (its ids)."""
    return split[["id"]].merge(preds, on="id")


def detection(preds: pd.DataFrame, test: pd.DataFrame, ids: set, model_rows: pd.DataFrame,
              human_preds: pd.DataFrame | None = None) -> list[dict]:
    """Per protocol (and all): the model's rows' recall, flagged share, AUROC and TPR@1%FPR.
    human_preds: the detector's predictions on the rows whose humans the AUROC reads, where the
    scored rows hold none (a test set of generations: its task's test split)."""
    merged = on_split(test, preds)
    mine = merged[merged["id"].isin(ids)].merge(model_rows[["id", "protocol"]], on="id", how="left")
    pool = merged if human_preds is None else human_preds
    humans = pool[pool["gold"].eq("human") & ~pool["id"].isin(ids)]
    out = []
    for protocol, rows in [("all", mine), *sorted(mine.groupby(mine["protocol"].fillna("?")))]:
        if rows.empty:
            continue
        cell = {"protocol": protocol, "rows": int(len(rows)), "humans": int(len(humans)),
                "recall": float((rows["pred"] == rows["gold"]).mean()),
                "flagged": float((rows["pred"] != "human").mean()), "auroc": None, "auroc_ci": None,
                "tpr_at_1pct": None}
        if "score_human" in preds.columns and len(humans):
            scores = np.concatenate([machine_score(rows["score_human"]), machine_score(humans["score_human"])])
            positive = np.r_[np.ones(len(rows), bool), np.zeros(len(humans), bool)]
            cell["auroc"] = auroc(scores, positive)
            cell["auroc_ci"] = auroc_interval(scores, positive, RESAMPLES, seed=0)
            point = roc_point(scores, positive, FPR)
            cell["tpr_at_1pct"] = None if point is None or not point["reachable"] else point["tpr"]
            cell["why_unreachable"] = None if point is None or point["reachable"] else point["unreachable"]
        out.append(cell)
    return out


def requests_section(report: dict) -> list[str]:
    status = report.get("status") or {}
    no_block = (report.get("no_code_block") or {})
    lines = ["## Requests", "", f"{report['rows']:,} prompts ({', '.join(f'{k} {v}' for k, v in sorted((report.get('by_protocol') or {}).items()))}); "
             f"statuses: {', '.join(f'{k} {v:,}' for k, v in sorted(status.items())) or 'none'}; "
             f"{report['prompt_tokens']:,} prompt and {report['completion_tokens']:,} completion tokens, "
             f"{report['requests_sent']:,} requests sent."]
    repeats = report.get("cut_at_repeat") or {}
    if repeats.get("count"):
        lines.append(f"{repeats['count']:,} answers started their program over and were cut where they did (the "
                     "first copy kept: aicd.generate.answers).")
    if no_block.get("bare_code"):
        lines.append(f"{no_block['bare_code']:,} answers gave bare code without the code block asked for (taken as "
                     "code: the whole answer parsed in its language).")
    if no_block.get("count"):
        lines.append(f"{no_block['count']:,} answers held no code block and did not parse as code (rows without "
                     f"code), e.g. \"{str(no_block.get('example') or '')[:160]}\".")
    return lines + [""]


def execution_section(execution: dict | None) -> list[str]:
    if not execution:
        return ["## Execution", "", "Not run in the sandbox (no container engine answered, or execution is off).", ""]
    from ..sandbox.execute import BUILT

    status = execution.get("status") or {}
    total = sum(status.values())
    built = sum(v for k, v in status.items() if k in BUILT)
    return ["## Execution", "", f"{total:,} programs run in the sandbox: "
            + ", ".join(f"{k} {v:,}" for k, v in sorted(status.items()))
            + (f"; built (compiled or passed the syntax check): {built / total:.0%}." if total else "."), ""]


def filters_section(normalized: dict | None) -> list[str]:
    if not normalized:
        return ["## Filters", "", "Its code did not go through the dataset stage (a test set of its generations).", ""]
    rejected = normalized.get("rejected") or {}
    dropped = {k: v for k, v in rejected.items() if k is not None and k == k}
    parts = ", ".join(f"{k} {v:,}" for k, v in sorted(dropped.items(), key=lambda kv: -kv[1])) or "none"
    return ["## Filters", "", f"{normalized['rows_in']:,} rows in, {normalized['kept']:,} kept by the code checks and "
            f"the Table 3 filters (before deduplication against the pool); dropped: {parts}.", ""]


def _share(x, rows: int) -> str:
    """A share x 100 to the decimal `rows` rows support ('–' for none)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:.{supported_digits(rows)}f}"


def _auroc_text(c: dict) -> str:
    """AUROC x 100 to the decimal the smaller of its two classes supports, with its interval where
    the model's rows reach the minimum: under it the resamples hold the same few rows of its code
    (one row: each resample has it or not), so the interval would say how the humans vary, not
    how its code does, and is left out."""
    if c.get("auroc") is None:
        return "–"
    digits = supported_digits(min(c["rows"], c.get("humans") or 0))
    ci = c.get("auroc_ci") if c["rows"] >= MIN_CLASS_SUPPORT else None
    return with_interval(c["auroc"], ci, digits=digits)


def _tpr_text(c: dict) -> str:
    why = c.get("why_unreachable")
    if why:
        return why["short"] if isinstance(why, dict) and why.get("short") else "unreachable"
    return _share(c.get("tpr_at_1pct"), c["rows"])


def rows_line(cells: dict) -> list[str]:
    """The card's first line: how many rows each figure rests on, and that under the minimum a
    figure concludes nothing."""
    if not cells:
        return ["**Rows behind the figures**: no fitted detector scored its rows, so the card concludes nothing about "
                "how detectable its code is.", ""]
    parts = []
    for where, per_detector in cells.items():
        first = next(iter(per_detector.values()))
        everything = next((c for c in first if c["protocol"] == "all"), first[0])
        protocols = [c for c in first if c["protocol"] != "all"]
        split = ", ".join(f"{c['protocol']} {c['rows']:,}" for c in protocols)
        small = everything["rows"] < MIN_CLASS_SUPPORT
        parts.append(f"{where}: **{everything['rows']:,} of its rows**{' ' + SMALL_CLASS if small else ''}"
                     + (f" ({split})" if len(protocols) > 1 else "")
                     + (f" against {everything['humans']:,} human rows" if everything.get("humans") else ""))
    return [f"**Rows behind the figures**: {'; '.join(parts)}. A figure over fewer than {MIN_CLASS_SUPPORT} rows "
            f"({SMALL_CLASS}) concludes nothing: one row moves a share of n rows by 100/n points; and TPR at 1% FPR "
            "needs at least 100 human rows.", ""]


def detection_section(cells: dict, titles: dict) -> list[str]:
    lines = ["## Detection", "", "Per task and fitted detector, on this model's rows (by protocol): recall = share "
             "labelled as their own class; flagged = share labelled anything but human; AUROC (with its 95% bootstrap "
             f"interval where its rows reach {MIN_CLASS_SUPPORT}) and TPR at 1% FPR (the ROC operating point) against the same split's human rows (for a test "
             f"set of its generations: the human rows of the task's test split); × 100, {DIGITS_SAYS}. "
             f"{SMALL_CLASS} = fewer than {MIN_CLASS_SUPPORT} rows: concludes nothing.", ""]
    for where, per_detector in cells.items():
        lines += [f"### {where}", "", "| detector | protocol | rows | recall | flagged | AUROC | TPR @ 1% FPR |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for detector, rows in per_detector.items():
            for c in rows:
                mark = f" {SMALL_CLASS}" if c["rows"] < MIN_CLASS_SUPPORT else ""
                lines.append(f"| {titles.get(detector, detector)} | {c['protocol']} | {c['rows']:,}{mark} | "
                             f"{_share(c['recall'], c['rows'])} | {_share(c['flagged'], c['rows'])} | "
                             f"{_auroc_text(c)} | {_tpr_text(c)} |")
        lines.append("")
    return lines


def header(model: dict) -> list[str]:
    """Title and family; `maker` is optional in the registry (a model of family `other` says who made it
    where the entry gives it)."""
    family = model.get("family") or "not given"
    other = ""
    if family == "other":
        made = f"made by {model['maker']}; " if model.get("maker") else ""
        by_family, others = published.family_tasks()
        other = f" ({made}not one of the paper's 11 families: its code is in {others}, never {by_family})"
    litellm = f"; litellm model `{model['litellm_model']}`" if model.get("litellm_model") else ""
    return [f"# {model['name']}", "", f"Family {family}{other}{litellm}.", ""]


def generator_card(model: dict, report: dict, generations: pd.DataFrame, execution: dict | None,
                   normalized: dict | None, scored: list[dict], titles: dict,
                   test_sets: list[dict] | None = None) -> tuple[str, dict]:
    """(Markdown, JSON) of one model's card. scored: {where: {detector: {predictions, test[,
    human_predictions, human_test]}}} (the human pair where the scored rows hold no humans)."""
    ids = set(generations["id"])
    split_ids = functools.cache(lambda path: pd.read_parquet(path, columns=["id"]))  # one split, every detector
    cells: dict = {}
    for where, per_detector in scored.items():
        for detector, files in per_detector.items():
            preds = pd.read_parquet(files["predictions"])
            human_preds = None
            if files.get("human_predictions"):
                human_preds = on_split(split_ids(files["human_test"]), pd.read_parquet(files["human_predictions"]))
            found = detection(preds, split_ids(files["test"]), ids, generations, human_preds)
            if found:
                cells.setdefault(where, {})[detector] = found
    head = header(model) + rows_line(cells)
    if report.get("model_card"):
        head += [f"Model card: {card_line(report['model_card'])}.", ""]
    body = requests_section(report) + execution_section(execution) + filters_section(normalized)
    lost = losses(report, normalized, test_sets)
    body += losses_lines(lost)
    body += detection_section(cells, titles) if cells else ["## Detection", "", "No fitted detector scored its rows.", ""]
    data = {"model": model["name"], "family": model.get("family"), "requests": report, "execution": execution,
            "filters": normalized, "skipped_and_dropped": lost, "detection": cells}
    return "\n".join(head + body), data


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m aicd.report generator-card", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, type=json_arg, help="the model's registry entry (JSON)")
    p.add_argument("--report", required=True, help=SHOWN.generations_report())
    p.add_argument("--generations", required=True, help=SHOWN.generations())
    p.add_argument("--execution", default=None, help=f"{SHOWN.execution_report('{model}')}, where it ran")
    p.add_argument("--normalized", default=None, help=SHOWN.normalized_report("generations", "{model}"))
    p.add_argument("--scored", type=json_arg, default={}, help='{where: {detector: {"predictions", "test"}}}')
    p.add_argument("--titles", type=json_arg, default={}, help="detector -> its title")
    p.add_argument("--test-set-reports", nargs="*", default=[],
                   help=f"{SHOWN.test_set_report(test_set='{set}')} of the test sets of its generations")
    p.add_argument("--out-md", required=True)
    p.add_argument("--out-json", required=True)
    args = p.parse_args(argv)
    generations = pd.read_parquet(args.generations, columns=["id", "protocol", "status"])
    markdown, data = generator_card(args.model, read_json(args.report), generations,
                                    read_json(args.execution) if args.execution else None,
                                    read_json(args.normalized) if args.normalized else None, args.scored, args.titles,
                                    [read_json(path) for path in args.test_set_reports])
    write_text(markdown + "\n", args.out_md)
    write_json(data, args.out_json)
