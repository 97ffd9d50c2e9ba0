"""`aicd detect`: a fitted detector applied to code files and folders, each labelled file held to a
threshold at a false-positive rate on human code, and every input file accounted for.

The work is elsewhere: reading and labelling files in aicd.detectors.apply, the thresholds and
where they come from in aicd.scoring.deploy (per-language calibration: aicd.scoring.calibration;
the option adapted to the input: aicd.scoring.transductive)."""

from __future__ import annotations

import logging
import os
import sys
import time

import numpy as np
import pandas as pd

from .common.errors import AicdError
from .common.words import counted
from .outputs import ANY_ROOT, FITTED_SUFFIX

log = logging.getLogger("aicd")

COLUMNS = """\
columns of --out (one row per input file):
  path, status          the file, and "scored" or why it was not labelled: other_language (its extension
                        names a language outside the nine, .kt: Kotlin), unknown_language (language ID finds
                        none of the nine: prose, configuration, other languages), not_code (text saved with
                        a code extension), or why it was not read (empty, binary, invalid_utf8, too_large,
                        unreadable, not_code_extension, symlink_outside_roots, ...), or labelled once only:
                        duplicate_file (the same file again), duplicate_code (the same code as another
                        file); `why` says more (for a duplicate: the file labelled in its place)
  language              from --language, the extension or language ID; "unknown" outside the nine
  language_from         given, extension or langid
  other_language        the language outside the nine that its extension or its cues name
  label                 the verdict: machine where the file is flagged (machine_score above its threshold at
                        --fpr on human code), human where it is not; where no threshold applies (none was
                        found, or the detector gives no human score), the model's own label, which stderr
                        says
  model_label           the detector's own label (its most likely class, e.g. human / machine), whatever
                        the threshold says: not the verdict
  score_<class>         a score per class, as in the workflow's predictions files; their kind (probabilities,
                        an SVM's margins, a plug-in's own scale) is printed on stderr
  machine_score         what the thresholds are set on, in float64 (higher: more machine-like): the log-odds
                        that the file is not human, log(sum of the other classes' probabilities) -
                        log(score_human), where the scores are probabilities; -score_human for margins
  threshold             the threshold the file was held to at --fpr: its language's, set on human reference
                        code (--calibrate-on, --calibration, the workflow's calibration beside the model, or
                        the validation humans; stderr says which), the pooled one where `pooled`
  threshold_group       whose threshold: the language, or pooled
  reference_n           the human reference programs behind that threshold
  fpr_bound             the one-sided 95% upper bound of the FPR its held-out reference part realised
  flagged               machine_score > threshold: labelled machine-made at that FPR on human code
  adapted_threshold, flagged_adapted
                        only with --adapt-to-input: a threshold adapted to the unlabelled input (a
                        two-component mixture on these files' own scores), never a deployable one
  ood_score             (models on a feature set) distance to the training rows: about 1 for rows like
                        them, from 2 up unlike anything the model was fitted on
  language_fit          the share of the file its language's grammar parses (every benchmark row: all)
  outside_benchmark     outside_nine_languages (its grammar parses under 80% of it), else the first of the
                        benchmark's Table 3 filters the file fails (too short, too long, lines too long)
  size_out_of_range     longer than any benchmark row can be (Table 3's bounds), with its size
  language_unseen       the model saw no training row in this language
  in_distribution       false where any of the four flags above is set: the label is outside what the
                        benchmark measured
"""

