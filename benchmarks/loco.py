"""Leave one collection out, outside the workflow: the collections of config/loco.yaml (built by
the sources stage's own code), the same folds (aicd.splits.loco), the same metrics and table
(aicd.scoring.loco, aicd.report.loco); every detector fitted in this process, each fold's feature
sets fitted once and shared by the detectors that read them, the per-text views memoised and the
LM statistics cached per text (results/cache/benchmarks/lm_stats, SQLite).

`--select` runs the fused detector's selection rule (benchmarks/notes/deployable.md): inside each
outer fold, every candidate is measured by leave-one-collection-out over that fold's *training*
collections alone, the best by mean then worst AUROC is picked, and its numbers on the held-out
collection make the row "fused (selected)". The held-out collection chooses nothing.

The default reference (the table's last section): per fold, the training collections' validation
humans (scored by the fold's detector) and the gathered library code (`--library`, default
local_code as config/loco_local.yaml gathers it: nine languages from pinned packages), which no
collection holds here, set per-language thresholds at 5% (aicd detect's rule); every human row of
the held-out collection measures them. A library source that is itself a collection's (with
config/loco_local.yaml) is left out of the reference, said so.

  python benchmarks/loco.py [--config config/loco.yaml [config/loco_local.yaml]] [--detectors a,b]
                            [--select c1,c2,...] [--max-rows 600] [--library local_code|none]
                            [--out loco.md] [--json loco.json]

Single-threaded BLAS/OpenMP (set before numpy loads): CPU seconds are per core."""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "benchmarks"))

from aicd.data.scores import stored  # noqa: E402
from aicd.detectors import build  # noqa: E402
from aicd.detectors.fitting import predict_in_blocks, validation_scores  # noqa: E402
from aicd.outputs import Outputs  # noqa: E402
from aicd.report.loco import detector_records, markdown  # noqa: E402
from aicd.splits import loco  # noqa: E402

LM_PARAMS = {"model": "package:smollm2-135m-instruct", "window": 128, "batch_size": 8, "dtype": "auto"}
LM_CACHE = Path(Outputs(REPO / "results").benchmark_cache("lm_stats"))
TFIDF = ("tfidf", {"max_features": 5000, "ngram_max": 3, "svd_components": 500})
AST = ("ast", {})
LM = ("lm_stats", LM_PARAMS)
LMC = ("lm_criteria", LM_PARAMS)  # the five criteria, standardised per language on human training rows
LMC_RAW = ("lm_criteria", {**LM_PARAMS, "standardise": "none"})
LOGLIK_Z = ("lm_criteria", {**LM_PARAMS, "criteria": ["loglik"]})
LMC_CODE = ("lm_criteria", {**LM_PARAMS, "text": "no_comments"})  # the LM reads the code without its comments
STYLE_Z = ("stylometry", {"standardise": "language"})
DELEX = ("canon_tfidf", {"identifiers": "anonymous", "literals": "class", "max_features": 5000, "ngram_max": 3,
                         "svd_components": 500})
CB = {"iterations": 200, "depth": 6, "border_count": 32}  # as config/demo.yaml

