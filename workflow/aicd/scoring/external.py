"""Scoring any predictions file against any gold file (`aicd score`, `aicd compare`).

Predictions: a SemEval-2026 Task 13 submission (CSV `id,label`), the workflow's own predictions
parquet (`id, gold, pred`), or CSV/JSONL/parquet with `id` and one of `pred`, `label`,
`prediction`. Gold: parquet/CSV/JSONL with `id` and one of `target`, `label`, `gold` (the first
present: a task table's `target` is its class, e.g. the family in T2), plus
optional breakdown columns (subset, language, domain, generator). Labels may be integers mapped
to names with a label map (`0=human,1=machine`), applied to both sides. Ids are compared as text;
ids missing on either side are an error that counts them (or, with allow_missing, a coverage).
`aicd score` looks for every problem of the two files before scoring (`file_problems`: ids
missing, unknown or repeated, rows without a label, labels outside the map or the label set) and
names them all at once, each counted with examples, so one run says everything to fix.

Predictions with score_<class> columns (the workflow's own, or a user's file) also get threshold
metrics: AUROC of human against the rest, and the TPR at each FPR with the threshold set on
validation scores of human rows (a validation_scores parquet: id, domain, machine_score; or
predictions on validation rows with gold and score_human, whose human rows are taken). For the
workflow's results/predictions/{task}/{detector}.parquet, its results/validation_scores/ file is
found on its own."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd

from ..common.errors import AicdError
from ..common.io import read_any
from ..data.ids import disagreement, disagreements, match
from ..data.metrics import machine_score
from ..data.schema import ABSTAIN
from ..data.scores import declared_in_file
from ..sources.ingest import label_key
from .bootstrap import RESAMPLES, describe, paired_test
from .metrics import breakdown, class_order, classification_scores
from .scorer import BREAKDOWN_COLUMNS, GOLD_COLUMNS, check_label_set
from .thresholds import FPRS, HUMAN, threshold_metrics

PRED_COLUMNS = ("pred", "label", "prediction")


def parse_label_map(text: str | None) -> dict[str, str]:
    """`0=human,1=machine`, a JSON object, or a JSON file; keys compared as text."""
    if not text:
        return {}
    if Path(text).is_file():
        text = Path(text).read_text()
    if text.lstrip().startswith("{"):
        try:
            return {str(k): str(v) for k, v in json.loads(text).items()}
        except (json.JSONDecodeError, AttributeError) as err:
            raise AicdError(f"--label-map: not a JSON object: {err}") from None
    pairs = [p for p in text.replace(";", ",").split(",") if p.strip()]
    if not all("=" in p for p in pairs):
        raise AicdError(f"--label-map {text!r}: write it as 0=human,1=machine (or a JSON object)")
    return {k.strip(): v.strip() for k, v in (p.split("=", 1) for p in pairs)}


def _label_text(value) -> str | None:
    """A label as text (the sources stage's normalisation: 1.0 -> '1', stripped); None for a
    missing one, including an empty CSV cell (read as '' with keep_default_na=False), which
    must not become a class of its own."""
    return label_key(value) or None


def labels_column(table: pd.DataFrame, candidates, path, what: str, label_map: dict) -> pd.Series:
    column = next((c for c in candidates if c in table.columns), None)
    if "id" not in table.columns or column is None:
        raise AicdError(f"{path}: a {what} file needs an 'id' column and one of {list(candidates)}; "
                        f"its columns are {list(table.columns)}")
    values = table[column].map(_label_text)
    if values.isna().any():
        raise AicdError(f"{path}: {int(values.isna().sum())} rows have no {what} label")
    if label_map:
        unmapped = Counter(v for v in values if v not in label_map and v not in label_map.values() and v != ABSTAIN)
        if unmapped:
            named = ", ".join(f"{v!r} ({n} rows)" for v, n in unmapped.most_common(10))
            raise AicdError(f"{path}: {what} labels not in --label-map: {named}")
        values = values.map(lambda v: label_map.get(v, v))
    return values


def score_columns(table: pd.DataFrame, path, label_map: dict) -> dict[str, pd.Series]:
    """score_<class> columns as numbers, each class named through the label map (score_0 ->
    score_human with 0=human)."""
    out = {}
    for column in (c for c in table.columns if str(c).startswith("score_")):
        cls = str(column)[len("score_"):]
        values = pd.to_numeric(table[column], errors="coerce")
        if values.isna().any() and not table[column].isna().all():
            bad = int(values.isna().sum())
            raise AicdError(f"{path}: column {column}: {bad} values are not numbers (a score per class is a number)")
        out[f"score_{label_map.get(cls, cls)}"] = values
    return out


def read_predictions(path, label_map: dict) -> pd.DataFrame:
    table = read_any(path)
    out = pd.DataFrame({"id": table["id"].astype(str) if "id" in table.columns else None,
                        "pred": labels_column(table, PRED_COLUMNS, path, "predicted", label_map),
                        **score_columns(table, path, label_map)})
    duplicated = out["id"].duplicated()
    if duplicated.any():
        example = out["id"][duplicated].iloc[0]
        raise AicdError(f"{path}: {int(duplicated.sum())} ids occur more than once (e.g. {example!r})")
    return out


def read_gold(path, label_map: dict) -> pd.DataFrame:
    table = read_any(path)
    gold = labels_column(table, GOLD_COLUMNS, path, "gold", label_map)
    out = pd.DataFrame({"id": table["id"].astype(str), "gold": gold})
    for col in BREAKDOWN_COLUMNS:
        if col in table.columns:
            out[col] = table[col].to_numpy(dtype=object)
    duplicated = out["id"].duplicated()
    if duplicated.any():
        raise AicdError(f"{path}: {int(duplicated.sum())} gold ids occur more than once")
    return out


def align(predictions: pd.DataFrame, gold: pd.DataFrame, pred_path, allow_missing: bool = False,
          hint: str = "; score the covered rows only with --allow-missing") -> pd.DataFrame:
    ids = match(predictions["id"], gold["id"])  # (ids repeated in either file are refused when read)
    if ids.extra or (ids.missing and not allow_missing):
        raise AicdError(f"{pred_path}: {disagreement(ids, wanted='the gold file', ignore_missing=allow_missing)}"
                        f"{hint if ids.missing and not ids.extra else ''}")
    merged = gold.merge(predictions, on="id", how="inner", validate="one_to_one")
    if merged.empty:
        raise AicdError(f"{pred_path}: no predicted id is in the gold file: nothing to score")
    return merged


def workflow_validation_scores(pred_path) -> Path | None:
    """results/validation_scores/{task}/{detector}.parquet beside the workflow's predictions file."""
    from ..outputs import Outputs, parse

    named = parse(Path(pred_path).resolve(), "predictions")
    if named is None:
        return None
    candidate = Path(Outputs(named.root).validation_scores(named.task, named.detector))
    return candidate if candidate.is_file() else None


def read_validation_scores(path, label_map: dict) -> pd.DataFrame:
    """The validation human rows' machine-scores from either file shape (module docstring)."""
    table = read_any(path)
    if "machine_score" in table.columns:
        if any(c in table.columns for c in GOLD_COLUMNS):
            # the workflow's file also holds a sample of the other classes (for validation AUROC):
            # the threshold is set on the human rows only
            table = table[(labels_column(table, GOLD_COLUMNS, path, "gold", label_map) == HUMAN).to_numpy()]
            if table.empty:
                raise AicdError(f"{path}: no validation row has the gold label {HUMAN!r}: no threshold can be set")
        return pd.DataFrame({"id": table["id"].astype(str) if "id" in table.columns else range(len(table)),
                             "domain": table["domain"] if "domain" in table.columns else None,
                             "machine_score": pd.to_numeric(table["machine_score"], errors="coerce")}).dropna(
            subset=["machine_score"])
    gold = labels_column(table, GOLD_COLUMNS, path, "gold", label_map)
    scores = score_columns(table, path, label_map)
    if f"score_{HUMAN}" not in scores:
        raise AicdError(f"{path}: validation scores need a machine_score column, or gold labels with a "
                        f"score_{HUMAN} column; its columns are {list(table.columns)}")
    human = (gold == HUMAN).to_numpy()
    if not human.any():
        raise AicdError(f"{path}: no validation row has the gold label {HUMAN!r}: no threshold can be set")
    return pd.DataFrame({"id": table["id"].astype(str)[human],
                         "domain": table["domain"][human] if "domain" in table.columns else None,
                         "machine_score": machine_score(scores[f"score_{HUMAN}"][human])})


def check_labels(merged: pd.DataFrame, label_set: list, given: bool, pred_path, gold_path) -> None:
    """aicd score's label checks, with its own advice: each file's labels inside the label set
    (--labels, else the gold labels), and no class in --labels that neither file holds."""
    where = "--labels" if given else f"the gold labels of {gold_path}"
    advice = ("name them with --label-map (e.g. 0=human,1=machine: each file's label to the name), or list them "
              "in --labels")
    check_label_set(merged["gold"], label_set, f"{gold_path}: gold", advice=advice, label_set="--labels")
    check_label_set(merged["pred"], label_set, f"{pred_path}: predicted", allow_abstain=True, advice=advice,
                    label_set=where)
    if given:
        held = set(merged["gold"]) | set(merged["pred"])
        extra = [c for c in label_set if c not in held]
        if extra:
            raise AicdError(f"--labels: {', '.join(map(repr, extra))} {'is' if len(extra) == 1 else 'are'} in neither "
                            f"{gold_path} nor {pred_path} (their labels: {', '.join(sorted(map(str, held)))}): a class "
                            "no row holds would enter every average as 0; list only the classes the files hold, or "
                            "map a file's labels with --label-map")


def check_probabilities(merged: pd.DataFrame, pred_path) -> None:
    """Scores a predictions file declares to be probabilities must lie in [0, 1]."""
    if declared_in_file(pred_path) != "probability":
        return
    for column in (c for c in merged.columns if str(c).startswith("score_")):
        values = pd.to_numeric(merged[column], errors="coerce")
        low, high = float(values.min()), float(values.max())
        if low < -1e-6 or high > 1 + 1e-6:
            raise AicdError(f"{pred_path}: {column} holds values from {low:g} to {high:g}, but the file declares its "
                            "scores probabilities in [0, 1] (its metadata, aicd.data.scores): percentages? divide them by "
                            "100, or write the file without that declaration")


EXAMPLES = 3  # example ids per problem


def _label_values(table: pd.DataFrame, candidates, path, what: str) -> pd.Series:
    column = next((c for c in candidates if c in table.columns), None)
    if "id" not in table.columns or column is None:
        raise AicdError(f"{path}: a {what} file needs an 'id' column and one of {list(candidates)}; "
                        f"its columns are {list(table.columns)}")
    return table[column].map(_label_text)


def _counted(values: pd.Series, ids: pd.Series, wanted) -> list[tuple[str, int, list]]:
    """(value, rows, example ids) of each value in `values` that `wanted(value)` flags, most rows first."""
    flagged = Counter(v for v in values.dropna() if wanted(v))
    return [(v, n, ids[values == v].head(EXAMPLES).tolist()) for v, n in flagged.most_common()]


def _eg(ids) -> str:
    return "e.g. id " + ", ".join(repr(str(i)) for i in list(ids)[:EXAMPLES])


def file_problems(pred_path, gold_path, labels: list | None, label_map: dict, allow_missing: bool) -> list[str]:
    """Every problem of a predictions file against a gold file, each counted with examples: ids
    repeated, unknown or (unless allow_missing) missing; rows without a label on either side;
    labels outside the label map; labels outside the label set (--labels, else the gold labels);
    a class in --labels that neither file holds. Only an unreadable file or missing columns raise."""
    pred, gold = read_any(pred_path), read_any(gold_path)
    pred_ids, gold_ids = (t["id"].astype(str) if "id" in t.columns else None for t in (pred, gold))
    pred_values = _label_values(pred, PRED_COLUMNS, pred_path, "predicted")
    gold_values = _label_values(gold, GOLD_COLUMNS, gold_path, "gold")
    found = match(pred_ids, gold_ids)
    problems = [f"{pred_path}: {line}" for line in disagreements(found, "predictions", "the gold file", allow_missing,
                                                                  EXAMPLES)]
    if found.missing and not allow_missing:
        problems[0] += f"; {found.coverage()} of the gold file match"
    repeated_gold = sorted(set(gold_ids[gold_ids.duplicated()]))
    if repeated_gold:
        problems.append(f"{gold_path}: {len(repeated_gold):,} gold ids more than once ({_eg(repeated_gold)})")
    for path, values, ids, what in ((pred_path, pred_values, pred_ids, "predicted"),
                                    (gold_path, gold_values, gold_ids, "gold")):
        if values.isna().any():
            problems.append(f"{path}: {int(values.isna().sum()):,} rows have no {what} label ({_eg(ids[values.isna()])})")
        if label_map:
            for v, n, eg in _counted(values, ids, lambda v: v not in label_map and v not in label_map.values()
                                     and v != ABSTAIN):
                problems.append(f"{path}: {what} labels not in --label-map: {v!r} ({n:,} rows; {_eg(eg)})")
    mapped_gold = gold_values.map(lambda v: label_map.get(v, v))
    label_set = list(labels) if labels else sorted(set(mapped_gold.dropna()), key=str)
    where = "--labels" if labels else f"the gold labels of {gold_path}"
    checks = [(pred_path, pred_values, pred_ids, "predicted", where)] + \
        ([(gold_path, gold_values, gold_ids, "gold", "--labels")] if labels else [])
    named = set(label_map.values())

    def outside(v) -> bool:  # a value the map does not know is told above, as unmapped
        return v not in label_set and v != ABSTAIN and (not label_map or v in named)

    for path, values, ids, what, against in checks:
        for v, n, eg in _counted(values.map(lambda v: label_map.get(v, v)), ids, outside):
            problems.append(f"{path}: {what} label {v!r} outside {against} {label_set} ({n:,} rows; {_eg(eg)})")
    if labels:
        held = set(mapped_gold.dropna()) | set(pred_values.dropna().map(lambda v: label_map.get(v, v)))
        extra = [c for c in labels if c not in held]
        if extra:
            problems.append(f"--labels: {', '.join(map(repr, extra))} {'is' if len(extra) == 1 else 'are'} in neither "
                            f"{gold_path} nor {pred_path} (their labels: {', '.join(sorted(map(str, held)))}): a class "
                            "no row holds would enter every average as 0; list only the classes the files hold")
    return problems


def check_files(pred_path, gold_path, labels: list | None, label_map: dict, allow_missing: bool) -> None:
    """Refuse the pair of files with every problem file_problems finds, and what to do."""
    problems = file_problems(pred_path, gold_path, labels, label_map, allow_missing)
    if not problems:
        return
    advice = []
    if any("not in the predictions" in p for p in problems):
        advice.append("score the covered rows only with --allow-missing")
    if any(" label" in p and ("outside" in p or "--label-map" in p) for p in problems):
        advice.append("name each file's labels with --label-map (e.g. 0=human,1=machine) or list the classes in "
                      "--labels")
    advice.append("`aicd submission check PRED --task TASK --test FILE` checks a file against a task's test ids and "
                  "labels without scoring it")
    raise AicdError(f"{len(problems)} problem{'s' if len(problems) > 1 else ''} scoring {pred_path} against "
                    f"{gold_path}, nothing scored:\n"
                    + "\n".join(f"  - {p}" for p in problems) + "\n" + "; ".join(advice))


def score_file(pred_path, gold_path, labels: list | None = None, label_map: dict | None = None,
               allow_missing: bool = False, resamples: int = RESAMPLES, seed: int = 0,
               validation_path=None, fprs=FPRS) -> dict:
    label_map = label_map or {}
    check_files(pred_path, gold_path, labels, label_map, allow_missing)
    gold = read_gold(gold_path, label_map)
    merged = align(read_predictions(pred_path, label_map), gold, pred_path, allow_missing)
    label_set = list(labels) if labels else sorted(set(merged["gold"]), key=str)
    check_labels(merged, label_set, bool(labels), pred_path, gold_path)
    check_probabilities(merged, pred_path)
    result = classification_scores(merged["gold"], merged["pred"], label_set, resamples, seed)
    result.update({"predictions": str(pred_path), "gold": str(gold_path), "bootstrap": describe(resamples, seed),
                   "score_kind": declared_in_file(pred_path),
                   "coverage": len(merged) / len(gold),
                   "by": {col: breakdown(merged["gold"], merged["pred"], merged[col], label_set, resamples, seed)
                          for col in BREAKDOWN_COLUMNS if col in merged.columns and merged[col].notna().any()}})
    validation_path = validation_path or workflow_validation_scores(pred_path)
    validation = read_validation_scores(validation_path, label_map) if validation_path else None
    result["threshold_metrics"] = threshold_metrics(merged, validation, fprs, BREAKDOWN_COLUMNS, resamples, seed)
    if validation_path:
        result["threshold_metrics"]["validation"] = str(validation_path)
    return result


def compare_files(pred_a, pred_b, gold_path, labels: list | None = None, label_map: dict | None = None,
                  resamples: int = RESAMPLES, seed: int = 0) -> dict:
    label_map = label_map or {}
    gold = read_gold(gold_path, label_map)
    a = align(read_predictions(pred_a, label_map), gold, pred_a, hint=": both files must predict every gold id")
    b = align(read_predictions(pred_b, label_map), gold, pred_b, hint=": both files must predict every gold id")
    a = a.set_index("id").loc[gold["id"]]
    b = b.set_index("id").loc[gold["id"]]
    label_set = list(labels) if labels else sorted(set(gold["gold"]), key=str)
    check_label_set(gold["gold"], label_set, "gold")
    check_label_set(a["pred"], label_set, f"{pred_a}: predicted", allow_abstain=True)
    check_label_set(b["pred"], label_set, f"{pred_b}: predicted", allow_abstain=True)
    # every class either side names; each side's macro-F1 averages over the classes in gold or
    # its own predictions (bootstrap.macro_f1_of_counts), so A's equals `aicd score A GOLD`
    averaged = class_order(gold["gold"], list(a["pred"]) + list(b["pred"]), label_set)
    result = paired_test(gold["gold"].to_numpy(dtype=object), a["pred"].to_numpy(dtype=object),
                         b["pred"].to_numpy(dtype=object), averaged, resamples, seed)
    return {"a": str(pred_a), "b": str(pred_b), "gold": str(gold_path), "labels": label_set, **result}
