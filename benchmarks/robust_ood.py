"""Out-of-distribution benchmark: every classical baseline and the `robust` detector on every
split of aicd.splits.ood (in distribution, CodeAid, leave-one-language-out, leave-one-family-out),
trained on the SemEval trial data only.

Prints (and writes as markdown with --out) macro-F1 x 100 with bootstrap 95% intervals over the
test rows, the summary the robust detector's bars read (ID, CodeAid, LOLO mean/min, LOFO mean/min),
CodeAid per language, and fit/predict rows/s (featurization included: the rate a user sees).
Validation rows (group-held-out: the trial's long-tail families) reach the detectors' fit() as
X_val/y_val; the classical rows ignore them, `robust` with calibrate=True uses them.

  python benchmarks/robust_ood.py [--detectors a,b] [--splits in_distribution,codeaid,...]
                                  [--out results.md] [--json PATH]
Single-threaded BLAS/OpenMP (set before numpy loads): rows/s are per core.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
DATA = REPO.parent / "shared" / "data"
TRIAL = DATA / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"
CODEAID = DATA / "codeaid-interview-answers" / "codeaid_answers.parquet"

from aicd.detectors import build  # noqa: E402
from aicd.outputs import SHOWN, Outputs  # noqa: E402
from aicd.splits import ood  # noqa: E402

# name -> (featureset or None for text detectors, detector kind, params)
DETECTORS = {
    "random": (None, "random", {}),
    "majority": (None, "majority", {}),
    "tfidf_lr": ("tfidf", "logistic_regression", {}),
    "tfidf_svm": ("tfidf", "linear_svm", {}),
    "ast_lr": ("ast", "logistic_regression", {}),
    "ast_svm": ("ast", "linear_svm", {}),
    "ast_catboost": ("ast", "catboost", {"iterations": 200, "depth": 6, "border_count": 32}),  # as config/demo.yaml
    "robust": ("text", "robust", {}),
    # the canonical view (aicd.features.canonical): tree-sitter tokens, identifiers as naming classes
    "canon_lr": ("canon_tfidf", "logistic_regression", {}),
    "canon_svm": ("canon_tfidf", "linear_svm", {}),
    # the same with every identifier one ID token: renaming cannot reach it
    "canon_anon_lr": ("canon_anon", "logistic_regression", {}),
    "canon_anon_svm": ("canon_anon", "linear_svm", {}),
    # bound names one VAR token, every other name as written (what renaming cannot reach)
    "canon_bound_lr": ("canon_bound", "logistic_regression", {}),
    # every token as its cross-language class, names by role
    "canon_universal_lr": ("canon_universal", "logistic_regression", {}),
    # language-agnostic statistics of the syntax (aicd.features.structure), alone and beside the views above
    "structure_lr": ("structure", "logistic_regression", {}),
    "structure_cb": ("structure", "catboost", {"iterations": 200, "depth": 6, "border_count": 32}),
    "canon_bound_structure_lr": ("canon_bound+structure", "logistic_regression", {}),
    "canon_universal_structure_lr": ("canon_universal+structure", "logistic_regression", {}),
    # robust's stylometry on the invariant text (aicd.codetools.perturb.invariant_text): no rewrite moves a column
    "stylo_inv_cb": ("stylometry_invariant", "catboost", {"iterations": 200, "depth": 6, "border_count": 32}),
    "stylo_inv_lr": ("stylometry_invariant", "logistic_regression", {}),
    "stylo_inv_bound_lr": ("stylometry_invariant+canon_bound", "logistic_regression", {}),
    "stylo_inv_bound_cb": ("stylometry_invariant+canon_bound", "catboost",
                           {"iterations": 200, "depth": 6, "border_count": 32}),
    # frozen MiniLM embeddings of the canonical text (aicd.features.embedding), alone and with the canonical view
    "minilm_lr": ("minilm", "logistic_regression", {}),
    "minilm_canon_lr": ("minilm+canon", "logistic_regression", {}),
    # a pretrained LM's statistics (BENCHMARKS.md, "A pretrained LM's statistics under the second rule"):
    # the zero-shot criteria (threshold on the validation rows), then as features of trained rows
    **{f"zs_{c}": ("lm_stats", "zero_shot_lm", {"criterion": c}) for c in ("loglik", "logrank", "entropy", "lrr",
                                                                          "fast_detectgpt")},
    "lm_lr": ("lm_stats", "logistic_regression", {}),
    "lm_cb": ("lm_stats", "catboost", {"iterations": 200, "depth": 6, "border_count": 32}),
    "lm_stylo_cb": ("lm_stats+stylometry", "catboost", {"iterations": 200, "depth": 6, "border_count": 32}),
    "lm_stylo_inv_bound_lr": ("lm_stats+stylometry_invariant+canon_bound", "logistic_regression", {}),
    # ablations of the robust detector (which idea moved which number)
    "robust_lm": ("text", "robust", {"lm": {}}),  # + token statistics of a small LM trained per split (slow: ~1 min fit + ~50 rows/s)
    "robust_lr": ("text", "robust", {"model": "lr"}),
    "robust_lr_reweight": ("text", "robust", {"model": "lr", "reweight": True}),
    "robust_reweight": ("text", "robust", {"reweight": True}),
    "robust_calibrate": ("text", "robust", {"calibrate": True}),
    "robust_ensemble": ("text", "robust", {"model": "ensemble"}),
    "robust_ensemble_reweight": ("text", "robust", {"model": "ensemble", "reweight": True}),
}
DEFAULT_DETECTORS = ("random", "majority", "tfidf_lr", "tfidf_svm", "ast_lr", "ast_svm", "ast_catboost", "robust")


def bootstrap_macro_f1(gold: np.ndarray, pred: np.ndarray, resamples: int = 1000, seed: int = 0):
    """Macro-F1 over the classes of `gold`, and its percentile 95% interval from resampled rows."""
    classes = np.unique(gold)
    g = np.searchsorted(classes, gold)
    p = np.array([np.searchsorted(classes, v) if v in classes else len(classes) for v in pred])
    k = len(classes)
    rng = np.random.default_rng(seed)
    idx = np.vstack([np.arange(len(g)), rng.integers(0, len(g), size=(resamples, len(g)))])
    gi, pi = g[idx], p[idx]
    f1 = np.zeros((len(idx), k))
    for c in range(k):
        tp = ((gi == c) & (pi == c)).sum(1)
        denom = (gi == c).sum(1) + (pi == c).sum(1)
        f1[:, c] = np.divide(2.0 * tp, denom, out=np.zeros(len(idx)), where=denom > 0)
    macro = f1.mean(1)
    return float(macro[0]), float(np.percentile(macro[1:], 2.5)), float(np.percentile(macro[1:], 97.5))


# feature sets built from the project's registry (aicd.features.registry): name -> kinds
# concatenated, each a kind or (kind, params)
BOUND = ("canon_tfidf", {"identifiers": "bound"})
UNIVERSAL = ("canon_tfidf", {"identifiers": "role", "tokens": "universal"})
INVARIANT_STYLE = ("stylometry", {"text": "invariant"})
# the packaged SmolLM2's token statistics (aicd.features.lm_stats), cached per text for every split and seed
LM = ("lm_stats", {"model": "package:smollm2-135m-instruct", "window": 128, "batch_size": 8, "dtype": "auto"})
LM_CACHE = Path(Outputs(REPO / "results").benchmark_cache("lm_stats"))
TABLE_FEATURES = {"canon_tfidf": ("canon_tfidf",), "canon_anon": (("canon_tfidf", {"identifiers": "anonymous"}),),
                  "lm_stats": (LM,), "lm_stats+stylometry": (LM, "stylometry"),
                  "lm_stats+stylometry_invariant+canon_bound": (LM, INVARIANT_STYLE, BOUND),
                  "canon_bound": (BOUND,), "canon_universal": (UNIVERSAL,), "structure": ("structure",),
                  "canon_bound+structure": (BOUND, "structure"), "canon_universal+structure": (UNIVERSAL, "structure"),
                  "stylometry_invariant": (INVARIANT_STYLE,), "stylometry_invariant+canon_bound": (INVARIANT_STYLE, BOUND),
                  "minilm": ("code_embedding",), "minilm+canon": ("code_embedding", "canon_tfidf")}


def memoise_views() -> None:
    """A row's canonical tokens, structure statistics, invariant text and stylometry depend on
    its text only: computed once per text for every split, seed and detector of a benchmark run
    (in this process: the structure and stylometry featurizers then run on one thread)."""
    from aicd.features import canonical, structure, stylometry_set

    for module, name in ((canonical, "canonical_tokens"), (structure, "extract"), (stylometry_set, "invariant_text"),
                         (stylometry_set, "stylometry")):
        fn, cache = getattr(module, name), {}

        def cached(*args, _fn=fn, _cache=cache, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            if key not in _cache:
                _cache[key] = _fn(*args, **kwargs)
            return _cache[key]

        setattr(module, name, cached)


def table_featurizer(featureset: str, seed: int, cache: dict | None = None, threads: int = 1):
    """A fresh featurizer of one of TABLE_FEATURES (fit_transform/transform take a table); the
    embedding part shares `cache` (text -> vector) where one is given."""
    from aicd.features.registry import ConcatFeaturizer
    from aicd.features.registry import build as build_features

    parts = []
    for entry in TABLE_FEATURES[featureset]:
        kind, params = entry if isinstance(entry, tuple) else (entry, {})
        part = build_features(kind, params, seed)
        part.threads = 1 if kind in ("structure", "stylometry") else threads  # in this process: memoise_views reaches it
        if kind == "code_embedding":
            part.cache = cache
        if kind == "lm_stats":
            part.cache_dir = str(LM_CACHE)
        parts.append(part)
    return parts[0] if len(parts) == 1 else ConcatFeaturizer(parts)


class AstCache:
    """tree-sitter features of a row depend on the row only: extracted once per id, then the
    project's AstFeaturizer vectorizer is fitted per split as usual."""

    def __init__(self):
        self.dicts: dict[str, dict] = {}

    def matrix(self, featurizer, table: pd.DataFrame, fit: bool):
        from aicd.features.ast_features import extract

        for i, code, lang in zip(table["id"], table["code"], table["language"]):
            if i not in self.dicts:
                self.dicts[i] = extract(code, lang)
        dicts = [self.dicts[i] for i in table["id"]]
        return featurizer.vectorizer.fit_transform(dicts) if fit else featurizer.vectorizer.transform(dicts)


