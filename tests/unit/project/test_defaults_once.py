"""Every default has one home: the config schema (filled in by validation) or a kind's
ParamSpec. Code outside a validated config reads the schema's value (aicd.common.defaults)
rather than restating it, so a changed schema default changes every run that uses it."""

import ast
from pathlib import Path

import pytest
import yaml
from aicd.common.defaults import schema_default
from aicd.config import validate_config


def test_schema_default_is_the_value_validation_fills_in(repo):
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    for section in ("calibration", "seed"):
        config.pop(section, None)  # left to the schema
    validate_config(config)
    for key in ("calibration.view_fpr", "calibration.held_out", "calibration.floor", "seed"):
        node = config
        for part in key.split("."):
            node = node[part]
        assert schema_default(key) == node, key


@pytest.mark.parametrize("key, said", [("calibration.no_such_key", "has no key"),
                                       ("calibration.fprs", "no default")])  # fprs: filled in by aicd.config.schema
def test_schema_default_names_a_key_without_one(key, said):
    with pytest.raises(KeyError, match=said):
        schema_default(key)


# ---------------------------------------------------------------- restated values, scanned for
#
# The values once written again beside their home, by the names they go under: a keyword
# default (`resamples: int = 1000`), an option's default (`--fpr`, default=0.05), a config
# fallback (`spec.get("held_out", 0.5)`), a `next(...)` fallback to the view's FPR (the report's
# heading when no view was made), and a module constant of a home's name set to a literal
# outside that home. Narrow on purpose: only these names with these values, so an
# unrelated 0.5 (a sleep, a margin) never trips it; a name holding its home's value is fine.

PKG = Path(__file__).resolve().parents[3] / "workflow" / "aicd"
RESTATED = {"fpr": 0.05, "view_fpr": 0.05, "held_out": 0.5, "resamples": 1000, "validation_fraction": 0.2,
            "test_fraction": 0.2, "fraction": 0.05}  # fraction: judging.fraction
# constant -> the one module that may set it to a literal (the others import it)
HOMES = {"RESAMPLES": "scoring/bootstrap.py", "VALIDATION_FRACTION": "splits/loco.py", "TEST_FRACTION": "splits/ood.py",
         "VIEW_FPR": None, "HELD_OUT": None}  # None: read from the schema, set to a literal nowhere


def _literal(node, name: str) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == RESTATED[name]


