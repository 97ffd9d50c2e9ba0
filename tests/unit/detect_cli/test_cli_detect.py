"""`aicd detect`: a fitted model applied to code files and folders gives the
workflow's own predictions for the same code; unreadable, binary and empty files are counted
skips; the language comes from --language, the extension, else identification."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from aicd.cli import main as aicd
from fitted_task_helpers import fit_detector, fit_features, task_tables, write_task

EXT = {"Python": ".py", "C++": ".cpp", "Java": ".java"}


@pytest.fixture(scope="module")
def fitted(trial_raw, tmp_path_factory):
    root = tmp_path_factory.mktemp("fitted")
    tables = task_tables(trial_raw)
    paths = write_task(root / "tasks", tables)
    model, predictions = fit_detector(paths, fit_features(paths, root / "features"), root / "models")
    files = root / "code"
    (files / "nested").mkdir(parents=True)
    for i, row in tables["test"].iterrows():
        folder = files / "nested" if i % 2 else files
        (folder / f"{row['id']}{EXT[row['language']]}").write_bytes(row["code"].encode("utf-8"))
    return model, pd.read_parquet(predictions), tables, files


def test_detect_on_a_folder_equals_the_workflow_predictions(fitted, tmp_path, capsys):
    model, workflow, tables, files = fitted
    out = tmp_path / "labels.csv"
    assert aicd(["detect", str(files), "--model", str(model), "--out", str(out)]) == 0
    got = pd.read_csv(out)
    got["id"] = [os.path.splitext(os.path.basename(p))[0] for p in got["path"]]
    got = got.set_index("id").loc[workflow["id"]]
    assert len(got) == len(tables["test"])
    assert (got["model_label"].to_numpy() == workflow["pred"].to_numpy()).all()  # the model's own label
    assert (abs(got["score_machine"].to_numpy() - workflow["score_machine"].to_numpy()) < 1e-4).all()
    assert set(got["language_from"]) == {"extension"}
    language = dict(zip(tables["test"]["id"], tables["test"]["language"]))
    assert all(got.loc[i, "language"] == language[i] for i in got.index)


def test_skips_are_counted_and_languages_identified(fitted, tmp_path, capsys):
    model, _workflow, _tables, _files = fitted
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "blank.py").write_text("  \n\n")
    (folder / "blob.c").write_bytes(b"\x7fELF\x00\x01\x02")
    (folder / "latin1.java").write_bytes("// caf\xe9\n".encode("latin-1"))
    (folder / "notes.md").write_text("# not code\n")
    (folder / "ok.go").write_text("package main\n\nfunc main() {}\n")
    snippet = tmp_path / "snippet.txt"   # named on the command line: read, language identified
    snippet.write_text("#include <stdio.h>\nint main(void) {\n    printf(\"hi\\n\");\n    return 0;\n}\n")
    out = tmp_path / "labels.jsonl"
    assert aicd(["detect", str(folder), str(snippet), "--model", str(model), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    scored = [r for r in rows if r["status"] == "scored"]
    assert [(os.path.basename(r["path"]), r["language"], r["language_from"]) for r in scored] == [
        ("ok.go", "Go", "extension"), ("snippet.txt", "C", "langid")]
    assert all(r["model_label"] in ("human", "machine") and 0 <= r["score_machine"] <= 1 for r in scored)
    # every input file is a row of --out, with the reason it was not labelled
    assert {os.path.basename(r["path"]): r["status"] for r in rows if r["status"] != "scored"} == {
        "blank.py": "empty", "blob.c": "binary", "latin1.java": "invalid_utf8", "notes.md": "not_code_extension"}
    err = capsys.readouterr().err
    assert "skipped 4 files: " in err and "1 binary" in err and "1 invalid_utf8" in err and "1 empty" in err and "1 not_code_extension" in err


def detect_one_file_as_python(fitted, tmp_path, capsys) -> list[str]:
    """`aicd detect x.txt --language python` without --out: the terminal's lines."""
    model = fitted[0]
    f = tmp_path / "x.txt"
    f.write_text("print('hello')\n")
    assert aicd(["detect", str(f), "--language", "python", "--model", str(model)]) == 0
    return capsys.readouterr().out.splitlines()


