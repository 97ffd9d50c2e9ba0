"""Every module the docs name exists: the `aicd.x.y` names and `workflow/aicd/...py` paths in the
package's docstrings, README.md, DEVELOPERS.md, docs/*.md and config/README.md each resolve to a
module, a package or an attribute of one (aicd.lm.stats.criterion), so a moved or renamed module
cannot leave a guide pointing at nothing; and every package's docstring names each module it
holds."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PKG = REPO / "workflow" / "aicd"
GUIDES = ["README.md", "DEVELOPERS.md", "CHANGELOG.md", "config/README.md", *sorted(str(p.relative_to(REPO))
                                                                  for p in (REPO / "docs").glob("*.md"))]

# aicd.x.y (not inside another dotted name or a path), and workflow/aicd/... paths to a module or a folder
DOTTED = re.compile(r"(?<![\w./-])aicd(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"(?<![\w./-])(?:workflow/)?aicd/(?:\w+/)*(?:\w+\.py|\w+/)")


# Not modules: the file docs/adding_a_detector.md has the reader write.
EXAMPLES = {"workflow/aicd/detectors/ridge.py"}


@cache
def container_labels() -> frozenset[str]:
    """The labels the sandbox puts on its containers and images (`aicd.owner`, `aicd.job`, ...):
    dotted like a module, read from the sandbox's own string constants."""
    strings = (n.value for p in (PKG / "sandbox").glob("*.py") for n in ast.walk(ast.parse(p.read_text()))
               if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return frozenset(s for s in strings if DOTTED.fullmatch(s))


def named(text: str) -> set[str]:
    """The dotted names and package paths a text mentions, less the labels and examples above."""
    return (set(DOTTED.findall(text)) | set(PATH.findall(text))) - container_labels() - EXAMPLES


def _has(obj, name: str) -> bool:
    """An attribute, or a field a class declares only by annotation (a dataclass field, a Protocol's)."""
    if hasattr(obj, name):
        return True
    if isinstance(obj, type):
        fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
        return name in fields or any(name in getattr(k, "__annotations__", {}) for k in obj.__mro__)
    return False


def resolves(name: str) -> bool:
    """A path: the file or folder exists. A dotted name: its longest module prefix imports and the
    rest are attributes of it."""
    if "/" in name:
        return (REPO / "workflow" / name.removeprefix("workflow/")).exists()
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            obj = importlib.import_module(module)
            for attribute in parts[i:]:
                if not _has(obj, attribute):
                    return False
                obj = getattr(obj, attribute, None)
            return True
    return False


def unresolved(text: str) -> list[str]:
    return sorted(n for n in named(text) if not resolves(n))


def docstrings(path: Path) -> str:
    tree = ast.parse(path.read_text())
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)))]
    return "\n".join(filter(None, (ast.get_docstring(n, clean=False) for n in nodes)))


def modules():
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("guide", GUIDES)
def test_every_module_a_guide_names_exists(guide):
    missing = unresolved((REPO / guide).read_text())
    assert not missing, f"{guide} names what does not exist: {missing}"


def test_every_module_a_docstring_names_exists():
    missing = {str(p.relative_to(PKG)): bad for p in modules() if (bad := unresolved(docstrings(p)))}
    assert not missing, f"docstrings name what does not exist: {missing}"


def unlisted(package: Path) -> list[str]:
    """The modules and subpackages of a package its docstring does not list with what it holds: as
    a list item (`- name: ...`, `- a, name: ...`), `name:` or in backticks; the ordinary word in
    prose (run, pool, cache) does not count."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    held = [p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")]
    held += [p.parent.name for p in package.glob("*/__init__.py")]
    listed = r"^\s*[-*]\s*(\w+,\s*)*{0}\b|`{0}`|(?<![\w.]){0}(/|\.py)?:"
    return sorted(name for name in held if not re.search(listed.format(name), doc, re.MULTILINE))


@pytest.mark.parametrize("package", sorted(p.parent for p in PKG.rglob("__init__.py") if p.parent != PKG),
                         ids=lambda p: str(p.relative_to(PKG)))
def test_every_package_docstring_lists_what_it_holds(package):
    missing = unlisted(package)
    assert not missing, f"the docstring of {package.relative_to(PKG)}/__init__.py does not name {missing}"


def test_the_checker_finds_a_wrong_name(tmp_path):
    text = ("The rewrites (aicd.splits.perturb; aicd.codetools.perturb.no_such_rewrite) and the fingerprint "
            "(workflow/aicd/fingerprint.py) moved; aicd.lm.stats.criterion, aicd.records.fingerprint, "
            "workflow/aicd/records/runs.py, aicd/codetools/ and aicd.detectors.base.Detector.storage are real.")
    guide = tmp_path / "guide.md"
    guide.write_text(text)
    assert unresolved(guide.read_text()) == ["aicd.codetools.perturb.no_such_rewrite", "aicd.splits.perturb",
                                             "workflow/aicd/fingerprint.py"]
    assert "aicd.lm.stats.criterion" in named(text) and "aicd/codetools/" in named(text)
    # a docstring is read too, and a dotted name inside another one (skops.io) or a path is not an aicd name
    module = tmp_path / "mod.py"
    module.write_text('"""Reads aicd.no_such_module."""\n\ndef f():\n    """Writes skops.io files to ~/.cache/aicd/x."""\n')
    assert unresolved(docstrings(module)) == ["aicd.no_such_module"]
    # a package whose docstring leaves a module out
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text('"""A package that will run and cache.\n\n- reader: reads things."""\n')
    for name in ("reader", "writer", "run", "cache", "__main__"):
        (tmp_path / "pkg" / f"{name}.py").write_text("")
    assert unlisted(tmp_path / "pkg") == ["cache", "run", "writer"]  # the words in prose do not list them


def test_benchmarks_md_keeps_to_its_400_lines():
    """BENCHMARKS.md keeps each area's current figures only (detail goes to benchmarks/notes/)."""
    lines = (REPO / "BENCHMARKS.md").read_text().count("\n")
    assert lines <= 400, f"BENCHMARKS.md has {lines} lines: move detail into its area's note"
