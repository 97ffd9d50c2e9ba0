"""Static check of envs/*.yaml (conda cannot be reached here, so the environments are never
built in CI): every rule names one of the environments, and every third-party package that
the module it runs imports (following aicd's own imports, module-level and lazy) is listed
in that environment and pinned in pyproject.toml. Each environment installs this package
(its post-deploy script), so `--sdm conda` needs no PYTHONPATH."""

from __future__ import annotations

import ast
import functools
import importlib.metadata as md
import re
import sys
from pathlib import Path

import pytest
import yaml
from components import require_extra

REPO = Path(__file__).resolve().parents[3]
PKG = REPO / "workflow"
# conda-forge names that differ from the PyPI distribution an import comes from
CONDA_TO_PYPI = {"pytorch": "torch", "pyyaml": "pyyaml", "python": None, "pip": None}
# Imports reached only on paths a rule group never takes, with the reason. The detector rules
# run `python -m aicd.detectors` in the environment each kind declares (Detector.environment):
# the kinds that import torch declare neural (test_kinds_that_need_torch_declare_neural); so do
# feature kinds, for the features rule and the detectors reading them (feature_env).
NEURAL = {"torch", "transformers", "accelerate", "tokenizers"}
NOT_ON_PATH = {"core": NEURAL}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def env_packages(path: Path) -> set[str]:
    spec = yaml.safe_load(path.read_text())
    names = set()
    for dep in spec["dependencies"]:
        entries = dep["pip"] if isinstance(dep, dict) else [dep]
        for entry in entries:
            name = re.split(r"[<>=!~ \[@]", entry, maxsplit=1)[0]
            name = CONDA_TO_PYPI.get(name, name)
            if name:
                names.add(norm(name))
    return names


def kind_environments() -> set[str]:
    from aicd.detectors import REGISTRY

    return {cls.traits({}).environment for cls in REGISTRY.values()} | {
        cls.traits(p).environment for cls in REGISTRY.values() for p in getattr(cls, "ENVIRONMENT_PARAMS", [])}


def feature_environments() -> set[str]:
    from aicd.features.registry import FEATURIZERS

    return {getattr(cls, "environment", "core") for cls in FEATURIZERS.values()}


def rules() -> list[tuple[str, str, str]]:
    """(rule, env name, module) for every rule with a shell command; a rule whose environment is
    its detector's (conda: detector_env) or its feature set's (feature_env) once per environment
    the detector or feature kinds declare."""
    out = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule \w+:)", smk.read_text()):
            m = re.match(r"rule (\w+):", block)
            if not m or "shell:" not in block:
                continue
            env = re.search(r'conda:\s+env\("(\w+)"\)', block)
            per_kind = re.search(r"conda:\s+(detector_env|feature_env)\b", block)
            module = re.search(r"python -m (aicd[\w.]*)", block)
            assert (env or per_kind) and module, \
                f"rule {m.group(1)} ({smk.name}): needs conda: env(...), detector_env or feature_env, and `python -m aicd.X`"
            declared = kind_environments() if per_kind and per_kind.group(1) == "detector_env" else feature_environments()
            for name in [env.group(1)] if env else sorted(declared):
                out.append((m.group(1) if env else f"{m.group(1)}[{name}]", name, module.group(1)))
    return out


