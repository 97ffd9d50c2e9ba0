"""Detectors stage: one small class per detector family, registered by name.

Importing this package registers the built-in detectors (dummy and classical)."""

from .base import REGISTRY, Detector, build, register  # noqa: F401
from . import classical, dummy  # noqa: F401  (registration side effect)
