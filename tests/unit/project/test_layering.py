"""Package layering (README.md, Layout): the ground floor imports no stage, and each of its
packages only those before it; no stage imports a later stage; and no module takes a private
name (`_name`) from another top-level package. Read statically from every module's imports,
lazy ones included."""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[3] / "workflow" / "aicd"
# The ground floor, in order: each may import those before it, never a stage.
GROUND = ["common", "outputs", "data", "codetools", "records", "models", "published", "site_profile"]
# Above every stage: the `aicd` command, config validation (it checks detector kinds against the
# registry) and the plan with its record of the machine.
TOP = {"cli", "detect_cli", "submission_cli", "serve_cli", "config", "plan", "resolve"}
# Pipeline order: a stage may import the ground floor and the stages before it.
STAGES = ["sources", "llm", "generate", "sandbox", "normalize", "splits", "lm", "features", "detectors", "judge",
          "scoring", "adapt", "report"]


def imported_names(source: str, rel: tuple[str, ...]) -> list[list[str]]:
    """Every `aicd` name a module imports, as its path inside the package (relative imports
    resolved; `rel`: the module's own path, e.g. ("detectors", "apply")): `from ..sources.gather
    import read_file` in detectors/apply.py gives ["sources", "gather", "read_file"]."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:-node.level]) if node.level <= len(rel) - 1 else []
                module = base + (node.module.split(".") if node.module else [])
            elif node.module and (node.module + ".").startswith("aicd."):
                module = node.module.split(".")[1:]
            else:
                continue
            out += [module + [a.name] for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name.split(".")[1:] for a in node.names if a.name.startswith("aicd.")]
    return out


def module_names(path: Path) -> list[list[str]]:
    return imported_names(path.read_text(), path.relative_to(PKG).with_suffix("").parts)


def imported_parts(path: Path) -> set[str]:
    """First package component of every `aicd` import in a module."""
    return {parts[0] for parts in module_names(path) if parts}


def private_imports(names: list[list[str]], own: str) -> list[str]:
    """Imported names with a private part (`_read`, `_helpers.x`; never a dunder) taken from a
    top-level package other than `own`."""
    return [".".join(parts) for parts in names if parts and parts[0] != own
            and any(p.startswith("_") and not p.startswith("__") for p in parts)]


def modules():
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def top_level(path: Path) -> str:
    return path.relative_to(PKG).parts[0].removesuffix(".py")


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_stage_imports_a_later_stage(path):
    own = top_level(path)
    imported = imported_parts(path) - {own, "__init__", "__version__"}
    if own in TOP:
        return
    if own in GROUND:
        assert not imported & (set(STAGES) | TOP), f"ground-floor {own} imports {imported & (set(STAGES) | TOP)}"
        later = {g for g in imported if g in GROUND and GROUND.index(g) > GROUND.index(own)}
        assert not later, f"{path.relative_to(PKG)} ({own}) imports later ground-floor packages {sorted(later)}"
        return
    later = {s for s in imported if s in STAGES and STAGES.index(s) > STAGES.index(own)}
    assert not later, f"{path.relative_to(PKG)} ({own}) imports later stages {sorted(later)}"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_takes_a_private_name_from_another_package(path):
    taken = private_imports(module_names(path), top_level(path))
    assert not taken, f"{path.relative_to(PKG)} imports private {taken}: make it public where it is defined"


def test_the_private_import_check_sees_one():
    rel = ("detectors", "apply")
    assert private_imports(imported_names("from ..sources.gather import _read", rel), "detectors") == [
        "sources.gather._read"]
    assert private_imports(imported_names("def f():\n    from aicd.sources.ingest import _key\n", rel), "detectors")
    # a package's own private names, a public name and a dunder are fine
    assert not private_imports(imported_names("from .base import _check\nfrom .. import __version__\n"
                                              "from ..sources.gather import read_file", rel), "detectors")


def test_every_top_level_module_has_a_floor():
    """A new module or package is placed (ground, top or a stage), so the checks above apply to it."""
    placed = set(GROUND) | TOP | set(STAGES) | {"__init__", "__version__"}
    tops = [p.stem for p in PKG.glob("*.py")] + [p.parent.name for p in PKG.glob("*/__init__.py")]
    unplaced = sorted(name for name in tops if name not in placed)
    assert not unplaced, f"place {unplaced} in GROUND, TOP or STAGES"


def test_sources_and_the_llm_transport_do_not_import_normalisation():
    for stage in ("sources", "llm"):
        for path in (PKG / stage).rglob("*.py"):
            assert "normalize" not in imported_parts(path), path


def import_time_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports when it is imported (module-scope imports; a
    lazy import inside a function runs later and cannot close a circle at import)."""
    def name(path: Path) -> str:
        parts = list(path.relative_to(PKG).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    paths = {name(p): p for p in modules()}
    graph = {}
    for module, path in paths.items():
        rel = path.relative_to(PKG).with_suffix("").parts
        deps = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for parts in imported_names(ast.unparse(node), rel):
                    joined = ".".join(p for p in parts if p != "__init__")
                    deps.add(joined if joined in paths else ".".join(parts[:-1]))
        graph[module] = {d for d in deps if d in paths and d != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index, low, stack, found = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle():
    graph = import_time_graph()
    assert graph["plan.core"] >= {"published", "plan.generation"}  # the graph sees imports
    assert circles(graph) == []
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