def restatements(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args.posonlyargs + node.args.args
            pairs = list(zip(args[len(args) - len(node.args.defaults):], node.args.defaults))
            pairs += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
            found += [f"{where}:{d.lineno} {a.arg}={d.value!r}" for a, d in pairs
                      if a.arg in RESTATED and _literal(d, a.arg)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "add_argument" and node.args and isinstance(node.args[0], ast.Constant):
                name = str(node.args[0].value).lstrip("-").replace("-", "_")
                found += [f"{where}:{k.value.lineno} {node.args[0].value} default={k.value.value!r}"
                          for k in node.keywords if k.arg == "default" and name in RESTATED and _literal(k.value, name)]
            elif node.func.attr == "get" and len(node.args) == 2 and isinstance(node.args[0], ast.Constant) \
                    and node.args[0].value in RESTATED and _literal(node.args[1], node.args[0].value):
                found.append(f"{where}:{node.lineno} .get({node.args[0].value!r}, {node.args[1].value!r})")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "next" \
                and len(node.args) == 2 and _literal(node.args[1], "view_fpr"):
            found.append(f"{where}:{node.lineno} next(..., {node.args[1].value!r})")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            found += [f"{where}:{node.lineno} {t.id} = {node.value.value!r}" for t in node.targets
                      if isinstance(t, ast.Name) and t.id in HOMES and HOMES[t.id] != where]
    return found


def test_no_module_restates_a_default_it_should_read():
    found = [hit for path in sorted(PKG.rglob("*.py")) if "__pycache__" not in path.parts
             for hit in restatements(path.read_text(), path.relative_to(PKG).as_posix())]
    assert not found, ("restated defaults (read calibration.* with aicd.common.defaults.schema_default, or import "
                       f"the named constant: {', '.join(f'{k} from {v}' for k, v in HOMES.items() if v)}): {found}")


def test_the_scan_finds_each_form():
    source = ("RESAMPLES = 1000\nVIEW_FPR = 0.05\n"
              "def f(resamples: int = 1000, held_out=0.5, *, fpr=0.05, seed=0):\n    pass\n"
              "parser.add_argument('--validation-fraction', type=float, default=0.2)\n"
              "x = spec.get('test_fraction', 0.2)\n"
              "fpr = next((v for v in views), 0.05)\n"
              "ok = spec.get('held_out', HELD_OUT), time.sleep(0.5), g(resamples=0)\n")
    assert [hit.split(" ", 1)[1] for hit in restatements(source, "m.py")] == [
        "RESAMPLES = 1000", "VIEW_FPR = 0.05", "resamples=1000", "held_out=0.5", "fpr=0.05",
        "--validation-fraction default=0.2", ".get('test_fraction', 0.2)", "next(..., 0.05)"]
    assert restatements("RESAMPLES = 1000\n", "scoring/bootstrap.py") == []  # its home


# A config fallback, `section.get("key", value)` with the value the schema gives that key: the
# form most of the restated defaults took (dedup, MinHash, llm, the plan's). Matched by the
# key's name and value, so `.get("enabled", True)` is caught whichever section it reads; the
# exceptions read something other than a config and are kept on purpose.
KEPT = {
    # a saved calibration file: one written before the floor was recorded had none, i.e. 0, whatever the schema says now
    ("scoring/deploy.py", "floor"),
    # the sandbox's execute job (its own module, changed separately)
    ("sandbox/execute.py", "workers"),
}


def schema_defaults_by_name() -> dict[str, list]:
    """key name -> the defaults the schema gives keys of that name, anywhere in it."""
    from aicd.config import schema

    out: dict[str, list] = {}

    def walk(node, name):
        if not isinstance(node, dict):
            return
        if name is not None and "default" in node and node["default"] is not None:
            out.setdefault(name, []).append(node["default"])
        for key, sub in (node.get("properties") or {}).items():
            walk(sub, key)
        for sub in (node.get("definitions") or {}).values():
            walk(sub, None)
        for key in ("allOf", "oneOf", "anyOf"):
            for sub in node.get(key) or []:
                walk(sub, name)
        for key in ("then", "else"):
            walk(node.get(key), name)

    walk(schema(), None)
    return out


def config_fallbacks(source: str, where: str, defaults: dict) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and len(node.args) == 2 and all(isinstance(a, ast.Constant) for a in node.args):
            key, value = node.args[0].value, node.args[1].value
            if (where, key) not in KEPT and any(d == value and type(d) is type(value) for d in defaults.get(key, ())):
                found.append(f"{where}:{node.lineno} .get({key!r}, {value!r})")
    return found


def test_no_config_fallback_restates_the_schemas_default():
    defaults = schema_defaults_by_name()
    found = [hit for path in sorted(PKG.rglob("*.py")) if "__pycache__" not in path.parts
             for hit in config_fallbacks(path.read_text(), path.relative_to(PKG).as_posix(), defaults)]
    assert not found, ("config fallbacks that restate the schema's default (read it: "
                       f"aicd.common.defaults.schema_default(\"section.key\")): {found}")


def test_the_fallback_scan_matches_name_and_value():
    defaults = {"threshold": [0.8], "enabled": [True]}
    source = "a = d.get('threshold', 0.8)\nb = d.get('threshold', 0.9)\nc = d.get('enabled', 1)\ne = d.get('other', 0.8)\n"
    assert config_fallbacks(source, "m.py", defaults) == ["m.py:1 .get('threshold', 0.8)"]
