"""No function in the `aicd` package is over 80 lines, from its `def` to its last line (methods
and nested functions included): a longer one is split into parts that each do one thing."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[3] / "workflow" / "aicd"
MAX_LINES = 80


def function_lengths(source: str, module: str) -> dict[str, int]:
    """'module:Qualified.name' -> lines, for every function and method of a module's source."""
    lengths = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    lengths[f"{module}:{name}"] = child.end_lineno - child.lineno + 1
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return lengths


def package_function_lengths() -> dict[str, int]:
    lengths = {}
    for path in sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts):
        lengths.update(function_lengths(path.read_text(), path.relative_to(PKG).as_posix()))
    return lengths


def test_no_function_is_over_80_lines():
    lengths = package_function_lengths()
    assert len(lengths) > 1000  # the whole package was read
    too_long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert not too_long, f"functions over {MAX_LINES} lines (split them into parts): {too_long}"


def test_methods_and_nested_functions_are_measured_each_under_its_own_name():
    body = "\n".join(f"            x{i} = {i}" for i in range(MAX_LINES))
    source = (f"class A:\n    def run(self):\n        def inner():\n{body}\n        return inner\n\n"
              "class B:\n    def run(self):\n        pass\n")
    assert function_lengths(source, "m.py") == {"m.py:A.run": MAX_LINES + 3, "m.py:A.run.inner": MAX_LINES + 1,
                                                "m.py:B.run": 2}
