"""config/README.md's parameter tables are hand-written beside their sources: the config schema
(workflow/schemas/config.schema.yaml, completed by aicd.config.schema) and the kinds'
ParamSpecs (aicd.common.params). Every row is compared with its source here, by name, type and
default, and a failure names the row, so a changed default or a renamed key cannot leave the
reference saying another. Prose cells (`the kind's`, `below`, a default that lives in code)
are left alone: only a backticked value is a claim about the default."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
import yaml
from aicd.config import schema

README = Path(__file__).resolve().parents[3] / "config" / "README.md"
PARAMS_HEADER = "| parameter | type | default | from | meaning |"
KEYS_HEADERS = ("| key | type | default | meaning |", "| key | type | meaning |")
# `## heading` of a key table -> where its keys live in the schema
SECTIONS = {"Top-level keys": (), "tasks": ("definitions", "task"), "sources": ("definitions", "source"),
            "features": ("definitions", "featureset"), "detectors": ("definitions", "detector"),
            "dataset": ("dataset",), "llm": ("llm",), "generation": ("generation",), "judging": ("judging",),
            "execution": ("execution",), "calibration": ("calibration",)}
# README type words for a JSON type (a name or path is a string; a map an object)
TYPE_WORDS = {"integer": ("integer",), "number": ("number",), "string": ("string", "name", "path"),
              "boolean": ("boolean",), "null": ("null",), "array": ("list",), "object": ("object", "map")}


def cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


@cache
def tables() -> list[tuple[str, str, str, list[list[str]]]]:
    """(the `##` heading, the `###` heading or "", the header line, rows) of every table."""
    out, h2, h3, lines = [], "", "", README.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            h2, h3 = line[3:].strip(), ""
        elif line.startswith("### "):
            h3 = line[4:].strip()
        elif line.startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(cells(lines[j]))
                j += 1
            out.append((h2, h3, line.strip(), rows))
            i = j
            continue
        i += 1
    return out


def spec_rows(spec) -> dict[str, list[str]]:
    """name -> [type, default, from] as ParamSpec.markdown writes them."""
    rows = {}
    for line in spec.markdown().splitlines()[2:]:
        name, kind, default, source, _ = cells(line)
        rows[name] = [kind, default, source]
    return rows


@cache
def specs() -> dict:
    """`### heading` -> ParamSpec, for every kind this package ships and the sandbox's limits."""
    from aicd.detectors import REGISTRY
    from aicd.features.registry import FEATURIZERS
    from aicd.sandbox.pool import LIMITS

    out = {"execution.limits": LIMITS}
    for registry in (REGISTRY, FEATURIZERS):
        out.update({kind: cls.PARAMS for kind, cls in registry.items() if cls.__module__.startswith("aicd.")})
    return out


def param_tables():
    return [(h3, rows) for h2, h3, header, rows in tables() if header == PARAMS_HEADER]


def test_the_readme_was_read():
    assert len(param_tables()) >= 15
    assert sum(len(rows) for *_, rows in tables()) > 200


@pytest.mark.parametrize("heading, rows", param_tables(), ids=[h for h, _ in param_tables()])
def test_a_parameter_table_is_its_kinds_spec(heading, rows):
    assert heading in specs(), f"config/README.md: `### {heading}` names no kind with a ParamSpec"
    spec = spec_rows(specs()[heading])
    for name, kind, default, source, _ in rows:
        here = f"config/README.md, ### {heading}, row {name}"
        assert name in spec, f"{here}: no such parameter (the spec has {', '.join(spec)})"
        assert [kind, default, source] == spec[name], \
            f"{here}: says type/default/from {[kind, default, source]}, the spec {spec[name]}"
    missing = set(spec) - {r[0] for r in rows}
    assert not missing, f"config/README.md, ### {heading}: no row for {sorted(missing)}"


def test_every_kind_with_parameters_has_its_table():
    documented = {h for h, _ in param_tables()}
    missing = [kind for kind, spec in specs().items() if spec.params and kind not in documented]
    assert not missing, f"config/README.md has no parameter table for {missing}"


# ---------------------------------------------------------------- the schema's keys


@cache
def full_schema() -> dict:
    return schema()


def resolved(node: dict) -> dict:
    while "$ref" in node:  # "#/definitions/NAME"
        node = full_schema()["definitions"][node["$ref"].rsplit("/", 1)[1]]
    return node


