"""Bounded-memory streaming of a source (local files through `datasets` streaming, the same
reader the Hub path uses) and gathering code from files installed on the machine."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile

import pytest
from aicd.common.errors import AicdError
from aicd.sources.__main__ import main as sources_main
from aicd.sources.gather import gather
from aicd.sources.loader import stream_sample


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_stream_keeps_at_most_n_per_language(tmp_path):
    rows = [{"content": f"x = {i}", "lang": ["python", "go", "rust"][i % 3]} for i in range(3000)]
    write_jsonl(tmp_path / "big.jsonl", rows)
    spec = {"files": str(tmp_path / "big.jsonl"), "columns": {"code": "content", "language": "lang"},
            "stream": {"per_language": 50, "shuffle_buffer": 200}}
    df, report = stream_sample(spec, seed=3)
    assert len(df) == 150 and df["lang"].value_counts().to_dict() == {"go": 50, "python": 50, "rust": 50}
    assert report["rows_scanned"] == 3000 and report["not_sampled"] == 2850
    again, _ = stream_sample(spec, seed=3)
    assert df.equals(again)
    other, _ = stream_sample(spec, seed=4)
    assert not df.equals(other)


def test_single_language_stream_stops_early(tmp_path):
    write_jsonl(tmp_path / "py.jsonl", [{"content": f"y = {i}"} for i in range(5000)])
    spec = {"files": str(tmp_path / "py.jsonl"), "columns": {"code": "content"}, "defaults": {"language": "Python"},
            "stream": {"per_language": 10}}
    df, report = stream_sample(spec, seed=0)
    assert len(df) == 10 and report["rows_scanned"] == 10


def test_stream_errors_are_one_line(tmp_path):
    with pytest.raises(AicdError, match="input file not found"):
        stream_sample({"files": str(tmp_path / "nope.jsonl")}, 0)
    with pytest.raises(AicdError, match="could not stream"):
        stream_sample({"hub": "no-such-org/no-such-dataset", "revision": "main"}, 0)


def test_sources_cli_streams_into_the_sample_schema(tmp_path):
    write_jsonl(tmp_path / "src.jsonl", [{"content": "def f():\n    return 1\n" + "#" * i, "lang": "py"} for i in range(40)]
                + [{"content": "", "lang": "py"}, {"content": "fn main() {}", "lang": "kotlin"}])
    spec = {"files": str(tmp_path / "src.jsonl"), "columns": {"code": "content", "language": "lang"},
            "defaults": {"label": "human", "generator": "human"}, "stream": {"per_language": 100}}
    rc = sources_main(["--name", "s", "--spec", json.dumps(spec), "--out", str(tmp_path / "s.parquet"),
                       "--report", str(tmp_path / "s.json")])
    assert rc is None
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["stream"]["rows_scanned"] == 42 and report["rows_out"] == 40
    assert report["skipped"]["counts"] == {"empty_code": 1, "unknown_language": 1}


def test_gather_reads_folders_and_archives_and_counts_skips(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    body = "\n".join(f"    total += {i}" for i in range(10))
    (src / "a.py").write_text(f"def a(total):\n{body}\n    return total\n")
    (src / "bad.py").write_bytes(b"\xff\xfe\x00\x01")
    (src / "tiny.py").write_text("x = 1\n")
    with zipfile.ZipFile(tmp_path / "src.zip", "w") as zf:
        zf.writestr("pkg/Main.java", "class Main {\n" + "\n".join(f"  int f{i}() {{ return {i}; }}" for i in range(8)) + "\n}\n")
    data = ("package main\n\nfunc main() {\n" + "\n".join(f"\tx{i} := {i}\n\t_ = x{i}" for i in range(5)) + "\n}\n").encode()
    with tarfile.open(tmp_path / "go.tar.gz", "w:gz") as tf:
        info = tarfile.TarInfo("go/main.go")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    roots = {"Python": [str(src)], "Java": [str(tmp_path / "src.zip")], "Go": [str(tmp_path / "*.tar.gz")],
             "Rust": [str(tmp_path / "missing")]}
    rows, report = gather({"roots": roots, "per_language": 5}, seed=1)
    assert rows.groupby("language").size().to_dict() == {"Go": 1, "Java": 1, "Python": 1}
    py = report["languages"]["Python"]
    assert py["files_found"] == 3 and py["skipped_binary"] == 1 and py["skipped_too_short"] == 1
    assert "Rust" in report["languages_without_samples"]
    assert rows["path"].is_unique


def test_long_files_are_cut_into_definitions(tmp_path):
    funcs = "\n\n".join(f"def f{i}(x):\n" + "\n".join(f"    x += {j}" for j in range(8)) + "\n    return x" for i in range(60))
    (tmp_path / "long.py").write_text(funcs + "\n")
    rows, _ = gather({"roots": {"Python": [str(tmp_path)]}, "per_language": 10, "units_per_file": 4}, seed=0)
    assert len(rows) == 4 and all(code.startswith("def f") for code in rows["code"])
