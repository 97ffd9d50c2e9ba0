"""Release tasks (the published AICD Bench splits) loaded from local files through the same
loader as the Hub path."""

import pandas as pd
import pytest
from aicd.common.errors import AicdError
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
    spec = {"release": {"files": files}, "target": "family", "label_map": FAMILY_MAP, "unmapped": "drop"}
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
        load_release_task({"release": {"files": files}, "label_map": {0: "human", 2: "machine", 10: "machine"},
                           "unmapped": "drop"}, "T1")


# --- The AICD Bench release: only `code` and `label` ----------------------

# Real-looking programs, one per language, each unmistakable for aicd.normalize.langid.
PROGRAMS = {
    "Python": "import sys\n\ndef solve(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n"
              "    return total\n\nif __name__ == '__main__':\n    print(solve(int(sys.stdin.readline())))\n",
    "Java": "import java.util.Scanner;\n\npublic class Main {\n    public static void main(String[] args) {\n"
            "        Scanner in = new Scanner(System.in);\n        int n = in.nextInt();\n"
            "        System.out.println(n * 2);\n    }\n}\n",
    "C++": "#include <iostream>\n#include <vector>\nusing namespace std;\n\nint main() {\n    int n;\n"
           "    cin >> n;\n    vector<int> a(n);\n    for (auto &x : a) cin >> x;\n    cout << a.size() << endl;\n"
           "    return 0;\n}\n",
    "Go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n    var n int\n    fmt.Scan(&n)\n"
          "    sum := 0\n    for i := 0; i < n; i++ {\n        sum += i\n    }\n    fmt.Println(sum)\n}\n",
    "PHP": "<?php\nfunction findMax(array $items) {\n    $best = $items[0];\n    foreach ($items as $item) {\n"
           "        if ($item > $best) {\n            $best = $item;\n        }\n    }\n    return $best;\n}\n"
           "echo findMax([3, 9, 2]);\n",
    "JavaScript": "const readline = require('readline');\n\nfunction twoSum(nums, target) {\n"
                  "  const seen = new Map();\n  for (let i = 0; i < nums.length; i++) {\n"
                  "    if (seen.has(target - nums[i])) return [seen.get(target - nums[i]), i];\n"
                  "    seen.set(nums[i], i);\n  }\n  return null;\n}\nconsole.log(twoSum([2, 7, 11, 15], 9));\n",
    "Rust": "use std::io;\n\nfn main() {\n    let mut line = String::new();\n"
            "    io::stdin().read_line(&mut line).unwrap();\n    let n: i64 = line.trim().parse().unwrap();\n"
            "    let mut v: Vec<i64> = Vec::new();\n    for i in 0..n {\n        v.push(i * 2);\n    }\n"
            "    println!(\"{}\", v.len());\n}\n",
}
SEEN = ["Python", "Java", "C++"]
T1_PAPER = {"kind": "binary", "seen_languages": SEEN, "seen_domains": ["algorithmic"]}


def code_label_files(tmp_path, per_split):
    """Parquet files with exactly the release's columns: code (string) and label (int64)."""
    files = {}
    for split, rows in per_split.items():
        path = tmp_path / f"{split}.parquet"
        pd.DataFrame({"code": [c for c, _ in rows], "label": pd.Series([y for _, y in rows], dtype="int64")}).to_parquet(path)
        files[split] = str(path)
    return files


def variants(tag):
    """Each program twice, as human (0) and machine (1), made distinct by a comment line."""
    out = []
    for lang, code in PROGRAMS.items():
        note = "# " if lang == "Python" else "// "
        for label in (0, 1):
            text = f"{note}{tag} {label}\n{code}" if lang != "PHP" else code.replace("<?php\n", f"<?php\n// {tag} {label}\n")
            out.append((text, label))
    return out


def t1_spec(files):
    return {"release": {"files": files}, "label_map": {0: "human", 1: "machine"}, "paper": T1_PAPER}


