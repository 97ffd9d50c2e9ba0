"""The suite's own layout: pytest imports test modules by their basename (rootdir-relative
packages are not used here), so two test files of one name in different folders stop the whole
session at collection ("import file mismatch")."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_name():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert not [n for n, count in names.items() if count > 1]
