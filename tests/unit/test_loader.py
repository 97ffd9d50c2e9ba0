import json
import time

import pandas as pd
import pytest

from aicd.errors import AicdError
from aicd.sources.loader import load_table


@pytest.fixture
def table():
    return pd.DataFrame({"code": ["x = 1", "int main() {}"], "label": [0, 1], "language": ["Python", "C"]})


@pytest.mark.parametrize("ext", ["parquet", "jsonl", "csv"])
def test_local_files_load_through_datasets(tmp_path, table, ext):
    path = tmp_path / f"t.{ext}"
    if ext == "parquet":
        table.to_parquet(path)
    elif ext == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in table.to_dict("records")))
    else:
        table.to_csv(path, index=False)
    loaded = load_table({"files": str(path)})
    assert loaded["code"].tolist() == table["code"].tolist()
    assert loaded["label"].tolist() == [0, 1]


def test_missing_file_says_how_to_point_at_one(tmp_path):
    with pytest.raises(AicdError, match="input file not found.*--config"):
        load_table({"files": str(tmp_path / "nope.parquet")})


def test_invalid_utf8_text_file_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"code": "ok", "label": 0}\n{"code": "\xff\xfe", "label": 1}\n')
    with pytest.raises(AicdError, match="not valid UTF-8"):
        load_table({"files": str(path)})


def test_unknown_format_is_named(tmp_path):
    path = tmp_path / "t.xlsx"
    path.write_text("x")
    with pytest.raises(AicdError, match="cannot tell the format"):
        load_table({"files": str(path)})


def test_hub_offline_fails_fast_with_local_files_hint():
    started = time.perf_counter()
    with pytest.raises(AicdError, match=r"Hugging Face Hub.*files:"):
        load_table({"hub": "AICD-bench/AICD-Bench", "name": "T1", "revision": "main"}, split="train")
    assert time.perf_counter() - started < 60
