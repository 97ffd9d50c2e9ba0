"""The thresholds `aicd detect` holds each file to, and where they came from.

In order of preference:

1. the user's own human code (`--calibrate-on PATH...`: per-language thresholds set on it now,
   aicd.scoring.calibration) or a calibration file made that way (`--calibration FILE`);
2. the workflow's calibration of this model, found beside it: RESULTS/calibration/TASK/DETECTOR.json
   for the model RESULTS/models/TASK/DETECTOR(.skops) (rule calibrate: the task's human reference
   code, docs/calibration.md);
3. the validation split's human rows of the task the model was fitted on
   (RESULTS/validation_scores/TASK/DETECTOR.parquet, their languages from
   RESULTS/tasks/TASK/validation.parquet), calibrated as a reference of human code is (per
   language, split-conformal on one half, the other half measuring it): "calibrated on the
   validation humans", not a score file's "validation threshold" (a quantile of all of them,
   aicd.data.metrics.quantile_threshold); the training data's own languages and domains only, so
   its FPR on other code is not known;
4. none: the model's own label (`pred`) only.

A calibration belongs to one model (its sha256): one made for another is refused. A language of
the files to label whose reference is too small for a threshold of its own at the FPR (or absent)
is refused with how many more reference files it needs, unless the user asks for the pooled
threshold (`pool_small`), which then marks each such file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..common.words import counted
from ..data.metrics import min_reference
from ..data.scores import THRESHOLD_SCORE
from ..outputs import Outputs, parse
from .calibration import (
    CONFIDENCE,
    HELD_OUT,
    TIE_SHARE,
    VERSION,
    Calibration,
    fit_size_needed,
    flag,
    more_needed,
)

# What thresholds set on a reference other than the user's code did on the human code of collections
# it had not seen, as measured (the leave-one-collection-out protocol at a 5% target, 12 detectors
# on 4 public collections: BENCHMARKS.md, "Deployable detection"; benchmarks/notes/deployable.md,
# run 3, the two "Calibrated on the default reference" tables, and run 6 for robust and the fused row).
UNSEEN = ("measured on collections their reference had not seen, thresholds set for 5% FPR on the training "
          "collections' validation humans and library code (as the workflow's reference) flagged 0-68.5% of a "
          "collection's human code, and on the validation humans alone 0-38.9% (12 detectors, 4 collections, leave "
          "one collection out: BENCHMARKS.md, \"Deployable detection\")")


@dataclass
class Source:
    """Where the thresholds came from: `kind` (own | workflow | validation | none), a sentence for
    the user, and the calibration (None for none)."""
    kind: str
    says: str
    calibration: Calibration | None = None

    @property
    def yours(self) -> bool:
        """Set on the user's own human code (--calibrate-on, or a calibration saved from it)."""
        return self.kind == "own"

    def on(self, fpr: float) -> str:
        """What the thresholds are for, as the user is told: the FPR on their code only where they
        are set on it."""
        if self.yours:
            return f"{fpr:.0%} FPR on human code"
        return f"{fpr:.0%} FPR on the reference's human code (FPR not known for your code)"


def run_paths(model_path) -> tuple[Outputs, str, str] | None:
    """(the run's layout, task, detector) of a model the workflow wrote (RESULTS/models/TASK/DETECTOR)."""
    named = parse(model_path, "model") or parse(model_path, "model_folder")
    return None if named is None else (Outputs(named.root), named.task, named.detector)


def run_file(model_path, kind: str) -> tuple[Path, Outputs, str, str] | None:
    """The file of this kind (an aicd.outputs method taking task and detector) that the model's
    run wrote beside it, with the run's layout, task and detector; None where there is none."""
    where = run_paths(model_path)
    if where is None:
        return None
    out, task, detector = where
    path = Path(getattr(out, kind)(task, detector))
    return (path, out, task, detector) if path.is_file() else None