def test_without_out_the_labels_are_a_table_on_the_terminal(fitted, tmp_path, capsys):
    out = detect_one_file_as_python(fitted, tmp_path, capsys)
    assert out[0].split()[:6] == ["path", "label", "language", "language_from", "model_label", "machine_score"]


def test_the_language_flag_names_the_language_of_every_file(fitted, tmp_path, capsys):
    out = detect_one_file_as_python(fitted, tmp_path, capsys)
    assert out[1].split()[2:4] == ["Python", "given"]


def test_a_missing_path_is_a_clear_error(fitted, tmp_path, capsys):
    model, _workflow, _tables, _files = fitted
    assert aicd(["detect", str(tmp_path / "missing"), "--model", str(model)]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_a_folder_without_code_to_label_is_a_clear_error(fitted, tmp_path, capsys):
    model, _workflow, _tables, _files = fitted
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "a.py").write_text("")
    assert aicd(["detect", str(empty), "--model", str(model)]) == 2
    assert "no code file to label" in capsys.readouterr().err


def test_a_language_outside_the_nine_is_a_clear_error(fitted, tmp_path, capsys):
    model, _workflow, _tables, _files = fitted
    f = tmp_path / "x.txt"
    f.write_text("print('hello')\n")
    assert aicd(["detect", str(f), "--language", "cobol", "--model", str(model)]) == 2
    assert "is not one of the nine languages" in capsys.readouterr().err


