"""The suite's own layout: pytest (rootdir-based "prepend" imports) imports a test module outside
a package by its basename, so two such files of one name in different folders stop the whole
session at collection ("import file mismatch"); a folder with __init__.py gives its modules a
package name of their own."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def import_name(path: Path) -> str:
    """The name pytest imports a test file as: its basename, prefixed by the packages above it."""
    parts, folder = [path.stem], path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def test_no_two_test_modules_share_an_import_name():
    names = Counter(import_name(p) for p in TESTS.rglob("test_*.py"))
    assert not [n for n, count in names.items() if count > 1]


def test_the_rule_sees_a_clash(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "test_x.py").write_text("")
    assert import_name(tmp_path / "a" / "test_x.py") == import_name(tmp_path / "b" / "test_x.py") == "test_x"
    (tmp_path / "b" / "__init__.py").write_text("")
    assert import_name(tmp_path / "b" / "test_x.py") == "b.test_x"