EXAMPLES = """\
examples (the demo's models; another run's root works the same):
  aicd detect src/ --model results/models/binary/svm_tfidf.skops
  # thresholds at 5% FPR set on human code you trust (last year's submissions), saved for reuse
  aicd detect submissions/ --model results/models/binary/robust.skops \\
      --calibrate-on last_year/ --save-calibration robust_2025.json --out labels.csv
  aicd detect submissions/ --model results/models/binary/robust.skops --calibration robust_2025.json
  # the same, the 5% held with probability 0.95 on this reference (117 files a language, not 37; flags fewer)
  aicd detect submissions/ --model results/models/binary/robust.skops --calibrate-on last_year/ --fpr-confidence 0.95
  # a language with too few reference files: held to the pooled threshold, marked
  aicd detect repo/ --model results/models/binary/lr_tfidf.skops --calibrate-on team_code/ --pool-small
  aicd detect snippet.txt --language Python --model results/models/binary/lr_tfidf.skops
  # a fused detector adapted to your code: the local model writes machine counterparts of half of the
  # reference (served by vLLM on 127.0.0.1; cached in llm_cache/), the other half sets the thresholds
  aicd detect submissions/ --model results/loco/models/loco_aoc/fused.skops --calibrate-on last_year/ --adapt
  aicd detect src/ --model results/models/binary/minilm        # an encoder: a folder

Without --calibrate-on or --calibration the thresholds are the workflow's calibration of the model
(results/calibration/TASK/DETECTOR.json, beside the model), else thresholds calibrated on the validation humans, else
none; stderr says which, and that their FPR is not known for your code (such thresholds flagged
0-68.5% of the human code of collections they had not seen, at 5%: docs/calibration.md).
--adapt-to-input adds a threshold adapted to the unlabelled input, labelled
so: it reads the files' own score distribution and assumes they hold both human and machine code.

Reading a model runs no code from it: a .skops file is read only if every type in it is one this
version trusts, and a pickle (an older aicd's model) only with --trust-pickle."""


def add_parser(sub, raw) -> None:
    from .common.defaults import schema_default
    from .models.fitted_files import add_trust_arguments

    # the workflow's defaults (its calibrated view's FPR, its held-out share), so the command
    # sets the thresholds a run would
    fpr, held_out = schema_default("calibration.view_fpr"), schema_default("calibration.held_out")

    d = sub.add_parser("detect", help="apply a fitted detector to code files or folders", formatter_class=raw,
                       description="Label code files as the fitted detector's classes (e.g. human / machine), "
                                   "with a score per class and, where a calibration is had, the threshold at "
                                   "--fpr on human code each file is held to. Folders are searched for files with a "
                                   "code extension; the language comes from the extension, else is identified from "
                                   "the code (unknown outside the nine). Every input file is a row of --out, with "
                                   "the reason where it was not labelled.",
                       epilog=EXAMPLES + "\n\n" + COLUMNS)
    d.add_argument("paths", nargs="+", metavar="PATH", help="code files or folders")
    d.add_argument("--model", required=True, help="a fitted model written by the workflow: "
                   f"{ANY_ROOT.model('TASK', 'DETECTOR')} (or the folder of an encoder); RESULTS is the run's root, "
                   "results for the demo")
    d.add_argument("--out", help="write every file's row to this .csv or .jsonl instead of printing a table")
    d.add_argument("--language", help="the language of every file (overrides extension and identification)")
    cal = d.add_argument_group("thresholds at a false-positive rate on human code")
    cal.add_argument("--fpr", type=float, default=fpr, help="the false-positive rate on human code the thresholds "
                     f"are for (default {fpr:g})")
    cal.add_argument("--calibrate-on", nargs="+", metavar="PATH", help="files or folders of human code (code you "
                     "know people wrote: earlier years' submissions, your team's repository): per-language "
                     "thresholds at --fpr set on them now")
    cal.add_argument("--fpr-confidence", type=float, metavar="C", help="with --calibrate-on: thresholds whose FPR "
                     "on code like the reference is at most --fpr with probability C over the reference you have "
                     "(e.g. 0.95, at least 0.5), not only on average over references; flags fewer files and needs "
                     "more reference files per language: 59 in the fitting part at 5%% and 0.95 (117 files with "
                     "--held-out 0.5), against 19 (37)")
    cal.add_argument("--save-calibration", metavar="FILE", help="with --calibrate-on: save the calibration (JSON) "
                     "for --calibration")
    cal.add_argument("--calibration", metavar="FILE", help="a calibration saved by --save-calibration for this "
                     "model (refused for another)")
    cal.add_argument("--pool-small", action="store_true", help="hold a language with too few reference files to "
                     "the threshold of all reference files together (marked pooled) instead of refusing")
    cal.add_argument("--held-out", type=float, default=None, help="share of each language's reference files held "
                     f"out to measure the FPR bound (default {held_out:g})")
    cal.add_argument("--seed", type=int, default=0, help="seed of the held-out split and of --adapt-to-input")
    cal.add_argument("--adapt", action="store_true", help="with --calibrate-on and a fused detector: adapt it to "
                     "the reference first. The local model (SmolLM2-135M-Instruct, served by vLLM on 127.0.0.1) "
                     "writes machine counterparts of half of each language's reference files, a part fitted on "
                     "them (the delexicalised code) joins the detector's parts, each weighted by how well it tells "
                     "those files from their counterparts (the fitted part also by its rank agreement with the "
                     "detector over the files to label), and the other half sets the thresholds (so a language "
                     "needs twice the files: 74 at 5%%). Requests are cached (--adapt-cache): a rerun sends none")
    cal.add_argument("--adapt-cache", default=schema_default("llm.cache"), metavar="FILE",
                     help=f"--adapt's request cache (default {schema_default('llm.cache')}, the workflow's)")
    cal.add_argument("--adapt-to-input", action="store_true", help="also a threshold adapted to the unlabelled "
                     "input (per-language standardised scores, a two-component mixture on them): never the "
                     "default, labelled so in every output")
    add_trust_arguments(d)