# name -> (feature parts, detector kind, params); parts "text": the code strings
BASELINES = {
    "cb_tfidf": ((TFIDF,), "catboost", CB), "cb_ast": ((AST,), "catboost", CB),
    "cb_ast_tfidf": ((AST, TFIDF), "catboost", CB),
    "svm_tfidf": ((TFIDF,), "linear_svm", {}), "svm_ast": ((AST,), "linear_svm", {}),
    "svm_ast_tfidf": ((AST, TFIDF), "linear_svm", {}),
    "lr_tfidf": ((TFIDF,), "logistic_regression", {}), "lr_ast": ((AST,), "logistic_regression", {}),
    "lr_ast_tfidf": ((AST, TFIDF), "logistic_regression", {}),
    "robust": ("text", "robust", {}),
    **{f"zs_{c}": ((LM,), "zero_shot_lm", {"criterion": c}) for c in ("loglik", "logrank", "entropy", "lrr",
                                                                       "fast_detectgpt")},
}
FUSED = {
    "fused_loglik_z": ((LOGLIK_Z,), "fused", {"model": "average"}),
    "fused_lm": ((LMC,), "fused", {"model": "average"}),
    "fused_lm_raw": ((LMC_RAW,), "fused", {"model": "average"}),
    **{f"fused_lm_style_avg{int(100 * w)}": ((LMC, STYLE_Z), "fused", {"model": "average", "lm_weight": w})
       for w in (0.5, 0.7)},
    **{f"fused_lm_delex_avg{int(100 * w)}": ((LMC, DELEX), "fused", {"model": "average", "lm_weight": w})
       for w in (0.5, 0.7)},
    **{f"fused_all_avg{int(100 * w)}": ((LMC, STYLE_Z, DELEX), "fused", {"model": "average", "lm_weight": w})
       for w in (0.5, 0.7)},
    "fused_lm_code": ((LMC_CODE,), "fused", {"model": "average"}),
    "fused_lm_code_style_avg50": ((LMC_CODE, STYLE_Z), "fused", {"model": "average", "lm_weight": 0.5}),
    # added after the first run's outer figures were read (benchmarks/notes/deployable.md, run 2)
    "fused_lm_tfidf_avg50": ((LMC, TFIDF), "fused", {"model": "average", "lm_weight": 0.5}),
    "fused_all_tfidf_avg50": ((LMC, STYLE_Z, DELEX, TFIDF), "fused", {"model": "average", "lm_weight": 0.5}),
    "fused_all_code_avg50": ((LMC_CODE, STYLE_Z, DELEX), "fused", {"model": "average", "lm_weight": 0.5}),
    "fused_all_avg30": ((LMC, STYLE_Z, DELEX), "fused", {"model": "average", "lm_weight": 0.3}),
    "fused_all_avg50_c1": ((LMC, STYLE_Z, DELEX), "fused", {"model": "average", "lm_weight": 0.5, "C": 1.0}),
    "fused_all_avg50_c001": ((LMC, STYLE_Z, DELEX), "fused", {"model": "average", "lm_weight": 0.5, "C": 0.01}),
    "fused_lm_style_constrained": ((LMC, STYLE_Z), "fused", {"model": "constrained"}),
    "fused_all_constrained": ((LMC, STYLE_Z, DELEX), "fused", {"model": "constrained"}),
}
DETECTORS = {**BASELINES, **FUSED}


def merged_config(paths: list[str]) -> dict:
    """The config files merged as snakemake merges them (later files win, mappings recursively)
    and validated as the workflow validates a config: its defaults filled in, a wrong key refused."""
    from aicd.config import validate_config
    from snakemake.utils import update_config

    config: dict = {}
    for path in paths:
        update_config(config, yaml.safe_load(Path(path).read_text()))
    validate_config(config)
    return config


def collections_of(config: dict, seed: int, max_rows: int | None) -> dict[str, pd.DataFrame]:
    """Every collection of the config's first fold, built from its sources as the workflow builds them."""
    from aicd.sources.build import build_source

    spec = next(iter(config["tasks"].values()))["ood"]
    max_rows = spec.get("max_rows") if max_rows is None else (max_rows or None)
    built: dict[str, pd.DataFrame] = {}
    out = {}
    for name, sources in spec["collections"].items():
        for s in sources:
            if s not in built:
                built[s] = build_source(s, config["sources"][s], seed)[0]
        out[name], dropped = loco.collection_rows(name, [built[s] for s in sources], seed, max_rows)
        print(f"collection {name}: {len(out[name])} rows {out[name]['label'].value_counts().to_dict()}"
              + (f"; left out {dropped}" if dropped else ""), flush=True)
    return out


def library_reference(config: dict, name: str, seed: int) -> pd.DataFrame | None:
    """The gathered library code's human rows (id, code, language, ...), built as the sources stage
    builds the source; None where `name` is "none" or a collection's source (its files would be
    training rows, and in its own fold the held-out collection's)."""
    from aicd.sources.build import build_source

    if name == "none":
        return None
    spec = next(iter(config["tasks"].values()))["ood"]
    if any(name in sources for sources in spec["collections"].values()):
        print(f"library reference: {name} is a collection's source here: left out of every fold's reference "
              "(the validation humans alone)", flush=True)
        return None
    source = (config.get("sources") or {}).get(name) or merged_config([str(REPO / "config" / "loco_local.yaml")])[
        "sources"].get(name)
    if source is None or "gather" not in source:
        raise SystemExit(f"--library {name}: no gathered source of that name in the config or config/loco_local.yaml")
    rows = build_source(name, source, seed)[0]
    rows = rows[rows["label"] == "human"].drop_duplicates("id").sort_values("id").reset_index(drop=True)
    print(f"library reference {name}: {len(rows)} human rows {rows['language'].value_counts().to_dict()}", flush=True)
    return rows.assign(target="human")


