import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.data.families import FAMILIES
from aicd.data.schema import ABSTAIN
from aicd.generate.protocols import build_requests, prefix_of, sample_rows, signature_with_doc
from aicd.generate.registry import enabled_models, has_endpoint, load_registry
from aicd.judge.parse import parse_answer
from aicd.judge.sample import judge_sample
from aicd.llm.prompts import PromptSet
from aicd.normalize import extract_code, strip_reasoning


def test_extract_code_from_fences_prose_and_reasoning():
    answer = "<think>let me think ```python\nwrong()```</think>Sure!\n```python\ndef f():\n    return 1\n```\nDone."
    assert extract_code(answer) == "def f():\n    return 1"
    assert extract_code("```cpp\nint a;\n```\ntext\n```cpp\nint main() { return 0; }\n```") == "int main() { return 0; }"
    assert extract_code("plain code\n") == "plain code"
    assert extract_code("```python\ndef cut(x):\n    ret") == "def cut(x):\n    ret"  # truncated answer
    assert strip_reasoning("reasoning without opening</think>\nx = 1") == "x = 1"
    assert extract_code(None) == ""


@pytest.mark.parametrize("answer,expected", [
    ('{"label": "machine"}', "machine"),
    ('Because of naming... so {"label": "Human"}', "human"),
    ('{"label": "robot"}', ABSTAIN),
    ("Reasoning.\nAnswer: machine", "machine"),
    ("human.", "human"),
    ("I cannot tell.", ABSTAIN),
    ("", ABSTAIN),
    ('<think>{"label": "human"}</think>{"label": "machine"}', "machine"),
])
def test_parse_answer(answer, expected):
    assert parse_answer(answer, ["human", "machine"]) == expected


def test_registry_holds_the_papers_77_generators(repo):
    models = load_registry(repo / "config" / "models.yaml")
    assert len(models) == 77
    assert {m["family"] for m in models.values()} == set(FAMILIES)
    reasoning = {n for n, m in models.items() if m["reasoning"]}
    assert {"QwQ-32B", "DeepSeek-R1", "Qwen3-14B", "Qwen3-32B", "Qwen3-235B-A22B", "Qwen3-30B-A3B"} <= reasoning
    assert all(m["params"]["max_tokens"] == 2048 for m in models.values())  # defaults merged


def test_endpoints_decide_which_models_run(repo):
    models = load_registry(repo / "config" / "models.yaml")
    assert enabled_models(models, environ={}) == []
    assert set(enabled_models(models, environ={"OPENAI_API_KEY": "k"})) == {"GPT-4o", "GPT-4o-mini"}
    assert has_endpoint({**models["phi-4"], "api_base": "http://127.0.0.1:8000/v1"}, environ={})
    with pytest.raises(AicdError, match="unknown model"):
        enabled_models(models, ["not-a-model"], environ={})


def test_registry_family_must_match_the_family_table(tmp_path, repo):
    path = tmp_path / "models.yaml"
    path.write_text("models:\n  Qwen3-8B:\n    family: Phi\n    reasoning: true\n    droid_collection: false\n"
                    "    litellm_model: hosted_vllm/Qwen/Qwen3-8B\n")
    with pytest.raises(AicdError, match="listed under Phi but the family table .* maps its name to Qwen"):
        load_registry(path)


def test_signature_with_docstring_or_comment():
    py = 'import sys\n\ndef area(w, h):\n    """Area of a w x h rectangle."""\n    return w * h\n'
    assert signature_with_doc(py, "Python") == 'def area(w, h):\n    """Area of a w x h rectangle."""'
    java = "class A {\n  // sum of two numbers\n  int add(int a, int b) { return a + b; }\n}\n"
    assert signature_with_doc(java, "Java") == "// sum of two numbers\nint add(int a, int b)"
    assert signature_with_doc("def f(x):\n    return x\n", "Python") is None  # nothing to condition on


def test_protocol_samples_are_the_same_for_every_model_and_prompts_render(repo):
    human = pd.DataFrame({"id": [f"{i:04d}" for i in range(50)], "code": ["x = 1\ny = 2\nprint(x + y)\n"] * 50,
                          "language": ["Python"] * 50})
    a = sample_rows(human, "hybrid_rewrite", 5, seed=1)
    assert list(a["id"]) == list(sample_rows(human.sample(frac=1, random_state=2), "hybrid_rewrite", 5, seed=1)["id"])
    assert list(a["id"]) != list(sample_rows(human, "hybrid_complete", 5, seed=1)["id"])
    prompts = PromptSet(repo / "config" / "prompts" / "generation.v1.yaml")
    reqs, skipped = build_requests("hybrid_complete", a, prompts)
    assert len(reqs) == 5 and not skipped
    assert reqs[0][1] == "hybrid_complete/generator@v1" and "x = 1" in reqs[0][2][-1]["content"]
    assert prefix_of("a\nb\nc\nd\n") == "a\nb"
    reqs, skipped = build_requests("inverse_instruction", a, prompts, instructions={})
    assert reqs == [] and skipped == {"no_instruction": 5}


def test_judge_sample_is_stratified_and_seeded():
    test = pd.DataFrame({"id": [f"{i:05d}" for i in range(2000)],
                         "target": ["human" if i % 4 else "machine" for i in range(2000)],
                         "language": ["Python" if i % 3 else "C++" for i in range(2000)], "domain": "algorithmic"})
    s = judge_sample(test, 0.05, seed=3)
    assert len(s) == pytest.approx(100, abs=4)
    assert (s["target"] == "machine").mean() == pytest.approx(0.25, abs=0.02)
    assert list(s["id"]) == list(judge_sample(test, 0.05, seed=3)["id"])
