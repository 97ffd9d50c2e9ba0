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


def test_unparseable_answers_are_counted_with_an_example_and_the_sample_is_capped(server, tmp_path):
    """Every human row's answer is prose (the fault marker survives the cut to 40 characters):
    exactly the sampled human rows are abstentions, counted, with what such an answer said."""
    n = 40
    codes = [("[[fault:prose:9]]\n" if i % 2 == 0 else "") + f"x = {i}\n" + "y = 1\n" * 10 for i in range(n)]
    pd.DataFrame({"id": [f"t{i}" for i in range(n)], "code": codes, "target": ["human", "machine"] * (n // 2),
                  "language": "Python", "domain": "algorithmic"}).to_parquet(tmp_path / "test.parquet")
    model = {**server.model(), "name": "J", "params": {"temperature": 0}}
    preds, report = judge(model, "zs", str(tmp_path / "test.parquet"), ["human", "machine"], "label",
                          str(REPO / "config" / "prompts" / "judge.v1.yaml"), 1.0, 0,
                          {"cache": str(tmp_path / "c.sqlite"), "max_retries": 0}, max_rows=12, max_code_chars=40)
    assert report["judged"] == len(preds) == 12  # capped, stratified: half of each class
    assert preds.groupby("gold").size().to_dict() == {"human": 6, "machine": 6}
    from aicd.data.schema import ABSTAIN

    assert report["abstentions"] == 6 == int((preds["pred"] == ABSTAIN).sum())
    assert set(preds.loc[preds["pred"] == ABSTAIN, "gold"]) == {"human"}
    assert "nice piece of work" in report["abstention_example"]
    assert report["programs_cut"] == 12 and report["code_cut_to_chars"] == 40


def test_a_rows_modes_are_sent_side_by_side_and_each_answer_comes_back_to_its_row(server, tmp_path):
    """judge_runs sends a row's zs and cot prompts one after the other (they share the program: a
    served model's prefix cache computes it once), yet every answer lands on its own run and row:
    the marked rows, and only they, are abstentions in both modes."""
    from aicd.judge.run import JudgeRun, judge_runs, twins_adjacent

    n = 20
    codes = [("[[fault:prose:9]]\n" if i % 4 == 0 else "") + f"x = {i}\n" for i in range(n)]
    pd.DataFrame({"id": [f"t{i}" for i in range(n)], "code": codes, "target": ["human", "machine"] * (n // 2),
                  "language": "Python", "domain": "algorithmic"}).to_parquet(tmp_path / "test.parquet")
    runs = [JudgeRun(task="binary", mode=m, test=str(tmp_path / "test.parquet"), labels=["human", "machine"],
                     out="", report="") for m in ("zs", "cot")]
    assert twins_adjacent(runs + [JudgeRun("family", "zs", "", [], "", "")], [3, 3, 2]) == [0, 3, 1, 4, 2, 5, 6, 7]
    model = {**server.model(), "name": "J", "params": {"temperature": 0}}
    out = judge_runs(model, runs, str(REPO / "config" / "prompts" / "judge.v2.yaml"), 1.0, 0,
                     {"cache": str(tmp_path / "c.sqlite"), "max_retries": 0})
    from aicd.data.schema import ABSTAIN

    marked = {f"t{i}" for i in range(0, n, 4)}
    for preds, _report in out:
        assert len(preds) == n and set(preds.loc[preds["pred"] == ABSTAIN, "id"]) == marked
    assert [r["mode"] for _, r in out] == ["zs", "cot"]
    # each run has its own mode's answers: the cot prompt is the longer one, as its tokens say
    assert out[1][1]["prompt_tokens"] > out[0][1]["prompt_tokens"]