def memoise_views() -> None:
    """Per-text views computed once for every fold and detector (benchmarks/robust_ood.py's)."""
    from robust_ood import memoise_views as memoise

    memoise()


class Features:
    """Each fold's feature sets, fitted on its train rows once and shared by the detectors that
    read them."""

    def __init__(self, seed: int):
        self.seed, self.made = seed, {}

    def get(self, fold: str, parts, tables: dict) -> tuple[dict, list]:
        key = (fold, json.dumps(parts, sort_keys=True))
        if key not in self.made:
            self.made[key] = self._make(parts, tables)
        return self.made[key]

    def _make(self, parts, tables: dict) -> tuple[dict, list]:
        from aicd.features.registry import build as build_features

        X, names = {s: [] for s in tables}, []
        for kind, params in parts:
            featurizer = build_features(kind, params, self.seed)
            if hasattr(featurizer, "cache_dir"):
                featurizer.cache_dir = str(LM_CACHE)
            X["train"].append(featurizer.fit_transform(tables["train"]))
            for split in [s for s in tables if s != "train"]:  # validation, test, the library reference
                X[split].append(featurizer.transform(tables[split]))
            names += list(featurizer.feature_names)
        return {s: np.hstack(m).astype(np.float32) for s, m in X.items()}, names


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def fit_fold(name: str, fold: str, tables: dict, features: Features, seed: int) -> tuple[pd.DataFrame, ...]:
    """(test predictions: gold, score_human; validation scores: gold, machine_score; the library
    reference's machine scores: id, machine_score, empty without one) of one detector."""
    parts, kind, params = DETECTORS[name]
    detector = build(kind, params, seed=seed, threads=1)
    if parts == "text":
        X = {s: t["code"].to_numpy(dtype=object) for s, t in tables.items()}
    else:
        X, detector.feature_names = features.get(fold, parts, tables)
    y = {s: detector.label_of(t["target"].to_numpy(dtype=object)) for s, t in tables.items()}
    detector.fit(X["train"], y["train"], X["validation"], y["validation"])
    _, scores = predict_in_blocks(detector, X["test"])
    classes = [str(c) for c in detector.classes_]
    # at the precision a predictions file keeps (the validation scores are read at it too): a
    # threshold set on float32 validation scores is then applied to float32 test scores, as in the workflow
    predictions = pd.DataFrame({"gold": y["test"], "score_human": stored(np.asarray(scores)[:, classes.index("human")])})
    library = pd.DataFrame({"id": pd.Series(dtype=str), "machine_score": pd.Series(dtype=float)})
    if "library" in tables:
        _, lib = predict_in_blocks(detector, X["library"])
        library = pd.DataFrame({"id": tables["library"]["id"].to_numpy(),
                                "machine_score": 1.0 - stored(np.asarray(lib)[:, classes.index("human")])})
    return (predictions, validation_scores(detector, X["validation"], y["validation"], tables["validation"], seed),
            library)


RUNS = Path(Outputs(REPO / "results").benchmark_cache("loco_runs"))
CODE = ""  # code_digest(), set by main


