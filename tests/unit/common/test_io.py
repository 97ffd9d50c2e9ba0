"""aicd.common.io's atomic writers: outputs get the umask's mode (not mkstemp's 0600), and a write
that fails leaves neither the target nor a temporary file behind."""

from __future__ import annotations

import os
import stat

import numpy as np
import pandas as pd
import pytest
from aicd.common import io


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_every_writer_gives_the_mode_of_the_umask(tmp_path, umask):
    expected = 0o666 & ~umask
    io.write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "t.parquet")
    io.write_json({"a": 1}, tmp_path / "t.json")
    io.write_text("x", tmp_path / "t.md")
    io.write_pickle({"a": 1}, tmp_path / "t.pkl")
    io.write_npz(tmp_path / "t.npz", x=np.zeros(2))
    for name in ("t.parquet", "t.json", "t.md", "t.pkl", "t.npz"):
        assert _mode(tmp_path / name) == expected, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json", "t.md", "t.npz", "t.parquet", "t.pkl"]


def test_reading_the_umask_leaves_it_unchanged(umask):
    assert io._umask() == umask
    assert os.umask(umask) == umask


def test_a_failed_write_leaves_nothing_and_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.json"
    io.write_json({"old": True}, target)
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert io.read_json(target) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
