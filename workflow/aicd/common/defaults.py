"""The config schema's defaults, read where code needs one outside a validated config (a
stage's standalone CLI, a function's keyword default). The schema
(workflow/schemas/config.schema.yaml) is their one home: a module that restated a value here
would drift from the workflow's runs the day the schema changes.

Ground floor, so any stage may read a default: it parses the YAML alone, without the
detector and feature registries that aicd.config.schema() adds (and without jsonschema)."""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


@lru_cache(maxsize=1)
def _raw_schema() -> dict:
    # the C loader where built (a sixth of the pure-Python parse: this runs as a CLI starts)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(SCHEMA_PATH.read_text(), Loader=loader)


def schema_default(key: str) -> Any:
    """The schema's `default:` of a config key given as a dotted path of properties
    ("calibration.view_fpr"; "definitions.task.release.identify_language" inside an entry the
    schema defines once); KeyError naming the key where the schema declares no default."""
    full = node = _raw_schema()
    parts = key.split(".")
    if parts[0] == "definitions" and len(parts) > 1 and parts[1] in full["definitions"]:
        node, parts = full["definitions"][parts[1]], parts[2:]
    for part in parts:
        while "$ref" in node:  # "#/definitions/NAME": a section the schema defines once (dataset)
            node = full["definitions"][node["$ref"].rsplit("/", 1)[1]]
        node = (node.get("properties") or {}).get(part)
        if node is None:
            raise KeyError(f"the config schema has no key {key!r}")
    if "default" not in node:
        raise KeyError(f"the config schema gives {key!r} no default")
    return copy.deepcopy(node["default"])  # a list or mapping: the caller's own, never the cached schema's