def schema_node(section: tuple, key: str) -> dict | None:
    """The schema of `key` (dotted: reference.per_language) in a section; None where absent."""
    node = full_schema()
    if section[:1] == ("definitions",):
        node, section = node["definitions"][section[1]], ()
    for part in (*section, *key.split(".")):
        node = (resolved(node).get("properties") or {}).get(part)
        if node is None:
            return None
    return resolved(node)


def filled(node: dict):
    """The default a config gets: an object's default with its own keys' defaults filled in."""
    value = node.get("default")
    if isinstance(value, dict) and "properties" in node:
        value = {**{k: filled(v) for k, v in node["properties"].items() if "default" in v}, **value}
    return value


def json_types(node: dict) -> set[str]:
    node = resolved(node)
    types = node.get("type", [])
    out = {types} if isinstance(types, str) else set(types)
    for alternative in node.get("oneOf", []) + node.get("anyOf", []):
        out |= json_types(alternative)
    if "additionalProperties" in node and isinstance(node["additionalProperties"], dict):
        out.add("object")
    return out


def said_types(said: str) -> set[str]:
    """The JSON types a type cell names: each alternative (`a or b`, `a / b`) by its head word
    (`list of string` is a list, `source name` a string); a backticked value is no type."""
    out = set()
    for alternative in re.split(r",? or |,? / ", said):
        alternative = alternative.strip()
        if alternative.startswith("`"):
            continue
        if alternative.startswith("path(s)"):  # one path or a list of them
            out |= {"string", "array"}
            continue
        head = next((t for t, words in TYPE_WORDS.items() if alternative.startswith(words)), None)
        head = head or next((t for t, words in TYPE_WORDS.items() for w in words
                             if re.search(rf"\b{w}", alternative)), None)
        if head:
            out.add(head)
    return out


def key_rows():
    out = []
    for h2, h3, header, rows in tables():
        if header in KEYS_HEADERS and not h3 and h2 in SECTIONS:
            out += [(h2, row) for row in rows]
    return out


def readme_key(cell: str) -> list[str]:
    """`a`, `b` (required) -> ["a", "b"]."""
    return re.findall(r"`([\w.]+)`", cell.split("(")[0] if "(" in cell else cell)


@pytest.mark.parametrize("section, row", key_rows(), ids=[f"{s}:{r[0]}" for s, r in key_rows()])
def test_a_key_row_is_the_schema(section, row):
    names = readme_key(row[0])
    assert names, f"config/README.md, ## {section}: a row names no key: {row[0]}"
    nodes = {name: schema_node(SECTIONS[section], name) for name in names}
    # a row of several keys (`names`, `splits`, `data_dir`) gives the types they take between them
    allowed = set().union(*(json_types(n) | ({"string"} if "enum" in n else set()) for n in nodes.values() if n))
    for name, node in nodes.items():
        here = f"config/README.md, ## {section}, row {name}"
        assert node is not None, f"{here}: the schema has no such key"
        said = row[1]
        if "enum" in node and re.fullmatch(r"`[^`]+`( \\\| `[^`]+`)+", said):
            values = [v if isinstance(v, str) else json.dumps(v) for v in node["enum"]]  # True as `true`
            assert sorted(re.findall(r"`([^`]+)`", said)) == sorted(values), \
                f"{here}: says {said}, the schema's values are {node['enum']}"
        elif said and json_types(node):
            assert said_types(said) <= allowed, f"{here}: says type {said!r}, the schema {sorted(json_types(node))}"
        if len(row) == 4:
            default = re.match(r"`([^`]*)`", row[2])
            if default:  # a backticked default is the schema's (or, for an object, with its keys filled)
                value = yaml.safe_load(default.group(1))
                assert "default" in node, f"{here}: says default {row[2]}, the schema gives none"
                assert value in (node["default"], filled(node)), \
                    f"{here}: says default {row[2]}, the schema {node['default']!r}"
            elif "default" in node and not row[2]:
                pytest.fail(f"{here}: gives no default, the schema {node['default']!r}")


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_every_schema_key_has_its_row(section):
    rows = {name.split(".")[0] for s, row in key_rows() if s == section for name in readme_key(row[0])}
    where = SECTIONS[section]
    node = (full_schema() if not where else full_schema()["definitions"][where[1]] if where[0] == "definitions"
            else full_schema()["properties"][where[0]])
    missing = sorted(k for k in resolved(node).get("properties", {}) if k not in rows)
    assert not missing, f"config/README.md, ## {section}: no row for {missing}"
