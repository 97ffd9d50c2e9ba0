"""The run's per-text cache: a value is computed once per text and settings, read back exactly,
and an edit to the code that computes it is a new key."""

import numpy as np
import pytest
from aicd.common.text_cache import TextCache, source_identity


def test_rows_are_computed_once_and_read_back_exactly(tmp_path):
    calls = []

    def compute(texts):
        calls.append(list(texts))
        return np.array([[len(t), 1 / 3, np.nan] for t in texts])

    cache = TextCache(tmp_path, {"kind": "toy"})
    first = cache.rows(["a", "bb", "a"], 3, compute)
    second = cache.rows(["bb", "ccc"], 3, compute)
    cache.close()
    assert calls == [["a", "bb", "a"], ["ccc"]]  # "bb" was read, not computed
    assert np.array_equal(first[1], second[0], equal_nan=True) and second[1][0] == 3
    assert first[0][1] == 1 / 3  # float64 bytes, not a rounded text


def test_settings_and_texts_are_separate_keys(tmp_path):
    one, other = TextCache(tmp_path, {"kind": "toy", "v": 1}), TextCache(tmp_path, {"kind": "toy", "v": 2})
    one.put_blobs(["x"], [b"1"])
    assert one.get_blobs(["x", "y"]) == [b"1", None]
    assert other.get_blobs(["x"]) == [None]
    one.close()
    other.close()


def test_the_source_of_the_computing_code_names_the_values(tmp_path, monkeypatch):
    import sys
    import types

    module = tmp_path / "toy_features.py"
    module.write_text("VALUE = 1\n")
    monkeypatch.setitem(sys.modules, "toy_features", types.SimpleNamespace(__file__=str(module)))
    before = source_identity("toy_features")
    module.write_text("VALUE = 2\n")
    source_identity.cache_clear()
    assert source_identity("toy_features") != before
    assert source_identity("toy_features", packages=("numpy",)) != source_identity("toy_features")
    with pytest.raises(KeyError):
        source_identity("a_module_never_imported")
