"""What every stage shares, whatever it works on (ground floor: imports no stage).

- errors: AicdError, the one exception for mistakes a user can fix;
- io: atomic writers and small readers;
- params: parameter specs (type, default, where the default comes from) of the kinds' settings;
- defaults: a config key's default read from the config schema, for code outside a validated config;
- registry: the registry class of every pluggable kind (detectors, feature sets);
- stagecli: the command-line plumbing of every `python -m aicd.<stage>`;
- parallel: per-row work spread over a job's threads, results in input order;
- memguard: a job over its memory stops with a message naming the resource to raise;
- subprocesses: helper processes a job starts, never left behind;
- repo: the checkout the package runs from;
- words: a count said in words (1 file, 2 files);
- text_cache: values computed from a text (LM statistics, AST features, stylometry) kept once
  computed, shared by a run's jobs."""