def check_args(args) -> None:
    """Refusals that need no model: before anything is read."""
    from .scoring.calibration import HELD_OUT

    if args.out:
        out_format(args.out)
    if not 0 < args.fpr < 1:
        raise AicdError(f"--fpr {args.fpr}: a false-positive rate is between 0 and 1 (e.g. 0.05)")
    if args.calibrate_on and args.calibration:
        raise AicdError("give --calibrate-on (calibrate now) or --calibration (a saved calibration), not both")
    if args.save_calibration and not args.calibrate_on:
        raise AicdError("--save-calibration saves what --calibrate-on makes: give --calibrate-on HUMAN_CODE too")
    if args.fpr_confidence is not None and not args.calibrate_on:
        raise AicdError("--fpr-confidence sets how --calibrate-on sets its thresholds (a saved or the workflow's "
                        "calibration keeps the rule it was made with): give --calibrate-on HUMAN_CODE too")
    if args.adapt and not args.calibrate_on:
        raise AicdError("--adapt adapts the detector to human code of your setting: give it with --calibrate-on "
                        "HUMAN_CODE (half of it is adapted on, the other half sets the thresholds)")
    if args.adapt and args.save_calibration:
        raise AicdError("--save-calibration saves thresholds for this model file, and --adapt's thresholds are for the "
                        "adapted model, which is not saved: leave one out")
    if args.fpr_confidence is not None and not 0.5 <= args.fpr_confidence < 1:
        raise AicdError(f"--fpr-confidence {args.fpr_confidence}: a probability in [0.5, 1) (e.g. 0.95; below 0.5 "
                        "it would hold the FPR less often than the default, which holds it on average)")
    args.held_out = HELD_OUT if args.held_out is None else args.held_out
    if not 0 <= args.held_out < 1:
        raise AicdError(f"--held-out {args.held_out}: a share in [0, 1)")


def out_format(out: str) -> str:
    suffix = out.lower().rsplit(".", 1)[-1] if "." in out else ""
    if suffix not in ("csv", "jsonl"):
        raise AicdError(f"--out {out}: use a .csv or .jsonl file")
    return suffix


def write_rows(table: pd.DataFrame, out: str) -> None:
    from .common.io import atomic_path

    fmt = out_format(out)
    with atomic_path(out) as tmp:
        if fmt == "jsonl":
            table.to_json(tmp, orient="records", lines=True, force_ascii=False)
        else:
            table.to_csv(tmp, index=False)


