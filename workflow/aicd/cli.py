"""The `aicd` command (the plumbing every stage shares is aicd.common.stagecli):

The AICD Bench command:

    aicd detect PATH... --model MODEL    apply a fitted detector to code files or folders
    aicd score PRED GOLD                 macro-F1 (95% bootstrap CI), per class, per subset; AUROC
                                         and TPR at a fixed FPR (--fpr) where PRED has scores
    aicd compare PRED_A PRED_B GOLD      paired bootstrap test of the macro-F1 difference
    aicd verify RESULTS_A RESULTS_B      same inputs: are all tables, scores and figures byte-identical?
    aicd submission check|score PRED     a hidden-label submission: check it, score it into results
    aicd leaderboard DIR --out SITE      a static leaderboard site from submission results
    aicd fetch-inputs                    download and verify the pinned inputs (make pinned-inputs)
    aicd site-profile DIR                your cluster's Snakemake profile, outside the repository
    aicd serve-local MODEL               serve the packaged local LLM on 127.0.0.1 until Ctrl-C"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .common.errors import AicdError
from .common.stagecli import json_arg, run, setup_logging  # noqa: F401  (stages and tests import them here too)
from .common.words import counted
from .outputs import ANY_ROOT, SHOWN

log = logging.getLogger("aicd")

USAGE = "The AICD Bench command line:\n\n" + __doc__.split("command:\n\n", 1)[1]

EXAMPLES = """\
examples (paths the demo creates; another run's root, e.g. results/own_detector, works the same):
  # label every file in a folder with a detector the workflow fitted (TF-IDF + SVM, the demo's T1)
  aicd detect my_repo/ --model results/models/binary/svm_tfidf.skops
  aicd detect a.py b.java --model results/models/binary/lr_tfidf.skops --out predictions.csv   # or .jsonl
  # thresholds at 5% FPR set on human code you trust, saved for reuse (aicd detect --help)
  aicd detect new/ --model results/models/binary/robust.skops --calibrate-on old_code/ --save-calibration r.json

  # score a SemEval-2026 Task 13 submission (id,label with integer labels) against gold
  aicd score submission.csv gold.parquet --label-map 0=human,1=machine --json score.json
  # score the workflow's own predictions against the task's test split
  aicd score results/predictions/binary/svm_tfidf.parquet results/tasks/binary/test.parquet

  # is detector A better than detector B on the same rows? (paired bootstrap, seeded)
  aicd compare results/predictions/binary/svm_tfidf.parquet results/predictions/binary/lr_ast.parquet \\
      results/tasks/binary/test.parquet

  # are two runs the same? (input fingerprints, then every table, score and figure byte for byte)
  aicd verify results results/own_detector

Gold files: parquet, CSV or JSONL with `id` and `target`, `label` or `gold` (the first present); subset,
language, domain and generator columns, when present, give per-subset breakdowns.
"""

def build_parser():
    import argparse

    parser = argparse.ArgumentParser(prog="aicd", description=USAGE, epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    raw = argparse.RawDescriptionHelpFormatter
    from .detect_cli import add_parser as add_detect_parser

    add_detect_parser(sub, raw)
    for add in (_score_parser, _compare_parser, _verify_parser, _fetch_parser, _site_profile_parser):
        add(sub, raw)
    from .serve_cli import add_parser as add_serve_parser
    from .submission_cli import add_parsers

    add_parsers(sub, raw)
    add_serve_parser(sub, raw)
    return parser


def _score_parser(sub, raw) -> None:
    from .scoring.thresholds import FPRS

    s = sub.add_parser("score", help="score a predictions file against a gold file", formatter_class=raw,
                       description="Macro-F1 with a 95% bootstrap interval, accuracy, per-class precision/recall/F1 "
                                   "and per-subset breakdowns. PRED: a SemEval-2026 Task 13 submission (CSV id,label), "
                                   "the workflow's predictions parquet (id, gold, pred), or CSV/JSONL/parquet with id "
                                   "and pred or label. GOLD: parquet/CSV/JSONL with id and target, label or gold (the first present). "
                                   "Every problem of the two files (ids missing, unknown or repeated, rows without a "
                                   "label, labels outside --label-map or the label set) is named in one run, each "
                                   "counted with examples, and nothing is scored until none is left. To check a "
                                   "hidden-label submission against a task's test ids without gold labels: "
                                   "aicd submission check PRED --task TASK.",
                       epilog="examples:\n  aicd score submission.csv gold.csv --label-map 0=human,1=machine\n"
                              f"  aicd score {SHOWN.predictions('binary', 'svm_tfidf')} {SHOWN.split('binary', 'test')} "
                              "--json score.json\n"
                              "  # how many humans are wrongly accused at a threshold set for 1% FPR on validation\n"
                              f"  aicd score {SHOWN.predictions('binary', 'lr_tfidf')} {SHOWN.split('binary', 'test')} "
                              "--fpr 0.01\n"
                              "  aicd score mine.csv gold.csv --validation mine_on_validation.csv --fpr 0.01 0.05\n"
                              "  # a submission's format, ids and labels, before any gold is at hand\n"
                              "  aicd submission check preds.csv --task binary")
    s.add_argument("pred", metavar="PRED")
    s.add_argument("gold", metavar="GOLD")
    _scoring_options(s)
    s.add_argument("--allow-missing", action="store_true", help="score only the gold ids that have a prediction "
                   "(the coverage is reported); by default a missing id is an error")
    s.add_argument("--fpr", type=float, nargs="+", default=None, metavar="RATE",
                   help=f"false-positive rates on human code to give the TPR at (default {' '.join(map(str, FPRS))}); "
                        "needs score_<class> columns in PRED and validation scores of human rows (--validation)")
    s.add_argument("--validation", metavar="FILE", help="validation scores the thresholds are set on: a "
                   "validation_scores parquet (id, domain, machine_score; with a gold column, its human rows) or "
                   "predictions on validation rows with gold and score_human; found on its own for "
                   f"{ANY_ROOT.predictions('TASK', 'DETECTOR')}")
    s.add_argument("--json", dest="json_out", metavar="OUT", help="also write the full result as JSON")


def _compare_parser(sub, raw) -> None:
    c = sub.add_parser("compare", help="paired bootstrap test of two predictions files", formatter_class=raw,
                       description="Macro-F1 of A minus B on the same gold rows, its 95% bootstrap interval and a "
                                   "two-sided p-value, both from the same paired resamples (seeded), so they agree: "
                                   "the interval excludes 0 exactly when p <= 0.05. Both files must cover every "
                                   "gold id.",
                       epilog="examples:\n  aicd compare a.csv b.csv gold.parquet --label-map 0=human,1=machine\n"
                              f"  aicd compare {SHOWN.predictions('binary', 'svm_tfidf')} "
                              f"{SHOWN.predictions('binary', 'lr_ast')} {SHOWN.split('binary', 'test')}")
    c.add_argument("pred_a", metavar="PRED_A")
    c.add_argument("pred_b", metavar="PRED_B")
    c.add_argument("gold", metavar="GOLD")
    _scoring_options(c)
    c.add_argument("--json", dest="json_out", metavar="OUT", help="also write the result as JSON")


def _verify_parser(sub, raw) -> None:
    v = sub.add_parser("verify", help="compare two result trees (exit 0: identical, 1: not)", formatter_class=raw,
                       description="Are two runs the same? Compares their input fingerprints and code versions "
                                   f"({SHOWN.inputs()}). Same inputs and code: every table, score file, figure, "
                                   "analysis and report must be byte-identical, and each that differs is named; the "
                                   "last line says what is not compared (logs, times, intermediate files). "
                                   "Otherwise what differs is named.",
                       epilog="examples:\n  aicd verify run1/results run2/results\n"
                              "  aicd verify results results/own_detector     # two runs side by side")
    v.add_argument("a", help="a results folder (or the working directory holding results/)")
    v.add_argument("b", help="the other results folder")


def _fetch_parser(sub, raw) -> None:
    sub.add_parser("fetch-inputs", help="download the pinned inputs into the cache and verify them", formatter_class=raw,
                   description="Downloads every file named in config/pinned_inputs.yaml (exact versions with their "
                               "sha256) into ~/.cache/aicd/pinned (or $AICD_CACHE/pinned) and checks each hash; a "
                               "file already there and intact is kept. The demo's human code is gathered from them.",
                   epilog="example:\n  aicd fetch-inputs        # what `make pinned-inputs` runs")


def _site_profile_parser(sub, raw) -> None:
    sp = sub.add_parser("site-profile", help="make your cluster's Snakemake profile outside the repository",
                        formatter_class=raw, description="Copies profiles/site-template (config.yaml: jobs, "
                        "account, defaults; partitions.yaml: your partitions and their GPUs) into DIR, a folder "
                        "outside the repository that you then edit. GPU jobs go to a GPU partition by the "
                        "partitions file, from each detector's own `gpu` (docs/cluster.md).",
                        epilog="example:\n  aicd site-profile ~/.config/snakemake/aicd-site\n"
                               "  snakemake --workflow-profile profiles/slurm --profile ~/.config/snakemake/aicd-site")
    sp.add_argument("dir", metavar="DIR", help="the site profile's folder (outside the repository)")
    sp.add_argument("--force", action="store_true", help="replace the files of an existing site profile")


def _scoring_options(p) -> None:
    p.add_argument("--labels", nargs="+", help="the label set, in report order (default: the gold labels); "
                   "a label outside it is an error")
    p.add_argument("--label-map", help="integer (or other) labels to names, both files: 0=human,1=machine, "
                   "a JSON object, or a JSON file")
    from .scoring.bootstrap import RESAMPLES

    p.add_argument("--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")


# --- aicd score / compare: argument handling and printing; the work is in aicd.scoring.external
# (aicd detect is aicd.detect_cli).

def _check_resamples(resamples: int, least: int) -> None:
    if resamples < least:
        raise AicdError(f"--resamples {resamples}: give {least} or more"
                        + (" (0 leaves the intervals out)" if least == 0 else ""))


def _print_table(table, floats: str = "{:.3f}") -> None:
    cells = [[floats.format(v) if isinstance(v, float) else str(v) for v in row]
             for row in table.itertuples(index=False)]
    header = [str(c) for c in table.columns]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(header)]
    for row in [header] + cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())


def _print_score(result: dict) -> None:
    import pandas as pd

    ci = result["macro_f1_ci"]
    interval = f" (95% CI {ci[0]:.4f} to {ci[1]:.4f})" if ci else ""
    print(f"{counted(result['n'], 'row')} (coverage {result['coverage']:.1%}): macro-F1 {result['macro_f1']:.4f}"
          f"{interval}, accuracy {result['accuracy']:.4f}")
    per_class = pd.DataFrame([{"class": c, **v} for c, v in result["per_class"].items()])
    _print_table(per_class, "{:.4f}")
    for column, groups in result.get("by", {}).items():
        print(f"\nby {column}:")
        rows = [{column: g, "n": v["n"], "macro_f1": v["macro_f1"],
                 **({"ci_low": v["macro_f1_ci"][0], "ci_high": v["macro_f1_ci"][1]} if v["macro_f1_ci"] else {}),
                 "one_class": v.get("one_class") or ""} for g, v in groups.items()]
        _print_table(pd.DataFrame(rows), "{:.4f}")
        if any(r["one_class"] for r in rows):
            print(f"(one_class: the {column}'s gold rows hold that class alone, so its macro-F1 measures that class, "
                  "not discrimination)")


def _print_thresholds(m: dict, asked: bool) -> None:
    """Both views of the TPR at a fixed FPR, each named for what it is (aicd.scoring.thresholds)."""
    def pm(value, ci):
        return "n/a" if value is None else f"{value:.4f}" + (f" (95% CI {ci[0]:.4f} to {ci[1]:.4f})" if ci else "")

    if not m["available"]:
        if asked:
            print(f"\nno threshold metrics: {m['why']}")
        return
    print(f"\nAUROC (human vs the rest): {pm(m['auroc'], m['auroc_ci'])}")
    for key, point in (m.get("roc_at_fpr") or {}).items():
        if point is None:
            continue
        head = (f"TPR @ {float(key):.1%} FPR (ROC operating point: threshold set on the test's {point['humans']} "
                "human rows)")
        if not point["reachable"]:
            print(f"{head}: unreachable: {point['unreachable']['why']}")
        else:
            print(f"{head}: {pm(point['tpr'], point.get('tpr_ci'))} at a test FPR of {point['fpr']:.2%}")
    if m.get("deployment_at_fpr") is None:
        print(f"deployment view (a threshold set on validation humans): not given: {m['why_no_deployment']} "
              "(pass --validation FILE)")
        return
    print(f"deployment view: thresholds set on {m['validation_human_rows']} validation human rows"
          + (f" ({m['validation']})" if m.get("validation") else "") + ", applied to the test rows")
    if m.get("inverted"):
        print(f"inverted: validation AUROC {m['validation_auroc']:.4f} is below 0.5 (its scores rank human code as "
              "more machine-like)")
    for key, at in m["deployment_at_fpr"].items():
        problem = at.get("unreliable")
        if at.get("threshold") is None:
            print(f"validation threshold for {float(key):.1%} FPR: not measured: "
                  f"{problem['why'] if problem else 'no threshold'}")
            continue
        # the intervals that resample the validation humans too (the threshold's own uncertainty)
        tpr_ci = at.get("tpr_ci_with_threshold") or at["tpr_ci"]
        fpr_ci = at.get("fpr_ci_with_threshold") or at["fpr_ci"]
        print(f"validation threshold for {float(key):.1%} FPR ({at['threshold']:.4f}): humans wrongly flagged on "
              f"test {pm(at['fpr'], fpr_ci)} of {at['humans']}; TPR there {pm(at['tpr'], tpr_ci)}")
        if problem:
            print(f"  cannot be trusted: {problem['why']}")
        if at.get("transfers") is False:
            print(f"  does not transfer: the realised FPR is over twice the nominal {float(key):.1%}, so the "
                  "threshold set on validation humans does not hold on the test's humans")
    print("(deployment intervals: 95%, validation humans resampled with the test rows)")


def score_command(args) -> None:
    from .common.io import write_json
    from .scoring.external import parse_label_map, score_file
    from .scoring.thresholds import FPRS

    _check_resamples(args.resamples, 0)
    bad = [f for f in args.fpr or () if not 0 < f < 1]
    if bad:
        raise AicdError(f"--fpr {bad[0]}: a false-positive rate is between 0 and 1 (e.g. 0.01)")
    result = score_file(args.pred, args.gold, args.labels, parse_label_map(args.label_map), args.allow_missing,
                        args.resamples, args.seed, args.validation, args.fpr or FPRS)
    _print_score(result)
    _print_thresholds(result["threshold_metrics"], asked=bool(args.fpr))
    if args.json_out:
        write_json(result, args.json_out)


def compare_command(args) -> None:
    from .common.io import write_json
    from .scoring.external import compare_files, parse_label_map

    _check_resamples(args.resamples, 1)
    r = compare_files(args.pred_a, args.pred_b, args.gold, args.labels, parse_label_map(args.label_map),
                      args.resamples, args.seed)
    lo, hi = r["difference_ci"]
    p = f"p < {1 / r['resamples']:.4g}" if r["p_value"] == 0 else f"p = {r['p_value']:.4f}"
    print(f"{counted(r['n'], 'row')}; macro-F1 A {r['macro_f1_a']:.4f}, B {r['macro_f1_b']:.4f}")
    print(f"A - B = {_signed(r['difference'])} (95% CI {_signed(lo)} to {_signed(hi)}), {p} "
          f"(paired bootstrap, {r['resamples']} resamples, seed {r['seed']}; the interval and p come from the same "
          f"resamples: the interval excludes 0 exactly when p <= 0.05)")
    if args.json_out:
        write_json(r, args.json_out)


def _signed(x: float) -> str:
    """+0.0404, or +1.2e-05 for a value too small for four decimals (never a bare -0.0000)."""
    return f"{x:+.4f}" if x == 0 or abs(x) >= 5e-5 else f"{x:+.1e}"


def main(argv: Sequence[str] | None = None) -> int:
    """The `aicd` console script."""
    args = build_parser().parse_args(argv)
    outcome = {"ok": True}

    def command(_argv=None) -> None:
        if args.command == "verify":
            from .records.fingerprint import verify

            outcome["ok"], lines = verify(args.a, args.b)
            print("\n".join(lines))
        elif args.command in ("submission", "leaderboard"):
            from .submission_cli import leaderboard_command, submission_command

            outcome["ok"] = (submission_command if args.command == "submission" else leaderboard_command)(args)
        elif args.command == "fetch-inputs":
            from .sources.pinned import main as pinned_main

            pinned_main(["fetch"])
        elif args.command == "site-profile":
            from .site_profile import main as site_profile_main

            site_profile_main(args)
        elif args.command == "serve-local":
            from .serve_cli import serve_local_command

            serve_local_command(args)
        elif args.command == "detect":
            from .detect_cli import detect_command

            detect_command(args)
        else:
            {"score": score_command, "compare": compare_command}[args.command](args)

    rc = run(command, None)
    return rc if rc else (0 if outcome["ok"] else 1)
