"""Package layering (ARCHITECTURE.md): the ground floor imports no stage, and no stage imports
a later stage (read statically from every module's imports, lazy ones included)."""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "workflow" / "aicd"
GROUND = {"schema", "io", "errors", "codetext", "treesitter", "families", "fingerprint", "stagecli", "params", "registry",
          "pinned_files", "local_models", "subprocesses",
          "parallel", "memguard", "pretrained", "fitted_files", "library_formats", "published", "scores", "ids",
          "runs", "baserun", "site_profile", "bindings"}
# Above every stage: the `aicd` command and config validation (it checks detector kinds against the registry).
TOP = {"cli", "submission_cli", "serve_cli", "config", "plan", "resolve"}
# Pipeline order: a stage may import the ground floor and the stages before it.
STAGES = ["sources", "llm", "generate", "sandbox", "normalize", "splits", "lm", "features", "detectors", "judge",
          "scoring", "report"]


def imported_parts(path: Path) -> set[str]:
    """First package component of every `aicd` import in a module (relative imports resolved)."""
    rel = path.relative_to(PKG).with_suffix("").parts
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:-node.level]) if node.level <= len(rel) - 1 else []
                parts = base + (node.module.split(".") if node.module else [a.name for a in node.names])
            elif node.module and node.module.startswith("aicd."):
                parts = node.module.split(".")[1:]
            else:
                continue
            if parts:
                out.add(parts[0])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("aicd.")}
    return out


def modules():
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_stage_imports_a_later_stage(path):
    own = path.relative_to(PKG).parts[0].removesuffix(".py")
    imported = imported_parts(path) - {own, "__init__", "__version__"}
    if own in TOP:
        return
    if own in GROUND:
        assert not imported & (set(STAGES) | TOP), f"ground-floor {own} imports {imported & (set(STAGES) | TOP)}"
        return
    later = {s for s in imported if s in STAGES and STAGES.index(s) > STAGES.index(own)}
    assert not later, f"{path.relative_to(PKG)} ({own}) imports later stages {sorted(later)}"


def test_every_top_level_module_has_a_floor():
    """A new module is placed (ground, top or a stage), so the check above can apply to it."""
    placed = GROUND | TOP | set(STAGES) | {"__init__", "__version__"}
    unplaced = sorted(p.stem for p in PKG.glob("*.py") if p.stem not in placed)
    assert not unplaced, f"place {unplaced} in GROUND, TOP or STAGES"


def test_sources_and_the_llm_transport_do_not_import_normalisation():
    for stage in ("sources", "llm"):
        for path in (PKG / stage).rglob("*.py"):
            assert "normalize" not in imported_parts(path), path