def say(line: str) -> None:
    print(f"aicd detect: {line}", file=sys.stderr, flush=True)


def load_model(args):
    from .detectors.bundle import load_bundle
    from .models.fitted_files import package_trust

    check_model_path(args.model)
    return load_bundle(args.model, trust_pickle=args.trust_pickle,
                       trust_types=(args.trust_type or []) + package_trust(args.trust_package))


def thresholds_source(args, model, progress, labelled: pd.DataFrame, reference: pd.DataFrame | None = None):
    """Where this run's thresholds come from (aicd.scoring.deploy.Source); `reference`: the
    --calibrate-on rows already read (--adapt: its calibrating part)."""
    from .scoring.calibration import Calibration, model_identity
    from .scoring.deploy import Source, default_source

    identity = model_identity(args.model)
    if args.calibration:
        calibration = Calibration.load(args.calibration)
        calibration.check_model(identity, args.calibration)
        ref = calibration.reference
        return Source("own", f"the saved calibration {args.calibration}, set on {ref.get('rows')} human reference "
                             f"files ({ref.get('from')})", calibration)
    if args.calibrate_on:
        return Source("own", *calibrate_now(args, model, identity, progress, labelled, reference))
    return default_source(args.model, identity, args.fpr, args.seed)


def reference_files(args, progress, labelled: pd.DataFrame) -> pd.DataFrame:
    """The --calibrate-on files: each file once (aicd.detectors.apply: by resolved path and by
    code), none of the files to label."""
    from .detectors.apply import read_files

    files = read_files(args.calibrate_on, args.language, progress)
    if files.skipped:
        say(f"reference: {files.skip_summary()}")
    rows = files.rows
    both = also_labelled(rows, labelled)
    if both.any():
        say(f"reference: {counted(both.sum(), 'file')} {'is' if both.sum() == 1 else 'are'} also among the files to label: left out of the reference (the "
            f"same file or the same code; a reference file is at or under its own threshold), e.g. "
            f"{rows['path'][both].iloc[0]}")
        rows = rows[~both]
    if rows.empty:
        raise AicdError(f"--calibrate-on {' '.join(args.calibrate_on)}: no human code file to calibrate on"
                        + (f" ({files.skip_summary()})" if files.skipped else ""))
    return rows.assign(id=rows["path"].astype(str))


def calibrate_now(args, model, identity: dict, progress, labelled: pd.DataFrame, rows: pd.DataFrame | None = None):
    """(what the user is told, the calibration) of the model on the --calibrate-on files (`rows`,
    where they were read already)."""
    from .scoring.calibrate_model import calibrate_on
    from .scoring.calibration import FPRS

    rows = reference_files(args, progress, labelled) if rows is None else rows
    where = f"aicd detect --calibrate-on {' '.join(args.calibrate_on)}" + (" --adapt" if args.adapt else "")
    fprs = tuple(sorted({args.fpr, *FPRS}))
    calibration, why = calibrate_on(model, args.model, rows.assign(domain=None), where, fprs, args.held_out,
                                    args.seed, confidence=args.fpr_confidence)
    if calibration is None:
        raise AicdError(f"cannot calibrate {args.model}: {why}")
    calibration.reference["paths"] = list(args.calibrate_on)
    if args.save_calibration:
        calibration.save(args.save_calibration)
        say(f"calibration saved to {args.save_calibration} (reuse: --calibration {args.save_calibration})")
    counts = ", ".join(f"{k} {v}" for k, v in calibration.reference["by_language"].items())
    return f"set now on your human code ({where}): {counted(len(rows), 'reference file')} ({counts})", calibration


def also_labelled(reference: pd.DataFrame, labelled: pd.DataFrame) -> pd.Series:
    """True for the reference files that are files to label: the same file or the same code."""
    from .detectors.apply import code_digest

    if reference.empty:
        return pd.Series([], dtype=bool)
    paths = set(labelled["path"].map(os.path.realpath))
    codes = set(labelled["code"].map(code_digest))
    return reference["path"].map(os.path.realpath).isin(paths) | reference["code"].map(code_digest).isin(codes)