def workflow_calibration(model_path, identity: dict) -> Source | None:
    """The workflow's calibration beside the model, where there is one for this very model."""
    found = run_file(model_path, "calibration")
    if found is None:
        return None
    path, _, task, detector = found
    import json

    data = json.loads(path.read_text())
    if data.get("available") is False:
        return Source("none", f"none: the workflow did not calibrate this model ({path}: {data.get('why')})")
    if data.get("version") != VERSION:
        return Source("none", f"none: {path} is a calibration of format version {data.get('version')} (its thresholds "
                              f"are on another score; this aicd reads version {VERSION}), so it is not used: rerun "
                              "its job (snakemake --forcerun calibrate, with the run's config)")
    calibration = Calibration.from_json(data, str(path))
    if calibration.model.get("sha256") != identity.get("sha256"):
        return Source("none", f"none: {path} is the calibration of another fit of {detector} (the model was "
                              "refitted since), so it is not used")
    ref = calibration.reference
    return Source("workflow", f"the workflow's calibration of this model ({path}), set on {ref.get('rows')} human "
                              f"reference programs of task {task} ({_counts(ref.get('by_origin'))})", calibration)


def validation_calibration(model_path, identity: dict, fpr: float, seed: int) -> Source | None:
    """Thresholds set on the validation humans of the model's own task, per language where the
    task's validation table says which."""
    from .calibration import FPRS, calibrate

    found = run_file(model_path, "validation_scores")
    if found is None:
        return None
    path, out, task, _ = found
    scores = pd.read_parquet(path)
    if "gold" in scores.columns:
        scores = scores[scores["gold"].astype(str) == "human"]
    if scores.empty:
        return None
    if THRESHOLD_SCORE not in scores.columns:
        return Source("none", f"none: {path} was written by an earlier version, without the {THRESHOLD_SCORE} that "
                              "thresholds are set on now: refit the model to use its validation humans")
    table = Path(out.split(task, "validation"))
    languages = dict(zip(*pd.read_parquet(table, columns=["id", "language"]).to_numpy().T)) if table.is_file() else {}
    langs = scores["id"].map(languages).fillna("(validation)").to_numpy(dtype=object)
    result = calibrate(scores[THRESHOLD_SCORE].to_numpy(dtype=float), langs, None, sorted({fpr, *FPRS}),
                       HELD_OUT, seed)
    reference = {"from": f"the validation split's human rows of task {task} ({path})", "rows": int(len(scores))}
    return Source("validation", f"calibrated on the validation humans: {len(scores)} human rows of the validation split of task "
                                f"{task}, the training data's own languages and domains ({path}); no calibration on "
                                "other human code", Calibration(identity, reference, result))


def default_source(model_path, identity: dict, fpr: float, seed: int) -> Source:
    """The thresholds a model is held to without --calibrate-on or --calibration."""
    found = workflow_calibration(model_path, identity)
    if found is not None and found.kind == "workflow":
        return found
    fallback = validation_calibration(model_path, identity, fpr, seed)
    if fallback is not None:
        if found is not None:
            fallback.says += f"; {found.says}"
        return fallback
    return found or Source("none", "none (no calibration beside the model, no validation scores): `label` is the "
                                   "model's own label, whose false-positive rate on your code is not known; pass "
                                   "--calibrate-on HUMAN_CODE for thresholds that hold on your code")


def _counts(counts: dict | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (counts or {}).items())


def too_small(calibration: Calibration, languages, fpr: float) -> list[dict]:
    """The languages to label that have no threshold of their own at this FPR: {language, n,
    fit_n, need (fitting part), more (reference files to add)}."""
    key, held_out = f"{fpr:g}", calibration.result["held_out"]
    need = fit_size_needed(fpr, calibration.result.get("floor", 0), calibration.fpr_confidence)
    out = []
    for language in sorted(set(languages)):
        group = calibration.group(language)
        if group is not None and group["at"][key]["own"]:
            continue
        n = group["n"] if group else 0
        out.append({"language": language, "n": n, "fit_n": group["fit_n"] if group else 0, "need": need,
                    "more": more_needed(n, need, held_out)})
    return out