def test_a_missing_model_file_is_a_clear_error(tmp_path, capsys):
    f = tmp_path / "x.txt"
    f.write_text("print('hello')\n")
    assert aicd(["detect", str(f), "--model", str(tmp_path / "nope.pkl")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_the_console_script_teaches_with_examples(repo):
    env = {"PYTHONPATH": str(repo / "workflow"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    for args in (["--help"], ["detect", "--help"], ["score", "--help"], ["compare", "--help"],
                 ["verify", "--help"], ["fetch-inputs", "--help"]):
        proc = subprocess.run([sys.executable, "-c", "import sys; from aicd.cli import main; sys.exit(main())", *args],
                              capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 0 and "example" in proc.stdout, proc.stderr
        assert "%%" not in proc.stdout, f"unformatted percent sign in `aicd {' '.join(args)}`"


def test_unlistable_and_symlinked_folders_are_counted_skips(fitted, tmp_path, capsys, monkeypatch):
    model, _workflow, _tables, files = fitted
    folder = tmp_path / "tree"
    (folder / "locked").mkdir(parents=True)
    (folder / "locked" / "a.py").write_text("x = 1\n")
    (folder / "ok.py").write_text("print('hi')\n")
    (folder / "elsewhere").symlink_to(files, target_is_directory=True)
    real_scandir = os.scandir

    def scandir(path="."):   # the tests run as root, so a chmod 000 folder stays readable
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    out = tmp_path / "labels.csv"
    assert aicd(["detect", str(folder), "--model", str(model), "--out", str(out)]) == 0
    got = pd.read_csv(out)
    assert list(got.loc[got["status"] == "scored", "path"]) == [str(folder / "ok.py")]
    assert dict(zip(got["path"], got["status"])) == {str(folder / "ok.py"): "scored",
                                                     str(folder / "locked"): "unreadable_folder",
                                                     str(folder / "elsewhere"): "symlinked_folder"}
    err = capsys.readouterr().err
    assert "skipped 2 files: " in err and "1 unreadable_folder" in err and "1 symlinked_folder" in err


def test_a_bad_out_is_refused_before_the_model_is_read(tmp_path, capsys):
    folder = tmp_path / "tree"
    folder.mkdir()
    (folder / "ok.py").write_text("print('hi')\n")
    assert aicd(["detect", str(folder), "--model", str(tmp_path / "nope.pkl"), "--out", str(tmp_path / "x.txt")]) == 2
    assert "use a .csv or .jsonl file" in capsys.readouterr().err   # named before the model is even read


def test_links_out_of_the_folder_are_skipped_and_untrusted_predictions_flagged(fitted, tmp_path, capsys):
    """A link to a file outside the folder is not read; one inside it is, and the file it links to
    is then the same file again (labelled once); a minified one-line file and a language without
    training rows are still labelled, flagged in their own columns and counted in the summary line."""
    model, _workflow, tables, _files = fitted
    outside = tmp_path / "secret.py"
    outside.write_text("password = 'hunter2'\n" * 10)
    folder = tmp_path / "tree"
    folder.mkdir()
    (folder / "link.py").symlink_to(outside)
    inner = folder / "real.py"
    inner.write_bytes(tables["test"].query("language == 'Python'")["code"].iloc[0].encode())
    link = folder / "inner_link.py"
    link.symlink_to(inner)  # inside the folder: read, first in the folder's order
    (folder / "min.js").write_text("var a=1;" * 5000)  # one 40,000-character line, JavaScript
    out = tmp_path / "labels.csv"
    assert aicd(["detect", str(folder), "--model", str(model), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    got = pd.read_csv(out, keep_default_na=False).set_index("path")
    assert got.loc[str(folder / "link.py"), "status"] == "symlink_outside_roots" and "1 symlink_outside_roots" in err
    assert got.loc[str(inner), "status"] == "duplicate_file" and str(link) in got.loc[str(inner), "why"]
    got = got[got["status"] == "scored"]
    assert {str(link), str(folder / "min.js")} == set(got.index)
    minified = got.loc[str(folder / "min.js")]
    # --out's flag columns are empty for the files not labelled, so the CSV holds them as text
    assert minified["outside_benchmark"] == "lines_of_code" and minified["language_unseen"] == "True"
    assert got.loc[str(link), "outside_benchmark"] == "" and got.loc[str(link), "language_unseen"] == "False"
    assert minified["in_distribution"] == "False" and got.loc[str(link), "in_distribution"] == "True"
    assert "2 files labelled, 1 outside what the benchmark measured" in err
    assert "lines_of_code: 1" in err and "JavaScript: 1" in err


def test_detect_says_what_its_scores_are(fitted, tmp_path, capsys):
    model, _, _, files = fitted
    assert aicd(["detect", str(files), "--model", str(model), "--out", str(tmp_path / "l.csv")]) == 0
    assert "score_<class> columns are probabilities in [0, 1] that sum to one per row" in capsys.readouterr().err


def test_a_wrong_model_path_beside_fitted_models_is_one_error(fitted, capsys):
    model, _, _, files = fitted
    assert aicd(["detect", str(files), "--model", str(model.parent / "nope.skops")]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "no such file or folder" in err


def test_a_missing_model_lists_the_runs_fitted_ones(tmp_path, monkeypatch, capsys):
    root = tmp_path / "results" / "models" / "binary"
    root.mkdir(parents=True)
    (root / "svm_tfidf.skops").write_bytes(b"x")
    (root / "minilm").mkdir()
    (root / "minilm" / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    assert aicd(["detect", "a.py", "--model", "results/models/binary/svm.skops"]) == 2
    err = capsys.readouterr().err
    assert "fitted models here: results/models/binary/minilm, results/models/binary/svm_tfidf.skops" in err
    assert err.count("error:") == 1 and "Traceback" not in err


def test_site_profile_is_made_outside_the_repository(tmp_path, repo, capsys):
    site = tmp_path / "aicd-site"
    assert aicd(["site-profile", str(site)]) == 0
    assert {p.name for p in site.iterdir()} == {"config.yaml", "partitions.yaml"}
    assert "snakemake --workflow-profile profiles/slurm --profile" in capsys.readouterr().out
    assert aicd(["site-profile", str(site)]) == 2 and "--force" in capsys.readouterr().err  # never overwritten unasked
    assert aicd(["site-profile", str(repo / "profiles" / "mine")]) == 2
    assert "inside the repository" in capsys.readouterr().err


KOTLIN = """package demo

import kotlin.math.max

data class Point(val x: Int, val y: Int)

fun main(args: Array<String>) {
    val points = listOf(Point(1, 2), Point(3, 4))
    for (p in points) {
        println("x=${p.x} y=${p.y}")
    }
    println(points.maxOf { max(it.x, it.y) })
}
"""
RUBY = """class Greeter
  def initialize(name)
    @name = name
  end

  def greet
    puts "Hello, #{@name}!"
  end
end

[1, 2, 3].each do |i|
  Greeter.new("user#{i}").greet
end
"""
PROSE = """The committee met on Tuesday to discuss the budget for the coming year. After a long
debate, the members agreed that the library should receive additional funding, while the
sports programme would be reviewed again in the spring. Several residents spoke in favour
of extending the opening hours of the community centre.
"""


def test_other_languages_and_text_that_is_not_code_are_reported_unlabelled(fitted, tmp_path, capsys):
    """Files outside the nine languages are not labelled: a .kt or .rb extension names its
    language, language ID calls a file without an extension unknown, and prose saved as .py is not
    code; each is a row of --out with its reason. The benchmark's own rows are labelled."""
    model, _workflow, _tables, files = fitted
    # the files without an extension differ from the others by a line: the same code twice is read once
    for name, text in (("Program.kt", KOTLIN), ("script.rb", RUBY), ("essay.py", PROSE),
                       ("noext", RUBY + "puts 'again'\n"), ("essay", PROSE + "The meeting closed at nine.\n")):
        (tmp_path / name).write_text(text)
    out = tmp_path / "labels.csv"
    named = [str(tmp_path / n) for n in ("Program.kt", "script.rb", "essay.py", "noext", "essay")]
    assert aicd(["detect", *named, str(files), "--model", str(model), "--out", str(out)]) == 0
    got = pd.read_csv(out, keep_default_na=False).set_index("path")
    status = {os.path.basename(p): (got.loc[p, "status"], got.loc[p, "language"]) for p in named}
    assert status == {"Program.kt": ("other_language", "unknown"), "script.rb": ("other_language", "unknown"),
                      "essay.py": ("not_code", "Python"), "noext": ("unknown_language", "unknown"),
                      "essay": ("unknown_language", "unknown")}, status
    assert got.loc[named[0], "other_language"] == "Kotlin" and got.loc[named[3], "other_language"] == "Ruby"
    assert "Ruby" in got.loc[named[3], "why"] and all(got.loc[p, "label"] == "" for p in named)
    said = capsys.readouterr().err
    assert "2 other_language" in said and "2 unknown_language" in said and "1 not_code" in said
    benchmark = got[got["status"] == "scored"]
    assert len(benchmark) == len(list(files.rglob("*.*"))) and benchmark["language_fit"].astype(float).min() >= 0.8
    assert not benchmark["outside_benchmark"].isin(["not_code", "outside_nine_languages"]).any()


def test_a_long_read_says_how_far_it_is(fitted, tmp_path, capsys):
    model, _workflow, tables, _files = fitted
    big = tmp_path / "big.py"
    big.write_text("\n\n".join(tables["train"]["code"][tables["train"]["language"] == "Python"]) * 4)
    assert big.stat().st_size > 2**18
    assert aicd(["detect", str(big), "--model", str(model), "--out", str(tmp_path / "o.csv")]) == 0
    said = capsys.readouterr().err
    assert "aicd detect: labelling 1 file (" in said and "aicd detect: labelled 1 file;" in said
