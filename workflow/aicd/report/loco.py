"""The leave-one-collection-out table (results/tables/loco.md, .tex, .json): every detector on
every held-out collection of aicd.splits.loco, read by aicd.scoring.loco (AUROC; macro-F1 and
human FPR at the validation threshold; the oracle macro-F1; the realised FPR and TPR of a
threshold calibrated on half of the collection's own human rows; the realised FPR and TPR of
per-language thresholds set on the default reference, human code of no held-out row), with the
mean and the worst over collections and their bootstrap intervals.

Input: each detector's test predictions (score_human) and validation scores on each fold, as
the detect jobs write them (results/predictions/{task}/{detector}.parquet,
results/validation_scores/{task}/{detector}.parquet), and, for the default reference, the
calibrate jobs' test views (results/calibration/{task}/{detector}.test.json: thresholds set on
the fold's reference table, aicd.splits.reference); benchmarks/loco.py gives the same records
from its own fits, its reference with the gathered library code (`write_tables`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..common.io import write_json, write_text
from ..common.stagecli import json_arg
from ..data.families import HUMAN
from ..data.metrics import machine_scores, min_reference
from ..outputs import SHOWN, wildcards_of
from ..scoring.loco import HALVINGS, LOCO_FPR_CONFIDENCE, MISS_MARGIN, fold_metrics, summary
from .latex import latex_text
from .table4 import plain_title

FEW = 30  # a class with fewer held-out rows than this: its collection's cells carry a mark
WORST_WORD = {"auroc": "worst (lowest)", "macro_f1": "worst (lowest)", "human_fpr": "worst (highest)",
              "oracle_macro_f1": "worst (lowest)"}
SECTIONS = (
    ("auroc", "AUROC x 100 (machine against human) [95% bootstrap interval]"),
    ("macro_f1", "Macro-F1 x 100 at the validation threshold (the cut that maximises macro-F1 on validation rows "
                 "of the training collections)"),
    ("human_fpr", "Human FPR % at the validation threshold (the held-out collection's human programs flagged as "
                  "machine)"),
    ("oracle_macro_f1", "Oracle macro-F1 x 100 (the best threshold read off the held-out rows: a bound, not a result)"),
)


def detector_records(detector: str, folds: dict[str, tuple[pd.DataFrame, pd.DataFrame]], seed: int,
                     fpr: float, views: dict | None = None) -> dict | None:
    """{folds: {collection: metrics}, summary} of one detector, from its (predictions, validation
    scores) per held-out collection; None where it gives no human score. The default reference,
    where given, per collection: `views` (a calibrate job's test view, the one rule behind it)."""
    metrics, draws = {}, {}
    views = views or {}
    for i, (collection, (predictions, validation)) in enumerate(folds.items()):
        column = f"score_{HUMAN}"
        if column not in predictions or predictions[column].isna().all() or validation.empty:
            return None
        scores = machine_scores(predictions)
        metrics[collection], draws[collection] = fold_metrics(
            scores, predictions["gold"].to_numpy(dtype=object) != HUMAN,
            validation["machine_score"].to_numpy(dtype=float), validation["gold"].to_numpy(dtype=object) != HUMAN,
            fpr, seed + i)
        if collection in views:
            metrics[collection]["default_reference"] = from_view(views[collection])
    return {"folds": metrics, "summary": summary(metrics, draws)}


def from_view(view: dict) -> dict:
    """A calibrate job's test view (aicd.scoring.calibrate_model.test_view) as the default-reference
    record of aicd.scoring.loco: thresholds set on the fold's reference table, held to every row
    of the held-out collection."""
    if not view.get("available"):
        return {"fpr": None, "threshold": None, "why": view.get("why", "no calibrated view")}
    point, reference = view["calibrated"], view.get("reference") or {}
    if point.get("without_threshold", 0) >= max(view.get("rows", 0), 1):  # too few reference programs for any threshold
        return {"target_fpr": view["fpr"], "reference_humans": reference.get("rows"), "fpr": None, "threshold": None,
                "why": f"fewer reference humans in the fitting half than the "
                       f"{min_reference(view['fpr'], view.get('fpr_confidence'))} a {view['fpr']:.0%} target needs"}
    return {"target_fpr": view["fpr"], "fpr_confidence": view.get("fpr_confidence"), "reference_humans": reference.get("rows"),
            "reference_origins": reference.get("by_origin", {}),
            "reference_held_out_fpr": view["reference_held_out"].get("realised_fpr"), "humans": point["humans"],
            "fpr": point["fpr"], "fpr_upper": point["fpr_upper"], "tpr": point["tpr"],
            "without_threshold": point.get("without_threshold", 0), "pooled_languages": view.get("pooled_languages", [])}


def _pct(value, digits: int = 1) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{100 * value:.{digits}f}"


def _with_ci(value, ci) -> str:
    return _pct(value) if not ci else f"{_pct(value)} [{_pct(ci[0])}, {_pct(ci[1])}]"


def collection_heads(records: dict) -> list[str]:
    """Each held-out collection with its rows (h = human, m = machine); § where a class has < FEW."""
    first = next(iter(records.values()))["folds"]
    heads = []
    for collection, fold in first.items():
        h, m = fold["rows"]["human"], fold["rows"]["machine"]
        heads.append(f"{collection} ({h} h / {m} m){' §' if min(h, m) < FEW else ''}")
    return heads


def section_rows(records: dict, titles: dict, metric: str) -> list[list[str]]:
    rows = []
    for detector, record in records.items():
        cells = [_with_ci(f[metric], f.get(f"{metric}_ci")) for f in record["folds"].values()]
        total = record["summary"][metric]
        rows.append([titles.get(detector, detector), *cells, _with_ci(total["mean"], total.get("mean_ci")),
                     _with_ci(total["worst"], total.get("worst_ci"))])
    return rows


def calibrated_rows(records: dict, titles: dict, view: str = "calibrated") -> list[list[str]]:
    rows = []
    for detector, record in records.items():
        cells = []
        for fold in record["folds"].values():
            c = fold.get(view)
            cells.append("—" if c is None else f"n/a ({c.get('reference_humans', 0)} ref.)" if c.get("fpr") is None
                         else f"{_pct(c['fpr'])} (≤ {_pct(c['fpr_upper'])}) / {_pct(c['tpr'])}"
                         + (" ¶" if c.get("pooled_languages") else ""))
        total = record["summary"].get(view)
        tail = ["", ""] if not total else [f"{_pct(total['fpr_mean'])} / {_pct(total['tpr_mean'])}",
                                           f"{_pct(total['fpr_worst'])} / {_pct(total['tpr_worst'])}"]
        rows.append([titles.get(detector, detector), *cells, *tail])
    return rows


def _halving_cell(view: dict | None) -> str:
    h = (view or {}).get("halvings")
    if not h:
        return "n/a"
    few = " §" if view.get("measuring_humans", FEW) < FEW else ""
    return f"{_pct(h['fpr_mean'])} ({h['missed']}){few} / {_pct(h['tpr_mean'])}"


def _halving_tail(total: dict | None) -> tuple[str, str]:
    """Mean and worst of one rule's halving means (aicd.scoring.loco.summary's `halvings`)."""
    if not total:
        return "n/a", "n/a"
    return (f"{_pct(total['fpr_mean'])} / {_pct(total['tpr_mean'])}",
            f"{_pct(total['fpr_worst'])} / {_pct(total['tpr_worst'])}")


def halving_rows(records: dict, titles: dict) -> list[list[str]]:
    """Per detector and collection: the own-half rule held on average → held with a confidence,
    each over its seeded halvings (aicd.scoring.loco.over_halvings); the mean and worst over the
    collections where the confident rule has a threshold too (its cells still show the average
    rule alone where the confident one has none)."""
    rows = []
    for detector, record in records.items():
        cells = [f"{_halving_cell(f.get('calibrated'))} → {_halving_cell(f.get('calibrated_confident'))}"
                 for f in record["folds"].values()]
        totals = record["summary"].get("halvings") or {}
        tails = [_halving_tail(totals.get(view)) for view in ("calibrated", "calibrated_confident")]
        rows.append([titles.get(detector, detector), *cells, f"{tails[0][0]} → {tails[1][0]}",
                     f"{tails[0][1]} → {tails[1][1]}"])
    return rows


WORKFLOW_REFERENCE = (
    "the fold's reference table (aicd.splits.reference, as calibration.reference builds it: the training collections' "
    "validation humans, and the library code only where calibration.reference.library names a gathered source; "
    "config/loco.yaml names none, because the only gathered library code, config/loco_local.yaml's, is a "
    "collection itself. benchmarks/loco.py adds the gathered library code)")


def markdown(records: dict, titles: dict, fpr: float, left_out: list | None = None,
             reference: str = WORKFLOW_REFERENCE) -> str:
    why = (f"\nLeft out (no human-class score on every held-out collection): {', '.join(left_out)}.\n"
           if left_out else "")
    if not records:
        return "No detector gives scores on every held-out collection.\n" + why
    heads = collection_heads(records)
    out = ["## Leave one collection out", "",
           "Each collection held out in turn; detectors trained on the others, the validation rows (threshold) "
           "from the training collections only. § : a class with fewer than "
           f"{FEW} held-out rows (read its cells with their intervals)." + why, ""]
    for metric, caption in SECTIONS:
        head = ["detector", *heads, "mean [CI]", f"{WORST_WORD[metric]} [CI]"]
        out += [f"### {caption}", "", _md_table(head, section_rows(records, titles, metric)), ""]
    head = ["detector", *heads, "mean FPR / TPR", "worst FPR / TPR"]
    out += [f"### Calibrated on a seeded half of the held-out collection's human rows ({fpr:.0%} target): realised "
            "FPR % on the other half (one-sided 95% upper bound) / TPR % on its machine rows; n/a: too few "
            f"reference humans for a split-conformal threshold (aicd.scoring.calibration)", "",
            _md_table(head, calibrated_rows(records, titles)), ""]
    if any("calibrated_confident" in f for r in records.values() for f in r["folds"].values()):
        out += [f"### The same, the {fpr:.0%} target held with probability {LOCO_FPR_CONFIDENCE:g} over the half "
                "drawn (a higher order statistic: aicd detect --fpr-confidence; n/a: fewer reference humans than "
                f"the {min_reference(fpr, LOCO_FPR_CONFIDENCE)} it needs)", "",
                _md_table(head, calibrated_rows(records, titles, "calibrated_confident")), ""]
    if any((f.get("calibrated") or {}).get("halvings") for r in records.values() for f in r["folds"].values()):
        out += [f"### The same two rules over {HALVINGS} seeded halvings of the collection's human rows (one half is "
                "one draw of the reference a user might hold): mean realised FPR % (in brackets: the halvings whose "
                f"FPR passed {fpr + MISS_MARGIN:.0%}, of {HALVINGS}) / mean TPR %, held on average → held with "
                f"probability {LOCO_FPR_CONFIDENCE:g}; § : each half measured on fewer than {FEW} humans (one program "
                "moves its FPR by more than 3 points); mean and worst over the collections where both rules have a "
                "threshold", "",
                _md_table(head, halving_rows(records, titles)), ""]
    if any("default_reference" in f for r in records.values() for f in r["folds"].values()):
        held = next((f["default_reference"]["fpr_confidence"] for r in records.values() for f in r["folds"].values()
                     if (f.get("default_reference") or {}).get("fpr_confidence") is not None), None)
        target = f"{fpr:.0%} target" + (f", held with probability {held:g}" if held is not None else "")
        out += [f"### Calibrated on the default reference ({target}): per-language thresholds (aicd detect's "
                "rule; ¶: a language of the collection held to the pooled threshold, too few reference programs of "
                "its own) set on human code the fold's detector did not train on, none of the held-out collection: "
                f"{reference}; realised FPR % on every human row of the collection (one-sided 95% upper bound) / TPR % "
                "on its machine rows; —: not measured", "", _md_table(head, calibrated_rows(records, titles,
                                                                                           "default_reference")), ""]
    return "\n".join(out)


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def latex(records: dict, titles: dict) -> str:
    """AUROC per held-out collection with the mean and the worst (the table's first section)."""
    if not records:
        return "% no detector gives scores on every held-out collection\n"
    heads = [latex_text(h.split(" (")[0]) for h in collection_heads(records)]
    lines = [r"\begin{table*}[t]", r"\centering", r"\small", r"\begin{tabular}{l" + "c" * (len(heads) + 2) + "}",
             r"\toprule", " & ".join(["Detector", *heads, "Mean", "Worst"]) + r" \\", r"\midrule"]
    for row in section_rows(records, titles, "auroc"):
        lines.append(" & ".join([latex_text(row[0]), *[c.split(" [")[0] for c in row[1:]]]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              r"\caption{Leave one collection out: AUROC ($\times 100$) on each held-out collection, trained on the "
              r"others; mean and worst over collections.}", r"\label{tab:loco}", r"\end{table*}"]
    return "\n".join(lines) + "\n"


def write_tables(records: dict, titles: dict, out: dict, fpr: float,
                 left_out: list | None = None, reference: str = WORKFLOW_REFERENCE) -> None:
    """out: the file of each format ({"md": ..., "tex": ..., "json": ...})."""
    write_text(markdown(records, titles, fpr, left_out, reference), out["md"])
    write_text(latex(records, titles), out["tex"])
    write_json({"target_fpr": fpr, "detectors": records, "left_out": list(left_out or [])}, out["json"])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report loco", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layout", required=True, type=json_arg,
                        help='{"folds": {task: held-out collection}, "order": [collection, ...], '
                             '"detectors": {name: title}}')
    parser.add_argument("--predictions", nargs="+", required=True, help=SHOWN.predictions())
    parser.add_argument("--validation-scores", nargs="+", required=True,
                        help=f"{SHOWN.validation_scores()}, in the same order")
    parser.add_argument("--calibration-views", nargs="*", default=[],
                        help=f"{SHOWN.calibration_view()} of the calibrated pairs (the default "
                             "reference's view)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fpr", type=float, required=True,
                        help="the target FPR of the calibrated views (the config's calibration.view_fpr)")
    for fmt in ("md", "tex", "json"):
        parser.add_argument(f"--out-{fmt}", required=True, help=SHOWN.tab("loco", fmt))
    args = parser.parse_args(argv)
    folds, titles = args.layout["folds"], args.layout["detectors"]
    by_detector: dict[str, dict] = {}
    for pred, val in zip(args.predictions, args.validation_scores):
        task, detector = (named := wildcards_of(pred, "predictions")).task, named.detector
        by_detector.setdefault(detector, {})[folds[task]] = (pd.read_parquet(pred), pd.read_parquet(val))
    views: dict[str, dict] = {}
    for path in args.calibration_views:
        task, detector = (named := wildcards_of(path, "calibration_view")).task, named.detector
        if task in folds:
            views.setdefault(detector, {})[folds[task]] = json.loads(Path(path).read_text())
    order = args.layout.get("order") or list(folds.values())
    records, left_out = {}, []
    for detector, got in by_detector.items():
        record = detector_records(detector, {c: got[c] for c in order if c in got}, args.seed, args.fpr,
                                  views=views.get(detector))
        if record is not None and len(record["folds"]) == len(order):
            records[detector] = record
        else:
            left_out.append(plain_title(titles.get(detector, detector)))
    write_tables(records, {d: plain_title(t) for d, t in titles.items()}, {"md": args.out_md, "tex": args.out_tex, "json": args.out_json}, args.fpr, left_out=left_out)
