"""Features stage: feature sets fitted on a task's train split once and reused by every detector
that needs them (`python -m aicd.features`).

- base: the featurizer interface and the feature kinds' registry;
- registry: the kinds by name (importing it registers them), concatenation, reading a fitted one;
- tfidf: the paper's TF-IDF + SVD;
- ast_features: the paper's tree-sitter AST features;
- canonical: TF-IDF + SVD over the canonical token stream (`canon_tfidf`);
- structure: language-agnostic syntax statistics, blind to every rewrite;
- stylometry: the stylometric columns the `robust` detector reads;
- stylometry_set: those columns as a feature set, optionally on the invariant text;
- embedding: frozen encoder embeddings;
- lm_stats: a causal LM's token statistics;
- lm_criteria: the zero-shot criteria as columns, oriented and standardised per language;
- standardise: per-language standardisation on human training rows;
- compute: one feature set computed, split by split and block by block;
- store: a feature set's on-disk form (.npz);
- tables: a task's split tables, read for the features and detectors stages;
- rows: what a featurizer reads of its input table."""
