"""The shape of the data every stage passes on (ground floor: imports no stage).

- schema: the sample table's columns, labels, splits and canonical language names;
- families: generator name -> model family, the one mapping table;
- ids: a file's ids matched against the ids it must cover, told the same way everywhere;
- scores: what a predictions table's score_<class> columns hold;
- metrics: metrics and threshold rules of a machine score (AUROC, the best-F1 cut, thresholds at
  a target FPR, the machine score), their one home."""
