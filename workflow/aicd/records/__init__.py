"""What a run is made of and leaves on record (ground floor: imports no stage).

- runs: which run a results root belongs to (RESULTS/run.json), so one never rewrites another;
- baserun: a run built on a finished one (`base: ROOT`), reading the base's files;
- fingerprint: what a result tree was made from, in one short hash (`python -m aicd.records.fingerprint`);
- pinned_files: exact package files named with their sha256, fetched once and verified on read."""
