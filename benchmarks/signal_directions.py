"""Does a feature say the same thing in every language? Per feature of a feature set, the
AUROC of machine against human rows within each trial language (Python, Java, C++); a feature
*agrees* where it leans the same way (AUROC above 0.5 + margin, or below 0.5 - margin) in all
three, *disagrees* where it leans one way in one language and the other way in another.
Then language transfer: a detector fitted on the rows of one language and asked about each
other language (AUROC and macro-F1), all six ordered pairs.

Feature sets: `structure` (aicd.features.structure: layout-, comment- and name-blind) and
`stylometry` (aicd.features.stylometry, what `robust` reads: layout included).

  python benchmarks/signal_directions.py [--margin 0.05] [--detectors robust,structure_lr,canon_bound_lr]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from aicd.splits import ood  # noqa: E402
from perturbation_flips import fitted  # noqa: E402
from robust_ood import TRIAL, AstCache, bootstrap_macro_f1  # noqa: E402

LANGUAGES = ("Python", "Java", "C++")


def feature_matrix(name: str, table: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    if name == "structure":
        from aicd.features.structure import FEATURE_NAMES, StructureFeaturizer

        featurizer = StructureFeaturizer()
        featurizer.threads = 2
        return featurizer.transform(table), list(FEATURE_NAMES)
    from aicd.features.stylometry import FEATURE_NAMES, stylometry_matrix

    return stylometry_matrix(table["code"].tolist(), 2), list(FEATURE_NAMES)


def directions(X: np.ndarray, names: list[str], table: pd.DataFrame, margin: float) -> tuple[pd.DataFrame, dict]:
    from sklearn.metrics import roc_auc_score

    y = (table["label"] == "machine").to_numpy()
    rows = []
    for j, name in enumerate(names):
        aucs = {}
        for lang in LANGUAGES:
            mask = (table["language"] == lang).to_numpy() & np.isfinite(X[:, j])
            values = X[mask, j]
            ok = mask.sum() > 10 and len(set(y[mask])) == 2 and np.ptp(values) > 0
            aucs[lang] = roc_auc_score(y[mask], values) if ok else np.nan
        leans = {lang: 0 if np.isnan(a) or abs(a - 0.5) < margin else int(np.sign(a - 0.5)) for lang, a in aucs.items()}
        signs = set(leans.values()) - {0}
        verdict = ("disagrees" if signs == {1, -1} else "agrees" if all(v != 0 for v in leans.values()) and len(signs) == 1
                   else "weak somewhere")
        rows.append({"feature": name, **{f"AUROC {k}": v for k, v in aucs.items()}, "verdict": verdict})
    df = pd.DataFrame(rows)
    return df, df["verdict"].value_counts().to_dict()


def transfer(detectors, trial: pd.DataFrame, seed: int) -> pd.DataFrame:
    from sklearn.metrics import roc_auc_score

    rows = []
    for name in detectors:
        for a in LANGUAGES:
            inner = {"train": trial[trial["language"] == a].reset_index(drop=True),
                     "validation": trial.iloc[:0]}
            predict = fitted(name, inner, seed, AstCache(), scores=True)
            for b in LANGUAGES:
                if a == b:
                    continue
                asked = trial[trial["language"] == b].reset_index(drop=True)
                labels, p_machine = predict(asked)
                gold = asked["label"].to_numpy(object)
                rows.append({"detector": name, "fitted on": a, "asked": b,
                             "AUROC": roc_auc_score(gold == "machine", p_machine),
                             "macro-F1": bootstrap_macro_f1(gold, labels, seed=seed)[0],
                             "predicted machine share": float((labels == "machine").mean())})
    return pd.DataFrame(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trial", default=str(TRIAL))
    ap.add_argument("--margin", type=float, default=0.05, help="how far from 0.5 an AUROC must be to lean")
    ap.add_argument("--feature-sets", default="structure,stylometry")
    ap.add_argument("--detectors", default="robust,structure_lr,canon_bound_lr")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the markdown here")
    args = ap.parse_args(argv)
    trial = ood.trial_samples(pd.read_parquet(args.trial))
    out = []
    for name in filter(None, args.feature_sets.split(",")):
        X, names = feature_matrix(name, trial)
        df, counts = directions(X, names, trial, args.margin)
        out += [f"### {name}: {len(names)} features; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), "",
                df.sort_values("verdict").to_markdown(index=False, floatfmt=".2f"), ""]
    detectors = [d for d in args.detectors.split(",") if d]
    if detectors:
        out += ["### Language transfer (fitted on one trial language, asked about another)", "",
                transfer(detectors, trial, args.seed).to_markdown(index=False, floatfmt=".3f"), ""]
    text = "\n".join(out)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