def say_source(source, fpr: float) -> None:
    """Where the thresholds came from, and, unless they were set on the user's own code, that their
    FPR on it is not known, with what such thresholds did on collections they had not seen."""
    from .scoring.deploy import UNSEEN

    if source.calibration is None:
        say(f"thresholds: {source.says}")
        return
    say(f"thresholds for {source.on(fpr)}: {source.says}")
    if not source.yours:
        say(f"the FPR of these thresholds is not known for your code: {UNSEEN}. Pass --calibrate-on HUMAN_CODE "
            "(human code of your setting) for thresholds whose FPR holds on it")


def check_thresholds(args, source, languages) -> None:
    """Before any file is labelled: refuse a language to label with too few reference files of its
    own (unless --pool-small), or a calibration without the FPR asked for."""
    from .scoring.deploy import refusal, too_small

    if source.calibration is None:
        return
    if f"{args.fpr:g}" not in {f"{f:g}" for f in source.calibration.fprs}:
        raise AicdError(f"--fpr {args.fpr:g}: the calibration has thresholds for "
                        f"{', '.join(f'{f:g}' for f in source.calibration.fprs)} only; calibrate again at it")
    small = too_small(source.calibration, list(languages), args.fpr)
    no_pooled = source.calibration.result["pooled"]["at"][f"{args.fpr:g}"]["threshold"] is None
    if small and (no_pooled or (source.yours and not args.pool_small)):
        reference = "--calibrate-on" if args.calibrate_on else "--calibration" if args.calibration else source.kind
        adapting = (" (--adapt: these are the calibrating half of the reference; the other half adapted the "
                    "detector, so add twice as many files)") if args.adapt else ""
        raise AicdError(refusal(small, args.fpr, source.calibration, reference, args.pool_small) + adapting)
    if small:
        mix = source.calibration.reference.get("by_language") or {}
        say(f"held to the pooled threshold (too few reference files of their own): "
            f"{', '.join(s['language'] for s in small)}; the pooled reference is "
            + (", ".join(f"{k} {v}" for k, v in sorted(mix.items(), key=lambda kv: -kv[1])) or "every language's")
            + ": its held-out FPR bound is that mix's, not measured on those languages")


def apply_thresholds(source, result: pd.DataFrame, fpr: float) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The labelled files with their machine scores and thresholds, and the per-language summary;
    (result, None) where there are no thresholds."""
    from .data.scores import threshold_score
    from .scoring.deploy import held_out_warnings, hold, language_summary, tie_warnings

    scores = threshold_score(result)
    if scores is None:
        if source.calibration is not None:
            say("the detector gives no human score: no thresholds; `label` is the model's own label")
        return result, None
    if source.calibration is None:
        return result.assign(machine_score=scores), None
    held = hold(result, scores, source.calibration, fpr)
    for line in [*held_out_warnings(held, source.calibration, fpr, source.yours),
                 *tie_warnings(held, source.calibration, fpr)]:
        say(f"warning: {line}")
    return held, language_summary(held, source.calibration, fpr)


def adapt_to_input(args, held: pd.DataFrame) -> pd.DataFrame:
    """--adapt-to-input: the thresholds adapted to these files' own scores, in columns of their own."""
    from .data.scores import threshold_score
    from .scoring.calibration import flag
    from .scoring.transductive import ADAPTED, adapt, adapted_thresholds

    scores = threshold_score(held)
    if scores is None or held.empty:
        say(f"--adapt-to-input: no human score to adapt ({ADAPTED})")
        return held
    fitted = adapt(scores, held["language"].to_numpy(dtype=object), args.seed)
    if not fitted["available"]:
        say(f"--adapt-to-input: not adapted: {fitted['why']}")
        return held
    thresholds = adapted_thresholds(fitted, held["language"].to_numpy(dtype=object))
    held = held.assign(adapted_threshold=thresholds, flagged_adapted=flag(scores, thresholds))
    say(f"adapted_threshold and flagged_adapted are {ADAPTED} (the {counted(len(held), 'file')} given): a two-component "
        f"mixture on their own scores, standardised per language; it assumes they hold both human and machine "
        f"code, and is not a threshold with a known false-positive rate ({int(held['flagged_adapted'].sum())} "
        "flagged)")
    return held


