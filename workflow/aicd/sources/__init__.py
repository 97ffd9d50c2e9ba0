"""Sources stage: load tables (Hub or local files, pinned package files) and turn them into the
sample schema (`python -m aicd.sources`).

- build: one source table with its report (rows read, rows removed, inputs read);
- loader: every table through `datasets.load_dataset`, from the Hub or local files;
- ingest: a raw table into the sample schema, each removed row counted by reason;
- gather: human code gathered from pinned package files or folders on this machine;
- pinned: the pinned package files a source names (`pinned:NAME`), verified;
- pinned_table: a data table inside a pinned package file (`pinned_table: NAME`: HumanEval);
- problem_tests: per-problem test cases joined onto a source's rows."""
