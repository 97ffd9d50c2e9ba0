"""Every output file named once (aicd.outputs.Outputs): no rule file, input function, the
Snakefile, module of the package or benchmark script spells a path under a run's results folder
(nor a file of it by its whole name: run.json, pool.parquet); they ask Outputs, whose methods give
a rule its wildcard pattern and an input function its concrete file alike, and help and messages
show the user its paths too (aicd.outputs.SHOWN). A path is read back into its kind and wildcards
by aicd.outputs.parse, nowhere else."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from aicd.common.errors import AicdError
from aicd.outputs import ANY_ROOT, SHOWN, Outputs, beside, folder_of, name_of, parse, relative, wildcards_of

# an f-string that joins a root to a path: {RESULTS}/..., {DATA}/..., {made_by(t, d)}/...
ROOT_JOINED = re.compile(r"\{\s*(RESULTS|DATA|[A-Za-z_]\w*\([^{}]*\))\s*\}/")


def _examples():
    """Each public method of Outputs called with "x" for every argument it takes by position: its
    file under ROOT, e.g. ROOT/features/x/x/features.npz."""
    for name, method in inspect.getmembers(Outputs, inspect.isfunction):
        if name.startswith("_"):
            continue
        params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
        yield method(Outputs("ROOT"), *["x" for p in params if p.kind is not p.KEYWORD_ONLY])


def folders() -> set[str]:
    """The top folders of a results root, as Outputs lays it out (logs, tasks, predictions, ...)."""
    found = {parts[1] for parts in (e.split("/") for e in _examples()) if len(parts) > 2}
    return found - {"x"}  # table(kind, name): its kind is one of the others (sources, generations, execution)


def file_names() -> set[str]:
    """The names of the files Outputs spells whole, wildcards or arguments in no part of them
    (run.json, pool.parquet, summary.json, features.npz, ...)."""
    names = {e.rsplit("/", 1)[1] for e in _examples()}
    return {n for n in names if "." in n and "x" not in re.split(r"[._]", n)}


def code_lines(path: Path):
    """(line number, line) outside comments and triple-quoted strings."""
    inside = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        quotes = line.count('"""')
        if inside or line.lstrip().startswith("#"):
            inside = inside != bool(quotes % 2)
            continue
        if quotes % 2:
            inside = True
            continue
        if quotes:  # a one-line docstring
            continue
        yield number, line.split("  # ")[0]


STRINGS = re.compile(r"""(?:f|r)?"((?:[^"\\]|\\.)*)"|(?:f|r)?'((?:[^'\\]|\\.)*)'""")


# Not the layout, though named like it: the repository's own files (docs/paper_results.md, the
# script benchmarks/loco.py) and the user's cache (~/.cache/aicd), which has models/ and sandbox/.
REPOSITORY_FILE = re.compile(r"\b(docs|benchmarks)/\w+\.(md|py)\b")
USER_CACHE = ('cache_root() / "models" /', '"~/.cache/aicd")) / "sandbox" /')


def spelled(text: str, tops: set[str], names: set[str]) -> bool:
    """Whether one string literal's text spells a path of the layout: a root joined to a path, a
    top folder with a path below it (predictions/...), or one of the layout's whole file names
    (run.json, .../pool.parquet)."""
    text = REPOSITORY_FILE.sub("", text)
    folder = re.compile(rf"(?<![\w.])({'|'.join(map(re.escape, sorted(tops)))})/")
    name = re.compile(rf"(?<![\w.{{}}-])({'|'.join(map(re.escape, sorted(names)))})(?![\w.])")
    return bool(ROOT_JOINED.search(text) or folder.search(text) or name.search(text))


def joined_folders(line: str, tops: set[str]) -> bool:
    """A top folder with a path joined below it by pathlib's `/` (root / "tasks" / task): a path
    spelled in parts. (A folder joined last is a folder of the same name elsewhere: REPO / "benchmarks".)"""
    if any(cache in line for cache in USER_CACHE):
        return False
    words = "|".join(map(re.escape, sorted(tops)))
    return bool(re.search(rf"""(["'])({words})\1\s*/(?!/)""", line))


def spelled_paths(path: Path, tops: set[str], names: set[str] | None = None) -> list[str]:
    names = file_names() if names is None else names
    found = []
    for number, line in code_lines(path):
        texts = [m.group(1) if m.group(1) is not None else m.group(2) for m in STRINGS.finditer(line)]
        if joined_folders(line, tops) or any(spelled(t, tops, names) for t in texts):
            found.append(f"{path.name}:{number}: {line.strip()}")
    return found


def test_no_rule_file_spells_an_output_path(repo):
    tops = folders()
    assert {"logs", "benchmarks", "tasks", "predictions", "scores", "models", "features", "tables"} <= tops
    files = sorted((repo / "workflow" / "rules").glob("*.smk")) + [repo / "Snakefile"]
    found = [hit for path in files for hit in spelled_paths(path, tops)]
    assert not found, "a path spelled outside aicd.outputs:\n" + "\n".join(found)
    common = (repo / "workflow" / "rules" / "common.smk").read_text()
    assert "OUT = Outputs(RESULTS)" in common and "DATA_OUT = Outputs(DATA)" in common


def test_no_module_or_benchmark_spells_an_output_path(repo):
    """The package and the benchmark scripts name the layout's files as the rules do: the stages
    through the files they are given or `beside(folder, kind)`, help and messages through SHOWN."""
    tops = folders()
    files = [p for p in sorted((repo / "workflow" / "aicd").rglob("*.py")) if p != repo / "workflow/aicd/outputs.py"]
    files += sorted((repo / "benchmarks").rglob("*.py"))
    assert len(files) > 100
    found = [f"{path.relative_to(repo)}:{hit.split(':', 1)[1]}" for path in files for hit in spelled_paths(path, tops)]
    assert not found, "a path spelled outside aicd.outputs:\n" + "\n".join(found)


