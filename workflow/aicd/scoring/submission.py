"""Hidden-label submissions: check a predictions file against a task's test ids and label set
(every problem named with its count), validate the submission's metadata, and score it against
the gold labels into a results file a leaderboard reads (aicd.report.leaderboard).

A results file records the submission's metadata, its scores (macro-F1, AUROC, TPR at fixed
FPRs, per subset) and the paths and sha256 of the predictions and gold it was scored from,
so the leaderboard can run a paired bootstrap test between two submissions on the same gold."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from pathlib import Path

from ..common.errors import AicdError
from ..data.ids import match
from ..records.fingerprint import sha256_file
from .bootstrap import RESAMPLES
from .external import GOLD_COLUMNS, PRED_COLUMNS, _label_text, read_any, score_file
from .thresholds import FPRS

METADATA_REQUIRED = {"detector": "the detector's name, as the leaderboard shows it",
                     "date": "the submission date, YYYY-MM-DD",
                     "contact": "an e-mail address",
                     "links": "a list of URLs (paper, code); may be empty"}
METADATA_OPTIONAL = {"description": "one line on the method", "task": "the task it was made for"}
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
URL = re.compile(r"^https?://\S+$")


def task_ids_and_labels(ids_path, labels: list | None) -> tuple[list[str], list[str]]:
    """The ids a submission must cover (from any table with `id`: the task's test.parquet) and
    the task's labels (given, else the table's target/label/gold values)."""
    table = read_any(ids_path)
    if "id" not in table.columns:
        raise AicdError(f"{ids_path}: the task's test file needs an 'id' column; its columns are {list(table.columns)}")
    if not labels:
        column = next((c for c in GOLD_COLUMNS if c in table.columns), None)
        if column is None:
            raise AicdError(f"{ids_path} holds no labels (hidden): give the task's label set with --labels")
        labels = sorted({v for v in table[column].map(_label_text) if v}, key=str)
    return table["id"].astype(str).tolist(), [str(x) for x in labels]


def check(pred_path, ids: list[str], labels: list[str], label_map: dict | None = None) -> dict:
    """{"rows", "task_rows", "coverage", "problems": [{"problem", "count", "examples"}], "ok"}.
    Only an unreadable file or missing columns raise: everything else is counted."""
    label_map = label_map or {}
    table = read_any(pred_path)
    column = next((c for c in PRED_COLUMNS if c in table.columns), None)
    if "id" not in table.columns or column is None:
        raise AicdError(f"{pred_path}: a submission needs an 'id' column and one of {list(PRED_COLUMNS)}; "
                        f"its columns are {list(table.columns)}")
    sub_ids = table["id"].astype(str)
    values = table[column].map(_label_text).map(lambda v: label_map.get(v, v) if v else v)
    problems = []

    def add(problem: str, items) -> None:
        items = list(items)
        if items:
            problems.append({"problem": problem, "count": len(items), "examples": [str(x) for x in items[:5]]})

    found = match(sub_ids, ids)
    add("ids given more than once", found.repeated)
    add("ids not in the task's test split", found.extra)
    add("test ids without a prediction", found.missing)
    add("rows without a label", sub_ids[values.isna()].tolist())
    outside = Counter(v for v in values.dropna() if v not in labels)
    for value, n in outside.most_common():
        problems.append({"problem": f"label {value!r} is not one of the task's labels {labels}", "count": n,
                         "examples": sub_ids[values == value].head(5).tolist()})
    return {"rows": int(len(table)), "task_rows": found.wanted,
            "coverage": found.matched / found.wanted if found.wanted else 0.0, "covered": found.coverage(),
            "labels": labels, "problems": problems, "ok": not problems}


def read_metadata(path) -> dict:
    """The submission's metadata (YAML or JSON), validated: each problem named at once."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise AicdError(f"{path}: no such metadata file")
    try:
        meta = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise AicdError(f"{path}: not YAML or JSON: {err}") from None
    if not isinstance(meta, dict):
        raise AicdError(f"{path}: the metadata is a mapping of {', '.join(METADATA_REQUIRED)}")
    wrong = [f"{k} is missing ({why})" for k, why in METADATA_REQUIRED.items() if k not in meta]
    unknown = sorted(set(meta) - set(METADATA_REQUIRED) - set(METADATA_OPTIONAL))
    wrong += [f"{k} is not a metadata key (known: {', '.join([*METADATA_REQUIRED, *METADATA_OPTIONAL])})"
              for k in unknown]
    if "detector" in meta and (not isinstance(meta["detector"], str) or not meta["detector"].strip()):
        wrong.append("detector must be a non-empty name")
    if "date" in meta:
        try:
            meta["date"] = dt.date.fromisoformat(str(meta["date"])).isoformat()
        except ValueError:
            wrong.append(f"date {meta['date']!r} is not YYYY-MM-DD")
    if "contact" in meta and not EMAIL.match(str(meta["contact"])):
        wrong.append(f"contact {meta['contact']!r} is not an e-mail address")
    if "links" in meta:
        if not isinstance(meta["links"], list):
            wrong.append("links must be a list of URLs")
        else:
            wrong += [f"link {u!r} is not an http(s) URL" for u in meta["links"] if not URL.match(str(u))]
    if wrong:
        raise AicdError(f"{path}: " + "; ".join(wrong))
    return meta


def score_submission(pred_path, metadata_path, gold_path, task: str, labels: list | None = None,
                     label_map: dict | None = None, validation_path=None, fprs=FPRS, resamples: int = RESAMPLES,
                     seed: int = 0) -> dict:
    """The results file's content; refuses a submission that fails the check."""
    meta = read_metadata(metadata_path)
    ids, labels = task_ids_and_labels(gold_path, labels)
    report = check(pred_path, ids, labels, label_map)
    if not report["ok"]:
        raise AicdError(f"{pred_path}: the submission does not pass the check: "
                        + "; ".join(f"{p['problem']}: {p['count']}" for p in report["problems"]))
    result = score_file(pred_path, gold_path, labels, label_map, False, resamples, seed, validation_path, fprs)
    return {"task": task, "metadata": meta,
            "predictions": {"path": str(Path(pred_path).resolve()), "sha256": sha256_file(pred_path)},
            "gold": {"path": str(Path(gold_path).resolve()), "sha256": sha256_file(gold_path)},
            "label_map": dict(label_map or {}), "labels": labels, **{k: v for k, v in result.items()
                                                                   if k not in ("predictions", "gold")}}
