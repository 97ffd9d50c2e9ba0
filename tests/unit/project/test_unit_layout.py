"""The unit tests are laid out like the package: each test file sits in a folder of tests/unit
named for the part of aicd it mainly tests (a subpackage, workflow/aicd/<name>/, or a top-level
module, workflow/aicd/<name>.py), so the tests of a module are found beside those of its
neighbours and a new test has one obvious home. What tests no one part of the package has a
folder of its own, declared here with why. No test file stays flat in tests/unit, which holds
only the conftest and the helpers that tests of several folders import (tests/unit/conftest.py
puts it on sys.path). The folders have no __init__.py: pytest imports each test file by its
basename (tests/unit/project/test_test_layout.py keeps those unique)."""

from pathlib import Path

UNIT = Path(__file__).resolve().parents[1]
PKG = UNIT.parents[1] / "workflow" / "aicd"

# Folders named for something other than a part of the package.
NON_PACKAGE_FOLDERS = {
    "project": "whole-repository checks: docs, layering, function length, environments, defaults, "
               "the suite's own layout and leftovers, empty inputs at every stage, printed numbers",
    "benchmarks": "the scripts under benchmarks/ (outside the package)",
}


def package_parts() -> set[str]:
    """aicd's subpackages and top-level modules, by name."""
    subpackages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in PKG.glob("*.py") if not p.name.startswith("_")}
    return subpackages | modules


def test_no_test_file_is_flat_in_tests_unit():
    assert sorted(p.name for p in UNIT.glob("test_*.py")) == []


def test_every_folder_is_named_for_a_part_of_the_package_or_declared():
    folders = {p.relative_to(UNIT).parts[0] for p in UNIT.rglob("test_*.py")}
    assert sorted(folders - package_parts() - set(NON_PACKAGE_FOLDERS)) == []


def test_the_declared_folders_are_not_parts_of_the_package_and_are_used():
    assert not set(NON_PACKAGE_FOLDERS) & package_parts()
    assert all((UNIT / name).is_dir() for name in NON_PACKAGE_FOLDERS)


def test_the_folders_are_not_packages():
    assert [str(p.relative_to(UNIT)) for p in UNIT.rglob("__init__.py")] == []
