"""`aicd submission check|score` and `aicd leaderboard`: the hidden-label submission commands
(the work is in aicd.scoring.submission and aicd.report.leaderboard)."""

from __future__ import annotations

from pathlib import Path

from .common.errors import AicdError
from .outputs import ANY_ROOT, Outputs


def add_parsers(sub, raw) -> None:
    from .scoring.bootstrap import RESAMPLES

    s = sub.add_parser("submission", help="check or score a hidden-label submission", formatter_class=raw,
                       description="check: is a predictions file a valid submission for a task (format, one "
                                   "prediction per test id, labels in the task's set)? Every problem is named with "
                                   "its count. score: check it, validate its metadata, score it against the gold "
                                   "labels and write a results file for `aicd leaderboard`.",
                       epilog="examples:\n  aicd submission check preds.csv --task T1\n"
                              "  aicd submission check preds.csv --task T1 --test hidden/T1_test_ids.csv "
                              "--labels human machine\n"
                              "  aicd submission score preds.csv meta.yaml --gold gold/T1.parquet --task T1 "
                              "--out board/mine.json\n\n"
                              "metadata (YAML or JSON): detector, date (YYYY-MM-DD), contact (e-mail), links "
                              "(list of URLs); optional: description, task")
    actions = s.add_subparsers(dest="action", required=True)
    c = actions.add_parser("check", help="check a submission's format, ids and labels (exit 1: problems)")
    c.add_argument("pred", metavar="PRED")
    c.add_argument("--task", required=True, help=f"the task (its test ids: {ANY_ROOT.split('TASK', 'test')})")
    c.add_argument("--results", default="results", metavar="RESULTS",
                   help="the run's results root (default results; a config's `results:`, e.g. results/own_detector)")
    c.add_argument("--test", help=f"the file of the task's test ids (default {ANY_ROOT.split('TASK', 'test')})")
    _common(c)
    g = actions.add_parser("score", help="score a submission against gold into a results file")
    g.add_argument("pred", metavar="PRED")
    g.add_argument("metadata", metavar="METADATA", help="YAML or JSON: detector, date, contact, links")
    g.add_argument("--gold", required=True, help="the hidden labels (id and target, label or gold)")
    g.add_argument("--task", required=True)
    g.add_argument("--validation", metavar="FILE", help="validation scores of human rows, for TPR at a fixed FPR")
    g.add_argument("--out", required=True, help="the results file (JSON)")
    g.add_argument("--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})")
    g.add_argument("--seed", type=int, default=0)
    _common(g)

    b = sub.add_parser("leaderboard", help="render a static leaderboard site from results files", formatter_class=raw,
                       description="Per task: the submissions in DIR (results files of `aicd submission score`) "
                                   "ranked by macro-F1 with intervals, AUROC, TPR at 1% FPR, macro-F1 per subset, "
                                   "and a paired bootstrap test of each against the leader.",
                       epilog="example:\n  aicd leaderboard board/ --out site/    # then open site/index.html")
    b.add_argument("folder", metavar="DIR")
    b.add_argument("--out", required=True, metavar="SITE", help="output folder (index.html, leaderboard.json)")
    b.add_argument("--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples of the paired test (default {RESAMPLES})")
    b.add_argument("--seed", type=int, default=0)


def _common(p) -> None:
    p.add_argument("--labels", nargs="+", help="the task's label set (default: the labels in the test/gold file)")
    p.add_argument("--label-map", help="integer labels to names: 0=human,1=machine, a JSON object or file")


def submission_command(args) -> bool:
    from .common.io import write_json
    from .scoring.external import parse_label_map
    from .scoring.submission import check, score_submission, task_ids_and_labels

    label_map = parse_label_map(args.label_map)
    if args.action == "check":
        test = args.test or Outputs(args.results).split(args.task, "test")
        if not Path(test).is_file():
            raise AicdError(f"{test}: no such file: give the task's test ids with --test FILE")
        ids, labels = task_ids_and_labels(test, args.labels)
        report = check(args.pred, ids, labels, label_map)
        print(f"{args.pred}: {report['rows']:,} rows; covers {report['covered']} of {args.task}'s test split; "
              f"labels {report['labels']}")
        for p in report["problems"]:
            print(f"  problem: {p['problem']}: {p['count']} (e.g. {', '.join(p['examples'])})")
        print("ok: a valid submission" if report["ok"] else f"{len(report['problems'])} problems: not a valid submission")
        return report["ok"]
    if args.resamples < 1:
        raise AicdError(f"--resamples {args.resamples}: give 1 or more")
    result = score_submission(args.pred, args.metadata, args.gold, args.task, args.labels, label_map,
                              args.validation, resamples=args.resamples, seed=args.seed)
    write_json(result, args.out)
    ci = result["macro_f1_ci"]
    print(f"{result['metadata']['detector']} on {args.task}: macro-F1 {result['macro_f1']:.4f} "
          f"(95% CI {ci[0]:.4f} to {ci[1]:.4f}); results in {args.out}")
    return True


def leaderboard_command(args) -> bool:
    from .report.leaderboard import write_site

    if args.resamples < 1:
        raise AicdError(f"--resamples {args.resamples}: give 1 or more")
    boards = write_site(args.folder, args.out, args.resamples, args.seed)
    for task, board in boards.items():
        print(f"{task}: {len(board['entries'])} submissions, leader {board['entries'][0]['detector']}")
    print(f"site: {Path(args.out) / 'index.html'}")
    return True
