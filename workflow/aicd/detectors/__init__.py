"""Detectors stage: one small class per detector family, registered by name.

Importing this package registers the built-in detector kinds (REGISTRY, aicd.detectors.base): its
`from . import ...` line names their modules (a new kind's module goes on it;
tests/unit/test_registry.py names one missing). The encoder module imports torch/transformers
only when an encoder is fitted."""

from . import classical, dummy, encoder, fast_detectgpt, hf_classifier, plugins, robust, zero_shot_lm  # noqa: F401  (registration)
from .base import REGISTRY, Detector, build, register  # noqa: F401
