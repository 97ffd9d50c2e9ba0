"""Fitting one detector on a task's splits and predicting its test split: the rows or feature
matrices each split gives the detector, validation carved from train where a detector needs one
and none is given, the predictions table (id, gold, pred, score_<class>..., its score kind
declared: aicd.data.scores), checked before it is written (aicd.detectors.output_check), and the
scores of the validation split's human rows, on which the scoring stage sets thresholds at a
fixed false-positive rate (aicd.scoring.thresholds), with a sample of its other rows."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..common.errors import AicdError
from ..data.families import HUMAN
from ..data.metrics import machine_score
from ..data.schema import SPLITS
from ..data.scores import THRESHOLD_SCORE, declare, stored, threshold_score
from ..features import store
from ..outputs import name_of
from . import build
from .output_check import check_labels, check_scores, describe
from .validation import carve

log = logging.getLogger("aicd.detectors")


def table_code(tables: dict[str, pd.DataFrame], code_reader=None):
    """code(split, rows=None): a split's code (its first `rows` rows), from its table or, for
    tables read without their code column, from `code_reader(split, rows)`."""
    def code(split: str, rows: int | None = None) -> np.ndarray:
        table = tables[split]
        if "code" in table.columns:
            values = table["code"].to_numpy(dtype=object)
            return values if rows is None else values[:rows]
        if code_reader is None:
            raise AicdError(f"the {split} rows were read without their code, and no reader of it was given")
        return code_reader(split, rows)
    return code


def with_code(table: pd.DataFrame, code: np.ndarray) -> pd.DataFrame:
    return table if "code" in table.columns else table.assign(code=code)


def feature_matrices(features: str, tables: dict[str, pd.DataFrame], featurizer=None,
                     load: tuple[str, ...] = SPLITS, code=None) -> dict[str, np.ndarray]:
    """Matrices from features.npz (their ids must match the tables): the splits in `load` read
    into memory, the others left as memory maps; a split whose ids differ (a new test set) is
    featurized with the fitted featurizer, except train. `code`: table_code's reader, for tables
    read without their code."""
    code = code or table_code(tables)
    if not Path(features).is_file():
        raise AicdError(f"the feature set {features} does not exist: build it first (python -m aicd.features)")
    ids, names = store.ids_and_names(features)
    matrices = {s: store.matrix(features, s) for s in SPLITS}
    if featurizer is not None:
        check_featurizer_matches(featurizer, features, names, matrices, ids, tables, code)
    X = {}
    for split in SPLITS:
        table_ids = tables[split]["id"].to_numpy(dtype=str)
        if np.array_equal(ids[split], table_ids):
            X[split] = store.read(matrices[split]) if split in load else matrices[split]
        elif split != "train" and featurizer is not None:
            log.info("%s: %d rows featurized with the fitted featurizer (not in %s)", split, len(table_ids), features)
            X[split] = featurizer.transform(with_code(tables[split], code(split)))
        else:
            hint = " or pass --featurizer to featurize them" if split != "train" else ""
            raise AicdError(f"features {features} do not match the {split} split's rows: rebuild them{hint}")
    return X


def check_featurizer_matches(featurizer, features: str, names: list, matrices: dict, ids: dict, tables: dict,
                             code, rows: int = 8) -> None:
    """The --featurizer must be the one that made --features: the model stores it to featurize
    new code, so another one (another feature set, or the same kind fitted on other rows) would
    make every later prediction silently wrong. Checked by feature names, then by featurizing a
    few stored validation/test rows again (transform is what made them)."""
    mine = list(featurizer.feature_names)
    if mine != list(names):
        raise AicdError(f"--featurizer does not belong to features {features}: it makes {len(mine)} features, "
                        f"the file holds {len(names)} (or their names differ); pass that feature set's {name_of('featurizer')}")
    rows = min(rows, featurizer.verify_rows)  # a kind may say its transform costs too much
    for split in SPLITS[1:]:
        if not rows or not len(ids[split]) or not np.array_equal(ids[split], tables[split]["id"].to_numpy(dtype=str)):
            continue
        head = np.asarray(matrices[split][:4096])
        picked = np.flatnonzero(~np.isnan(head).all(axis=1))[:rows]  # rows a sampled set scored
        if not len(picked):
            continue
        table = tables[split].iloc[:picked[-1] + 1]
        again = featurizer.transform(with_code(table, code(split, len(table))).iloc[picked])
        if not np.allclose(again, head[picked], rtol=1e-3, atol=1e-3, equal_nan=True):
            raise AicdError(f"--featurizer does not reproduce the {split} features stored in {features}: it was "
                            f"fitted on other rows; pass the {name_of('featurizer')} written with that {name_of('features')}")


PREDICT_ROWS = 16_384  # rows predicted at a time: a detector's copies of a block (scaled, float64) stay small


def predict_in_blocks(detector, X) -> tuple[np.ndarray, np.ndarray | None]:
    """Labels and scores of every row; a feature matrix (often a memory map of a million rows)
    a block of rows at a time, so memory holds one block."""
    if not isinstance(X, np.ndarray) or X.dtype == object or len(X) <= PREDICT_ROWS:
        return detector.predict_with_scores(store.read(X) if isinstance(X, np.memmap) else X)
    preds, scores = [], []
    for block in store.blocks(X, PREDICT_ROWS):
        p, s = detector.predict_with_scores(block)
        preds.append(np.asarray(p, dtype=object))
        scores.append(s)
    return np.concatenate(preds), (None if scores[0] is None else np.vstack(scores))


def targets(table: pd.DataFrame, split: str) -> np.ndarray:
    """The class of each row (`target`); test rows may be unlabelled (gold left null)."""
    if "target" in table.columns:
        return table["target"].to_numpy(dtype=object)
    if split == "test" or table.empty:
        return np.full(len(table), None, dtype=object)
    raise AicdError(f"the {split} rows have no 'target' column (the class to learn); "
                    f"their columns are {list(table.columns)}")


@dataclass
class FitResult:
    """One detector fitted on a task: the detector, its test predictions, and what the detect job
    reports beside them."""

    detector: object                 # the fitted detector (training.Calibrated where it is calibrated)
    predictions: pd.DataFrame        # id, gold, pred, score_<class>..., the kind's own columns, ood_score
    validation: dict                 # how the validation rows were had (given, carved, unused), the rows a
    #                                  sampled feature set covers, and the rows calibrated on
    summary: dict                    # what the fitted detector reports of itself (a threshold, an AUROC)
    validation_scores: pd.DataFrame  # the validation rows' machine-scores (validation_scores)
    training: dict = field(default_factory=dict)  # what the `training:` options did ({}: none given)


def fit_predict(spec: dict, tables: dict[str, pd.DataFrame], features: str | None, seed: int, threads: int = 1,
                work_dir: str | None = None, cache_dir: str | None = None, featurizer=None,
                prepared: dict[str, str] | None = None, code_reader=None) -> FitResult:
    """The detector of the config entry `spec` fitted on the train split, with its predictions of
    the test split. `prepared`: files other jobs made for it (prepared_inputs);
    `code_reader(split, rows)`: the code of tables read without it (features/tables.read_code),
    read only where it is needed."""
    tables = dict(tables)
    code = table_code(tables, code_reader)
    options = spec.get("training") or {}
    detector = new_detector(spec, seed, threads, work_dir, cache_dir, prepared)
    X = detector_inputs(detector, spec, tables, features, featurizer, code)
    validation = {}
    if detector.declared.covers_feature_rows and detector.inputs == "features":
        validation["covered_rows"] = keep_covered_rows(X, tables)
    y = {s: detector.label_of(targets(tables[s], s)) for s in tables}  # human vs the rest where it binarises
    if len(np.unique(y["train"])) < 2 and detector.inputs == "features":
        raise AicdError("the train split has fewer than two classes: nothing to learn")
    if options.get("augment"):
        tables["train"] = with_code(tables["train"], code("train"))  # the augmented copies rewrite it
    had, validation_rows, train_rows = validation_split(detector, spec, tables, X, y, seed)
    validation.update(had)
    if options.get("calibrate"):
        from .training import check_calibratable

        check_calibratable(detector)  # before a fit that may take hours
    novelty = novelty_reference(detector, X["train"], seed)
    X["train"], y["train"], trained_on = with_training_options(options, detector, train_rows, X["train"], y["train"],
                                                               featurizer, seed)
    if detector.inputs == "features":
        detector.scale_in_place = True  # X["train"] is this job's own copy, read by nothing after the fit
    result = fit_and_predict(detector, spec, X, y, tables["test"], validation_rows, seed, threads)
    result.validation, result.training = {**validation, **result.validation}, trained_on
    if novelty is not None:
        out = result.predictions
        out["ood_score"] = novelty.score(X["test"]) if len(out) else np.zeros(0, dtype=np.float32)
        result.detector.novelty_ = novelty  # the saved model scores new rows the same way
    return result


def new_detector(spec: dict, seed: int, threads: int, work_dir: str | None, cache_dir: str | None,
                 prepared: dict[str, str] | None):
    """The entry's detector, built (its parameters checked), with the job's folders and the files
    other jobs made for it, refused when one it needs is not given."""
    detector = build(spec["kind"], spec.get("params") or {}, seed=seed, threads=threads)
    detector.work_dir, detector.cache_dir = work_dir, cache_dir
    detector.prepared = dict(prepared or {})
    missing = sorted(set(detector.prepared_inputs("", spec.get("params") or {})) - set(detector.prepared))
    if missing:
        raise AicdError(f"detector kind {spec['kind']} needs {', '.join(missing)} made by another job: pass "
                        + " ".join(f"--prepared {m}=PATH" for m in missing))
    return detector


def detector_inputs(detector, spec: dict, tables: dict, features: str | None, featurizer, code) -> dict:
    """{split: what the detector's fit/predict take} (its `inputs`): the rows' ids, their code, the
    feature set's matrices, or an empty matrix."""
    if detector.inputs == "ids":
        X = {s: t["id"].astype(str).to_numpy(dtype=object) for s, t in tables.items()}
        detector.row_ids = dict(X)
        return X
    if detector.inputs == "text":
        return {s: code(s) for s in tables}
    if detector.inputs == "features":
        if not features:
            raise AicdError(f"detector kind {spec['kind']} needs a feature set: set features: in its config entry")
        # train in memory (fitting reads it many times); validation only when it is used; the
        # test rows stay on disk and are predicted a block at a time
        needed = ("train", "validation") if wants_validation(detector, spec) else ("train",)
        X = feature_matrices(features, tables, featurizer, load=needed, code=code)  # says if it is missing
        detector.feature_names = list(store.ids_and_names(features)[1])  # a kind may read columns by name
        return X
    return {s: np.zeros((len(t), 0), dtype=np.float32) for s, t in tables.items()}


def validation_split(detector, spec: dict, tables: dict, X: dict, y: dict, seed: int):
    """(how the validation rows were had, the validation rows, the train rows): the task's own, or,
    for a detector that wants validation rows where the task has none, rows carved from train
    (X and y are cut in place)."""
    validation = {"source": "given", "rows": int(len(y["validation"]))}
    validation_rows, train_rows = tables["validation"], tables["train"]
    if wants_validation(detector, spec) and len(y["validation"]) == 0:
        train_idx, val_idx, validation = carve(y["train"], seed)
        validation_rows, train_rows = tables["train"].iloc[val_idx], tables["train"].iloc[train_idx]
        if detector.wants_group_validation and len(val_idx):
            log.warning("%s tunes on validation rows, but the task has none: %d rows were carved at random from "
                        "train, so they share its generators and languages; give the task a validation split of "
                        "held-out groups (as the out-of-distribution tasks have) for a threshold that transfers",
                        spec["kind"], len(val_idx))
        X["validation"], y["validation"] = X["train"][val_idx], y["train"][val_idx]
        X["train"], y["train"] = X["train"][train_idx], y["train"][train_idx]
    elif not wants_validation(detector, spec):
        validation["used"] = False
    return validation, validation_rows, train_rows


def novelty_reference(detector, X_train, seed: int):
    """The distance to the train rows as they are, before any option copies or resamples them
    (aicd.detectors.novelty), for a detector on a feature set with columns; None otherwise, and
    for a zero-shot detector over a sampled feature set (its train rows may be unscored)."""
    if detector.inputs != "features" or len(X_train) <= 1 or np.asarray(X_train[:1]).shape[1] == 0 \
            or detector.declared.covers_feature_rows:
        return None
    from .novelty import Novelty

    return Novelty(X_train, seed)


def fit_and_predict(detector, spec: dict, X: dict, y: dict, test_rows: pd.DataFrame, validation_rows: pd.DataFrame,
                    seed: int, threads: int) -> FitResult:
    """Fit (X["train"] is dropped after it), calibrate where the entry asks, predict the test rows
    (checked before anything is written) and score the validation rows."""
    calibrated = {}
    with threadpool_limits(threads):
        # (fit may standardise X["train"] in place: the novelty reference was taken before); the
        # log says where a long job is
        log.info("%s: fitting on %d train rows (%d validation rows)", spec["kind"], len(y["train"]),
                 len(y["validation"]))
        started = time.perf_counter()
        detector.fit(X["train"], y["train"], X["validation"], y["validation"])
        log.info("%s: fitted in %.1fs; predicting %d test rows, then the validation scores", spec["kind"],
                 time.perf_counter() - started, len(y["test"]))
        del X["train"]
        if (spec.get("training") or {}).get("calibrate"):
            from .training import calibrate

            detector = calibrate(detector, predict_in_blocks(detector, X["validation"])[1], y["validation"], seed)
            calibrated["calibrated_on"] = int(len(y["validation"]))
        pred, scores = predict_in_blocks(detector, X["test"])
        check_output(detector, spec, y, pred, scores, test_rows["id"].to_numpy())
        # what the detector says of the test rows, before the validation rows are predicted
        extra, summary = detector.extra_columns(), detector.summary(targets(test_rows, "test"))
        validation_scored = validation_scores(detector, X["validation"], y["validation"], validation_rows, seed)
    predictions = predictions_table(detector, test_rows, y["test"], pred, scores, extra)
    return FitResult(detector, predictions, calibrated, summary, validation_scored)


def predictions_table(detector, test_rows: pd.DataFrame, gold, pred, scores, extra: dict) -> pd.DataFrame:
    """id, gold, pred, score_<class>... (their score kind declared: aicd.data.scores) and the kind's own
    columns."""
    out = pd.DataFrame({"id": test_rows["id"].to_numpy(), "gold": gold, "pred": np.asarray(pred, dtype=object)})
    if scores is not None:
        for j, cls in enumerate(detector.classes_):
            out[f"score_{cls}"] = stored(scores[:, j])
    declare(out, detector.score_kind if scores is not None else None)
    for name, values in extra.items():
        out[name] = values
    return out


def keep_covered_rows(X: dict, tables: dict) -> dict:
    """Validation and test cut to the rows the feature set scored (a row of NaN was left out of
    its sample: aicd.features.compute); {split: {scored, of}}. The predictions then cover a
    sample of the test split, and the score file says so."""
    out = {}
    for split in ("validation", "test"):
        matrix = store.read(X[split]) if isinstance(X[split], np.memmap) else np.asarray(X[split])
        keep = ~np.isnan(matrix).all(axis=1) if matrix.ndim == 2 and matrix.shape[1] else np.ones(len(matrix), bool)
        out[split] = {"scored": int(keep.sum()), "of": int(len(keep))}
        if not keep.all():
            X[split], tables[split] = matrix[keep], tables[split].iloc[np.flatnonzero(keep)]
            log.info("%s: %d of %d rows scored by the feature set are predicted", split, keep.sum(), len(keep))
    return out


def check_output(detector, spec: dict, y: dict, pred, scores, ids) -> None:
    """The test predictions as the task expects them (aicd.detectors.output_check), before
    anything is written: labels the splits hold, one score per class, no NaN."""
    allowed = {v for split in y.values() for v in np.asarray(split, dtype=object) if v is not None and v == v}
    who = describe(spec)
    check_labels(who, pred, len(ids), allowed, ids)
    check_scores(who, scores, len(ids), detector.classes_ if detector.classes_ is not None else [],
                 detector.score_kind, ids)


def wants_validation(detector, spec: dict) -> bool:
    """The detector tunes on validation rows, or its scores are to be calibrated on them."""
    return detector.uses_validation or bool((spec.get("training") or {}).get("calibrate"))


def with_training_options(options: dict, detector, train: pd.DataFrame, X, y, featurizer, seed: int):
    """(X, y, what was done) after the config entry's `training:` options (aicd.detectors.training).
    `train`: the rows of X (validation rows carved from train are already out)."""
    if not options.get("augment") and not options.get("balance_languages"):
        return X, y, {}
    from .training import augmented_rows, balanced_indices

    rows = train.reset_index(drop=True)
    done = {"rows_before": int(len(y))}
    if options.get("augment"):
        extra = augmented_rows(rows, options["augment"], seed)
        if detector.inputs == "ids":
            raise AicdError(f"detector kind {detector.kind}: training.augment does not apply (it trains on nothing)")
        if detector.inputs == "text":
            X_extra = extra["code"].to_numpy(dtype=object)
        elif detector.inputs == "features":
            if featurizer is None:
                raise AicdError("training.augment on a feature-based detector needs --featurizer (the workflow "
                                "passes it): the copies are featurized with it")
            X_extra = featurizer.transform(extra)
        else:
            X_extra = np.zeros((len(extra), 0), dtype=np.float32)
        X = np.concatenate([np.asarray(X), X_extra]) if len(extra) else X
        y = np.concatenate([y, detector.label_of(targets(extra, "train"))]) if len(extra) else y
        rows = pd.concat([rows, extra], ignore_index=True)
        done["augmented_rows"] = int(len(extra))
        done["augment"] = list(options["augment"])
    if options.get("balance_languages"):
        if "language" not in rows.columns:
            raise AicdError("training.balance_languages needs the train rows' language column")
        idx = balanced_indices(rows["language"].to_numpy(dtype=object), seed)
        X, y = X[idx], y[idx]
        done["balanced_languages"] = {str(k): int(v) for k, v in
                                      pd.Series(rows["language"].to_numpy(dtype=object)[idx]).value_counts().items()}
    done["rows_after"] = int(len(y))
    log.info("training options: %s", done)
    return X, y, done


VALIDATION_OTHERS = 2000  # rows of the other classes scored beside the human ones (validation AUROC)


def validation_scores(detector, X, y: np.ndarray, rows: pd.DataFrame, seed: int) -> pd.DataFrame:
    """id, domain, gold, machine_score (1 - score_human, aicd.data.metrics.machine_score) and
    threshold_score (the float64 score a calibration's thresholds are set on: threshold_score) of the
    validation split's human rows, on which a threshold at a fixed false-positive rate is set,
    and of a seeded sample of its other rows (as many as the human rows, at most
    VALIDATION_OTHERS), from which the scoring stage tells an inverted detector (validation
    AUROC below 0.5). Empty when the detector gives no scores, has no human class, or there
    are no human rows."""
    empty = pd.DataFrame({"id": pd.Series(dtype=str), "domain": pd.Series(dtype=object),
                          "gold": pd.Series(dtype=object), "machine_score": pd.Series(dtype=np.float64),
                          THRESHOLD_SCORE: pd.Series(dtype=np.float64)})
    classes = [str(c) for c in (detector.classes_ if detector.classes_ is not None else [])]
    labels = np.asarray(y, dtype=object)
    human = np.flatnonzero(labels == HUMAN)
    if HUMAN not in classes or len(human) == 0 or len(rows) != len(y):
        return empty
    others = np.flatnonzero((labels != HUMAN) & ~pd.isna(labels))
    take = min(len(others), len(human), VALIDATION_OTHERS)
    picked = np.sort(np.concatenate([human, np.random.default_rng(seed).choice(others, take, replace=False)]))
    if detector.inputs == "ids" and not detector.scores_rows(X[picked]):
        picked = human  # predictions made elsewhere: a file may give scores of its human rows only
        if not detector.scores_rows(X[picked]):
            return empty
    _, scores = predict_in_blocks(detector, store.read(X, picked) if isinstance(X, np.memmap) else X[picked])
    if scores is None:
        return empty
    chosen = rows.iloc[picked]
    domain = chosen["domain"].to_numpy(dtype=object) if "domain" in chosen.columns else None
    columns = pd.DataFrame({f"score_{c}": stored(np.asarray(scores)[:, j]) for j, c in enumerate(classes)})
    return pd.DataFrame({"id": chosen["id"].astype(str).to_numpy(), "domain": domain, "gold": labels[picked],
                         "machine_score": machine_score(np.asarray(scores)[:, classes.index(HUMAN)]),
                         THRESHOLD_SCORE: threshold_score(columns, getattr(detector, "score_kind", None))})
