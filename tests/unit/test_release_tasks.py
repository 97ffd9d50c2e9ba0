"""Release tasks (the published AICD Bench splits) loaded from local files through the same
loader as the Hub path."""

import pandas as pd
import pytest

from aicd.errors import AicdError
from aicd.splits.tasks import load_release_task

FAMILY_MAP = {0: "human", 1: "DeepSeek-AI", 2: "Qwen", 10: "OpenAI"}


def write_splits(tmp_path, rows_per_split):
    files = {}
    for split, rows in rows_per_split.items():
        path = tmp_path / f"{split}.parquet"
        pd.DataFrame(rows, columns=["code", "label", "language", "generator"]).to_parquet(path)
        files[split] = str(path)
    return files


def rows(tag):
    return [
        [f"print('{tag} a')\nx = 1\n", 0, "python", "Human"],
        [f"def {tag}():\n    return 2\n", 2, "Python", "Qwen/Qwen2.5-Coder-7B"],
        [f"int {tag}() {{ return 3; }}\n", 10, "cpp", "GPT-4o"],
        [f"// {tag}\n", 99, "C++", "GPT-4o"],  # unknown label id: counted
    ]


def test_family_release_from_local_files(tmp_path):
    files = write_splits(tmp_path, {s: rows(s) for s in ("train", "validation", "test")})
    spec = {"release": {"files": files}, "target": "family", "label_map": FAMILY_MAP}
    tables, report = load_release_task(spec, "T2")
    assert set(tables) == {"train", "validation", "test"}
    train = tables["train"]
    assert sorted(train["target"]) == ["OpenAI", "Qwen", "human"]
    assert set(train["label"]) == {"human", "machine"}
    assert set(train["language"]) == {"Python", "C++"}
    assert report["skipped"] == {"unknown_label": 3}
    assert report["rows_in"] == 12 and sum(v["rows"] for v in report["splits"].values()) == 9


def test_release_label_map_contradicting_generator_stops(tmp_path):
    bad = [[r[0], {0: 2, 2: 0}.get(r[1], r[1]), r[2], r[3]] for r in rows("t")[:3]]
    files = write_splits(tmp_path, {"train": bad, "validation": bad, "test": bad})
    with pytest.raises(AicdError, match="contradicts the generator column"):
        load_release_task({"release": {"files": files}, "target": "family", "label_map": FAMILY_MAP}, "T2")


def test_release_missing_split_file_is_named(tmp_path):
    files = write_splits(tmp_path, {"train": rows("a")})
    files["validation"] = str(tmp_path / "missing.parquet")
    files["test"] = files["train"]
    with pytest.raises(AicdError, match="input file not found: .*missing.parquet"):
        load_release_task({"release": {"files": files}, "label_map": {0: "human", 2: "machine", 10: "machine"}}, "T1")
