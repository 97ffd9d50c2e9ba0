"""`python -m aicd.scoring calibrate`: one fitted detector calibrated on a task's human reference
code (aicd.splits.reference), and what that calibration does on the task's test split.

The model scores every reference program; aicd.scoring.calibration sets per-language (and
per (language, domain)) thresholds at each FPR with the held-out check, into the calibration
file (`--out`: RESULTS/calibration/TASK/DETECTOR.json, which `aicd detect` reads beside the
model). The test view (`--view`: RESULTS/calibration/TASK/DETECTOR.test.json, the report's
calibrated view) holds, at the view's FPR: the TPR with each test row held to its language's
reference threshold, the realised FPR on the test's human rows (95% bootstrap intervals at the
thresholds held fixed; the FPR's one-sided Clopper-Pearson bound), the same per language with
the groups that fell back to the pooled threshold marked, and, in a separate entry labelled
"adapted to the unlabelled test set", the transductive threshold (aicd.scoring.transductive)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..common.defaults import schema_default
from ..common.errors import AicdError
from ..data.families import HUMAN
from ..data.scores import THRESHOLD_SCORE, declared, threshold_score
from ..outputs import SHOWN
from .bootstrap import RESAMPLES
from .calibration import FLOOR, FPRS, HELD_OUT, Calibration, calibrate, model_identity, operating_point
from .transductive import ADAPTED, adapt, adapted_thresholds

log = logging.getLogger(__name__)

# the config's defaults (workflow/schemas/config.schema.yaml), for a call outside a run: the
# workflow passes every setting in --settings
VIEW_FPR = schema_default("calibration.view_fpr")
VIEW_ADAPTED = schema_default("calibration.adapted")




def score_kind_of(model) -> str:
    """What the fitted model's score columns hold (aicd.data.scores.SCORE_KINDS)."""
    return getattr(model.detector, "score_kind", None) or "probability"


def reference_description(reference: pd.DataFrame, where: str) -> dict:
    """What a calibration file says of its reference: where it came from and its rows per origin,
    language and domain."""
    def counts(column):
        if column not in reference.columns:
            return {}
        return {str(k): int(v) for k, v in reference[column].dropna().value_counts().sort_index().items()}

    return {"from": where, "rows": int(len(reference)), "by_origin": counts("origin"),
            "by_language": counts("language"), "by_domain": counts("domain")}


def reference_scores(model, reference: pd.DataFrame, known: dict | None = None) -> np.ndarray | None:
    """The model's machine score of every reference row (aicd.data.scores.threshold_score): from `known` (id ->
    that score, e.g. the fit job's validation_scores of the validation humans, the same model's
    scores) where it has the row's id, else predicted; None where the model gives no human score."""
    known = known or {}
    ids = reference["id"].astype(str).to_numpy() if "id" in reference.columns else np.full(len(reference), "")
    have = np.array([i in known for i in ids], dtype=bool)
    scores = np.full(len(reference), np.nan)
    scores[have] = [known[i] for i in ids[have]]
    if (~have).any():
        predicted = threshold_score(model.predict_rows(reference.loc[~have, ["code", "language"]]),
                                      score_kind_of(model))
        if predicted is None:
            return None
        scores[~have] = predicted
    log.info("%d reference rows scored (%d of them read from the fit job's validation scores)", len(scores),
             int(have.sum()))
    return scores


def calibrate_on(model, model_path, reference: pd.DataFrame, where: str, fprs=FPRS, held_out: float = HELD_OUT,
                 seed: int = 0, floor: int = FLOOR, known: dict | None = None,
                 confidence: float | None = None) -> tuple[Calibration | None, str]:
    """(the model's calibration on these reference rows, "") or (None, why there is none).
    confidence: each FPR held with it over the reference drawn, not on average (calibrate)."""
    if reference.empty:
        return None, "the reference holds no rows"
    scores = reference_scores(model, reference, known)
    if scores is None:
        return None, "the detector gives no score for the human class"
    return calibration_of(scores, reference, where, model_identity(model_path), score_kind_of(model), fprs, held_out,
                          seed, floor, confidence), ""


def calibration_of(scores: np.ndarray, reference: pd.DataFrame, where: str, model: dict, score_kind: str | None,
                   fprs=FPRS, held_out: float = HELD_OUT, seed: int = 0, floor: int = 0,
                   confidence: float | None = None) -> Calibration:
    """The calibration set on the reference rows' machine scores (threshold_score; a NaN score:
    its row left out, counted), per language and (language, domain); `model`: model_identity of
    the model that scored them."""
    finite = ~np.isnan(scores)
    if not finite.all():
        log.warning("%d reference rows have no score (NaN): left out", int((~finite).sum()))
    rows = reference[finite]
    domains = rows["domain"].to_numpy(dtype=object) if "domain" in rows.columns else None
    result = calibrate(scores[finite], rows["language"].to_numpy(dtype=object), domains, fprs, held_out, seed, floor,
                       confidence)
    return Calibration(model, reference_description(rows, where), result, score_kind)


def validation_known(path: str | None) -> dict:
    """id -> threshold score of the validation humans a fit job scored (its validation_scores);
    none from a file written before it held them (its 1 - score_human saturates): those rows are
    predicted again."""
    if not path:
        return {}
    table = pd.read_parquet(path)
    if THRESHOLD_SCORE not in table.columns:
        log.info("%s holds no %s column (written by an earlier version): its rows are predicted again", path,
                 THRESHOLD_SCORE)
        return {}
    if "gold" in table.columns:
        table = table[table["gold"].astype(str) == HUMAN]
    return dict(zip(table["id"].astype(str), table[THRESHOLD_SCORE].astype(float)))


