"""aicd.judge.run against the local OpenAI-compatible test server (tests/openai_server.py,
a stand-in for a frontier LLM judge that cannot run here)."""

from pathlib import Path

import pandas as pd

from aicd.judge.run import judge

REPO = Path(__file__).resolve().parents[2]


def test_a_judge_answers_every_sampled_row_with_a_label(server, tmp_path):
    """aicd.judge.run: the test server answers judge prompts with {"label": one of the options}."""
    n = 40
    pd.DataFrame({"id": [f"t{i}" for i in range(n)], "code": [f"x = {i}\n" for i in range(n)],
                  "target": ["human", "machine"] * (n // 2), "language": "Python", "domain": "algorithmic"}
                 ).to_parquet(tmp_path / "test.parquet")
    model = {**server.model(), "name": "J", "params": {"temperature": 0}}
    preds, report = judge(model, "zs", str(tmp_path / "test.parquet"), ["human", "machine"], "label",
                          str(REPO / "config" / "prompts" / "judge.v1.yaml"), 0.5, 0,
                          {"cache": str(tmp_path / "c.sqlite"), "max_retries": 0})
    assert len(preds) == report["judged"] == 20 and report["test_rows"] == n
    assert preds.groupby("gold").size().to_dict() == {"human": 10, "machine": 10}  # stratified by class
    assert set(preds["pred"]) <= {"human", "machine"} and report["abstentions"] == 0 and report["errors"] == 0