def module_file(name: str) -> Path | None:
    if name.endswith(".__init__"):
        init = PKG.joinpath(*name.split(".")[:-1], "__init__.py")
        return init if init.is_file() else None
    base = PKG.joinpath(*name.split("."))
    for candidate in (base / "__main__.py", base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_in(path: Path, package: str) -> tuple[set[str], set[str], set[str]]:
    """(third-party imports anywhere in the file, aicd modules imported when the module is
    imported, aicd modules imported inside functions)."""
    tree = ast.parse(path.read_text())
    top_level = {id(n) for stmt in tree.body for n in ast.walk(stmt)
                 if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    third, own, lazy = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [(mod, [a.name for a in node.names])]
        else:
            continue
        for mod, names in targets:
            top = mod.split(".")[0]
            if top == "aicd":
                into = own if id(node) in top_level else lazy
                into.add(mod)
                for n in names or []:  # `from . import x` may name a submodule
                    into.add(f"{mod}.{n}")
            elif top and top not in sys.stdlib_module_names and top != "__future__":
                third.add(top)
    return third, own, lazy


@functools.cache  # many rules run the same module
def closure(start: str) -> frozenset[str]:
    """Third-party imports reachable from `python -m start`: aicd modules imported at module
    level (parent packages' __init__ included), plus those the entry module imports inside
    its functions; third-party imports anywhere in a reached module (lazy ones included: a
    detector imports catboost when it is fitted)."""
    seen, todo, third = set(), [(start, True)], set()
    while todo:
        name, entry = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        for i in range(1, len(parts)):  # importing a.b.c runs a/__init__, a/b/__init__
            todo.append((".".join(parts[:i]), False))
        path = module_file(name)
        if path is None:
            continue
        package = name if path.name in ("__main__.py", "__init__.py") else name.rsplit(".", 1)[0]
        t, own, lazy = imports_in(path, package)
        third |= t
        todo.extend((m, False) for m in own)
        if entry:
            todo.extend((m, False) for m in lazy)
        if path.name == "__main__.py":  # python -m a.b runs a/b/__init__ first
            todo.append((name + ".__init__", False))
    if "aicd.codetools.treesitter" in seen:  # grammars are imported by name (importlib), invisible to ast
        from aicd.codetools.treesitter import GRAMMARS

        third |= {module for module, _ in GRAMMARS.values()}
    return frozenset(third)


@functools.cache
def installed() -> dict[str, list[str]]:
    """Import name -> distributions (one scan of site-packages for all the tests)."""
    return md.packages_distributions()


def distributions(imports: set[str]) -> set[str]:
    """The installed distributions behind `imports`. An import that the `encoders` extra
    provides and that is not installed skips the test (fails under CI=true), naming the extra."""
    missing = sorted(top for top in imports if not installed().get(top))
    require_extra("encoders", *(top for top in missing if norm(top) in extra_packages("encoders")))
    assert not missing, f"imports {missing}: no installed distribution provides them (pip install -e '.[test,encoders]')"
    return {norm(d) for top in imports for d in installed()[top]}


@functools.cache
def pyproject() -> dict:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def requirement_name(requirement: str) -> str:
    return norm(re.split(r"[<>=!~ \[;@]", requirement, maxsplit=1)[0])


def extra_packages(extra: str) -> set[str]:
    return {requirement_name(d) for d in pyproject()["optional-dependencies"][extra]}


def pyproject_pins() -> set[str]:
    project = pyproject()
    deps = list(project["dependencies"]) + [d for extra in project["optional-dependencies"].values() for d in extra]
    return {requirement_name(d) for d in deps}


RULES = rules()


def test_every_rule_runs_in_a_listed_environment():
    envs = {p.stem for p in (REPO / "envs").glob("*.yaml")}
    assert {"core", "llm", "sandbox", "neural"} <= envs
    assert {env for _, env, _ in RULES} <= envs
    for rule, _, module in RULES:
        assert module_file(module), f"rule {rule}: no module {module}"


@pytest.mark.parametrize("rule,env,module", RULES, ids=[r for r, _, _ in RULES])
def test_rule_imports_only_what_its_environment_lists(rule, env, module):
    imports = closure(module) - NOT_ON_PATH.get(env, set())
    needed = distributions(imports)
    listed = env_packages(REPO / "envs" / f"{env}.yaml")
    assert not needed - listed, f"rule {rule} runs {module} in envs/{env}.yaml, which lacks {sorted(needed - listed)}"
    assert not needed - pyproject_pins(), f"{module}: not in pyproject.toml: {sorted(needed - pyproject_pins())}"


def test_kinds_that_need_torch_declare_neural():
    """A kind whose module imports torch (at once or inside a function) runs in the neural
    environment; one whose option does (robust's lm) declares neural for that option."""
    from aicd.detectors import REGISTRY

    for kind, cls in REGISTRY.items():
        path = module_file(cls.__module__)
        package = cls.__module__ if path.name == "__init__.py" else cls.__module__.rsplit(".", 1)[0]
        third, _, lazy = imports_in(path, package)
        if third & NEURAL:
            assert cls.traits({}).environment == "neural", f"kind {kind} imports {sorted(third & NEURAL)} in core"
        option_modules = {m for m in lazy if module_file(m) and imports_in(module_file(m), m.rsplit(".", 1)[0])[0] & NEURAL}
        if option_modules and cls.traits({}).environment != "neural":
            assert any(cls.traits(p).environment == "neural" for p in getattr(cls, "ENVIRONMENT_PARAMS", [])), \
                f"kind {kind} reaches {sorted(option_modules)} (torch) on an option, but declares no environment for it"


def test_feature_kinds_that_need_torch_declare_neural():
    """A feature kind whose module imports torch runs (and is applied) in the neural environment;
    the others declare none (core)."""
    from aicd.features.registry import FEATURIZERS

    needs = {}
    for kind, cls in FEATURIZERS.items():
        path = module_file(cls.__module__)
        third, _, lazy = imports_in(path, cls.__module__.rsplit(".", 1)[0])
        # torch in the module itself, or in a project module it imports when it runs (lm_stats: aicd.lm.stats)
        reached = {m for m in lazy if module_file(m) and imports_in(module_file(m), m.rsplit(".", 1)[0])[0] & NEURAL}
        needs[kind] = bool(third & NEURAL) or bool(reached)
        assert getattr(cls, "environment", "core") == ("neural" if needs[kind] else "core"), kind
    assert needs["code_embedding"] and needs["lm_stats"] and not needs["tfidf"]


@pytest.mark.parametrize("env", ["core", "llm", "sandbox", "neural"])
def test_every_environment_installs_this_package(env):
    script = REPO / "envs" / f"{env}.post-deploy.sh"
    assert script.is_file(), f"envs/{env}.post-deploy.sh is missing"
    text = script.read_text()
    assert "pip install" in text and "AICD_REPO" in text
