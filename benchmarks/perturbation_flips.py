"""Formatting invariance: each detector of benchmarks/robust_ood.py fitted once per OOD split
(aicd.splits.ood, trained on the SemEval trial data only), then asked about the same test rows
rewritten by every semantics-preserving perturbation of aicd.codetools.perturb.

Prints (and writes as markdown with --out), per detector and split: macro-F1 x 100 unperturbed
and under each perturbation, and the flip rate (share of test rows whose label changes); then
per detector the worst flip rate and the largest macro-F1 drop over all splits. Rows a
perturbation leaves unchanged (it does not apply, or the code does not parse) count as not
flipped; their share is printed too.

  python benchmarks/perturbation_flips.py [--detectors a,b] [--splits in_distribution,codeaid,...]
                                          [--perturbations rename,no_comments] [--out flips.md]
                                          [--rows validation --seeds 0,1,2]

--rows validation asks about each split's group-held-out validation rows instead of its test
rows (the numbers BENCHMARKS.md's selection rule reads); --seeds repeats every split at each
split seed and reports the mean, and with validation rows a selection summary: per detector the
worst flip rate (over every split, perturbation and seed), the worst leave-one-language-out
macro-F1 and the worst perturbed macro-F1 (each the worst over the splits at one seed, then
the mean over the seeds), and the mean of the last two (the first rule's score); and the second
rule's summary, which adds language transfer inside each leave-one-language-out split's
training side (fitted on one training language, asked about the other, both ways). Detectors that tune on the validation rows (robust's threshold,
CatBoost's early stopping) are then scored on rows they have seen: read only LR/SVM rows there.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from aicd.codetools.perturb import PERTURBATIONS, perturb  # noqa: E402
from aicd.detectors import build  # noqa: E402
from aicd.splits import ood  # noqa: E402
from robust_ood import (  # noqa: E402
    CODEAID,
    DETECTORS,
    TABLE_FEATURES,
    TRIAL,
    AstCache,
    bootstrap_macro_f1,
    memoise_views,
    table_featurizer,
)

DEFAULT_DETECTORS = ("tfidf_lr", "tfidf_svm", "ast_lr", "ast_catboost", "robust")
# a detector of robust_ood.DETECTORS with the workflow's `training:` options (aicd.detectors.training)
ALL_SEVEN = list(PERTURBATIONS)
VARIANTS = {
    "tfidf_lr_aug": ("tfidf_lr", {"augment": ALL_SEVEN}),
    "canon_lr_aug": ("canon_lr", {"augment": ALL_SEVEN}),
    "robust_aug": ("robust", {"augment": ALL_SEVEN}),
    "canon_lr_balanced": ("canon_lr", {"balance_languages": True}),
    "minilm_canon_lr_aug": ("minilm_canon_lr", {"augment": ALL_SEVEN}),
    "canon_bound_lr_balanced": ("canon_bound_lr", {"balance_languages": True}),
    "canon_universal_lr_balanced": ("canon_universal_lr", {"balance_languages": True}),
    "stylo_inv_cb_balanced": ("stylo_inv_cb", {"balance_languages": True}),
}
# the frozen encoder's vectors by text: a row (or a rewrite that leaves its canonical text as it
# was) is embedded once for all splits and detectors
EMBEDDINGS: dict = {}
DEFAULT_SPLITS = ("in_distribution", "codeaid", "lolo:Python", "lolo:Java", "lolo:C++")


def fitted(name: str, tables: dict, seed: int, ast_cache: AstCache, scores: bool = False):
    """The detector fitted on the split's train rows, and a function from a test table to labels
    (scores=True: to labels and P(machine))."""
    base, options = VARIANTS.get(name, (name, {}))
    if scores and options:
        raise SystemExit(f"{name}: scores are given for the detectors of robust_ood.DETECTORS only")
    featureset, kind, params = DETECTORS[base]
    train, val = tables["train"], tables["validation"]
    if options:  # the same steps as the workflow's fit: copies featurized by the featurizer fitted on train
        from aicd.detectors.training import augmented_rows, balanced_indices

        extra = augmented_rows(train.assign(id=train["id"].astype(str)), options.get("augment", []), seed)
        predict, fit_on = fitted_on(featureset, kind, params, train, extra, val, seed, ast_cache)
        y = np.concatenate([train["label"].to_numpy(object), extra["label"].to_numpy(object)])
        languages = np.concatenate([train["language"].to_numpy(object), extra["language"].to_numpy(object)])
        idx = balanced_indices(languages, seed) if options.get("balance_languages") else np.arange(len(y))
        fit_on(idx, y[idx])
        return predict
    detector = build(kind, params, seed=seed, threads=1)
    if featureset == "tfidf":
        from aicd.features.tfidf import TfidfSvdFeaturizer
        feat = TfidfSvdFeaturizer(seed=seed)
        X_train, X_val = feat.fit_transform(train["code"].tolist()), feat.transform(val["code"].tolist())
        to_x = lambda t: feat.transform(t["code"].tolist())  # noqa: E731
    elif featureset == "ast":
        from aicd.features.ast_features import AstFeaturizer
        feat = AstFeaturizer()
        X_train, X_val = ast_cache.matrix(feat, train, fit=True), ast_cache.matrix(feat, val, fit=False)
        to_x = lambda t: ast_cache.matrix(feat, t, fit=False)  # noqa: E731
    elif featureset in TABLE_FEATURES:
        feat = table_featurizer(featureset, seed, EMBEDDINGS, threads=2)
        X_train, X_val = feat.fit_transform(train), feat.transform(val)
        to_x = feat.transform
    else:
        X_train, X_val = train["code"].to_numpy(object), val["code"].to_numpy(object)
        to_x = lambda t: t["code"].to_numpy(object)  # noqa: E731
    detector.fit(X_train, train["label"].to_numpy(object), X_val, val["label"].to_numpy(object))
    if scores:
        def with_scores(t):
            labels, p = detector.predict_with_scores(to_x(t))
            return np.asarray(labels, dtype=object), np.asarray(p)[:, list(detector.classes_).index("machine")]
        return with_scores
    return lambda t: np.asarray(detector.predict(to_x(t)), dtype=object)


def fitted_on(featureset, kind, params, train, extra, val, seed, ast_cache):
    """(predict, fit(idx, y)) for a detector trained on train + extra rows, featurizer fitted on train."""
    detector = build(kind, params, seed=seed, threads=1)
    if featureset == "tfidf" or featureset in TABLE_FEATURES:
        from aicd.features.tfidf import TfidfSvdFeaturizer
        feat = TfidfSvdFeaturizer(seed=seed) if featureset == "tfidf" else table_featurizer(featureset, seed, EMBEDDINGS, 2)
        X = np.vstack([feat.fit_transform(train), feat.transform(extra)]) if len(extra) else feat.fit_transform(train)
        X_val, to_x = feat.transform(val), feat.transform
    else:
        X = np.concatenate([train["code"].to_numpy(object), extra["code"].to_numpy(object)])
        X_val, to_x = val["code"].to_numpy(object), lambda t: t["code"].to_numpy(object)

    def fit(idx, y):
        detector.fit(X[idx], y, X_val, val["label"].to_numpy(object))

    return (lambda t: np.asarray(detector.predict(to_x(t)), dtype=object)), fit


def perturbed_tests(test: pd.DataFrame, kinds, seed: int) -> dict[str, tuple[pd.DataFrame, float]]:
    """kind -> (the test rows rewritten, with ids of their own; share of rows left unchanged)."""
    out = {}
    for kind in kinds:
        codes = [perturb(c, lang, kind, seed) for c, lang in zip(test["code"], test["language"])]
        unchanged = float(np.mean([a == b for a, b in zip(codes, test["code"])]))
        out[kind] = (test.assign(code=codes, id=test["id"].astype(str) + f"~{kind}"), unchanged)
    return out


def run(detectors, splits: dict, kinds, seed: int, rows: str = "test") -> tuple[dict, dict]:
    ast_cache = AstCache()
    results, unchanged = {}, {}
    for split, tables in splits.items():
        started = time.perf_counter()
        asked = tables[rows]
        variants = perturbed_tests(asked, kinds, seed)
        unchanged[split] = {k: v[1] for k, v in variants.items()}
        gold = asked["label"].to_numpy(object)
        for name in detectors:
            predict = fitted(name, tables, seed, ast_cache)
            base = predict(asked)
            row = {"none": (bootstrap_macro_f1(gold, base, seed=seed)[0], 0.0)}
            for kind, (table, _) in variants.items():
                pred = predict(table)
                row[kind] = (bootstrap_macro_f1(gold, pred, seed=seed)[0], float(np.mean(pred != base)))
            results.setdefault(name, {})[split] = row
        print(f"{split} (seed {seed}): {len(asked)} {rows} rows, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return results, unchanged


def transfer(detectors, splits: dict, seed: int) -> dict:
    """Language transfer inside the training side (the second selection rule's part a):
    results[name][lolo split] = the mean macro-F1 of fitting on the train rows of one of the
    split's training languages and asking about the train rows of the other, both ways. The
    held-out language is never read."""
    ast_cache = AstCache()
    out = {}
    for split, tables in splits.items():
        if not split.startswith("lolo:"):
            continue
        started = time.perf_counter()
        train, val = tables["train"], tables["validation"]
        languages = sorted(set(train["language"]))
        for name in detectors:
            scores = []
            for a in languages:
                inner = {"train": train[train["language"] == a].reset_index(drop=True),
                         "validation": val[val["language"] == a].reset_index(drop=True)}
                predict = fitted(name, inner, seed, ast_cache)
                for b in languages:
                    if b != a:
                        asked = train[train["language"] == b].reset_index(drop=True)
                        scores.append(bootstrap_macro_f1(asked["label"].to_numpy(object), predict(asked), seed=seed)[0])
            out.setdefault(name, {})[split] = float(np.mean(scores))
        print(f"{split} (seed {seed}): language transfer among {', '.join(languages)}, "
              f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return out


def second_rule(per_seed: list[dict], transfers: list[dict], kinds) -> str:
    """The second selection rule's numbers (BENCHMARKS.md, formatting invariance): the flip
    gate; (a) language transfer inside the training side, the worst lolo split; (b) the worse
    of the in-distribution and CodeAid validation macro-F1 (long-tail families); (c) the worst
    perturbed validation macro-F1; each of a-c the mean over the split seeds; the score their
    mean."""
    every = set(kinds) == set(PERTURBATIONS)
    out = ["### Second rule (validation rows and language transfer inside the training side; each part the mean "
           f"over {len(per_seed)} split seed(s))", "",
           f"| detector | worst flips % | flips ≤ 5%{'' if every else ' (of the perturbations run)'} | (a) language "
           "transfer, worst lolo split | (b) family shift, worse of ID / CodeAid | (c) worst perturbed | score |",
           "|---|---:|---|---:|---:|---:|---:|"]
    for name in per_seed[0]:
        flips = max((r[name][split][k][1] for r in per_seed for split in r[name] for k in kinds), default=None)
        a = [min(t[name].values()) for t in transfers if t.get(name)]
        b = [min(r[name][s]["none"][0] for s in ("in_distribution", "codeaid") if s in r[name]) for r in per_seed
             if any(s in r[name] for s in ("in_distribution", "codeaid"))]
        c = [min(min(row[k][0] for k in kinds) for row in r[name].values()) for r in per_seed] if kinds else []
        parts = [float(np.mean(x)) if x else None for x in (a, b, c)]
        cells = ["–" if x is None else f"{100 * x:.1f}" for x in parts]
        if kinds:
            score = "–" if None in parts else f"{100 * np.mean(parts):.1f}"
            gate = f"{100 * flips:.1f} | {'yes' if flips <= 0.05 else 'no'}"
        else:  # no perturbations run: the gate and (c) are not measured; the mean of (a) and (b)
            score = "–" if None in parts[:2] else f"{100 * np.mean(parts[:2]):.1f} (a, b)"
            gate = "not measured | –"
        out.append(f"| {name} | {gate} | " + " | ".join(cells) + f" | {score} |")
    return "\n".join(out) + "\n"


def mean_over_seeds(per_seed: list[dict]) -> dict:
    """results[name][split][kind] = (macro-F1, flip rate), averaged over the seeds' runs."""
    first = per_seed[0]
    return {name: {split: {kind: tuple(float(np.mean([r[name][split][kind][i] for r in per_seed])) for i in (0, 1))
                           for kind in first[name][split]} for split in first[name]} for name in first}


def selection(per_seed: list[dict], kinds) -> str:
    """The selection rule's numbers (BENCHMARKS.md, formatting invariance), from validation rows.
    The flip rate is the worst over everything (a gate); each macro-F1 the worst over the splits
    (and perturbations) at one split seed, then the mean over the seeds. A lolo split's validation rows are the long-tail families of its two
    training languages (aicd.splits.ood): that column reads family shift under a missing
    language, not the held-out language itself."""
    every = set(kinds) == set(PERTURBATIONS)
    out = ["### Selection summary (validation rows; flips: the worst of all; macro-F1: the worst over the "
           f"splits, then the mean over {len(per_seed)} split seed(s))", "",
           f"| detector | worst flips % | flips ≤ 5%{'' if every else ' (of the perturbations run)'} | worst lolo "
           "macro-F1 | worst perturbed macro-F1 | score (mean of the two) |", "|---|---:|---|---:|---:|---:|"]

    def mean_worst(name, value, splits=lambda split: True):
        worst = [min(value(r[name][split]) for split in r[name] if splits(split)) for r in per_seed
                 if any(splits(split) for split in r[name])]
        return float(np.mean(worst)) if worst else None

    for name in per_seed[0]:
        flips = max(r[name][split][k][1] for r in per_seed for split in r[name] for k in kinds)  # a gate: any seed
        lolo = mean_worst(name, lambda row: row["none"][0], lambda split: split.startswith("lolo:"))
        perturbed = mean_worst(name, lambda row: min(row[k][0] for k in kinds))
        score = "–" if lolo is None else f"{100 * (lolo + perturbed) / 2:.1f}"
        out.append(f"| {name} | {100 * flips:.1f} | {'yes' if flips <= 0.05 else 'no'} | "
                   f"{'–' if lolo is None else f'{100 * lolo:.1f}'} | {100 * perturbed:.1f} | {score} |")
    return "\n".join(out) + "\n"


def markdown(results: dict, unchanged: dict, kinds) -> str:
    out = ["### Worst over the splits (flip rate %: share of labels that change; drop: unperturbed minus "
           "perturbed macro-F1 x 100)", "", "| detector | " + " | ".join(f"{k} flips / drop" for k in kinds)
           + " | worst flips |", "|" + "---|" * (len(kinds) + 2)]
    for name, by_split in results.items():
        cells, worst = [], 0.0
        for k in kinds:
            flips = max(r[k][1] for r in by_split.values())
            drop = max(r["none"][0] - r[k][0] for r in by_split.values())
            worst = max(worst, flips)
            cells.append(f"{100 * flips:.1f} / {100 * drop:+.1f}")
        out.append(f"| {name} | " + " | ".join(cells) + f" | {100 * worst:.1f} |")
    for split in next(iter(results.values())):
        out += ["", f"### {split} (macro-F1 x 100, flip rate %)", "",
                "| detector | none | " + " | ".join(kinds) + " |", "|" + "---|" * (len(kinds) + 2)]
        for name, by_split in results.items():
            r = by_split[split]
            out.append(f"| {name} | {100 * r['none'][0]:.1f} | "
                       + " | ".join(f"{100 * r[k][0]:.1f} ({100 * r[k][1]:.1f}%)" for k in kinds) + " |")
        out.append("| rows left unchanged | | " + " | ".join(f"{100 * unchanged[split][k]:.0f}%" for k in kinds) + " |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trial", default=str(TRIAL))
    ap.add_argument("--codeaid", default=str(CODEAID))
    ap.add_argument("--detectors", default=",".join(DEFAULT_DETECTORS),
                    help=f"any of {', '.join([*DETECTORS, *VARIANTS])}")
    ap.add_argument("--splits", default=",".join(DEFAULT_SPLITS), help="OOD split names ('all' for every one)")
    ap.add_argument("--perturbations", default=",".join(PERTURBATIONS))
    ap.add_argument("--seed", type=int, default=0, help="the split, perturbation and detector seed")
    ap.add_argument("--seeds", help="several seeds, e.g. 0,1,2 (each split at each seed; means reported)")
    ap.add_argument("--rows", choices=["test", "validation"], default="test",
                    help="which rows of each split are asked (validation: the selection rule's numbers)")
    ap.add_argument("--out", help="write the markdown tables here")
    args = ap.parse_args(argv)
    detectors = [d for d in args.detectors.split(",") if d]
    unknown = [d for d in detectors if d not in DETECTORS and d not in VARIANTS]
    if unknown or not detectors:
        ap.error(f"unknown detectors {unknown or '(none given)'}; known: {', '.join([*DETECTORS, *VARIANTS])}")
    # none: no perturbed copies (the second rule's gate and part (c) are then not measured, and say so)
    kinds = [] if args.perturbations == "none" else [k for k in args.perturbations.split(",") if k]
    if (not kinds and args.perturbations != "none") or any(k not in PERTURBATIONS for k in kinds):
        ap.error(f"--perturbations takes some of {', '.join(PERTURBATIONS)}, or none; got {args.perturbations!r}")
    try:
        seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed]
    except ValueError:
        ap.error("--seeds takes integers separated by commas, e.g. 0,1,2")
    trial = ood.trial_samples(pd.read_parquet(args.trial))
    codeaid = ood.codeaid_samples(pd.read_parquet(args.codeaid)) if Path(args.codeaid).is_file() else None
    memoise_views()
    per_seed, unchanged_per_seed, transfers = [], [], []
    for seed in seeds:
        splits = ood.all_splits(trial, codeaid, seed=seed)
        if args.splits != "all":
            wanted = args.splits.split(",")
            missing = [s for s in wanted if s not in splits]
            if missing:
                raise SystemExit(f"unknown splits {missing}; known: {', '.join(splits)}")
            splits = {k: splits[k] for k in wanted}
        results, unchanged = run(detectors, splits, kinds, seed, args.rows)
        if args.rows == "validation":
            transfers.append(transfer(detectors, splits, seed))
        per_seed.append(results)
        unchanged_per_seed.append(unchanged)
    unchanged = {split: {k: float(np.mean([u[split][k] for u in unchanged_per_seed])) for k in kinds}
                 for split in unchanged_per_seed[0]}
    text = markdown(mean_over_seeds(per_seed), unchanged, kinds) if kinds else ""
    if args.rows == "validation":
        text = second_rule(per_seed, transfers, kinds) + ("\n" + selection(per_seed, kinds) + "\n" + text
                                                          if kinds else "")
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