def code_digest() -> str:
    """What a fold's fit depends on beside its rows: the package's code and this script."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((REPO / "workflow" / "aicd").rglob("*.py")) + [Path(__file__)]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def run_folds(name: str, collections: dict, folds: list[str], features: Features, seed: int, prefix: str = "",
              library: pd.DataFrame | None = None, references: dict | None = None) -> dict:
    """{held-out collection: (predictions, validation scores)} over the given folds; each fold's
    fit kept on disk (RUNS), keyed by the detector's entry, the fold's rows, the seed and the
    code, so a later call with more candidates refits nothing it has. With `library`, each
    fold's default reference goes into `references` (default_reference)."""
    import hashlib

    out = {}
    for held in folds:
        tables, _ = loco.leave_one_collection_out(collections, held, seed)
        if library is not None:
            tables["library"] = library
        key = hashlib.sha256(json.dumps([DETECTORS[name], prefix + held, seed, CODE,
                                         *[sorted(t["id"]) for t in tables.values()]]).encode()).hexdigest()[:24]
        paths = [RUNS / f"{key}.{part}.parquet" for part in ("predictions", "validation", "library")]
        if all(p.is_file() for p in paths):
            got = tuple(pd.read_parquet(p) for p in paths)
        else:
            got = fit_fold(name, prefix + held, tables, features, seed)
            RUNS.mkdir(parents=True, exist_ok=True)
            for frame, path in zip(got, paths):
                frame.to_parquet(path)
        out[held] = got[:2]
        if references is not None:
            references[held] = default_reference(tables, *got)
    return out


