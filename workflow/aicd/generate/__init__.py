"""Generation stage: per generator model, code written through litellm under four protocols
(inverse-instruction, docstring-conditioned, hybrid, adversarial)."""
