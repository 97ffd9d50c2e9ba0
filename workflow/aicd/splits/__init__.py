"""Splits stage: task tables results/tasks/{task}/{split}.parquet.

Either derived from a source table with seeded, stratified splits, or loaded from a published
release (the AICD Bench task splits on the Hub, or local copies of them)."""