def test_view(calibration: Calibration, predictions: pd.DataFrame, test: pd.DataFrame, fpr: float = VIEW_FPR,
              seed: int = 0, resamples: int = RESAMPLES, adapted: bool = VIEW_ADAPTED) -> dict:
    """The calibrated view of one detector on the test split (see the module's docstring)."""
    rows = test[["id", "language"]].merge(predictions, on="id", how="inner")
    scores = threshold_score(rows, calibration.score_kind or declared(predictions))
    if scores is None:
        return {"available": False, "why": "the detector gives no score for the human class"}
    is_human = rows["gold"].astype(str).to_numpy() == HUMAN
    languages = rows["language"].astype(str).to_numpy(dtype=object)
    thresholds, _, pooled = calibration.thresholds(languages, fpr)
    out = {"available": True, "fpr": fpr, "fpr_confidence": calibration.fpr_confidence, "rows": int(len(rows)),
           "calibrated": operating_point(scores, is_human, thresholds, resamples, seed),
           "reference_held_out": calibration.result["pooled"]["at"][f"{fpr:g}"], "by_language": {}}
    for language in sorted(set(languages.tolist())):
        here = languages == language
        group = calibration.group(language)
        at = (group or {}).get("at", {}).get(f"{fpr:g}", {})
        out["by_language"][language] = {
            "pooled": bool(pooled[here][0]), "in_reference": group is not None,
            "threshold": None if np.isnan(thresholds[here][0]) else float(thresholds[here][0]),
            "reference_n": (group or {}).get("n", 0), "why_pooled": at.get("why_pooled"),
            "held_out_fpr": at.get("realised_fpr"), "held_out_fpr_upper": at.get("fpr_upper"),
            "held_out_n": (group or {}).get("held_out_n", 0),
            "test": operating_point(scores[here], is_human[here], thresholds[here], 0, seed)}
    out["pooled_languages"] = sorted(lang for lang, v in out["by_language"].items() if v["pooled"])
    if adapted:  # the transductive threshold, in an entry of its own that says what it is
        fitted = adapt(scores, languages, seed)
        out["adapted"] = {"label": ADAPTED, **{k: fitted[k] for k in ("available", "why", "threshold_z") if k in fitted}}
        if fitted["available"]:
            out["adapted"].update(operating_point(scores, is_human, adapted_thresholds(fitted, languages), resamples,
                                                  seed))
    return out


def main(argv=None) -> None:
    from ..common.io import write_json
    from ..common.stagecli import json_arg
    from ..detectors.bundle import configured_code, load_bundle

    parser = argparse.ArgumentParser(prog="python -m aicd.scoring calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True)
    parser.add_argument("--detector", required=True)
    parser.add_argument("--model", required=True, help="the fitted model (a .skops file or a folder)")
    parser.add_argument("--spec", type=json_arg, default=None, help="the detector's config entry (its own code "
                        "is trusted in the model file)")
    parser.add_argument("--reference", required=True, help="the task's reference table (python -m aicd.splits reference)")
    parser.add_argument("--predictions", required=True, help="the detector's test predictions")
    parser.add_argument("--test", required=True, help="the task's test.parquet (language per row)")
    parser.add_argument("--validation-scores", help="the fit job's validation_scores: the validation humans' "
                        "scores, not predicted again")
    parser.add_argument("--settings", type=json_arg, default={}, help="calibration settings: fprs, held_out, "
                        "floor, view_fpr, seed, fpr_confidence")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--feature-cache", help=f"the run's per-text feature cache ({SHOWN.features_cache()}): the "
                        "reference's AST features and stylometry are computed once for all of a task's calibrate jobs")
    parser.add_argument("--out", required=True, help="the calibration file (JSON)")
    parser.add_argument("--view", required=True, help="the calibrated view on the test split (JSON)")
    args = parser.parse_args(argv)
    s = args.settings
    check_settings(s.get("fprs", FPRS), float(s.get("held_out", HELD_OUT)))
    model = load_bundle(args.model, threads=args.threads, trust_types=configured_code(args.spec))
    model.use_feature_cache(args.feature_cache)
    reference = pd.read_parquet(args.reference)
    where = f"the human reference code of task {args.task} ({Path(args.reference).name}: its report says which)"
    calibration, why = calibrate_on(model, args.model, reference, where, tuple(s.get("fprs", FPRS)),
                                    float(s.get("held_out", HELD_OUT)), int(s.get("seed", 0)), int(s.get("floor", FLOOR)),
                                    validation_known(args.validation_scores), s.get("fpr_confidence"))
    head = {"task": args.task, "detector": args.detector}
    if calibration is None:
        log.warning("%s on %s: not calibrated: %s", args.detector, args.task, why)
        write_json({**head, "available": False, "why": why}, args.out)
        write_json({**head, "available": False, "why": why}, args.view)
        return
    calibration.save(args.out)
    predictions = pd.read_parquet(args.predictions)
    test = pd.read_parquet(args.test, columns=["id", "language"])
    view = test_view(calibration, predictions, test, float(s.get("view_fpr", VIEW_FPR)), int(s.get("seed", 0)),
                     adapted=bool(s.get("adapted", VIEW_ADAPTED)))
    write_json({**head, "reference": calibration.reference, **view}, args.view)


def check_settings(fprs, held_out: float) -> None:
    bad = [f for f in fprs if not 0 < f < 1]
    if bad:
        raise AicdError(f"--fpr {bad[0]}: a false-positive rate is between 0 and 1 (e.g. 0.05)")
    if not 0 <= held_out < 1:
        raise AicdError(f"held_out {held_out}: a share in [0, 1)")