def pinned_human_split(trial: pd.DataFrame, seed: int) -> dict:
    """An external check of human code unlike the trial's: the demo's gathered library code
    (config/demo.yaml's local_code: pinned PyPI, npm and Debian package files, 60 units in each
    of the nine languages, all human), asked of a detector trained as for the CodeAid split.
    It has one class, so what it reads is the share labelled human (1 - predicted machine share)."""
    import yaml
    from aicd.data.schema import content_id
    from aicd.sources.gather import gather

    spec = yaml.safe_load((REPO / "config" / "demo.yaml").read_text())["sources"]["local_code"]["gather"]
    rows, _ = gather(spec, seed)
    test = pd.DataFrame({"code": rows["code"], "label": "human", "language": rows["language"],
                         "subset": rows["language"]})
    test.insert(0, "id", [content_id(lang, code) for lang, code in zip(test["language"], test["code"])])
    tables = ood.codeaid(trial, test.iloc[:0].assign(problem_id=None), seed)
    return {**tables, "test": test.reset_index(drop=True)}


def run_one(name: str, tables: dict, seed: int, ast_cache: AstCache, calibrate: bool = False) -> dict:
    featureset, kind, params = DETECTORS[name]
    train, val, test = tables["train"], tables["validation"], tables["test"]
    y_train, y_val = train["label"].to_numpy(object), val["label"].to_numpy(object)
    detector = build(kind, params, seed=seed, threads=1)
    t0 = time.perf_counter()
    if featureset == "tfidf":
        from aicd.features.tfidf import TfidfSvdFeaturizer
        feat = TfidfSvdFeaturizer(seed=seed)
        X_train = feat.fit_transform(train["code"].tolist())
        X_val, to_test = feat.transform(val["code"].tolist()), lambda: feat.transform(test["code"].tolist())
    elif featureset == "ast":
        from aicd.features.ast_features import AstFeaturizer
        feat = AstFeaturizer()
        X_train = ast_cache.matrix(feat, train, fit=True)
        X_val, to_test = ast_cache.matrix(feat, val, fit=False), lambda: ast_cache.matrix(feat, test, fit=False)
    elif featureset in TABLE_FEATURES:
        feat = table_featurizer(featureset, seed, threads=2)
        X_train = feat.fit_transform(train)
        X_val, to_test = feat.transform(val), lambda: feat.transform(test)
    elif featureset == "text":
        X_train, X_val = train["code"].to_numpy(object), val["code"].to_numpy(object)
        to_test = lambda: test["code"].to_numpy(object)  # noqa: E731
    else:
        X_train, X_val = np.zeros((len(train), 0)), np.zeros((len(val), 0))
        to_test = lambda: np.zeros((len(test), 0))  # noqa: E731
    detector.fit(X_train, y_train, X_val, y_val)
    if calibrate:  # the workflow's training.calibrate: scores recalibrated on the group-held-out validation rows
        from aicd.detectors.training import calibrate as calibrated

        detector = calibrated(detector, detector.predict_with_scores(X_val)[1], y_val, seed)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    labels, scores = detector.predict_with_scores(to_test())
    pred = np.asarray(labels, dtype=object)
    t_pred = time.perf_counter() - t0
    gold = test["label"].to_numpy(object)
    confidence = {"available": False}
    if scores is not None:
        from aicd.scoring.confidence import confidence_metrics

        table = pd.DataFrame({"gold": gold, "pred": pred, **{f"score_{c}": np.asarray(scores)[:, j]
                                                             for j, c in enumerate(detector.classes_)}})
        confidence = confidence_metrics(table, labels=sorted(set(gold)))
    f1, lo, hi = bootstrap_macro_f1(gold, pred, seed=seed)
    per_subset = {}
    for subset, idx in test.groupby("subset").indices.items():
        per_subset[subset] = bootstrap_macro_f1(gold[idx], pred[idx], seed=seed)
    return {"macro_f1": f1, "ci": [lo, hi], "per_subset": per_subset, "n_test": len(test),
            "fit_rows_per_s": len(train) / t_fit if t_fit else None,
            "predict_rows_per_s": len(test) / t_pred if t_pred else None,
            "predicted_machine_share": float((pred == "machine").mean()),
            "ece": confidence.get("ece"), "macro_f1_at_coverage": confidence.get("macro_f1_at_coverage")}


