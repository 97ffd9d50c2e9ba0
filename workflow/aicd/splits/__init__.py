"""Splits stage: task tables results/tasks/{task}/{split}.parquet (`python -m aicd.splits`).

Either derived from a source table with seeded, stratified splits, or loaded from a published
release (the AICD Bench task splits on the Hub, or local copies of them).

- tasks: a task's train/validation/test tables, derived from a source or a release;
- stratified: seeded stratified assignment of rows to the splits;
- benchmark: the paper's three tasks cut from the deduplicated pool;
- leakage: the leakage guards checked on every build;
- release_language: languages and test subsets for release tables without them;
- ood: the out-of-distribution protocol's splits;
- ood_task: one of them as a workflow task;
- loco: leave one collection out (each collection of sources held out in turn);
- test_sets: an extra test set of a task from any labelled source;
- perturbed_sets: a test set of the task's own test rows, rewritten (aicd.codetools.perturb);
- reference: human reference code for calibration, in no train or test split of the task."""

# The version of each recipe that cuts a task not of the paper's kinds (those carry their own in
# aicd/published.yaml), by the task's mode: written into every score file of such a task. Raise
# one when a change to its recipe changes the rows of the same inputs and settings.
RECIPE_VERSIONS = {"build": 1, "derive": 1, "release": 1, "ood": 1}