def test_the_fitted_files_suffix_is_spelled_once(repo):
    """A fitted model's or featurizer's suffix is aicd.outputs.FITTED_SUFFIX wherever code names it."""
    files = [p for p in sorted((repo / "workflow" / "aicd").rglob("*.py")) if p != repo / "workflow/aicd/outputs.py"]
    files += sorted((repo / "benchmarks").rglob("*.py"))
    found = [f"{path.relative_to(repo)}:{n}" for path in files
             for n, line in enumerate(path.read_text().splitlines(), 1) if '".skops"' in line or "'.skops'" in line]
    assert not found, "the fitted suffix spelled outside aicd.outputs:\n" + "\n".join(found)


def test_the_checker_finds_a_spelled_path(tmp_path):
    rules = tmp_path / "x.smk"
    rules.write_text('"""A docstring may say results/tasks/{task}/test.parquet."""\n'
                     'rule a:\n    output:\n        f"{RESULTS}/scores/{{task}}.json",\n'
                     '    log:\n        OUT.log("a", "{task}"),\n'
                     'def f(t, d):\n    return f"{made_by(t, d)}/predictions/{t}/{d}.parquet"\n'
                     'X = "predictions/" + name  # and a bare folder\n')
    hits = spelled_paths(rules, folders())
    assert [h.split(":")[1] for h in hits] == ["4", "8", "9"]


def test_a_method_gives_the_rules_pattern_and_an_input_functions_file():
    out = Outputs("results/")
    assert out.predictions() == "results/predictions/{task}/{detector}.parquet"
    assert out.predictions("binary", "lr_tfidf") == "results/predictions/binary/lr_tfidf.parquet"
    assert out.model("binary", "svm") == "results/models/binary/svm.skops"
    assert out.model_folder() == "results/models/{task}/{detector}"
    assert out.test_set_scores("T1", "codeaid", "lr") == "results/scores/T1/test_sets/codeaid/lr.json"
    assert out.log("judge", "{task}", "{judge}_{mode}", suffix=".server.log") == \
        "results/logs/judge/{task}/{judge}_{mode}.server.log"
    assert out.benchmark("detect", "T1", "lr") == "results/benchmarks/detect/T1/lr.tsv"
    assert Outputs("base/run").split("T1", "test") == "base/run/tasks/T1/test.parquet"  # a run on a base reads there


def test_a_path_parses_back_to_its_kind_and_wildcards():
    out = Outputs("runs/mine")
    for kind, args in [("predictions", ("T1", "lr")), ("test_set_scores", ("T1", "codeaid", "lr")),
                       ("scores", ("T1", "lr")), ("calibration", ("T1", "lr")), ("calibration_view", ("T1", "lr")),
                       ("reference_report", ("T1",)), ("model", ("T1", "svm")), ("model_folder", ("T1", "enc")),
                       ("model_report", ("T1", "zs")), ("validation_scores", ("T1", "lr")), ("run_record", ())]:
        path = getattr(out, kind)(*args)
        parsed = parse(path)
        assert (parsed.kind, parsed.root) == (kind, "runs/mine"), path
        assert getattr(Outputs(parsed.root), kind)(**parsed.wildcards) == path  # and back again
    assert parse("predictions/T1/lr.parquet").root == "."
    assert parse("results/models/T1/enc/", "model_folder").detector == "enc"


def test_a_path_of_another_kind_or_none_is_refused():
    assert parse("results/scores/T1/lr.json", "predictions") is None
    assert parse("notes/lr.parquet", "predictions") is None and parse("notes/lr.parquet") is None
    assert parse("results/sources/trial.parquet").kind == "source"  # not the tables' shared helper
    assert wildcards_of("results/scores/T1/test_sets/p_rename/lr.json", "test_set_scores").test_set == "p_rename"
    with pytest.raises(AicdError, match=r"RESULTS/calibration/\{task\}/\{detector\}.test.json"):
        wildcards_of("results/calibration/T1/lr.json", "calibration_view")


def test_the_checker_finds_a_file_name_and_a_joined_folder_but_not_the_repositorys_own(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('read(root / "tasks" / task / "test.parquet")\n'              # 1: a path in parts
                      'write(out / "pool.parquet")\n'                              # 2: a layout's file by name
                      'print("its run predates run_config.yaml")\n'               # 3: even in a message
                      'sys.path.insert(0, str(REPO / "benchmarks"))\n'            # a folder of the repository
                      'print("see docs/paper_results.md and benchmarks/loco.py")\n'
                      'base = cache_root() / "models" / name\n'                   # the user's cache
                      'x = "my_features.npz"\n')                                  # a name of its own
    hits = spelled_paths(module, folders())
    assert [h.split(":")[1] for h in hits] == ["1", "2", "3"]


def test_a_stage_given_a_folder_names_its_files_as_the_layout_does():
    assert beside("out/dataset/", "pool") == "out/dataset/pool.parquet" == Outputs("out").pool()
    assert beside("t", "tab", "table8", "md") == "t/table8.md"
    assert Outputs("r").pool() == beside(Outputs("r").root + "/dataset", "pool")
    assert name_of("analyses") == "summary.json" and name_of(Outputs.features) == "features.npz"
    assert relative("scores", glob=True) == "scores/*/*.json" and relative("tab", "*", "*", glob=True) == "tables/*"
    assert folder_of(Outputs.judge_report) == "judges/"
    assert SHOWN.inputs() == "results/inputs.json" and ANY_ROOT.split("TASK", "test") == "RESULTS/tasks/TASK/test.parquet"
