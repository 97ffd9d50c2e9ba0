"""aicd.generate.run against the local OpenAI-compatible test server (tests/openai_server.py,
a stand-in for a frontier LLM that cannot run here): instructions feed the inverse-instruction
protocol, rows carry their provenance, and the report adds up."""

import json
from pathlib import Path

import pandas as pd
from aicd.generate.registry import with_max_tokens
from aicd.generate.run import generate, instructions

REPO = Path(__file__).resolve().parents[2]
PROMPTS = str(REPO / "config" / "prompts" / "generation.v1.yaml")


def _source(tmp_path, n=4):
    path = tmp_path / "human.parquet"
    pd.DataFrame({"id": [f"h{i}" for i in range(n)], "code": [f"def f{i}(x):\n    return x + {i}\n" for i in range(n)],
                  "label": "human", "language": "Python", "domain": "algorithmic", "source": "s",
                  "problem_id": [f"p{i}" for i in range(n)]}).to_parquet(path)
    return f"s={path}"


def test_instructions_then_generation_with_provenance_and_report(server, tmp_path):
    source = _source(tmp_path)
    llm = {"cache": str(tmp_path / "cache.sqlite"), "max_retries": 0}
    protocols = {"inverse_instruction": {"n": 3}, "hybrid_rewrite": {"n": 2}}
    model = {**server.model(), "name": "Gen", "family": "OpenAI", "params": {"temperature": 0}}
    instr = instructions({**model, "name": "Instructor"}, [source], PROMPTS, protocols, llm, 0,
                         str(tmp_path / "instructions.parquet"))
    assert len(instr) == 3 and set(instr["status"]) == {"ok"} and instr["instruction"].str.len().min() > 0
    assert set(instr["instructor"]) == {"Instructor"}

    table = generate(model, [source], PROMPTS, protocols, llm, 0, str(tmp_path / "Gen.parquet"),
                     str(tmp_path / "Gen.report.json"), instructions_file=str(tmp_path / "instructions.parquet"))
    assert table.groupby("protocol").size().to_dict() == {"hybrid_rewrite": 2, "inverse_instruction": 3}
    assert set(table.loc[table["protocol"] == "inverse_instruction", "label"]) == {"machine"}
    assert set(table.loc[table["protocol"] == "hybrid_rewrite", "label"]) == {"hybrid"}
    assert set(table["generator"]) == {"Gen"} and table["id"].is_unique
    assert set(table["source_sample_id"]) <= {f"h{i}" for i in range(4)}
    assert pd.read_parquet(tmp_path / "Gen.parquet").equals(table)
    report = json.loads((tmp_path / "Gen.report.json").read_text())
    assert report["rows"] == 5 and report["status"] == {"ok": 5} and report["failed_requests"] == 0
    assert report["prompt_tokens"] == int(table["prompt_tokens"].sum()) > 0

    # a rerun is served from the request cache: nothing is sent again, same rows
    before = server.stats()["requests"]
    again = generate(model, [source], PROMPTS, protocols, llm, 0, str(tmp_path / "Gen2.parquet"),
                     str(tmp_path / "Gen2.report.json"), instructions_file=str(tmp_path / "instructions.parquet"))
    assert server.stats()["requests"] == before
    assert again["code"].tolist() == table["code"].tolist()


def test_without_instructions_the_inverse_protocol_is_a_counted_skip(server, tmp_path):
    source = _source(tmp_path, n=2)
    model = {**server.model(), "name": "Gen", "family": "OpenAI", "params": {}}
    table = generate(model, [source], PROMPTS, {"inverse_instruction": {"n": 2}},
                     {"cache": str(tmp_path / "c.sqlite")}, 0, str(tmp_path / "g.parquet"), str(tmp_path / "g.json"))
    assert table.empty
    assert json.loads((tmp_path / "g.json").read_text())["skipped_before_prompting"] == {
        "inverse_instruction:no_instruction": 2}


def test_an_answer_without_a_code_block_is_a_counted_row_without_code(server, tmp_path):
    """Every generation prompt asks for one fenced code block; an answer in words is not taken
    for code: its row says no_code_block (counted with an example) and normalisation drops it."""
    from aicd.normalize.rows import normalize_table

    path = tmp_path / "human.parquet"
    pd.DataFrame({"id": ["h0", "h1"], "code": ["def f(x):\n    return x\n", "[[fault:prose:9]]\ndef g(y):\n    return y\n"],
                  "label": "human", "language": "Python", "domain": "algorithmic", "source": "s",
                  "problem_id": ["p0", "p1"]}).to_parquet(path)
    model = {**server.model(), "name": "Gen", "family": "OpenAI", "params": {}}
    table = generate(model, [f"s={path}"], PROMPTS, {"hybrid_rewrite": {"n": 2}},
                     {"cache": str(tmp_path / "c.sqlite")}, 0, str(tmp_path / "g.parquet"), str(tmp_path / "g.json"))
    report = json.loads((tmp_path / "g.json").read_text())
    assert report["no_code_block"]["count"] == 1 and "nice piece of work" in report["no_code_block"]["example"]
    assert report["status"] == {"ok": 1, "no_code_block": 1}
    prose = table[table["status"] == "no_code_block"]
    assert len(prose) == 1 and prose["code"].iloc[0] == "" and "Sure!" in prose["raw"].iloc[0]
    rows, _ = normalize_table(table, "Gen", progress=False)
    assert rows.loc[rows["id"].eq(prose["id"].iloc[0]), "reject"].tolist() == ["no_code_block"]


def test_task_statements_have_a_token_cap_of_their_own(server, tmp_path, monkeypatch):
    """generation.instruction_max_tokens: the instructor's requests carry that cap, not the
    generator's max_tokens."""
    from aicd.llm.client import LLMClient

    sent = []
    real_run = LLMClient.run

    def recording_run(self, requests, *args, **kwargs):
        sent.extend(params for _, params in requests)
        return real_run(self, requests, *args, **kwargs)

    monkeypatch.setattr(LLMClient, "run", recording_run)
    model = {**server.model(), "name": "Instructor", "params": {"temperature": 0, "max_tokens": 192}}
    llm = {"cache": str(tmp_path / "cache.sqlite"), "max_retries": 0}
    instructions(with_max_tokens(model, 40), [_source(tmp_path)], PROMPTS, {"inverse_instruction": {"n": 2}}, llm, 0,
                 str(tmp_path / "capped.parquet"))
    instructions(model, [_source(tmp_path)], PROMPTS, {"inverse_instruction": {"n": 2}}, llm, 0,
                 str(tmp_path / "uncapped.parquet"))
    assert [p["max_tokens"] for p in sent] == [40, 40, 192, 192]