def refusal(small: list[dict], fpr: float, calibration: Calibration, reference: str, pool_small: bool) -> str:
    """The message that refuses languages with too few reference files, with the advice that fits
    what was given: `reference` is where the calibration came from ("--calibrate-on", "--calibration"
    for a saved one, else the workflow's or the validation's), and --pool-small is offered only where
    it was not given and a pooled threshold exists."""
    key = f"{fpr:g}"
    pooled = calibration.result["pooled"]
    parts = [f"{s['language']}: {counted(s['n'], 'reference file')} ({s['fit_n']} in the fitting part, {s['need']} needed: add "
             f"{s['more']} more)" if s["n"] else f"{s['language']}: no reference files (add {s['more']})" for s in small]
    if pooled["at"][key]["threshold"] is None:
        head = (f"the reference holds {counted(pooled['n'], 'file')} in all: too few for any threshold at {fpr:.0%} FPR, the "
                f"pooled one included: {'; '.join(parts)}")
    else:
        head = (f"too few human reference files for a threshold of its own at {fpr:.0%} FPR in {len(small)} "
                f"language{'s' if len(small) > 1 else ''} to label: {'; '.join(parts)}")
    confidence = calibration.fpr_confidence
    if confidence is not None:
        head += (f" ({small[0]['need']} fitting files a language because its thresholds hold {fpr:.0%} with "
                 f"probability {confidence:g} (--fpr-confidence); held on average, {min_reference(fpr)} would do)")
    advice = [{"--calibrate-on": "add human files of those languages to --calibrate-on",
               "--calibration": "calibrate again with human files of those languages (--calibrate-on HUMAN_CODE "
                                "--save-calibration FILE): a saved calibration's reference does not grow"}.get(
        reference, "pass --calibrate-on HUMAN_CODE with human files of those languages")]
    if not pool_small and pooled["at"][key]["threshold"] is not None:
        advice.append("pass --pool-small to hold them to the threshold of all reference files together (marked pooled "
                      "in the output; its FPR on them is not measured)")
    if confidence is not None:
        advice.append("leave out --fpr-confidence" if reference == "--calibrate-on" else
                      "calibrate again without --fpr-confidence")
    if reference == "--calibrate-on":
        advice.append("raise --fpr")
    return f"{head}. {advice[0][0].upper()}{advice[0][1:]}" + "".join(
        f"{', or ' if i == len(advice) - 1 else ', '}{a}" for i, a in enumerate(advice[1:], 1)) + "."


def held_out_warnings(held: pd.DataFrame, calibration: Calibration, fpr: float, yours: bool) -> list[str]:
    """Where the held-out part of a language's reference realised an FPR above the target: the
    threshold set on the other part may flag more human code than that. The pointer fits the rule
    the thresholds follow: --fpr-confidence where they hold the FPR on average."""
    lines, confidence = [], calibration.fpr_confidence
    for language in sorted(set(held["language"])):
        own, at, sizes = threshold_of(calibration, language, fpr)
        if at["realised_fpr"] is None or at["realised_fpr"] <= fpr:
            continue
        whose = language if own else f"{language} (held to the pooled threshold, whose held-out part this is)"
        line = (f"{whose}: the held-out part of the reference has {at['flagged']} of {sizes['held_out_n']} flagged, "
                f"{at['realised_fpr']:.1%} (one-sided 95% bound {at['fpr_upper']:.1%}) at a {fpr:.0%} target: the "
                f"threshold set on the fitting part may flag more than {fpr:.0%} of human code like it")
        if confidence is None:
            need = fit_size_needed(fpr, calibration.result.get("floor", 0), CONFIDENCE)
            line += (f"; it holds {fpr:.0%} on average over references, not on this one: --fpr-confidence "
                     f"{CONFIDENCE:g}{'' if yours else ' with --calibrate-on HUMAN_CODE'} sets a threshold that holds it "
                     f"with probability {CONFIDENCE:g} over the reference drawn ({need} fitting files a language; "
                     f"{sizes['fit_n']} here)")
        else:
            line += (f"; its threshold holds {fpr:.0%} with probability {confidence:g} over the reference drawn, so this "
                     "is that reference's miss or a held-out part unlike the fitting one: more reference files narrow "
                     "the bound")
        lines.append(line)
    return lines


