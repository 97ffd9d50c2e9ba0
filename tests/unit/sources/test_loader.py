import json
import socket

import pandas as pd
import pytest
from aicd.common.errors import AicdError
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


def test_hub_offline_fails_fast_with_local_files_hint(monkeypatch):
    """Offline (HF_HUB_OFFLINE=1, tests/conftest.py), a Hub table fails on the offline mode
    itself, before any connection is tried, with the hint to point the config at local files.
    (Fast because nothing waits on the network: the mechanism is checked, not a time.)"""
    tried = []

    def no_network(*args, **kwargs):
        tried.append(args)
        raise OSError("the test forbids network access")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket.socket, "connect_ex", no_network)
    with pytest.raises(AicdError, match=r"(?i)Hugging Face Hub.*offline.*files:"):
        load_table({"hub": "AICD-bench/AICD-Bench", "name": "T1", "revision": "main"}, split="train")
    assert tried == []


def test_a_source_spans_its_configs_data_dirs_and_splits():
    from aicd.sources.loader import source_parts

    parts = source_parts({"hub": "org/codenet", "revision": "main", "names": ["Python", "C++"]})
    assert [(p["part"], p["language"], p["location"]["name"]) for p in parts] == [
        ("Python", "Python", "Python"), ("C++", "C++", "C++")]
    parts = source_parts({"hub": "org/sc", "revision": "main", "data_dirs": ["python", "c-sharp"], "split": "train"})
    assert [(p["language"], p["location"]["data_dir"], p["location"]["split"]) for p in parts] == [
        ("Python", "python", "train"), ("C#", "c-sharp", "train")]
    parts = source_parts({"hub": "org/droid", "revision": "main", "splits": ["train", "dev", "test"]})
    assert [p["location"]["split"] for p in parts] == ["train", "dev", "test"] and parts[0]["language"] is None
    local = source_parts({"hub": "org/sc", "data_dirs": ["python"], "files": {"python": "a.parquet", "cpp": "b.parquet"}})
    assert [(p["part"], p["location"]) for p in local] == [("python", {"files": "a.parquet"}), ("cpp", {"files": "b.parquet"})]


def test_where_keeps_matching_rows_and_counts_the_rest(tmp_path):
    from aicd.sources.loader import read_source

    path = tmp_path / "py.parquet"
    pd.DataFrame({"code": ["a = 1", "b = 2", "c = 3"], "status": ["Accepted", "Wrong Answer", "Accepted"]}).to_parquet(path)
    raw, report, spec = read_source({"files": {"Python": str(path)}, "part_language": True,
                                     "where": {"status": ["Accepted"]}}, seed=0)
    assert raw["code"].tolist() == ["a = 1", "c = 3"] and report["filtered_out"] == {"where_status": 1}
    assert spec["columns"]["language"] == "__part_language" and set(raw["__part_language"]) == {"Python"}
    with pytest.raises(AicdError, match="where: column 'verdict' is not in the table"):
        read_source({"files": str(path), "where": {"verdict": "Accepted"}}, seed=0)


def test_part_language_needs_parts_named_after_languages(tmp_path):
    from aicd.sources.loader import read_source

    path = tmp_path / "t.parquet"
    pd.DataFrame({"code": ["a = 1"]}).to_parquet(path)
    with pytest.raises(AicdError, match="part_language: the part 'train' does not name one of the nine languages"):
        read_source({"files": {"train": str(path)}, "part_language": True}, seed=0)


def test_hub_source_offline_names_the_config_it_tried():
    from aicd.sources.loader import read_source

    with pytest.raises(AicdError, match=r"iNeil77/CodeNet \(name Python, split train, revision main\)"):
        read_source({"hub": "iNeil77/CodeNet", "revision": "main", "names": ["Python"], "split": "train"}, seed=0)