def test_code_and_label_release_gets_identified_languages_subsets_and_breakdowns(tmp_path):
    from aicd.scoring.scorer import score

    files = code_label_files(tmp_path, {s: variants(s) for s in ("train", "validation", "test")})
    tables, report = load_release_task(t1_spec(files), "T1", tmp_path / "langid", threads=1)
    test = tables["test"]
    assert len(test) == 2 * len(PROGRAMS)
    assert set(test["language_origin"]) == {"identified"}
    for lang in PROGRAMS:  # the identifier names every program's language
        assert (test["language"] == lang).sum() == 2, test[["language", "code"]]
    assert set(test.loc[test["language"].isin(SEEN), "subset"]) == {"seen_language"}
    assert set(test.loc[~test["language"].isin(SEEN), "subset"]) == {"unseen_language"}
    notes = report["subset_notes"]
    assert "subset" in notes["inferred"] and "language" in notes["inferred"]
    assert "no domain or source column" in notes["not_recoverable"]["domain"]
    assert report["test_subsets"]["unseen_language"] == {"rows": 8, "target": {"human": 4, "machine": 4},
                                                         "one_class": None}
    ident = report["language_identification"]["test"]
    assert ident["identified"] == ident["computed"] == 14 and ident["from_cache"] == 0 and ident["ms_per_row"] > 0
    for split in ("train", "validation", "test"):
        assert (tmp_path / "langid" / f"{split}.parquet").is_file()

    # A detector that calls everything machine: per-language and per-subset breakdowns exist,
    # and the scores say the languages were identified.
    pred = pd.DataFrame({"id": test["id"], "gold": test["target"], "pred": "machine"})
    scores = score(pred, test, ["human", "machine"])
    assert set(scores["by"]["language"]) == set(PROGRAMS)
    assert set(scores["by"]["subset"]) == {"seen_language", "unseen_language"}
    assert scores["by"]["subset"]["unseen_language"]["n"] == 8
    assert scores["inferred"]["language"] == {"rows": 14, "of": 14, "by": "aicd.normalize.langid"}


def test_language_cache_is_reused_and_rebuilt_for_another_identifier(tmp_path):
    from aicd.splits.release_language import langid_version

    files = code_label_files(tmp_path, {s: variants(s)[:4] for s in ("train", "validation", "test")})
    cache_dir = tmp_path / "langid"
    load_release_task(t1_spec(files), "T1", cache_dir)
    cache_file = cache_dir / "test.parquet"
    cache = pd.read_parquet(cache_file)
    assert set(cache.columns) == {"id", "language", "margin", "langid_version"}
    # Plant an answer the identifier would never give: a rerun must read it from the cache.
    cache.loc[0, "language"] = "Rust"
    cache.to_parquet(cache_file)
    tables, report = load_release_task(t1_spec(files), "T1", cache_dir)
    assert report["language_identification"]["test"]["from_cache"] == 4
    assert report["language_identification"]["test"]["computed"] == 0
    assert tables["test"].set_index("id").loc[cache.loc[0, "id"], "language"] == "Rust"
    # A cache written by another identifier version is not trusted.
    cache["langid_version"] = "0" * 16
    assert langid_version() != "0" * 16
    cache.to_parquet(cache_file)
    tables, report = load_release_task(t1_spec(files), "T1", cache_dir)
    assert report["language_identification"]["test"]["computed"] == 4
    assert set(tables["test"]["language"]) == {"Python", "Java"}
    # An unreadable cache is rebuilt, not fatal.
    cache_file.write_bytes(b"not parquet")
    tables, report = load_release_task(t1_spec(files), "T1", cache_dir)
    assert report["language_identification"]["test"]["computed"] == 4
    assert pd.read_parquet(cache_file)["language"].notna().all()


def test_parallel_identification_matches_serial(tmp_path, monkeypatch):
    import aicd.splits.release_language as rl

    monkeypatch.setattr(rl, "CHUNK", 3)  # several chunks, so the process pool is used
    files = code_label_files(tmp_path, {s: variants(s) for s in ("train", "validation", "test")})
    serial, _ = load_release_task(t1_spec(files), "T1", None, threads=1)
    parallel, _ = load_release_task(t1_spec(files), "T1", None, threads=2)
    for split in serial:
        pd.testing.assert_frame_equal(serial[split], parallel[split])