def summary(results: dict) -> pd.DataFrame:
    rows = []
    for det, by_split in results.items():
        lolo = [v["macro_f1"] for s, v in by_split.items() if s.startswith("lolo:")]
        lofo = [v["macro_f1"] for s, v in by_split.items() if s.startswith("lofo:")]
        row = {"detector": det}
        for key in ("in_distribution", "codeaid"):
            if key in by_split:
                row[key] = by_split[key]["macro_f1"]
        if "pinned_human" in by_split:  # one class: the share labelled human
            row["pinned human: labelled human"] = 1 - by_split["pinned_human"]["predicted_machine_share"]
        if lolo:
            row.update({"LOLO mean": np.mean(lolo), "LOLO min": np.min(lolo)})
        if lofo:
            row.update({"LOFO mean": np.mean(lofo), "LOFO min": np.min(lofo)})
        fit = [v["fit_rows_per_s"] for v in by_split.values() if v["fit_rows_per_s"]]
        prd = [v["predict_rows_per_s"] for v in by_split.values() if v["predict_rows_per_s"]]
        row["fit rows/s"] = np.median(fit) if fit else np.nan
        row["predict rows/s"] = np.median(prd) if prd else np.nan
        ece = [v["ece"] for s, v in by_split.items()
               if s not in ("in_distribution", "pinned_human") and v.get("ece") is not None]
        row["ECE worst OOD split"] = max(ece) if ece else np.nan
        rows.append(row)
    df = pd.DataFrame(rows).set_index("detector")
    score_cols = [c for c in df.columns if "rows/s" not in c and not c.startswith("ECE")]
    df[score_cols] = df[score_cols] * 100
    return df


