"""The paper's analyses, per task:

(a) Appendix D.1: the TF-IDF SVM's coefficients back-projected through the SVD components to the
    n-gram vocabulary (the pipeline standardises the SVD features first, so the weight of n-gram
    j for a class is sum_k (w_k / sigma_k) * components[k, j]); top n-grams per class.
(b) SHAP: CatBoost's built-in SHAP values (get_feature_importance(type="ShapValues")) on the test
    split (a seeded sample of `--shap-rows`), mean |SHAP| per feature and class; top features per
    class as a table and a bar figure. For a binary task CatBoost gives one set of values (toward
    the second class); it is reported for both classes (the same magnitudes).
(c) Section 5.3 / Appendix G: the test rows every trained detector gets wrong, counted by
    language, generator, label and subset, with the shortest examples.

Writes {out}/svm_ngrams.{json,md,tex}, {out}/shap_{detector}.{json,md} + figures, {out}/all_fail.{json,md}."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from tabulate import tabulate

from ..common.io import write_json, write_text
from ..common.stagecli import json_arg
from ..outputs import beside, name_of, wildcards_of
from .latex import latex_text
from .table4 import plain_title

# -- (a) SVM back-projection -------------------------------------------------------------------

def svm_ngram_weights(detector, featurizer) -> tuple[list[str], np.ndarray, list[str]]:
    """(class names, weights (n_rows, vocab), vocabulary). For a binary SVM the one row is toward
    classes_[1]; the rows returned are one per class (the binary one negated for classes_[0])."""
    pipeline = detector.model_
    scaler, svm = pipeline.steps[0][1], pipeline.steps[-1][1]
    coef = np.atleast_2d(svm.coef_) / np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    weights = coef @ featurizer.components_
    vocab = list(featurizer.vocabulary)
    classes = [str(c) for c in detector.classes_]
    if weights.shape[0] == 1 and len(classes) == 2:
        weights = np.vstack([-weights[0], weights[0]])
    return classes, weights, vocab


def top_ngrams(classes, weights, vocab, top: int = 15) -> dict[str, list[tuple[str, float]]]:
    return {c: [(vocab[j], float(weights[i, j])) for j in np.argsort(-weights[i])[:top]]
            for i, c in enumerate(classes)}


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "\\n")


def svm_tables(tops: dict[str, list[tuple[str, float]]]) -> tuple[str, str]:
    classes = list(tops)
    depth = max(len(v) for v in tops.values())
    body = [[i + 1, *[(f"`{_md_escape(tops[c][i][0])}` ({tops[c][i][1]:.3f})" if i < len(tops[c]) else "")
                      for c in classes]] for i in range(depth)]
    md = tabulate(body, headers=["rank", *classes], tablefmt="github", disable_numparse=True) + "\n"
    tex_body = [[i + 1, *[("\\texttt{" + latex_text(tops[c][i][0]) + "}" if i < len(tops[c]) else "")
                          for c in classes]] for i in range(depth)]
    tex = tabulate(tex_body, headers=["rank", *classes], tablefmt="latex_raw", disable_numparse=True)
    return md, tex




# -- (b) CatBoost SHAP ------------------------------------------------------------------------

def catboost_shap(detector, X: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """class -> mean |SHAP| per feature over the rows of X."""
    from catboost import Pool
    values = detector.model_.get_feature_importance(Pool(X), type="ShapValues")
    classes = [str(c) for c in detector.classes_]
    if values.ndim == 2:  # binary: (rows, features + 1), toward classes_[1]
        mean = np.abs(values[:, :-1]).mean(axis=0)
        return dict.fromkeys(classes, mean)
    return {c: np.abs(values[:, i, :-1]).mean(axis=0) for i, c in enumerate(classes)}


def shap_figure(importance: dict[str, np.ndarray], names: list[str], title: str, stem: Path, top: int = 15) -> None:
    from .paper_figures import plt, save_figure
    classes = list(importance)
    distinct = [c for i, c in enumerate(classes) if not any(importance[c] is importance[d] for d in classes[:i])]
    fig, axes = plt.subplots(1, len(distinct), figsize=(4.2 * len(distinct), 0.28 * top + 1.5), squeeze=False,
                             layout="constrained")
    for ax, c in zip(axes[0], distinct):
        order = np.argsort(-importance[c])[:top][::-1]
        ax.barh([names[j][:40] for j in order], importance[c][order], color="#4C72B0")
        ax.set_title(c if len(distinct) > 1 else "all classes", fontsize=9)
        ax.set_xlabel("mean |SHAP|")
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(title, fontsize=10)
    save_figure(fig, stem)


# -- (c) all-fail error analysis ----------------------------------------------------------------

def code_of(path: str, ids) -> dict[str, str]:
    """The code of a few rows of a test split, read for those ids alone."""
    import pyarrow.dataset as ds

    ids = list(ids)
    if not ids:
        return {}
    table = ds.dataset(path).to_table(columns=["id", "code"], filter=ds.field("id").isin(ids))
    return dict(zip(table.column("id").to_pylist(), table.column("code").to_pylist()))


def all_fail(predictions: dict[str, pd.DataFrame], test: pd.DataFrame, examples: int = 5, code_of=None) -> dict:
    """Rows of the test split that every detector in `predictions` gets wrong. `test` may come
    without its code: code_of(ids) then gives it for the rows the result shows."""
    wrong = None
    for _det, p in predictions.items():
        w = p.set_index("id")["pred"].astype(str) != p.set_index("id")["gold"].astype(str)
        wrong = w if wrong is None else (wrong & w.reindex(wrong.index, fill_value=False))
    ids = set(wrong[wrong].index) if wrong is not None else set()
    rows = test[test["id"].isin(ids)].copy()
    if "code" not in rows.columns:
        # lengths of every all-wrong row decide the shortest examples: read their code (one column)
        codes = code_of(rows["id"]) if code_of else {}
        rows["code"] = rows["id"].map(codes).fillna("")
    rows["length"] = rows["code"].str.len()
    out = {"detectors": sorted(predictions), "test_rows": int(len(test)), "all_wrong": int(len(rows)),
           "by": {}}
    for col in ("language", "generator", "label", "subset"):
        if col in rows.columns and rows[col].notna().any():
            all_counts = test[col].value_counts()
            counts = rows[col].value_counts()
            out["by"][col] = {str(k): {"all_wrong": int(v), "of": int(all_counts.get(k, 0))} for k, v in counts.items()}
    shortest = rows.sort_values(["length", "id"]).head(examples)
    out["examples"] = [{"id": r["id"], "label": r.get("label"), "language": r.get("language"),
                        "generator": r.get("generator"), "subset": r.get("subset"), "code": r["code"],
                        "predicted": {d: str(predictions[d].set_index("id").at[r["id"], "pred"]) for d in predictions}}
                       for _, r in shortest.iterrows()]
    return out


def all_fail_markdown(result: dict, title: str) -> str:
    lines = [f"# {title}: test rows every trained detector gets wrong", "",
             f"{result['all_wrong']} of {result['test_rows']} test rows are misclassified by all of "
             f"{len(result['detectors'])} trained detectors ({', '.join(result['detectors'])}).", ""]
    for col, counts in result["by"].items():
        body = [[k, v["all_wrong"], v["of"], f"{100 * v['all_wrong'] / v['of']:.1f}" if v["of"] else "–"]
                for k, v in sorted(counts.items(), key=lambda kv: -kv[1]["all_wrong"])]
        lines += [f"## by {col}", "", tabulate(body, headers=[col, "all wrong", "test rows", "%"], tablefmt="github"), ""]
    lines += ["## Shortest examples", ""]
    for ex in result["examples"]:
        preds = ", ".join(sorted(set(ex["predicted"].values())))
        lines += [f"- `{ex['id']}` gold **{ex['label']}**, {ex['language']}, generator {ex['generator']}, "
                  f"subset {ex['subset']}; predicted: {preds}", "", "```", ex["code"][:600], "```", ""]
    return "\n".join(lines)


# -- command line --------------------------------------------------------------------------------

def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.report analyses", description=__doc__)
    parser.add_argument("--task", required=True)
    parser.add_argument("--title", default=None)
    parser.add_argument("--svm", nargs=2, metavar=("MODEL_SKOPS", "TFIDF_FEATURIZER_SKOPS"))
    parser.add_argument("--shap", nargs=3, action="append", default=[],
                        metavar=("DETECTOR", "MODEL_SKOPS", "FEATURES_NPZ"))
    parser.add_argument("--shap-rows", type=int, default=500)
    parser.add_argument("--predictions", nargs="*", default=[], help="trained detectors' predictions parquet files")
    parser.add_argument("--test", required=True)
    parser.add_argument("--titles", type=json_arg, default={})
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--figures-dir", required=True)
    args = parser.parse_args(argv)
    # the fitted models and featurizers, read without running code from them (aicd.models.fitted_files)
    from ..detectors.bundle import load_detector
    from ..features.registry import load_featurizer

    out, figs = args.out_dir, args.figures_dir
    title = args.title or args.task
    summary = {"task": args.task}
    if args.svm:
        classes, weights, vocab = svm_ngram_weights(load_detector(args.svm[0]), load_featurizer(args.svm[1]))
        tops = top_ngrams(classes, weights, vocab)
        md, tex = svm_tables(tops)
        write_json({"classes": classes, "top": tops}, beside(out, "analysis", "svm_ngrams", "json"))
        write_text(f"# {title}: SVM (TF-IDF) coefficients back-projected to n-grams\n\n"
                   "Weight of an n-gram toward a class: the SVM's coefficients, divided by the standardiser's "
                   "scales, times the SVD components (Appendix D.1).\n\n" + md, beside(out, "analysis", "svm_ngrams", "md"))
        write_text(f"\\begin{{table}}[t]\n\\centering\n{tex}\n\\caption{{{latex_text(title)}: top n-grams per class "
                   "of the TF-IDF SVM, back-projected through the SVD.}}\n\\end{{table}}\n", beside(out, "analysis", "svm_ngrams", "tex"))
        summary["svm"] = name_of("analysis", "svm_ngrams", "md")
    from ..features import store
    # every column but the code, which only the all-fail examples show (read for those rows)
    test_columns = [c for c in pq.read_schema(args.test).names if c != "code"]
    test = pd.read_parquet(args.test, columns=test_columns)
    summary["shap"] = {}
    for det, model, features in args.shap:
        matrices, _ids, names = store.load(features)
        X = matrices["test"]
        if len(X) > args.shap_rows:
            X = X[np.random.default_rng(args.seed).choice(len(X), args.shap_rows, replace=False)]
        imp = catboost_shap(load_detector(model), X, names)
        tops = {c: [(names[j], float(v[j])) for j in np.argsort(-v)[:15]] for c, v in imp.items()}
        write_json({"rows": int(len(X)), "top": tops}, beside(out, "analysis", f"shap_{det}", "json"))
        body = [[i + 1, *[f"{tops[c][i][0]} ({tops[c][i][1]:.4f})" for c in tops]] for i in range(15)
                if all(i < len(tops[c]) for c in tops)]
        dtitle = plain_title(args.titles.get(det, det))
        write_text(f"# {title}: mean |SHAP| per feature, {dtitle} ({len(X)} test rows)\n\n"
                   + tabulate(body, headers=["rank", *tops], tablefmt="github", disable_numparse=True) + "\n",
                   beside(out, "analysis", f"shap_{det}", "md"))
        stem = Path(beside(figs, "shap_figure", "png", args.task, det)).with_suffix("")  # it writes .png and .pdf
        shap_figure(imp, names, f"{title}: {dtitle}\nmean |SHAP| (CatBoost)", stem)
        summary["shap"][det] = name_of("analysis", f"shap_{det}", "md")
    if args.predictions:
        preds = {wildcards_of(p, "predictions").detector: pd.read_parquet(p) for p in args.predictions}
        result = all_fail(preds, test, code_of=lambda ids: code_of(args.test, ids))
        write_json(result, beside(out, "analysis", "all_fail", "json"))
        write_text(all_fail_markdown(result, title), beside(out, "analysis", "all_fail", "md"))
        summary["all_fail"] = {"file": name_of("analysis", "all_fail", "md"), "all_wrong": result["all_wrong"], "of": result["test_rows"]}
    write_json(summary, beside(out, "analyses"))

