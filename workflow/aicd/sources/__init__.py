"""Sources stage: load tables (Hub or local files) and turn them into the sample schema."""