def test_release_keeps_every_row_no_cap(tmp_path):
    # 6,000 distinct rows with a language column: nothing capped, nothing identified.
    rows = pd.DataFrame({"code": [f"x = {i}\nprint(x)\n" for i in range(6000)],
                         "label": pd.Series([i % 2 for i in range(6000)], dtype="int64"), "language": "Python"})
    files = {}
    for split in ("train", "validation", "test"):
        rows.to_parquet(tmp_path / f"{split}.parquet")
        files[split] = str(tmp_path / f"{split}.parquet")
    tables, report = load_release_task(t1_spec(files), "T1", tmp_path / "langid")
    assert all(len(t) == 6000 for t in tables.values())
    assert report["language_identification"]["test"]["identified"] == 0
    assert set(tables["test"]["language_origin"]) == {"given"}
    assert "subset" not in report["subset_notes"]["inferred"]  # from a given language: not inferred


def test_family_and_fine_grained_releases_name_what_cannot_be_recovered(tmp_path):
    files = code_label_files(tmp_path, {s: variants(s)[:4] for s in ("train", "validation", "test")})
    t2 = {"release": {"files": files, "identify_language": False}, "target": "family",
          "label_map": {0: "human", 1: "OpenAI"}, "paper": {"kind": "family"}}
    tables, report = load_release_task(t2, "T2", None)
    assert "generator" in report["subset_notes"]["not_recoverable"]
    assert tables["test"]["language"].isna().all() and report["language_identification"] == {}
    t3 = {"release": {"files": files}, "label_map": {0: "human", 1: "hybrid"}, "paper": {"kind": "fine_grained"}}
    _, report = load_release_task(t3, "T3", None)
    assert "no source column" in report["subset_notes"]["not_recoverable"]["source"]
    assert report["test_subsets"] == {}


def test_bad_paper_kind_and_seen_language_are_clear_errors(tmp_path):
    files = code_label_files(tmp_path, {s: variants(s)[:2] for s in ("train", "validation", "test")})
    spec = t1_spec(files) | {"paper": {"kind": "ternary"}}
    with pytest.raises(AicdError, match="kind must be one of"):
        load_release_task(spec, "T1", None)
    spec = t1_spec(files) | {"paper": {"kind": "binary", "seen_languages": ["Cobol"]}}
    with pytest.raises(AicdError, match=r"seen_languages: unknown \['Cobol'\]"):
        load_release_task(spec, "T1", None)


def test_release_cli_writes_tables_cache_and_report(tmp_path, repo):
    """The stage's command line, as the task_split rule calls it."""
    import json
    import os
    import subprocess
    import sys

    files = code_label_files(tmp_path, {s: variants(s) for s in ("train", "validation", "test")})
    env = {**os.environ, "PYTHONPATH": str(repo / "workflow")}
    cmd = [sys.executable, "-m", "aicd.splits", "release", "--task", "T1", "--spec", json.dumps(t1_spec(files)),
           "--langid-cache", str(tmp_path / "cache"), "--threads", "2", "--outdir", str(tmp_path / "out"),
           "--report", str(tmp_path / "out" / "report.json")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["test_subsets"]["seen_language"]["rows"] == 6
    assert pd.read_parquet(tmp_path / "out" / "test.parquet")["language"].notna().all()
    assert (tmp_path / "cache" / "test.parquet").is_file()
    bad = t1_spec(files) | {"paper": {"kind": "ternary"}}
    cmd[cmd.index("--spec") + 1] = json.dumps(bad)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].startswith("error: task T1: kind must be")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("validation", ["absent", None, [], "empty parquet"])
def test_validation_is_optional(tmp_path, validation, repo):
    """A task needs no validation file (absent, null, [] or a file without rows)."""
    import yaml
    from aicd.config import validate_config

    files = write_splits(tmp_path, {"train": rows("a"), "test": rows("b")})
    if validation == "empty parquet":
        path = tmp_path / "validation.parquet"
        pd.DataFrame(columns=["code", "label", "language", "generator"]).to_parquet(path)
        files["validation"] = str(path)
    elif validation != "absent":
        files["validation"] = validation
    spec = {"release": {"files": files, "identify_language": False}, "label_map": {0: "human", 2: "machine", 10: "machine"},
            "unmapped": "drop"}
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    validate_config({**config, "tasks": {"binary": {"title": "T1", **spec}}})  # the schema accepts it
    tables, _report = load_release_task(spec, "T1")
    assert tables["validation"].empty and list(tables["validation"].columns) == list(tables["train"].columns)
    assert len(tables["train"]) == 3 and len(tables["test"]) == 3
