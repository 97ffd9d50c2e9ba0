"""`aicd detect --calibrate-on REF --adapt`: a fitted fused detector adapted to the reference.

The reference is shared (aicd.adapt.reference): the local model writes counterparts of the
adapting part's programs, the adapted fusion (aicd.adapt.fusion) is fitted on them, and the
calibrating part, scored as new code, sets the thresholds. The adapted model labels the files
like any fitted model: its score columns are the adapted score (`score_machine`, and its
negative `score_human`; kind `score`), and its own label (`model_label`) is the fused detector's,
before adaptation."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..common.errors import AicdError
from .counterparts import Writer, kept_summary
from .fusion import AdaptedFusion, Rows
from .reference import ADAPT_SHARE, reference_parts

PROTOCOLS = ("hybrid_rewrite", "inverse_instruction")
MIN_ADAPTING = 10   # reference programs in the adapting part, at least


def check_adaptable(model) -> None:
    """A fused detector with model average (it has an LM part and a trained part), else a refusal."""
    detector = model.detector
    kind = getattr(model, "detector_kind", "") or type(detector).__name__
    if not hasattr(detector, "parts") or detector.setting("model") != "average":
        raise AicdError(f"--adapt adapts a fused detector (kind fused, model average: it keeps the LM part's "
                        f"direction), and this model is {kind}"
                        + ("" if not hasattr(detector, "parts") else " with model constrained")
                        + ": fit one (config/loco.yaml's `fused` row, docs/calibration.md, \"Adapted to your code\") "
                          "or leave --adapt out")


class AdaptedModel:
    """A fitted model (aicd.detectors.bundle.FittedModel) whose scores are the adapted fusion's."""

    def __init__(self, base, fusion: AdaptedFusion, report: dict):
        self.base, self.fusion, self.report = base, fusion, report

    def __getattr__(self, name):
        if name.startswith("__") or name == "base":
            raise AttributeError(name)
        return getattr(self.__dict__["base"], name)

    def rows(self, table: pd.DataFrame) -> tuple[Rows, dict]:
        """(the programs as the fusion reads them, the fused detector's own label and novelty per
        program); each program's features computed once (the gate reads the files to label,
        and labelling them reads them again)."""
        memo = self.__dict__.setdefault("memo", {})
        codes, languages = list(table["code"]), [str(v) for v in table["language"]]
        new = [k for k, key in enumerate(zip(codes, languages)) if key not in memo]
        if new:
            X = self.base.inputs_for(table.iloc[new])
            parts, detector = self.base.detector.parts(X), self.base.detector
            fused, pred = detector.fused_score(X), detector.predict(X)
            novelty = getattr(detector, "novelty_", None)
            ood = novelty.score(X) if novelty is not None else np.full(len(new), np.nan)
            for j, k in enumerate(new):
                memo[(codes[k], languages[k])] = (parts["lm"][j], None if parts.get("rest") is None else
                                                  parts["rest"][j], fused[j], pred[j], ood[j])
        got = [memo[key] for key in zip(codes, languages)]
        trained = None if got and got[0][1] is None else _column(got, 1)
        return (Rows(_column(got, 0), trained, codes, languages, _column(got, 2)),
                {"pred": _column(got, 3, object), "ood_score": _column(got, 4)})

    def predict_rows(self, table: pd.DataFrame) -> pd.DataFrame:
        out = pd.DataFrame({"id": table["id"].to_numpy()} if "id" in table.columns else {}, index=range(len(table)))
        if table.empty:
            out["pred"] = pd.Series([], dtype=object)
            return out
        rows, own = self.rows(table)
        score = self.fusion.score(rows)
        out["pred"] = own["pred"]
        out["score_human"], out["score_machine"] = (-score).astype(np.float32), score.astype(np.float32)
        if not np.isnan(own["ood_score"]).all():
            out["ood_score"] = own["ood_score"]
        return out


def adapt(model, reference: pd.DataFrame, writer: Writer, settings: dict | None = None, seed: int = 0,
          share: float = ADAPT_SHARE, say=None) -> tuple[AdaptedModel, pd.DataFrame]:
    """(the model adapted on the reference's adapting part, the calibrating part's rows)."""
    check_adaptable(model)
    reference = reference.reset_index(drop=True)
    adapting, calibrating = reference_parts(reference["language"].to_numpy(dtype=object), share, seed)
    if len(adapting) < MIN_ADAPTING:
        raise AicdError(f"--adapt: {len(adapting)} reference files in the adapting part ({share:.0%} of "
                        f"{len(reference)}): at least {MIN_ADAPTING} are needed; give more human files to "
                        "--calibrate-on")
    started = time.perf_counter()
    humans = reference.iloc[adapting].reset_index(drop=True)
    if say:
        say(f"--adapt: the local model ({writer.model['name']}) writes counterparts of {len(humans)} reference files "
            f"(the adapting part; the other {len(calibrating)} set the thresholds)")
    written = writer.write(humans[["id", "code", "language"]], PROTOCOLS)
    kept = written[written["kept"]].reset_index(drop=True)
    if len(kept) < 2:
        raise AicdError(f"--adapt: the local model wrote {len(kept)} usable counterparts of {len(humans)} files "
                        f"({kept_summary(written)}): too few to adapt on")
    base = AdaptedModel(model, AdaptedFusion(settings or {}, seed), {})
    human_rows, _ = base.rows(humans)
    counterpart_rows, _ = base.rows(kept.assign(id=kept["reference_id"] + ":" + kept["protocol"]))
    of_human = kept["reference_id"].map({i: k for k, i in enumerate(humans["id"])}).to_numpy()
    base.fusion.fit(human_rows, counterpart_rows, of_human)
    base.report = {"adapting": int(len(humans)), "calibrating": int(len(calibrating)),
                   "counterparts": kept_summary(written), "requests_sent": writer.sent,
                   "seconds": round(time.perf_counter() - started, 1), **base.fusion.summary()}
    return base, reference.iloc[calibrating].reset_index(drop=True)


def _column(got: list, i: int, dtype=np.float64) -> np.ndarray:
    return np.array([g[i] for g in got], dtype=dtype)


def gate(adapted: AdaptedModel, to_label: pd.DataFrame) -> AdaptedModel:
    """The fusion's gate (aicd.adapt.fusion, setting gate) read on the files to label: no label of
    theirs is read, only how the pair part ranks them against the fused detector."""
    rows, _ = adapted.rows(to_label)
    adapted.fusion.gate(rows)
    adapted.report.update(weights=adapted.fusion.weights_, agreement=getattr(adapted.fusion, "agreement_", None))
    return adapted


def describe(report: dict) -> str:
    """One line of what the adaptation did, for stderr."""
    weights = ", ".join(f"{p} {w:.2f} (AUROC {100 * report['separation_auroc'][p]:.0f})"
                        for p, w in report["weights"].items())
    kept = ", ".join(f"{p} {c['kept']}/{c['asked']}" for p, c in report["counterparts"].items())
    return (f"adapted on {report['adapting']} reference files and their counterparts ({kept} kept; "
            f"{report['requests_sent']} requests sent, {report['seconds']:.0f} s); parts weighted by how they tell the "
            f"reference from its counterparts: {weights}"
            + ("" if report.get("agreement") is None else
               f"; the pair part's rank agreement with the fused detector over the files to label "
               f"{report['agreement']:.2f} (its weight times that, floored at 0)"))
