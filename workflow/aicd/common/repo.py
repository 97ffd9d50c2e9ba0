"""The checkout this package runs from (ground floor). The package is installed editable, so
files beside it (config/, containers/, the server's virtualenv) are found from its source."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
