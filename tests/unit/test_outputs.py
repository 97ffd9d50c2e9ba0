"""Every output file named once (aicd.outputs.Outputs): no rule file, input function or the
Snakefile spells a path under a run's results folder; they ask Outputs, whose methods give a
rule its wildcard pattern and an input function its concrete file alike."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from aicd.common.errors import AicdError
from aicd.outputs import Outputs, parse, wildcards_of

# an f-string that joins a root to a path: {RESULTS}/..., {DATA}/..., {made_by(t, d)}/...
ROOT_JOINED = re.compile(r"\{\s*(RESULTS|DATA|[A-Za-z_]\w*\([^{}]*\))\s*\}/")


def folders() -> set[str]:
    """The top folders of a results root, as Outputs lays it out (logs, tasks, predictions, ...)."""
    found = set()
    for name, method in inspect.getmembers(Outputs, inspect.isfunction):
        if name.startswith("_"):
            continue
        params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
        args = ["x" for p in params if p.kind is not p.KEYWORD_ONLY]
        parts = method(Outputs("ROOT"), *args).split("/")
        if len(parts) > 2:
            found.add(parts[1])
    return found - {"x"}  # table(kind, name): its kind is one of the others (sources, generations, execution)


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


def spelled_paths(path: Path, tops: set[str]) -> list[str]:
    strings = re.compile(r"""(?:f|r)?"((?:[^"\\]|\\.)*)"|(?:f|r)?'((?:[^'\\]|\\.)*)'""")
    folder = re.compile(rf"(?<![\w.])({'|'.join(map(re.escape, sorted(tops)))})/")
    found = []
    for number, line in code_lines(path):
        for m in strings.finditer(line):
            text = m.group(1) if m.group(1) is not None else m.group(2)
            if ROOT_JOINED.search(text) or folder.search(text):
                found.append(f"{path.name}:{number}: {line.strip()}")
                break
    return found


def test_no_rule_file_spells_an_output_path(repo):
    tops = folders()
    assert {"logs", "benchmarks", "tasks", "predictions", "scores", "models", "features", "tables"} <= tops
    files = sorted((repo / "workflow" / "rules").glob("*.smk")) + [repo / "Snakefile"]
    found = [hit for path in files for hit in spelled_paths(path, tops)]
    assert not found, "a path spelled outside aicd.outputs:\n" + "\n".join(found)
    common = (repo / "workflow" / "rules" / "common.smk").read_text()
    assert "OUT = Outputs(RESULTS)" in common and "DATA_OUT = Outputs(DATA)" in common


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
    assert parse("notes/lr.parquet", "predictions") is None
    assert wildcards_of("results/scores/T1/test_sets/p_rename/lr.json", "test_set_scores").test_set == "p_rename"
    with pytest.raises(AicdError, match=r"RESULTS/calibration/\{task\}/\{detector\}.test.json"):
        wildcards_of("results/calibration/T1/lr.json", "calibration_view")
