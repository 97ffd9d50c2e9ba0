"""Scoring stage: macro-F1 (primary), accuracy, per-class metrics, confusion matrices,
and the same broken down by every subset column of the test split (`python -m aicd.scoring`).

    from aicd.scoring import score   # predictions + gold (+ labels, fprs, validation, ...) -> the score dict

- scorer: one detector's predictions scored on a task's test split (`score`, exported here);
- metrics: metrics on label names;
- bootstrap: bootstrap intervals for macro-F1 and the paired test of two detectors;
- thresholds: AUROC and the TPR at a fixed FPR on human code, for detectors that give scores;
- roc_point: the ROC operating point as the field defines it;
- calibration: thresholds set on human reference code (split-conformal) and the FPR bound a held-out
  part of it supports (Clopper-Pearson); per language and domain, with the pooled fallback; the
  calibration file, tied to one fitted model;
- calibrate_model: one fitted detector calibrated on its task's reference code, and the calibrated
  view on its test split (`python -m aicd.scoring calibrate`);
- deploy: the thresholds `aicd detect` holds files to, and where they came from;
- transductive: the threshold adapted to the unlabelled test set (an option, never the default);
- confidence: calibration error and macro-F1 where the detector is confident;
- loco: what leave one collection out reads of a detector on each held-out collection;
- external: any predictions file scored against any gold file (`aicd score`, `aicd compare`);
- submission: hidden-label submissions checked and scored."""

from .scorer import score  # the package's one export

__all__ = ["score"]