def hold(result: pd.DataFrame, scores: np.ndarray, calibration: Calibration, fpr: float) -> pd.DataFrame:
    """Each labelled file's threshold, the group it came from, whether that is the pooled one, the
    group's reference size and held-out FPR bound, and whether the file is flagged."""
    key = f"{fpr:g}"
    thresholds, groups, pooled = calibration.thresholds(result["language"].tolist(), fpr)
    out = result.copy()
    out["machine_score"] = scores
    out["threshold"] = thresholds
    out["threshold_group"] = groups
    out["pooled"] = pooled
    sources = [calibration.result["pooled"] if p else calibration.group(g) for g, p in zip(groups, pooled)]
    out["reference_n"] = [source["n"] for source in sources]
    out["fpr_bound"] = [source["at"][key]["fpr_upper"] for source in sources]
    out["flagged"] = flag(scores, thresholds)
    return out


def threshold_of(calibration: Calibration, language: str, fpr: float) -> tuple[bool, dict, dict]:
    """(own?, the threshold's entry at this FPR, the reference part it was set on: n, fit_n,
    held_out_n) of the threshold a language is held to: its own, else the pooled one."""
    key, group = f"{fpr:g}", calibration.group(language)
    if group and group["at"][key]["own"]:
        return True, group["at"][key], group
    return False, calibration.result["pooled"]["at"][key], calibration.result["pooled"]


def language_summary(held: pd.DataFrame, calibration: Calibration, fpr: float) -> pd.DataFrame:
    """Per language labelled: files, flagged, the threshold, own or pooled, its reference size
    (fitting / held-out part) and the held-out part's realised FPR with its one-sided 95% bound."""
    rows = []
    for language, files in held.groupby("language", sort=True):
        own, at, sizes = threshold_of(calibration, language, fpr)
        rows.append({"language": language, "files": len(files), "flagged": int(files["flagged"].sum()),
                     "threshold": at["threshold"], "from": language if own else "pooled",
                     "reference": sizes["n"], "fitting": sizes["fit_n"], "held_out": sizes["held_out_n"],
                     "held_out_fpr": at["realised_fpr"], "fpr_bound": at["fpr_upper"]})
    return pd.DataFrame(rows)


def tie_warnings(held: pd.DataFrame, calibration: Calibration, fpr: float) -> list[str]:
    """Where more than TIE_SHARE of a language's fitting reference scores, or of its files to label,
    equal its threshold: a tied score is not above it, so the threshold flags fewer files than its
    rank promises (scores that saturate: none at all)."""
    lines = []
    for language, files in held.groupby("language", sort=True):
        own, at, sizes = threshold_of(calibration, language, fpr)
        if at["threshold"] is None:
            continue
        whose = language if own else f"the pooled threshold {language} is held to"
        tied = int(at.get("tied") or 0) - 1   # the threshold is one of the fitting scores
        if tied > TIE_SHARE * sizes["fit_n"]:
            lines.append(f"{whose}: {tied + 1} of its {sizes['fit_n']} fitting reference scores equal its threshold "
                         f"{at['threshold']:.6g} (over {TIE_SHARE:.0%} tied): a file scoring it is not flagged, so it "
                         "flags fewer than its rank promises; the detector's scores do not tell them apart")
        at_it = int((files["machine_score"] == files["threshold"]).sum())
        if at_it > TIE_SHARE * len(files):
            lines.append(f"{language}: {at_it} of {counted(len(files), 'file')} to label score exactly their threshold "
                         f"{at['threshold']:.6g} (over {TIE_SHARE:.0%}): not flagged, whatever they are")
    return lines