def default_reference(tables: dict, predictions: pd.DataFrame, validation: pd.DataFrame, library: pd.DataFrame
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(reference machine scores, their languages, the test rows' languages) of one fold: the
    rows of aicd.splits.loco.default_reference_rows, scored by the fold's detector (the validation
    humans as its validation scores have them, the library rows as fit_fold scored them)."""
    rows, _ = loco.default_reference_rows(tables, tables.get("library"))
    scored = dict(zip(validation["id"], validation["machine_score"]))
    scored.update(zip(library["id"], library["machine_score"]))
    scores = rows["id"].map(scored).to_numpy(dtype=float)
    if np.isnan(scores).any():
        raise RuntimeError(f"{int(np.isnan(scores).sum())} default-reference rows have no score from the fold's fit")
    return scores, rows["language"].to_numpy(dtype=object), tables["test"]["language"].astype(str).to_numpy(dtype=object)


def inner_auroc(name: str, collections: dict, held: str, features: Features, seed: int) -> dict:
    """AUROC of one candidate on each training collection of the fold `held`, left out in turn."""
    from aicd.data.metrics import auroc

    inner = {c: t for c, t in collections.items() if c != held}
    runs = run_folds(name, inner, list(inner), features, seed, prefix=f"{held}/")
    return {c: auroc(1.0 - p["score_human"].to_numpy(dtype=float), p["gold"].to_numpy(dtype=object) != "human")
            for c, (p, _) in runs.items()}


def pick(inner: dict[str, dict]) -> str:
    """The selection rule: the highest mean AUROC over the inner folds; within 0.01 of it, the
    highest worst AUROC; then the name (benchmarks/notes/deployable.md)."""
    stats = {c: (np.mean(list(a.values())), np.min(list(a.values()))) for c, a in inner.items()}
    best_mean = max(m for m, _ in stats.values())
    near = [c for c, (m, _) in stats.items() if m >= best_mean - 0.01]
    return sorted(near, key=lambda c: (-stats[c][1], c))[0]


def select(candidates: list[str], collections: dict, outer: dict, features: Features, seed: int) -> tuple[dict, dict]:
    """(the selected row's folds, what was chosen in each fold with the inner AUROCs)."""
    chosen, runs = {}, {}
    for held in collections:
        inner = {c: inner_auroc(c, collections, held, features, seed) for c in candidates}
        best = pick(inner)
        chosen[held] = {"picked": best, "inner_auroc": inner}
        runs[held] = outer[best][held]
        print(f"fold {held}: picked {best} (inner mean AUROC "
              + ", ".join(f"{c} {100 * np.mean(list(a.values())):.1f}/{100 * min(a.values()):.1f}"
                          for c, a in inner.items()) + ")", flush=True)
    return runs, chosen


def rank_average(runs: dict, names: list[str]) -> dict:
    """The issue's reference construct: per fold, the average of each detector's score ranks
    within the held-out collection (and within the validation rows), nothing fitted. Ranks read
    the held-out collection's own score distribution (no label): transductive, so it is a
    reference row, never a candidate."""
    from scipy.stats import rankdata

    out = {}
    for held in runs[names[0]]:
        preds = [runs[n][held][0] for n in names]
        vals = [runs[n][held][1] for n in names]
        test = np.mean([rankdata(1.0 - p["score_human"].to_numpy(dtype=float)) / len(p) for p in preds], axis=0)
        ids = set.intersection(*[set(v["id"]) for v in vals])
        vals = [v[v["id"].isin(ids)].sort_values("id") for v in vals]
        val = np.mean([rankdata(v["machine_score"].to_numpy(dtype=float)) / len(v) for v in vals], axis=0)
        out[held] = (pd.DataFrame({"gold": preds[0]["gold"].to_numpy(), "score_human": 1.0 - test}),
                     pd.DataFrame({"id": vals[0]["id"].to_numpy(), "gold": vals[0]["gold"].to_numpy(),
                                   "machine_score": val}))
    return out


def main(argv=None):
    global CODE
    CODE = code_digest()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", nargs="+", default=[str(REPO / "config" / "loco.yaml")])
    ap.add_argument("--detectors", default=",".join(BASELINES), help=f"any of {', '.join(DETECTORS)}")
    ap.add_argument("--select", default="", help="fused candidates for the nested selection (comma-separated)")
    ap.add_argument("--rank-average", default="zs_loglik+lr_tfidf",
                    help="reference rows: ranks averaged within each held-out collection, e.g. a+b;c+d")
    ap.add_argument("--max-rows", type=int, help="rows per collection (default: the config's; 0: every row)")
    ap.add_argument("--library", default="local_code",
                    help="the gathered library source of the default reference (none: validation humans alone)")
    ap.add_argument("--seed", type=int, help="default: the config's")
    ap.add_argument("--out", help="write the markdown here")
    ap.add_argument("--json", help="write every record here")
    args = ap.parse_args(argv)
    config = merged_config(args.config)
    seed = config.get("seed", 0) if args.seed is None else args.seed
    fpr = config["calibration"]["view_fpr"]  # the target FPR of the calibrated views, as the workflow's table
    collections = collections_of(config, seed, args.max_rows)
    library = library_reference(config, args.library, seed)
    memoise_views()
    features, runs, records, cost, references = Features(seed), {}, {}, {}, {}
    names = [d for d in args.detectors.split(",") if d]
    candidates = [d for d in args.select.split(",") if d]
    for name in dict.fromkeys(names + candidates):
        started, cpu = time.perf_counter(), cpu_seconds()
        references[name] = {}
        runs[name] = run_folds(name, collections, list(collections), features, seed, library=library,
                               references=references[name])
        cost[name] = {"wall_s": time.perf_counter() - started, "cpu_s": cpu_seconds() - cpu}
        records[name] = detector_records(name, runs[name], seed, fpr, references=references[name])
        s = records[name]["summary"]["auroc"]
        print(f"{name:30s} AUROC mean {100 * s['mean']:.1f} worst {100 * s['worst']:.1f}  "
              f"({cost[name]['cpu_s']:.0f} CPU-s)", flush=True)
    for pair in [p for p in args.rank_average.split(";") if p]:
        names_ = pair.split("+")
        if all(n in runs for n in names_):
            label = f"rank average {' + '.join(names_)} (transductive)"
            records[label] = detector_records(label, rank_average(runs, names_), seed, fpr)
    chosen = {}
    if candidates:
        selected, chosen = select(candidates, collections, runs, features, seed)
        picked = {held: references[c["picked"]][held] for held, c in chosen.items()}
        records["fused (selected)"] = detector_records("fused (selected)", selected, seed, fpr, references=picked)
    text = markdown(records, {}, fpr, reference=reference_words(args.library, library))
    if chosen:
        text += "\n### The fused detector's selection, per fold (inner LOCO over the training collections)\n\n"
        text += "\n".join(f"- {held}: {c['picked']}" for held, c in chosen.items()) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"records": records, "selection": chosen, "cost": cost,
                                               "config": args.config, "seed": seed}, indent=1, default=float))


def reference_words(name: str, library: pd.DataFrame | None) -> str:
    """What the default reference is, for the table's caption."""
    if library is None:
        return "the training collections' validation humans (no library code: --library " + name + ")"
    counts = ", ".join(f"{k} {v}" for k, v in sorted(library["language"].value_counts().items()))
    return (f"the training collections' validation humans and the gathered library code ({name}: {len(library)} "
            f"files of pinned packages, {counts}), thresholds set on a seeded half of it")


if __name__ == "__main__":
    main()