FLAGGED, NOT_FLAGGED = "machine", "human"   # the verdict of `label` where a file is held to a threshold


def with_verdict(held: pd.DataFrame) -> pd.DataFrame:
    """`label`, the verdict: machine or human by the file's threshold where it has one, else the
    model's own label, which stays beside it as `model_label` (the model's `pred`)."""
    out = held.rename(columns={"pred": "model_label"})
    label = out["model_label"].astype(object)
    if "threshold" in out.columns:
        held_to = out["threshold"].notna().to_numpy()
        label = label.where(~held_to, np.where(out["flagged"].to_numpy(dtype=bool), FLAGGED, NOT_FLAGGED))
    return out.assign(label=label)


def every_file(held: pd.DataFrame, unscored: list[dict]) -> pd.DataFrame:
    """Labelled and unlabelled files in the order they were found, with status and why."""
    labelled = with_verdict(held).assign(status="scored", why="")
    rest = pd.DataFrame(unscored)
    table = pd.concat([labelled, rest], ignore_index=True) if len(rest) else labelled
    table = table.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)
    scores = [c for c in table.columns if str(c).startswith("score_")]
    first = ["path", "status", "label", "language", "language_from", "other_language", "model_label", *scores,
             "machine_score", "threshold", "threshold_group", "pooled", "reference_n", "fpr_bound", "flagged",
             "adapted_threshold", "flagged_adapted"]
    first = [c for c in first if c in table.columns]
    table = table[first + [c for c in table.columns if c not in first]]
    if "reference_n" in table.columns:
        table["reference_n"] = table["reference_n"].astype("Int64")   # a count, empty where not labelled
    for column in ("why", "other_language", "outside_benchmark", "size_out_of_range"):
        if column in table.columns:
            table[column] = table[column].fillna("")
    table.attrs = held.attrs
    return table


def held_how(confidence: float | None) -> str:
    """How the thresholds hold their FPR (aicd.scoring.calibration: on average, or with a confidence)."""
    if confidence is None:
        return ", held on average over draws of the reference (split-conformal)"  # 0 is refused: never falsy here
    return f", held with probability {confidence:g} over draws of the reference (--fpr-confidence)"


def print_summary(summary: pd.DataFrame | None, source, fpr: float, file=None) -> None:
    """The per-language summary (on stdout with the table, on stderr beside --out)."""
    if summary is None or summary.empty:
        return
    shown = summary.assign(held_out_fpr=[_pct(v) for v in summary["held_out_fpr"]],
                           fpr_bound=[_pct(v) for v in summary["fpr_bound"]])
    print(f"\nper language, thresholds for {source.on(fpr)}{held_how(fpr_confidence(source))} (reference: its "
          "files in all, fitting / held-out parts; the held-out part's realised FPR and one-sided 95% bound):",
          file=file or sys.stdout)
    print_table(shown, file)


def fpr_confidence(source) -> float | None:
    return None if source.calibration is None else source.calibration.fpr_confidence


def _pct(value) -> str:
    return "–" if value is None or value != value else f"{value:.1%}"


def print_table(table: pd.DataFrame, file=None) -> None:
    """A plain table; numbers to 6 significant digits (thresholds of probabilities near 1 differ
    in the fourth decimal), empty cells for what does not apply."""
    from tabulate import tabulate

    cells = [["" if v is None or (isinstance(v, float) and v != v) else f"{v:.6g}" if isinstance(v, float) else str(v)
              for v in row] for row in table.itertuples(index=False)]
    print(tabulate(cells, headers=list(table.columns), tablefmt="plain", disable_numparse=True), file=file or sys.stdout)


