"""Scoring stage: macro-F1 (primary), accuracy, per-class metrics, confusion matrices,
and the same broken down by every subset column of the test split."""
