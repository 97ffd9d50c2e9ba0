"""Features stage: TF-IDF+SVD, tree-sitter AST features and their concatenation,
fitted on a task's train split once and reused by every detector that needs them."""
