"""Generation stage: per generator model, code written through litellm under five protocols
(inverse instruction, docstring, hybrid rewrite, hybrid completion, adversarial) (`python -m aicd.generate`).

- registry: the generator registry (config/models.yaml), validated, and which models are reachable;
- protocols: which human rows each protocol uses and the prompt it sends;
- run: source rows -> prompts -> one model's answers, with provenance, tokens and cost;
- answers: an answer cut where it starts its program over, a block that lost its opening fence."""