TERMINAL = ["path", "label", "language", "language_from", "model_label", "machine_score", "threshold", "flagged",
            "in_distribution", "status"]


def detect_command(args) -> None:
    from .data.scores import SCORE_KINDS, declared
    from .detectors.apply import Progress, detect, flag_summary, read_files

    check_args(args)
    model = load_model(args)
    started = time.perf_counter()
    progress = Progress(lambda line: print(line, file=sys.stderr, flush=True))
    files = read_files(args.paths, args.language, progress)
    if files.skipped:  # a counted, reported skip: always on stderr, whatever the logging setup
        say(files.skip_summary())
    if files.rows.empty:
        raise AicdError(f"no code file to label in {' '.join(args.paths)}"
                        + (f" ({files.skip_summary()})" if files.skipped else ""))
    reference = None
    if args.adapt:
        model, reference = adapt_now(args, model, progress, files.rows)
    source = thresholds_source(args, model, progress, files.rows, reference)
    say_source(source, args.fpr)
    check_thresholds(args, source, files.rows["language"])   # a refusal comes before the labelling work
    result = detect(model, files, progress)
    held, summary = apply_thresholds(source, result, args.fpr)
    if args.adapt_to_input:
        held = adapt_to_input(args, held)
    say(flag_summary(held, model))
    if "flagged" in held.columns:
        say(f"at {source.on(args.fpr)}: {int(held['flagged'].sum())} of {len(held)} labelled files flagged "
            f"(machine_score above their language's threshold: label {FLAGGED}, column flagged; model_label is the "
            "model's own label, not this verdict)")
    kind = declared(result)
    if kind:
        say(f"score_<class> columns are {SCORE_KINDS[kind]}")
    table = every_file(held, files.unscored)
    seconds = time.perf_counter() - started
    log.info("%d files labelled in %.2fs (%.0f files/s), %d not labelled", len(held), seconds,
             len(held) / max(seconds, 1e-9), len(files.unscored))
    if args.out:
        write_rows(table, args.out)
        log.info("wrote %s (every input file: %d rows)", args.out, len(table))
        print_summary(summary, source, args.fpr, sys.stderr)   # beside the other notes, not in a pipe's rows
        return
    shown = table[[c for c in TERMINAL if c in table.columns]
                  + (["flagged_adapted"] if "flagged_adapted" in table.columns else [])]
    print_table(shown)
    print_summary(summary, source, args.fpr)


def adapt_now(args, model, progress, labelled: pd.DataFrame):
    """--adapt: (the model adapted on the reference's adapting part, the calibrating part's rows)."""
    from .adapt.counterparts import Writer
    from .adapt.detect import adapt, check_adaptable, describe, gate

    check_adaptable(model)
    reference = reference_files(args, progress, labelled)
    adapted, calibrating = adapt(model, reference, Writer(cache=args.adapt_cache, seed=args.seed), seed=args.seed,
                                 say=say)
    say(describe(gate(adapted, labelled).report))
    return adapted, calibrating


def check_model_path(model: str) -> None:
    """A --model that does not exist: one line listing the fitted models nearby (the models
    folder it names, else every run root's under the working directory)."""
    from pathlib import Path

    path = Path(model)
    if path.exists():
        return
    parts = path.parts
    models = Path(*parts[:parts.index("models") + 1]) if "models" in parts else None
    roots = [models] if models is not None and models.is_dir() else sorted(Path(".").glob("results/**/models"))
    fitted = sorted(str(p) for root in roots for p in root.glob("*/*")
                    if p.suffix == FITTED_SUFFIX or (p.is_dir() and (p / "config.json").is_file()))
    listing = (f"; fitted models here: {', '.join(fitted[:12])}" + (f" and {len(fitted) - 12} more" if len(fitted) > 12
                                                                   else "")) if fitted else \
        "; no fitted model under results/: run the workflow first (make demo)"
    raise AicdError(f"--model {model}: no such file or folder{listing}")
