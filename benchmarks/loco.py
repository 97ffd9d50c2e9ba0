"""Leave one collection out, outside the workflow: the collections of config/loco.yaml (built by
the sources stage's own code), the same folds (aicd.splits.loco), the same detectors (the config's
`detectors:` and `features:` entries, built by the workflow's constructors), the same metrics and
table (aicd.scoring.loco, aicd.report.loco); every detector fitted in this process, each fold's
feature sets fitted once and shared by the detectors that read them, the per-text views memoised
and the LM statistics cached per text (results/cache/benchmarks/lm_stats, SQLite).

What the workflow does not run is the fused detector's candidate variants, every one tried
(benchmarks/loco_candidates.yaml, in the config's entry shape), and `--select`, their selection
rule (benchmarks/notes/deployable.md): inside each outer fold, every candidate is measured by
leave-one-collection-out over that fold's *training* collections alone, the best by mean then
worst AUROC is picked, and its numbers on the held-out collection make the row "fused
(selected)". The held-out collection chooses nothing.

The default reference (the table's last section): per fold, the training collections' validation
humans (scored by the fold's detector) and the gathered library code (`--library`, default
local_code as config/loco_local.yaml gathers it: nine languages from pinned packages), which no
collection holds here, set per-language thresholds by the calibrate job's rule
(aicd.scoring.calibrate_model, the config's `calibration:` settings); every human row of the
held-out collection measures them. A library source that is itself a collection's (with
config/loco_local.yaml) is left out of the reference, said so.

  python benchmarks/loco.py [--config config/loco.yaml [config/loco_local.yaml]] [--detectors a,b]
                            [--select c1,c2,...] [--candidates benchmarks/loco_candidates.yaml]
                            [--max-rows 600] [--library local_code|none] [--out loco.md] [--json loco.json]

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

from aicd.data.scores import declared, stored  # noqa: E402
from aicd.detectors.fitting import predict_in_blocks, validation_scores  # noqa: E402
from aicd.outputs import Outputs  # noqa: E402
from aicd.report.loco import detector_records, markdown  # noqa: E402
from aicd.splits import loco  # noqa: E402

LM_CACHE = Path(Outputs(REPO / "results").benchmark_cache("lm_stats"))
CANDIDATES = Path(__file__).resolve().parent / "loco_candidates.yaml"


def detectors_of(config: dict, candidates: str | Path | None = CANDIDATES) -> tuple[dict, dict, dict]:
    """(baselines, candidates, feature sets): the config's detectors, as it has them; the fused
    candidates of `candidates` (benchmarks/loco_candidates.yaml: what the workflow runs none of,
    in the config's entry shape); every feature set either names, the config's and the file's.
    The candidates are validated with the config (their kinds, params and feature sets: the
    schema's defaults filled in), and none may take a config name."""
    import copy

    from aicd.config import validate_config

    extra = yaml.safe_load(Path(candidates).read_text()) if candidates else {}
    features, detectors = extra.get("features") or {}, extra.get("detectors") or {}
    taken = sorted((set(features) & set(config["features"])) | (set(detectors) & set(config["detectors"])))
    if taken:
        raise SystemExit(f"{candidates}: {', '.join(taken)} already name the config's entries: give the candidates "
                         "names of their own")
    both = copy.deepcopy(config)
    both["features"].update(copy.deepcopy(features))
    both["detectors"].update({n: {"title": n, **copy.deepcopy(e)} for n, e in detectors.items()})
    validate_config(both)
    return (dict(config["detectors"]), {n: {k: v for k, v in both["detectors"][n].items() if k != "title"}
                                        for n in detectors}, both["features"])


def feature_parts(featureset: str | None, features: dict) -> list[dict]:
    """The feature set's parts as {kind, params} entries ([] for a detector that reads the code):
    a concat set's parts, in order, else the set itself."""
    if featureset is None:
        return []
    spec = features[featureset]
    specs = [features[p] for p in spec["parts"]] if spec["kind"] == "concat" else [spec]
    return [{"kind": s["kind"], "params": dict(s.get("params") or {})} for s in specs]


def definition(name: str) -> dict:
    """What the detector `name` is: its kind, params and feature parts (a fold's fit is keyed by
    it, not by the name)."""
    entry = DETECTORS[name]
    return {"kind": entry["kind"], "params": dict(entry.get("params") or {}),
            "features": feature_parts(entry.get("features"), FEATURES)}


BASELINES: dict = {}   # config/loco.yaml's detectors (set by main: detectors_of)
FUSED: dict = {}       # benchmarks/loco_candidates.yaml's
FEATURES: dict = {}    # every feature set they name
DETECTORS: dict = {}   # both


def use_detectors(config: dict, candidates: str | Path | None = CANDIDATES) -> None:
    """Set BASELINES, FUSED, FEATURES and DETECTORS from the config and the candidates file."""
    baselines, fused, features = detectors_of(config, candidates)
    for table, value in ((BASELINES, baselines), (FUSED, fused), (FEATURES, features),
                         (DETECTORS, {**baselines, **fused})):
        table.clear()
        table.update(value)


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
    source = (config.get("sources") or {}).get(name) or local_sources(config).get(name)
    if source is None or "gather" not in source:
        raise SystemExit(f"--library {name}: no gathered source of that name in the config or config/loco_local.yaml")
    rows = build_source(name, source, seed)[0]
    rows = rows[rows["label"] == "human"].drop_duplicates("id").sort_values("id").reset_index(drop=True)
    print(f"library reference {name}: {len(rows)} human rows {rows['language'].value_counts().to_dict()}", flush=True)
    return rows.assign(target="human")


def local_sources(config: dict) -> dict:
    """The sources of config/loco_local.yaml (where the gathered library code is), validated as
    a layer on the config (the file alone is no complete config)."""
    import copy

    from aicd.config import validate_config
    from snakemake.utils import update_config

    layered = copy.deepcopy(config)
    update_config(layered, yaml.safe_load((REPO / "config" / "loco_local.yaml").read_text()))
    validate_config(layered)
    return layered["sources"]


def memoise_views() -> None:
    """Per-text views computed once for every fold and detector (benchmarks/robust_ood.py's)."""
    from robust_ood import memoise_views as memoise

    memoise()


class Features:
    """Each fold's feature sets, each part (a {kind, params} entry) fitted on the fold's train rows
    once (aicd.features.registry.build) and shared by the sets and detectors that read it."""

    def __init__(self, seed: int):
        self.seed, self.made = seed, {}

    def get(self, fold: str, parts: list[dict], tables: dict) -> tuple[dict, list]:
        """({split: the parts' matrices side by side, float32}, feature names): a concat set's
        columns, as aicd.features.registry.ConcatFeaturizer has them."""
        made = [self._part(fold, part, tables) for part in parts]
        return ({s: np.hstack([m[s] for m, _ in made]).astype(np.float32) for s in tables},
                [n for _, names in made for n in names])

    def _part(self, fold: str, part: dict, tables: dict) -> tuple[dict, list]:
        from aicd.features.registry import build as build_features

        key = (fold, json.dumps(part, sort_keys=True))
        if key not in self.made:
            featurizer = build_features(part["kind"], part["params"], self.seed)
            if hasattr(featurizer, "cache_dir"):
                featurizer.cache_dir = str(LM_CACHE)
            X = {"train": featurizer.fit_transform(tables["train"])}
            for split in [s for s in tables if s != "train"]:  # validation, test, the library reference
                X[split] = featurizer.transform(tables[split])
            self.made[key] = X, list(featurizer.feature_names)
        return self.made[key]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def fit_fold(name: str, fold: str, tables: dict, features: Features, seed: int) -> tuple[pd.DataFrame, ...]:
    """(test predictions: id, gold, score_human; validation scores: id, gold, machine_score,
    threshold_score; the library reference's threshold scores: id, threshold_score, empty
    without one) of one detector, built from its entry as the detect job builds it."""
    from aicd.data.scores import THRESHOLD_SCORE, declare, threshold_score
    from aicd.detectors.fitting import detector_inputs, new_detector, table_code, targets

    entry = DETECTORS[name]
    detector = new_detector(entry, seed, 1, None, None, None)
    if detector.inputs == "features":
        X, detector.feature_names = features.get(fold, feature_parts(entry.get("features"), FEATURES), tables)
    else:  # the code, or nothing
        X = detector_inputs(detector, entry, tables, None, None, table_code(tables))
    y = {s: detector.label_of(targets(t, s)) for s, t in tables.items()}
    detector.fit(X["train"], y["train"], X["validation"], y["validation"])
    # at the precision a predictions file keeps (the validation scores are read at it too): a
    # threshold set on float32 validation scores is then applied to float32 test scores, as in the workflow
    predictions = declare(scored(detector, X["test"], tables["test"]["id"]).assign(gold=y["test"]), detector.score_kind)
    library = pd.DataFrame({"id": pd.Series(dtype=str), THRESHOLD_SCORE: pd.Series(dtype=float)})
    if "library" in tables:
        rows = scored(detector, X["library"], tables["library"]["id"])
        library = pd.DataFrame({"id": rows["id"], THRESHOLD_SCORE: threshold_score(rows, detector.score_kind)})
    return (predictions, validation_scores(detector, X["validation"], y["validation"], tables["validation"], seed),
            library)


def scored(detector, X, ids: pd.Series) -> pd.DataFrame:
    """id and score_<class> of each row, as a predictions file keeps them (float32)."""
    _, scores = predict_in_blocks(detector, X)
    classes = [str(c) for c in detector.classes_]
    return pd.DataFrame({"id": ids.astype(str).to_numpy(),
                         **{f"score_{c}": stored(np.asarray(scores)[:, j]) for j, c in enumerate(classes)}})


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
              library: pd.DataFrame | None = None, views: dict | None = None, calibration: dict | None = None
              ) -> dict:
    """{held-out collection: (predictions, validation scores)} over the given folds; each fold's
    fit kept on disk (RUNS), keyed by the detector's definition, the fold's rows, the seed and the
    code, so a later call with more candidates refits nothing it has. With `views`, each fold's
    calibrated view on the default reference goes into it (default_reference_view, with the
    config's `calibration` settings)."""
    import hashlib

    out = {}
    for held in folds:
        tables, _ = loco.leave_one_collection_out(collections, held, seed)
        if library is not None:
            tables["library"] = library
        key = hashlib.sha256(json.dumps([definition(name), prefix + held, seed, CODE,
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
        if views is not None:
            views[held] = default_reference_view(tables, *got, calibration or {}, seed)
    return out


def default_reference_view(tables: dict, predictions: pd.DataFrame, validation: pd.DataFrame, library: pd.DataFrame,
                           settings: dict, seed: int) -> dict:
    """The calibrate job's test view of one fold (aicd.scoring.calibrate_model, with the config's
    calibration settings, as the workflow's loco table reads it): thresholds set on the fold's
    default reference (aicd.splits.loco.default_reference_rows: its validation humans and the
    library rows, scored by the fold's detector as its validation scores and fit_fold have them)."""
    from aicd.data.families import HUMAN
    from aicd.data.scores import THRESHOLD_SCORE
    from aicd.scoring.calibrate_model import VIEW_FPR, calibration_of, test_view
    from aicd.scoring.calibration import FPRS, HELD_OUT

    rows, _ = loco.default_reference_rows(tables, tables.get("library"))
    humans = validation[validation["gold"].astype(str) == HUMAN]
    known = dict(zip(humans["id"].astype(str), humans[THRESHOLD_SCORE].astype(float)))
    known.update(zip(library["id"].astype(str), library[THRESHOLD_SCORE].astype(float)))
    scores = rows["id"].astype(str).map(known).to_numpy(dtype=float)
    if np.isnan(scores).any():
        raise RuntimeError(f"{int(np.isnan(scores).sum())} default-reference rows have no score from the fold's fit")
    where = "the fold's default reference: " + ", ".join(f"{k} {v}" for k, v in rows["origin"].value_counts().items())
    s = settings
    calibration = calibration_of(scores, rows, where, {"file": None, "sha256": None}, declared(predictions),
                                 tuple(s.get("fprs", FPRS)), float(s.get("held_out", HELD_OUT)), seed,
                                 int(s.get("floor", 0)), s.get("fpr_confidence"))
    view = test_view(calibration, predictions, tables["test"], float(s.get("view_fpr", VIEW_FPR)), seed, adapted=False)
    return {"reference": calibration.reference, **view}


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
    ap.add_argument("--detectors", help="comma-separated (default: the config's detectors); any of the config's "
                    "detectors and the candidates")
    ap.add_argument("--select", default="", help="fused candidates for the nested selection (comma-separated)")
    ap.add_argument("--candidates", default=str(CANDIDATES),
                    help="the candidate variants beside the config's detectors (a YAML of features: and detectors:)")
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
    use_detectors(config, args.candidates)
    names = list(BASELINES) if args.detectors is None else [d for d in args.detectors.split(",") if d]
    candidates = [d for d in args.select.split(",") if d]
    unknown = [d for d in names + candidates if d not in DETECTORS]
    if unknown:
        raise SystemExit(f"no detector {', '.join(unknown)}: the config's are {', '.join(BASELINES)}; the "
                         f"candidates {', '.join(FUSED)}")
    seed = config.get("seed", 0) if args.seed is None else args.seed
    fpr = config["calibration"]["view_fpr"]  # the target FPR of the calibrated views, as the workflow's table
    collections = collections_of(config, seed, args.max_rows)
    library = library_reference(config, args.library, seed)
    memoise_views()
    features, runs, records, cost, views = Features(seed), {}, {}, {}, {}
    for name in dict.fromkeys(names + candidates):
        started, cpu = time.perf_counter(), cpu_seconds()
        views[name] = {}
        runs[name] = run_folds(name, collections, list(collections), features, seed, library=library,
                               views=views[name], calibration=config["calibration"])
        cost[name] = {"wall_s": time.perf_counter() - started, "cpu_s": cpu_seconds() - cpu}
        records[name] = detector_records(name, runs[name], seed, fpr, views=views[name])
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
        picked = {held: views[c["picked"]][held] for held, c in chosen.items()}
        records["fused (selected)"] = detector_records("fused (selected)", selected, seed, fpr, views=picked)
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
