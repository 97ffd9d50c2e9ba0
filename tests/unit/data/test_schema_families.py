from aicd.data.families import FAMILIES, family_of, is_human
from aicd.data.schema import LANGUAGES, canonical_language, content_id


def test_canonical_language_aliases():
    assert canonical_language("cpp") == "C++"
    assert canonical_language(" Python3 ") == "Python"
    assert canonical_language("csharp") == "C#"
    assert canonical_language("golang") == "Go"
    assert canonical_language("js") == "JavaScript"
    assert all(canonical_language(lang) == lang for lang in LANGUAGES)
    assert canonical_language("COBOL") is None
    assert canonical_language(None) is None


def test_content_id_is_stable_and_language_sensitive():
    assert content_id("Python", "x = 1") == content_id("Python", "x = 1")
    assert content_id("Python", "x = 1") != content_id("C", "x = 1")
    assert len(content_id(None, "x")) == 16


def test_family_of_paper_generators():
    cases = {
        "Qwen/Qwen2.5-Coder-7B-Instruct": "Qwen", "QwQ-32B": "Qwen", "Qwen2.5-Codder-14B-Instruct": "Qwen",
        "deepseek-ai/DeepSeek-R1": "DeepSeek-AI", "01-ai/Yi-Coder-9B": "01-ai", "Yi-Coder-1.5B": "01-ai",
        "bigcode/starcoder2-15b": "BigCode", "google/codegemma-7b": "Gemma", "gemma-3n-e4b-it": "Gemma",
        "microsoft/phi-2": "Phi", "Phi-3.5-mini-instruct": "Phi", "codellama/CodeLlama-7b-hf": "Meta-Llama",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct": "Meta-Llama", "ibm-granite/granite-8b-code-base-4k": "IBM-Granite",
        "mistralai/Devstral-Small-2505": "Mistral", "Mixtral-8x7B-Instruct-v0.1": "Mistral",
        "GPT-4o": "OpenAI", "GPT-4o-mini": "OpenAI", "gemini-2.0-flash-lite": "Gemini",
    }
    for name, family in cases.items():
        assert family_of(name) == family, name
    assert set(cases.values()) == set(FAMILIES)


def test_family_of_human_unknown_and_missing():
    assert family_of("Human") == "human" and is_human("human ")
    assert family_of("some-new-model") is None
    assert family_of(None) is None and family_of("") is None


def test_every_trial_generator_has_a_family(trial_raw):
    unknown = sorted({g for g in trial_raw["generator"].unique() if family_of(g) is None})
    assert unknown == []