def ood_order(split: str) -> tuple[int, str]:
    for i, prefix in enumerate(("in_distribution", "codeaid", "lolo:", "lofo:")):
        if split.startswith(prefix):
            return i, split
    return 9, split


def _cell(v: dict) -> str:
    return f"{100 * v['macro_f1']:.1f} [{100 * v['ci'][0]:.1f}, {100 * v['ci'][1]:.1f}]"


def markdown(results: dict, splits: list[str]) -> str:
    out = ["### Summary (macro-F1 x 100; LOLO/LOFO: mean and worst held-out group; rows/s: median over splits, 1 core)", ""]
    df = summary(results)
    rates = [c for c in df.columns if "rows/s" in c]
    cells = df.copy().astype(object)
    for column in df.columns:  # formatted here: tabulate would read "0.045" as a number and round it
        digits = 0 if column in rates else 3 if column.startswith("ECE") else 1
        cells[column] = df[column].map(lambda v, d=digits: "–" if pd.isna(v) else f"{v:.{d}f}")
    out.append(cells.to_markdown(disable_numparse=True, colalign=["left"] + ["right"] * len(df.columns)))
    out += ["", "### Every split (macro-F1 x 100 [bootstrap 95% interval over test rows, 1,000 resamples])", ""]
    header = "| detector | " + " | ".join(splits) + " |"
    out += [header, "|" + "---|" * (len(splits) + 1)]
    for det, by_split in results.items():
        out.append(f"| {det} | " + " | ".join(_cell(by_split[s]) if s in by_split else "" for s in splits) + " |")
    if any("codeaid" in r for r in results.values()):
        langs = sorted({lang for r in results.values() for lang in r.get("codeaid", {}).get("per_subset", {})})
        out += ["", "### CodeAid per language (macro-F1 x 100 [95% interval])", ""]
        out += ["| detector | " + " | ".join(langs) + " |", "|" + "---|" * (len(langs) + 1)]
        for det, r in results.items():
            if "codeaid" in r:
                ps = r["codeaid"]["per_subset"]
                out.append(f"| {det} | " + " | ".join(
                    f"{100 * ps[lang][0]:.1f} [{100 * ps[lang][1]:.1f}, {100 * ps[lang][2]:.1f}]" if lang in ps else ""
                    for lang in langs) + " |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trial", default=str(TRIAL))
    ap.add_argument("--codeaid", default=str(CODEAID))
    ap.add_argument("--detectors", default=",".join(DEFAULT_DETECTORS), help=f"any of {', '.join(DETECTORS)}")
    ap.add_argument("--splits", default="", help="split names (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pinned-human", action="store_true",
                    help="add the split pinned_human: the demo's gathered library code, all human, nine languages "
                         "(needs the pinned inputs: python -m aicd.sources pinned fetch)")
    ap.add_argument("--calibrate", action="store_true",
                    help="recalibrate every detector's scores on the validation rows (training.calibrate)")
    ap.add_argument("--out", help="write the markdown tables here")
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--tables", help=f"also write <stem>.md/.tex through aicd.report.ood (e.g. {SHOWN.tables_dir()}/ood)")
    args = ap.parse_args(argv)

    trial = ood.trial_samples(pd.read_parquet(args.trial))
    codeaid = ood.codeaid_samples(pd.read_parquet(args.codeaid)) if Path(args.codeaid).is_file() else None
    splits = ood.all_splits(trial, codeaid, seed=args.seed)
    if args.pinned_human:
        splits["pinned_human"] = pinned_human_split(trial, args.seed)
    if args.splits:
        splits = {k: v for k, v in splits.items() if k in args.splits.split(",")}
    memoise_views()
    ast_cache = AstCache()
    # With --json pointing at an earlier run, its detectors are kept (and replaced when rerun),
    # so baselines and ablations can run in separate, shorter calls.
    results: dict[str, dict] = json.loads(Path(args.json).read_text()) if args.json and Path(args.json).is_file() else {}
    for det in filter(None, args.detectors.split(",")):
        results[det] = dict(results.get(det, {}))
        for split, tables in splits.items():
            r = run_one(det, tables, args.seed, ast_cache, args.calibrate)
            results[det][split] = r
            if args.json:  # after every split: a killed run keeps what it measured
                Path(args.json).write_text(json.dumps(results, indent=1))
            print(f"{det:26s} {split:18s} {_cell(r):24s} fit {r['fit_rows_per_s']:8.0f} rows/s  "
                  f"predict {r['predict_rows_per_s']:8.0f} rows/s  machine share {r['predicted_machine_share']:.2f}",
                  flush=True)
    split_names = sorted({s for r in results.values() for s in r}, key=lambda s: list(ood_order(s)))
    text = markdown(results, split_names)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.tables:
        from aicd.report.ood import records_from_results, write_tables
        write_tables(records_from_results(results), f"{args.tables}.md", f"{args.tables}.tex")


if __name__ == "__main__":
    main()
